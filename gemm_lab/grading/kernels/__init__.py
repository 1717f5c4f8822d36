"""Kernel checks: run a student's @triton.jit kernel through the grader's own launcher, on poisoned views,
and explain what went wrong, in Korean.

``check_vector_add(add_kernel)``, ``check_softmax(softmax_kernel)``, ``check_matmul(student_matmul_kernel)``,
``check_persistent(student_persistent_kernel, num_programs=[1, 3, 40])`` take the kernel itself. Each check,
in this order (the first failure fails the test cell, so the cell's points need all of them):

1. the object is a genuine Triton kernel (``launchers.genuine``, against the exercise record ``exercises``): not a launcher, not an object whose
   ``[grid](...)`` computes with torch; its arguments are those the notebook's locked launcher passes;
2. the source has no unmasked block loads (``static``) and is not the release stub;
3. it cross-compiles for sm_75, sm_80 and sm_90 (``compiler``: the interpreter runs kernels the real
   compiler refuses; cached per kernel source); for a kernel held as source (``remote.KernelSource``) the
   compile runs in a process of its own and the grader judges its raw results;
4. it gives the right answer when the grader's copy of the locked launcher runs it (``launchers``) on the
   cases of ``cases``: poisoned input margins (NaN), a sentinel-filled output buffer, hidden shapes,
   non-contiguous views. Under ``TRITON_INTERPRET=1`` it runs in the interpreter; on a GPU it runs compiled.
   Where it runs hands back raw buffers only; ``_judge`` decides here. Ownership (``check_persistent(...,
   ownership=True)``) is observed: which program changed which element, watched in the interpreter
   (``_observed``), never what the kernel reports (``record_tile`` is a teaching aid).

The ✅ line reports the cases and, per target, shared memory against that GPU's limit, registers/spills and
whether tensor cores are used. The reference is computed in plain Python; torch and triton are imported only
when a kernel check runs. bf16 only works on a GPU (the interpreter's bf16 ``tl.dot`` is wrong).
"""

from __future__ import annotations

import contextlib
import functools
import math

from ...calc import cdiv
from .. import record
from . import compiler, launchers, static
from .cases import (
    SENTINEL,
    TOLERANCES,
    _fmt,
    _idx,
    _Rand,
    _same_list,
)
from .exercises import EXERCISES

__all__ = ["check_vector_add", "check_softmax", "check_matmul", "check_persistent", "TOLERANCES", "SENTINEL",
           "compile_results", "run_kernel"]


# --------------------------------------------------------------------------- preparing the runs (grader)


def _round(flat, dtype):
    """``flat`` as ``dtype`` stores it (inputs are compared after the same rounding the kernel sees); numpy
    where it has the type, so the grader imports torch only for bfloat16."""
    if dtype in ("float16", "float32"):
        import numpy as np

        return np.asarray(flat, dtype=dtype).astype(float).tolist()
    import torch

    return torch.tensor(flat, dtype=getattr(torch, dtype)).tolist()


def _prepare(cases, extra_for, seed, dtype):
    """Every run of a check: input buffers (NaN margins), the output buffer (SENTINEL), the reference."""
    rng = _Rand(seed)
    runs = []
    for n, case in enumerate(cases):
        for extra in extra_for(case):
            flats = []
            for v in case["inputs"]:
                flat = [float("nan")] * v.size
                for p in v.positions:
                    flat[p] = case["gen"](rng)
                flats.append(_round(flat, dtype))
            reads = [[f[p] for p in v.positions] for f, v in zip(flats, case["inputs"], strict=True)]
            out = case["output"]
            runs.append({
                "case": n, "extra": list(extra), "dtype": dtype,
                "inputs": [{"flat": f, "shape": list(v.shape), "strides": list(v.strides), "offset": v.offset}
                           for f, v in zip(flats, case["inputs"], strict=True)],
                "output": {"size": out.size, "shape": list(out.shape), "strides": list(out.strides),
                           "offset": out.offset},
                "_ref": case["ref"](case, reads), "_reads": reads,
            })
    return runs


