"""Does the student's kernel compile for real GPUs? Cross-compiled on the CPU with ``gemm_lab.compile``.

The interpreter (``TRITON_INTERPRET=1``) runs kernels the compiler refuses (``tl.dot`` on blocks smaller
than 16, Python dicts, lambdas, ``break``, f-strings of tensors, calls of plain Python functions, ...): such a
kernel would pass on a CPU and fail on a Colab T4. ``results(...)`` compiles the kernel (``launchers.rebuild``)
for every target in ``TARGETS`` with the launcher's signature and every constexpr set, where the kernel's
source lives (the student's process, or the grader's compile worker, which never runs a check), and gives
the compiler's raw per-target results; ``judge(name, results)`` (the grader) raises the AssertionError with
Korean feedback (target, the compiler's first error line, the kernel line) or returns the per-target facts
for the ✅ line: shared memory against that GPU's limit, registers and local-memory (spill) bytes of the
CUBIN (``cuobjdump -res-usage``), and whether tensor cores are used (``mma.sync`` / ``wgmma`` in the PTX).

Results are cached per (kernel fingerprint, signature, constexprs, target, warps, stages, triton
version) in this process and on disk as one small JSON file per key under ``$GEMM_LAB_COMPILE_CACHE``
(default ``~/.cache/gemm_lab/compile_checks``; ``off`` disables it, as the grader's sandboxes do). A
read-only or missing directory is fine: the cache is then only read, or not used.
"""

from __future__ import annotations

import functools
import os

from ..codec import code_version, key_of, read_cached, write_cached

__all__ = ["TARGETS", "results", "judge", "cache_dir", "compile_one", "report_line"]

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
    from ..judge.remote import COMPILING_CODE  # a fix there never meets a verdict cached before it

    return key_of(fingerprint, sorted(signature.items()), sorted((k, repr(v)) for k, v in constexprs.items()),
                  target, NUM_WARPS, NUM_STAGES, code_version(*COMPILING_CODE))


_FIELDS = ("ok", "kind", "message", "line", "source", "shared", "regs", "local", "mma")


def _valid(entry) -> bool:
    return isinstance(entry, dict) and all(k in entry for k in _FIELDS)


def compile_one(build, signature: dict, constexprs: dict, target: str) -> dict:
    """Compile ``build()`` (a JITFunction) for one target; a plain dict of what the ✅/❌ lines need."""
    from gemm_lab import compile as _compile

    try:
        art = _compile.compile_jit(build(), signature, constexprs, target, num_warps=NUM_WARPS,
                                   num_stages=NUM_STAGES, cache=False)
    except Exception as exc:  # noqa: BLE001 - every compiler failure is feedback
        err = _compile.first_error(exc)
        return {**dict.fromkeys(_FIELDS), **{k: err[k] for k in ("kind", "message", "line", "source")}, "ok": False,
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
    return f"{n} B" if n < 1024 else f"{n / 1024:.4g} KiB"


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


def results(fingerprint: str, build, signature: dict, constexpr_sets) -> list:
    """The compiler's result for every constexpr set the launcher uses and every target (cached):
    ``[{"constexprs", "target", "ok", "kind", "message", ...}]``. ``build()`` makes the JITFunction; it is
    only called on a cache miss. (The compiler compiles only the branches a constexpr set takes, so each
    set the interpreter will run is compiled.)"""
    from gemm_lab.compile import GRADER_RESULTS as memory

    make, out = functools.cache(build), []  # built once, on the first miss
    for constexprs in constexpr_sets:
        for target, _dev, _gpu in TARGETS:
            key = _key(fingerprint, signature, constexprs, target)
            r = memory.get(key)
            if not _valid(r):  # this process has not compiled it: the disk cache, if it holds this key
                r = read_cached(cache_dir(), key)
                r = r if _valid(r) and r.get("key") == key else None
            if r is None:
                r = compile_one(make, signature, constexprs, target)
                if not r.get("environment"):  # never cached: the next run may have the tools
                    write_cached(cache_dir(), key, dict(r, key=key))
                    memory[key] = r
            out.append(dict(r, constexprs=dict(constexprs), target=target))
            if not r["ok"]:
                return out
    return out


def judge(name: str, found: list) -> str:
    """The report line of the last (largest) constexpr set, or the Korean AssertionError of the first
    failure, from ``results``' list (the grader judges what a compile worker handed back)."""
    if not isinstance(found, list) or not found:
        raise AssertionError(f"❌ {name}: 컴파일 결과가 없습니다.")
    targets = {t[0]: t for t in TARGETS}
    sets = []
    for r in found:
        if not _valid(r) or r.get("target") not in targets or not isinstance(r.get("constexprs"), dict):
            raise AssertionError(f"❌ {name}: 컴파일 결과를 읽을 수 없습니다.")
        if r["constexprs"] not in sets:
            sets.append(r["constexprs"])
    line = []
    for r in found:
        target, dev, gpu = targets[r["target"]]
        which = " (" + ", ".join(f"{k}={v}" for k, v in r["constexprs"].items()) + "일 때)" if len(sets) > 1 else ""
        if r.get("environment"):
            raise AssertionError(
                f"❌ {name}: 채점 환경 문제로 {target}({gpu}) 컴파일러를 실행하지 못했습니다 "
                f"({r['kind']}: {r['message']}). 커널의 문제가 아닙니다: 강사에게 알리세요.")
        if not r["ok"]:
            raise AssertionError(_fail_text(name + which, target, gpu, r))
        limit = _limit(dev)
        if r["shared"] > limit:
            raise AssertionError(
                f"❌ {name}{which}: {target}({gpu})에서 공유 메모리 {_kib(r['shared'])}가 한도 {_kib(limit)}를 "
                "넘습니다: 그 GPU에서는 OutOfResources로 실행되지 않습니다. 블록 크기나 단계 수를 줄이세요.")
        if r["constexprs"] == sets[-1]:
            line.append((targets[r["target"]], limit, r))
    if {t[0] for t, _l, _r in line} != set(targets):
        raise AssertionError(f"❌ {name}: 컴파일 결과가 온전하지 않습니다.")
    return report_line(line)
