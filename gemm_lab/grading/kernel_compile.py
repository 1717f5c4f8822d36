"""Does the student's kernel compile for real GPUs? Cross-compiled on the CPU with ``gemm_lab.compile``.

The interpreter (``TRITON_INTERPRET=1``) runs kernels the compiler refuses (``tl.dot`` on blocks smaller
than 16, Python dicts, lambdas, ``break``, f-strings of tensors, calls of plain Python functions, ...): such a
kernel would pass on a CPU and fail on a Colab T4. ``check(...)`` compiles the kernel, rebuilt with the
grader's trusted globals, for every target in ``TARGETS`` with the signature and every constexpr set of the
grader's trusted launcher, and either raises the genuine AssertionError with Korean feedback (target, the compiler's
first error line, the kernel line) or returns the per-target facts for the ✅ line: shared memory against
that GPU's limit, registers and local-memory (spill) bytes of the CUBIN (``cuobjdump -res-usage``), and
whether tensor cores are used (``mma.sync`` / ``wgmma`` in the PTX).

Results are cached per (kernel fingerprint, signature, constexprs, target, warps, stages, triton version):
in this process (``gemm_lab.compile.GRADER_RESULTS``; a grading worker gets the results of earlier workers
for the same kernel source from the grader, ``preload``/``export``), and on disk as one small JSON file per key under
``$GEMM_LAB_COMPILE_CACHE`` (default ``~/.cache/gemm_lab/compile_checks``; ``off`` disables it). A
read-only or missing directory is fine: the cache is then only read, or not used.
"""

from __future__ import annotations

import hashlib
import json
import os

__all__ = ["TARGETS", "check", "cache_dir", "compile_one", "report_line"]

# (target, calc.devices key for its shared-memory limit, the GPU students know it as)
TARGETS = (("sm_75", "colab-t4", "T4"), ("sm_80", "a100", "A100"), ("sm_90", "h100", "H100"))
NUM_WARPS, NUM_STAGES = 4, 3
_ENV = "GEMM_LAB_COMPILE_CACHE"


def cache_dir() -> str | None:
    """The on-disk cache folder, or None when ``$GEMM_LAB_COMPILE_CACHE`` is ``off``."""
    env = os.environ.get(_ENV, "")
    if env.lower() in ("off", "0", "none", "false"):
        return None
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gemm_lab", "compile_checks")