# --------------------------------------------------------------------------- running them (kernel's process)


def _tiles(run) -> int:
    """How many 32×32 tiles of C the persistent launcher's programs share (BLOCK_M = BLOCK_N = 32), at least 1."""
    return max(cdiv(run["inputs"][0]["shape"][0], 32) * cdiv(run["inputs"][1]["shape"][1], 32), 1)


def _buffers(run, device, with_records):
    """The run on ``device``: the input buffers, the output buffer, the launcher's arguments (views of them,
    the extra arguments and, ``with_records``, the persistent launcher's visits/owner buffers) and every
    buffer a program may write (what ``_observed`` watches)."""
    import torch

    ins = [torch.tensor(v["flat"], dtype=getattr(torch, run["dtype"]), device=device) for v in run["inputs"]]
    o = run["output"]
    obuf = torch.full((o["size"],), SENTINEL, dtype=getattr(torch, run["dtype"]), device=device)
    records = []
    if with_records:
        size = _tiles(run) + run["extra"][0] + 64
        records = [torch.zeros(size, dtype=torch.int32, device=device),
                   torch.full((size,), -1, dtype=torch.int32, device=device)]
    views = [torch.as_strided(b, v["shape"], v["strides"], v["offset"])
             for b, v in zip(ins + [obuf], run["inputs"] + [o], strict=True)]
    return ins, obuf, views + [*run["extra"], *records], ins + [obuf, *records]


def _observed(launch, args, buffers):
    """``launch(*args)`` in Triton's interpreter, noting for every element of ``buffers`` (CPU tensors) the program
    that changed it: ``[[position, program], ...]`` per buffer, program -2 when several did. What the kernel
    does is watched, not asked: each time the interpreter moves to the next program, the buffers are compared
    with how the last one left them."""
    import numpy as np
    import torch
    from triton.runtime.interpreter import interpreter_builder as builder

    arrays = [t.view({2: torch.int16, 4: torch.int32}[t.element_size()]).numpy() for t in buffers]
    seen = [a.copy() for a in arrays]
    writer = [np.full(a.shape, -1, dtype=np.int64) for a in arrays]
    current = [None]

    def settle():
        for a, before, w in zip(arrays, seen, writer, strict=True):
            changed = a != before
            if current[0] is not None and changed.any():
                w[changed & (w != -1) & (w != current[0])] = -2
                w[changed & (w == -1)] = current[0]
                before[changed] = a[changed]

    def set_grid_idx(x, y, z):
        settle()
        current[0] = x
        type(builder).set_grid_idx(builder, x, y, z)

    builder.set_grid_idx = set_grid_idx
    try:
        returned = launch(*args)
    finally:
        settle()
        del builder.set_grid_idx
    return returned, [[[int(p), int(w[p])] for p in np.flatnonzero(w != -1)] for w in writer]


