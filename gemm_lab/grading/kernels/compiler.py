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

The process that judges keeps each constexpr set's results (``cached``, in ``gemm_lab.grading.cache``) under
a hash of the kernel's source, where it was compiled, the exercise, dtype, constexprs, warps, stages, Triton
and the code that compiles (``COMPILING_CODE``); a worker compiles and keeps nothing.
"""

from __future__ import annotations

import functools

from .. import cache

__all__ = ["TARGETS", "COMPILING_CODE", "results", "cached", "judge", "compile_one", "report_line"]

# (target, calc.devices key for its shared-memory limit, the GPU students know it as)
TARGETS = (("sm_75", "colab-t4", "T4"), ("sm_80", "a100", "A100"), ("sm_90", "h100", "H100"))
NUM_WARPS, NUM_STAGES = 4, 3
# the code that decides what a compile is given, compiles it (gemm_lab.compile) and reads its results: a fix
# there never meets a result kept before it
COMPILING_CODE = ("gemm_lab.compile", *(f"gemm_lab.grading.{m}" for m in (
    "kernels", "kernels.compiler", "kernels.launchers", "kernels.static", "kernels.exercises", "judge.gate",
    "judge.worker", "judge.remote")))


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


def results(build, signature: dict, constexprs: dict) -> list:
    """The compiler's result for one constexpr set the launcher uses on every target, up to the first failure:
    ``[{"constexprs", "target", "ok", "kind", "message", ...}]``. ``build()`` makes the JITFunction (once).
    (The compiler compiles only the branches a constexpr set takes, so each set the interpreter will run is
    compiled.)"""
    make, out = functools.cache(build), []
    for target, _dev, _gpu in TARGETS:
        r = compile_one(make, signature, constexprs, target)
        out.append(dict(r, constexprs=dict(constexprs), target=target))
        if not r["ok"]:
            break
    return out


def _keepable(entry) -> bool:
    """A set's entry worth keeping: ``results``' list (the compiler's tools ran) or a refusal's text."""
    if isinstance(entry, dict):
        return set(entry) == {"refused"} and type(entry["refused"]) is str
    return (isinstance(entry, list) and bool(entry)
            and all(_valid(r) and not r.get("environment") for r in entry))


def cached(source: tuple, constexpr_sets, compile_missing, default_folder: bool = True) -> list:
    """``results``' entries for every constexpr set, in order, as this process keeps them (``cache``); the
    sets it does not keep come from ``compile_missing(sets)`` (one ``results`` list or ``{"refused": text}``
    per set) and are kept, unless the compiler's tools were missing (the next run may have them) or the entry
    cannot be read (judged as it is). ``source``: what the results depend on besides the set (where it was
    compiled, the kernel's source, exercise, dtype). ``default_folder``: on disk in the user's folder too when
    ``$GEMM_LAB_COMPILE_CACHE`` names none (``cache.folder``). Raises the AssertionError of a refused kernel."""
    keys = [cache.key_of(*source, sorted((k, repr(v)) for k, v in c.items()), NUM_WARPS, NUM_STAGES,
                         cache.code_version(*COMPILING_CODE)) for c in constexpr_sets]
    found = [cache.read(k, default_folder) for k in keys]
    missing = [i for i, entry in enumerate(found) if not _keepable(entry)]
    if missing:
        for i, entry in zip(missing, compile_missing([constexpr_sets[i] for i in missing]), strict=True):
            found[i] = entry
            if _keepable(entry):
                cache.keep(keys[i], entry, default_folder)
    out = []
    for entry in found:
        if isinstance(entry, dict) and "refused" in entry:
            raise AssertionError(str(entry["refused"]))
        out += entry if isinstance(entry, list) else [None]
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