def _key(fingerprint: str, signature: dict, constexprs: dict, target: str) -> str:
    import triton

    blob = json.dumps([fingerprint, sorted(signature.items()), sorted((k, repr(v)) for k, v in constexprs.items()),
                       target, NUM_WARPS, NUM_STAGES, triton.__version__], ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _memory():
    from gemm_lab import compile as _compile

    return _compile.GRADER_RESULTS


def export() -> dict:
    """Every compile result this process holds ({key: entry}): a worker hands them back to the grader."""
    return {k: v for k, v in _memory().items() if _valid(v)}


def preload(entries) -> None:
    """Results the grader kept from earlier workers for the same kernel source."""
    if isinstance(entries, dict):
        _memory().update({k: v for k, v in entries.items() if isinstance(k, str) and _valid(v)})


_TYPE = (0).__class__.__class__
_TYPE_DICT = {}.__class__
_FIELDS = ("ok", "kind", "message", "line", "source", "shared", "regs", "local", "mma")


def _valid(entry) -> bool:
    return _TYPE(entry) is _TYPE_DICT and all(k in entry for k in _FIELDS)


def _disk_get(key: str):
    d = cache_dir()
    if d is None:
        return None
    try:
        with open(os.path.join(d, key + ".json"), encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    return entry if _valid(entry) and entry.get("key") == key else None


def _disk_put(key: str, entry: dict) -> None:
    d = cache_dir()
    if d is None:
        return
    path = os.path.join(d, key + ".json")
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(d, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(dict(entry, key=key), f)
        os.replace(tmp, path)
    except OSError:  # read-only or missing: the cache is optional
        try:
            os.unlink(tmp)
        except OSError:
            pass


def compile_one(build, signature: dict, constexprs: dict, target: str) -> dict:
    """Compile ``build()`` (a JITFunction) for one target; a plain dict of what the ✅/❌ lines need."""
    from gemm_lab import compile as _compile

    try:
        art = _compile.compile_jit(build(), signature, constexprs, target, num_warps=NUM_WARPS,
                                   num_stages=NUM_STAGES, cache=False)
    except Exception as exc:  # noqa: BLE001 - every compiler failure is feedback
        err = _compile.first_error(exc)
        return {"ok": False, "kind": err["kind"], "message": err["message"], "line": err["line"],
                "source": err["source"], "shared": None, "regs": None, "local": None, "mma": None,
                # the compiler's tools (ptxas) could not be started: the grader's problem, not the kernel's
                "environment": isinstance(exc, OSError)}
    res = _compile.resource_usage(art.cubin)
    return {"ok": True, "kind": "", "message": "", "line": None, "source": None, "shared": art.shared,
            "regs": res.get("regs"), "local": res.get("local"), "mma": art.summary()["mma"]}


def _limit(device_key: str) -> int:
    from gemm_lab.calc import devices

    return int(devices.get_device(device_key).smem_per_block_optin)


_HINTS = (
    ("K >= 16", "tl.dot의 두 블록은 모든 차원이 16 이상이어야 합니다 (BLOCK_K=8 같은 작은 블록은 GPU에서 "
                "컴파일되지 않습니다)."),
    ("AST node type: Dict", "@triton.jit 안에서는 Python dict를 쓸 수 없습니다."),
    ("AST node type: Lambda", "@triton.jit 안에서는 lambda를 쓸 수 없습니다: @triton.jit 함수를 따로 만드세요."),
    ("AST node type: Break", "@triton.jit 안의 루프에서는 break를 쓸 수 없습니다: 반복 범위(range)를 "
                             "정확히 주세요."),
    ("AST node type", "이 Python 문법은 @triton.jit 안에서 쓸 수 없습니다."),
    ("f-string", "print/f-string에는 constexpr 값만 넣을 수 있습니다: 텐서 값은 tl.device_print로 출력하세요."),
    ("tl.constexpr", "블록 크기 같은 메타파라미터는 커널 인자에 `: tl.constexpr` 표시가 있어야 컴파일 시점 상수가 "
                     "됩니다 (예: BLOCK_SIZE: tl.constexpr)."),
    ("Unsupported function referenced", "커널 안에서는 tl.* 함수와 다른 @triton.jit 함수만 부를 수 있습니다 "
                                        "(일반 Python 함수·torch·math 함수는 안 됩니다)."),
)


def _fail_text(name: str, target: str, gpu: str, r: dict) -> str:
    where = f" (커널 {r['line']}번째 줄 `{r['source']}`)" if r.get("line") and r.get("source") else ""
    hint = next((h for pat, h in _HINTS if pat in r["message"]), "")
    return (f"❌ {name}: 커널이 {target}({gpu})용으로 컴파일되지 않습니다{where}: {r['kind']}: {r['message']}. "
            f"{hint} 해석기(TRITON_INTERPRET=1)는 이런 커널도 실행하지만 실제 GPU의 Triton 컴파일러는 거부하므로, "
            "컴파일까지 통과해야 점수를 받습니다.").replace("  ", " ")


def _kib(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.4g} KiB"


def report_line(results: list) -> str:
    """One Korean line: per target shared memory vs limit, registers/spills, tensor cores."""
    words = {"wgmma": "wgmma(텐서 코어)", "mma.sync": "mma.sync(텐서 코어)", "fma": "FMA(텐서 코어 없음)",
             "none": "행렬곱 없음"}
    parts = []
    for (target, _dev, gpu), limit, r in results:
        regs = f", 레지스터 {r['regs']}개/스레드" if r.get("regs") is not None else ""
        spill = f", 스필 {r['local']} B" if r.get("local") else ""
        parts.append(f"{target}({gpu}) 공유 메모리 {_kib(r['shared'])}/{_kib(limit)}{regs}{spill}, "
                     f"{words.get(r['mma'], r['mma'])}")
    return "컴파일 " + " · ".join(parts)


def check(name: str, fingerprint: str, build, signature: dict, constexpr_sets) -> str:
    """Compile for every target and every constexpr set the launcher uses (cached); raise Korean feedback on
    the first failure, else return the report line of the last (largest) set. ``build()`` makes the
    JITFunction; it is only called on a cache miss. (The compiler compiles only the branches a constexpr
    set takes, so each set the interpreter will run is compiled.)"""
    if _TYPE(constexpr_sets) is _TYPE_DICT:
        constexpr_sets = [constexpr_sets]
    memory = _memory()
    built = []

    def make():
        if not built:
            built.append(build())
        return built[0]

    results = []
    for constexprs in constexpr_sets:
        which = ""
        if len(constexpr_sets) > 1:
            which = " (" + ", ".join(f"{k}={v}" for k, v in constexprs.items()) + "일 때)"
        results = []
        for tgt in TARGETS:
            target, dev, gpu = tgt
            key = _key(fingerprint, signature, constexprs, target)
            r = memory.get(key)
            if not _valid(r):
                r = _disk_get(key)
                if r is None:
                    r = compile_one(make, signature, constexprs, target)
                    if r.get("environment"):  # never cached: the next run may have the tools
                        raise AssertionError(
                            f"❌ {name}: 채점 환경 문제로 {target}({gpu}) 컴파일러를 실행하지 못했습니다 "
                            f"({r['kind']}: {r['message']}). 커널의 문제가 아닙니다: 강사에게 알리세요.")
                    _disk_put(key, r)
                memory[key] = r
            if not r["ok"]:
                raise AssertionError(_fail_text(name + which, target, gpu, r))
            limit = _limit(dev)
            if r["shared"] > limit:
                raise AssertionError(
                    f"❌ {name}{which}: {target}({gpu})에서 공유 메모리 {_kib(r['shared'])}가 한도 {_kib(limit)}를 "
                    "넘습니다: 그 GPU에서는 OutOfResources로 실행되지 않습니다. 블록 크기나 단계 수를 줄이세요.")
            results.append((tgt, limit, r))
    return report_line(results)