@contextlib.contextmanager
def _scalar_indexes():
    """Triton 3.6's interpreter reads a scalar (a one-element array) as an index (``tl.range(pid, n, P)``) with
    ``int(array)``, which NumPy 2.4 refuses for an array that is not 0-d; Triton 3.7 squeezes it first. The
    grader's interpreted launches read it the 3.7 way (a block still refuses)."""
    from triton.runtime import interpreter

    patch = interpreter._patch_lang_tensor

    def squeezed(tensor, scope):
        patch(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    interpreter._patch_lang_tensor = squeezed
    try:
        yield
    finally:
        interpreter._patch_lang_tensor = patch


def compile_results(exercise, kernel_obj, dtype, name, constexprs) -> list:
    """Static checks, then the compiler's raw results (``compiler.results``) for one constexpr set of
    the launcher. Runs where the kernel's source lives (the student's process, or the grader's compile
    process, which never launches it); raises AssertionError (Korean) when the kernel is refused (the gate
    already refused stubs, recursion and what is not Triton)."""
    py = launchers.genuine(kernel_obj, exercise, name)
    arg_names = launchers.check_arguments(py, exercise, name)
    try:
        functions = launchers.student_functions(py)
    except (OSError, TypeError):
        raise AssertionError(
            f"❌ {name}: 커널의 소스 코드를 읽을 수 없습니다. 노트북 셀에서 @triton.jit으로 정의한 커널을 "
            "넘기세요.") from None
    found = static.unmasked_loads(functions)
    if found:
        raise AssertionError(f"❌ {name}: {static.describe(found, py.__name__)}")
    runtime_ints = launchers.runtime_params(py, exercise)  # compiled as Triton compiles them on a GPU: i32
    sig = launchers.signature(exercise, arg_names, dtype, runtime_ints)
    return compiler.results(lambda: launchers.rebuild(py, "compile"), sig,
                            {k: v for k, v in constexprs.items() if k not in runtime_ints})


def run_kernel(exercise, kernel_obj, runs, name, ownership=False) -> list:
    """Launch every run through the grader's launcher copy; per run the raw results: the output buffer, the
    input buffers after, the error text and, with ``ownership``, which program changed which element of every
    buffer (``_observed``; on a GPU from a second launch of the same run in the interpreter)."""
    import torch

    from gemm_lab import runtime

    py = launchers.genuine(kernel_obj, exercise, name)
    launchers.check_arguments(py, exercise, name)
    launch = functools.partial(EXERCISES[exercise].launch, launchers.rebuild(py, "run"))
    observe = ownership and functools.partial(EXERCISES[exercise].launch, launchers.rebuild(py, "interpret"))
    device = runtime.device()
    results = []
    for run in runs:
        ins, obuf, args, watched = _buffers(run, device, ownership)
        result = {"error": None, "returned_tensor": False}
        try:
            with _scalar_indexes():
                if ownership and device == "cpu":
                    returned, result["writers"] = _observed(launch, args, watched)
                else:
                    returned = launch(*args)
                if device != "cpu":
                    torch.cuda.synchronize()
                if ownership and device != "cpu":  # Triton's own @jit library is compiled here: interpret it too
                    from triton.runtime.interpreter import InterpretedFunction
                    from triton.runtime.jit import JITFunction

                    compiled_call = JITFunction.__call__
                    JITFunction.__call__ = lambda self, *a, **k: InterpretedFunction(self.fn)(*a, **k)
                    try:
                        _r, result["writers"] = _observed(observe, *_buffers(run, "cpu", True)[2:])
                    finally:
                        JITFunction.__call__ = compiled_call
            result["returned_tensor"] = isinstance(returned, torch.Tensor)
        except Exception as exc:  # noqa: BLE001 - anything the student's kernel raises is feedback
            text = str(exc).strip().splitlines()
            result["error"] = ("아직 구현하지 않았습니다 (NotImplementedError). 커널을 완성하세요."
                               if "NotImplementedError" in repr(exc) else
                               f"실행 중 오류가 났습니다: {type(exc).__name__}: {text[-1][:300] if text else ''}")
        result["out"] = obuf.float().cpu().tolist()
        result["inputs_after"] = [b.float().cpu().tolist() for b in ins]
        results.append(result)
    return results


# --------------------------------------------------------------------------- judging them (grader)


def _judge(case, run, result):
    """None when the run is right, else the Korean reason (``result``: raw data from where the kernel ran)."""
    in_views, out_view = case["inputs"], case["output"]
    after = result.get("inputs_after") if isinstance(result, dict) else None
    out_all = result.get("out") if isinstance(result, dict) else None
    if not (isinstance(after, list) and len(after) == len(in_views) and isinstance(out_all, list)
            and all(isinstance(a, list) and len(a) == len(s["flat"]) for a, s in zip(after, run["inputs"], strict=True))):
        return "커널 실행 결과를 읽을 수 없습니다."
    if result.get("error"):
        return str(result["error"])
    for v, spec, after in zip(in_views, run["inputs"], result["inputs_after"], strict=True):
        if not _same_list(after, spec["flat"]):
            return f"입력 {v.name}을(를) 덮어썼습니다: 커널은 출력에만 써야 합니다 (포인터/마스크를 확인하세요)."
    if len(out_all) != out_view.size:
        return "출력 버퍼를 읽지 못했습니다."
    inside = set(out_view.positions)
    first_in, last_in = min(out_view.positions, default=0), max(out_view.positions, default=0)
    for p, val in enumerate(out_all):
        if p not in inside and not (val == SENTINEL):
            if first_in < p < last_in:
                return ("출력 행 사이의 여백(margin)에 값이 써졌습니다: 열 마스크(열 < 크기)가 빠졌거나 "
                        "출력의 stride(out.stride(0))를 쓰지 않은 것 같습니다.")
            where = f"마지막 원소 뒤 {p - last_in}칸" if p > last_in else f"첫 원소 앞 {first_in - p}칸"
            return ("마스크가 빠진 것 같습니다: 출력 바깥 여백(margin)에 값이 써졌습니다 "
                    f"({where}). tl.store의 mask(행·열 모두 < 크기)를 확인하세요.")
    got = [out_all[p] for p in out_view.positions]
    ref = run["_ref"]
    unwritten = [k for k, g in enumerate(got) if g == SENTINEL]
    if got and len(unwritten) == len(got):
        msg = "결과가 전혀 쓰이지 않았습니다. tl.store가 있는지, 주어진 출력 텐서에 쓰는지 확인하세요."
        if result.get("returned_tensor"):
            msg += " (launch가 새 텐서를 반환했지만, 채점은 인자로 받은 출력에 쓴 값을 봅니다.)"
        return msg
    if unwritten:
        first = unwritten[0]
        return (f"출력 {len(unwritten)}개가 쓰이지 않았습니다 (처음: {_idx(out_view, first)}). "
                + case.get("unwritten_hint", "그리드 크기(cdiv로 올림했는지)나 마지막 블록·타일 처리를 확인하세요."))
    nonfinite = [k for k, g in enumerate(got) if not math.isfinite(g)]
    if nonfinite:
        return (f"결과에 NaN/inf가 있습니다 (처음: {_idx(out_view, nonfinite[0])}): 범위 밖 입력(NaN으로 채운 여백)을 "
                "마스크 없이 읽은 것 같습니다. " + case["nan_hint"])
    rel, abs_tol = TOLERANCES[run["dtype"]]
    bad = [k for k, (g, r) in enumerate(zip(got, ref, strict=True)) if abs(g - r) > rel * abs(r) + abs_tol]
    if not bad:
        return None
    first, max_err = bad[0], max(abs(g - r) for g, r in zip(got, ref, strict=True))
    facts = (f"처음 틀린 원소 {_idx(out_view, first)}: {_fmt(got[first])} (기대 {_fmt(ref[first])}), "
             f"틀린 원소 {len(bad)}/{len(got)}개, 최대 오차 {format(max_err, '.3g')}")
    return f"값이 다릅니다 — {facts}. " + case["diagnose"](got, ref, bad, run["_reads"])


def _writers(case, result):
    """The observed writers (``_observed``) per buffer, checked to be plain [position, program] pairs."""
    w = result.get("writers") if isinstance(result, dict) else None
    if isinstance(w, list) and len(w) == len(case["inputs"]) + 3 and all(
            isinstance(b, list) and all(isinstance(x, list) and len(x) == 2 and all(type(v) is int for v in x)
                                        for x in b) for b in w):
        return w
    return None


def tile_owners(case, run, result):
    """The program the grader saw write each C tile (row-major over 32×32 tiles): -1 none, -2 several; None
    when nothing was observed or a program wrote into C's margin."""
    writers = _writers(case, result)
    if writers is None:
        return None
    N, view = run["inputs"][1]["shape"][1], case["output"]
    owners = [-1] * _tiles(run)
    inside = {p: k for k, p in enumerate(view.positions)}
    for p, w in writers[-3]:
        k = inside.get(p)
        if k is None:
            return None
        t = (k // N // 32) * cdiv(N, 32) + (k % N) // 32
        owners[t] = w if owners[t] in (-1, w) else -2
    return owners


def _ownership(case, run, result):
    """What the grader saw the programs write: every C tile by program tile % P alone, nothing else written
    by any program (not even for a while: no input, no margin of C, no grading record of another program's
    tile, no tile past the last)."""
    P, writers, owners = run["extra"][0], _writers(case, result), tile_owners(case, run, result)
    if writers is None:
        return "어느 program이 어느 tile을 썼는지 관찰하지 못했습니다."
    if any(writers[:-3]):
        return ("program이 입력 버퍼에 썼습니다 (끝에 되돌려 놓았더라도): 커널은 출력에만 써야 하며, 입력을 program "
                "사이의 통로로 쓸 수 없습니다.")
    if owners is None:
        return ("program이 출력 C 바깥 여백에 썼습니다 (끝에 되돌려 놓았더라도): 여백은 program 사이의 통로로 "
                "쓸 수 없습니다.")
    for t, w in enumerate(owners):
        if w != t % P:
            who = "여러 program이" if w == -2 else "아무 program도" if w == -1 else f"program {w}이(가)"
            return (f"tile {t}을(를) {who} 썼습니다 (기대: program {t % P}, tile {len(owners)}개, program {P}개): "
                    "program pid는 tile pid, pid + NUM_PROGRAMS, pid + 2·NUM_PROGRAMS, …를 계산해 저장해야 합니다.")
    for p, w in writers[-2] + writers[-1]:
        if p >= len(owners):
            return (f"tile 번호 {p}까지 계산했습니다 (tile은 0–{len(owners) - 1}번, {len(owners)}개; program {P}개): "
                    "persistent 루프가 num_tiles를 넘었습니다. range(pid, num_tiles, NUM_PROGRAMS)처럼 끝을 "
                    "num_tiles로(포함하지 않음) 두세요.")
        if w != p % P:
            return (f"tile {p}의 채점 기록(record_tile)을 program {p % P}이(가) 아닌 program이 남겼습니다: "
                    "record_tile은 그 tile을 계산한 program이 부릅니다.")
    return None


def _kinds(case) -> list[str]:
    """The report's case kinds: what a case exercises beyond the plain packed tile multiple."""
    layouts = {v.layout for v in case["inputs"] + [case["output"]]}
    if len(case["inputs"]) == 2 and len(case["inputs"][0].shape) == 2:  # a matmul: C[M, N] = A[M, K] @ B[K, N]
        (M, K), N = case["inputs"][0].shape, case["inputs"][1].shape[1]
        kinds = [k for k, on in (("k_tail", K % 16), ("edge_tile", M % 16 or N % 16), ("tiny", min(M, N, K) < 16))
                 if on]
    else:
        kinds = ["edge_tile"] if any(d % 16 for d in case["output"].shape) else []
    if layouts - {"packed"}:
        kinds.append("noncontiguous" if "transposed" in layouts else "poisoned_margin")
    return kinds or ["packed"]


def _check(exercise, kernel_obj, hidden, seed, dtype, name, hint, given=(), extra_for=None, ownership=False,
           **options):
    """One check of the exercise: its cases (``given`` shapes after the usual ones and, for a kernel held as
    source, one shape drawn per run last, so a kernel written for the shapes a test cell names fails it),
    prepared here, run where the kernel lives, judged here; ✅ line or AssertionError."""
    from ..judge import remote

    if dtype not in TOLERANCES:
        raise ValueError(f"dtype must be one of {sorted(TOLERANCES)}, got {dtype!r}")
    if record.dry():
        return None
    ex, more, held = EXERCISES[exercise], (), isinstance(kernel_obj, remote.KernelSource)
    if held:
        rng = _Rand(kernel_obj.run_seed ^ (seed * 7919))
        more, seed = (ex.drawn(lambda lo, hi: lo + rng.next() % (hi - lo + 1)),), kernel_obj.run_seed ^ seed
    cases = ex.cases(hidden, tuple(given) + more, **options)
    public, drawn = len(ex.cases(False, (), **options)), len(cases) - len(more)
    for k, case in enumerate(cases):  # the drawn shapes come last (the class report and review tell them apart);
        # a hidden check's cases get no error map, and those past the notebook's own check's cases are secret
        # (their message names no shape or value)
        case["hidden"], case["drawn"], case["secret"] = hidden, k >= drawn, hidden and public <= k < drawn
    runs = _prepare(cases, extra_for or (lambda case: [()]), seed, dtype)
    entry = {"exercise": exercise, "refused": None, "compile": None, "cases": [],
             "not_triton": bool(getattr(kernel_obj, "not_triton", False))}
    record.add({"check": ex.check, "name": name, "claimed": None,
                "expected": None, "ok": False, "message": "", "kernel": entry})
    payload = [{k: v for k, v in r.items() if not k.startswith("_")} for r in runs]
    sets = ex.constexprs(  # every distinct constexpr set the launcher passes in these runs
        [[i["shape"] for i in r["inputs"]] for r in runs], [r["extra"][0] for r in runs if r["extra"]])
    records = exercise == "persistent"  # its launcher takes the visits/owner buffers: ownership is observed
    try:
        if held:
            found = kernel_obj.compile(exercise, dtype, name, sets)
        else:  # kept apart from what the grader keeps of its workers' compiles (the first item of the key)
            py = launchers.genuine(kernel_obj, exercise, name)
            found = compiler.cached(("in-process", launchers.fingerprint(py), exercise, dtype), sets,
                                    lambda todo: [compile_results(exercise, kernel_obj, dtype, name, c)
                                                  for c in todo])
        compiled = compiler.judge(name, found)
        outcome = (kernel_obj.run(exercise, payload, dtype, name, ownership=records) if held
                   else {"results": run_kernel(exercise, kernel_obj, payload, name, ownership=records)})
    except AssertionError as exc:
        entry["refused"] = str(exc)
        record.finish(False, str(exc))
        raise
    entry["compile"] = {"ok": True, "message": compiled}
    entry["device"] = outcome.get("device")
    packed_passed = False
    for run, result in zip(runs, outcome["results"], strict=True):
        case = cases[run["case"]]
        reason = _judge(case, run, result)
        if reason is None and ownership:
            reason = _ownership(case, run, result)
        where = ", ".join(v.where() for v in case["inputs"] + [case["output"]])
        if run["extra"]:
            where += f", num_programs={run['extra'][0]}"
        entry["cases"].append({"kind": ",".join(_kinds(case)), "where": where, "ok": reason is None,
                               "reason": reason, "drawn": bool(case.get("drawn"))})
        layouts = {v.layout for v in case["inputs"] + [case["output"]]}
        if reason is not None:
            extra_hint = ""
            wrong = reason.startswith(("값이 다릅니다", "결과에 NaN", "출력 행 사이"))
            if wrong and packed_passed and layouts != {"packed"}:
                extra_hint = (" 연속 배치(contiguous)에서는 맞았습니다: stride를 직접 계산하지 말고 "
                              "x.stride(0), x.stride(1)을 커널에 넘기세요.")
            if hint:
                extra_hint += f" (힌트: {hint})"
            if case.get("secret"):  # a hidden case: its layout and the kind of mistake, never a shape or value
                from gemm_lab.viz.error_map import hidden_text

                where, reason = hidden_text(where, reason)
            msg = f"❌ {name} (경우 {run['case'] + 1}/{len(cases)}: {where}): {reason}{extra_hint}"
            _error_map(exercise, case, run, result, msg, entry["cases"][-1], ownership)
            record.finish(False, msg)
            raise AssertionError(msg)
        packed_passed = packed_passed or layouts == {"packed"}
    what = f"{len(cases)}개 경우" + (f" × 실행 {len(runs)}번" if len(runs) != len(cases) else "")
    msg = f"✅ {name}: {what} 모두 통과 (여백 오염·미기록 원소 없음, 기준값과 일치); {compiled}"
    record.finish(True, msg)
    print(msg)
    return None


def _error_map(exercise, case, run, result, message, case_entry, ownership) -> None:
    """The picture of a failed case the notebook names (never a hidden or drawn one), made from plain data
    by ``gemm_lab.viz.error_map``: kept in the record for the grader's outputs and the class report, or shown
    under the ❌ in the student's notebook. A map that cannot be made never changes the verdict."""
    out = case["output"]
    if case.get("hidden") or case.get("drawn") or result.get("error") or 0 in out.shape:
        return
    try:
        from gemm_lab.viz import error_map

        consts = EXERCISES[exercise].constexprs([[i["shape"] for i in run["inputs"]]], run["extra"][:1])[0]
        owner = asked = None
        if ownership:  # the program the grader saw write each tile (-1 nobody, -2 several) against tile % P
            owner = tile_owners(case, run, result)
            asked = [t % run["extra"][0] for t in range(len(owner))] if owner else None
        emap = error_map.arrays_from_buffer(
            run["_ref"], result["out"], shape=out.shape, strides=out.strides, offset=out.offset, sentinel=SENTINEL,
            tolerance=TOLERANCES[run["dtype"]], block=error_map.block_from(consts, len(out.shape)),
            owner=owner, asked_owner=asked)
        if not emap.failed():
            return
        if record.active():
            case_entry["map"] = emap.to_record(message)
        else:
            error_map.show(emap, message)
    except Exception:  # noqa: BLE001 - the picture is an aid; the verdict stands without it
        return


# --------------------------------------------------------------------------- public checks


def check_matmul(kernel, *, hidden=False, noncontiguous=True, dtype="float16", shapes=(), seed=0,
                 name="matmul", hint=None):
    """Check week 7's ``student_matmul_kernel`` (C = A @ B) through the locked launcher's copy (16×16×16
    tiles, one program per C tile); ``shapes``: extra (M, N, K).

    ``dtype``: inputs and output dtype ("float16" default, "float32"; "bfloat16" only on a GPU).
    """
    return _check("matmul", kernel, hidden, seed, dtype, name, hint, shapes, noncontiguous=noncontiguous)


def check_persistent(kernel, *, hidden=False, noncontiguous=True, dtype="float16", num_programs=None, seed=0,
                     name="persistent_matmul", hint=None, ownership=False):
    """Check week 7's ``student_persistent_kernel`` through the locked launcher's copy (32×32×32 tiles) for
    several program counts: 1 (one program loops over every tile), 3 (tiles split unevenly) and 1000 (more
    programs than tiles); ``num_programs`` overrides them. A count below the number of tiles gives a program
    two tiles or more: only then does an accumulator that is not reset per tile show (and get its own
    feedback). ``ownership=True`` also requires every tile to be computed exactly once, by program
    ``tile % num_programs``, and no tile past the last (the visits/owner records of the notebook's given
    ``record_tile``, the grader's copy)."""
    counts = list(num_programs) if num_programs is not None else [1, 3, 1000]
    for p in counts:
        if type(p) is not int or p < 1:
            raise ValueError(f"num_programs must be positive ints, got {p!r}")

    def extra_for(case):  # a drawn shape runs at one uneven program count: the shape is what it tests
        return [(counts[min(1, len(counts) - 1)],)] if case.get("drawn") else [(p,) for p in counts]

    return _check("persistent", kernel, hidden, seed, dtype, name, hint, (), extra_for, ownership,
                  noncontiguous=noncontiguous)


def check_vector_add(kernel, *, hidden=False, dtype="float32", sizes=(), seed=0, name="vector_add", hint=None):
    """Check week 6's ``add_kernel`` (out = x + y) through the locked launcher's copy (BLOCK_SIZE=128)."""
    return _check("vector_add", kernel, hidden, seed, dtype, name, hint, sizes)


def check_softmax(kernel, *, hidden=False, dtype="float32", shapes=(), seed=0, name="softmax", hint=None):
    """Check week 6's ``softmax_kernel`` (row-wise softmax) through the locked launcher's copy (one program
    per row, BLOCK_SIZE = next_power_of_2(n_cols)). Rows are padded in memory (row stride > n_cols)."""
    return _check("softmax", kernel, hidden, seed, dtype, name, hint, shapes)
