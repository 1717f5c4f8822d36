"""Kernel checks: run a student's @triton.jit kernel through the grader's own launcher, on poisoned views,
and explain what went wrong, in Korean.

``check_vector_add(add_kernel)``, ``check_softmax(softmax_kernel)``, ``check_matmul(student_matmul_kernel)``,
``check_persistent(student_persistent_kernel, num_programs=[1, 3, 40])`` take the kernel itself. Each check,
in this order (the first failure fails the test cell, so the cell's points need all of them):

1. the object is a genuine Triton kernel (``launchers.genuine``): not a launcher, not an object whose
   ``[grid](...)`` computes with torch; its arguments are those the notebook's locked launcher passes;
2. the source has no unmasked block loads (``kernel_static``) and is not the release stub;
3. it cross-compiles for sm_75, sm_80 and sm_90 (``kernel_compile``: the interpreter runs kernels the real
   compiler refuses; cached per kernel source);
4. it gives the right answer when the grader's copy of the locked launcher runs it (``launchers``) on the
   cases of ``kernel_cases``: poisoned input margins (NaN), a sentinel-filled output buffer, hidden shapes,
   non-contiguous views. Under ``TRITON_INTERPRET=1`` it runs in the interpreter; on a GPU it runs compiled.

The ✅ line reports the cases and, per target, shared memory against that GPU's limit, registers/spills and
whether tensor cores are used. Tamper resistance (see ``gemm_lab.grading.integrity``): the kernel is rebuilt
with the grader's own globals (real ``triton.language``, the grader's copies of the notebook's given helpers),
inputs are written and read back through the C-level ``torch._C.TensorBase`` methods, the reference is
computed in plain Python, and the built-ins and the grader's module globals are checked again after the
kernel ran. torch and triton are imported only when a kernel check runs. bf16 only works on a GPU (the
interpreter's bf16 ``tl.dot`` is wrong).
"""

from __future__ import annotations

from . import _seal, _trusted, kernel_cases, kernel_compile, kernel_static, launchers
from .feedback import REAL_ASSERTION_ERROR
from .kernel_cases import SENTINEL, TOLERANCES, _build, _fmt, _idx, _Rand, _read, _same_list

__all__ = ["check_vector_add", "check_softmax", "check_matmul", "check_persistent", "TOLERANCES", "SENTINEL"]

_NAN = float("nan")
_BASE_EXC = _trusted.REAL_BASE_EXCEPTION
_TYPE = (0).__class__.__class__


# --------------------------------------------------------------------------- trusted torch access


def _torch():
    """torch and its C tensor base class, checked to be the genuine immutable C type."""
    import torch

    tb = torch._C.TensorBase
    try:
        _TYPE.__setattr__(tb, "_gemm_lab_probe", 1)
    except _BASE_EXC:
        pass
    else:
        raise REAL_ASSERTION_ERROR("❌ 채점 환경이 바뀌었습니다: torch의 텐서 기본 클래스가 진짜가 아닙니다.")
    if tb.__module__ != "torch._C" or "tolist" not in tb.__dict__:
        raise REAL_ASSERTION_ERROR("❌ 채점 환경이 바뀌었습니다: torch._C.TensorBase가 바뀌어 있습니다.")
    _trusted.guard_torch(torch)
    return torch, tb


def _device(torch):
    try:
        from gemm_lab import runtime

        return runtime.device()
    except ImportError:  # pragma: no cover - runtime is part of the package
        return "cuda" if torch.cuda.is_available() else "cpu"


# --------------------------------------------------------------------------- one case


def _run_case(kernel, launch, case, extra_args, rng, torch, tb, device, dtype_name):
    """Run one case; return None on success or a Korean reason (str) and facts."""
    in_views, out_view = case["inputs"], case["output"]
    dtype = getattr(torch, case.get("in_dtype", dtype_name))
    out_dtype = getattr(torch, dtype_name)
    in_vals, bufs, tensors, flats = [], [], [], []
    for v in in_views:
        vals = [case["gen"](rng) for _ in v.positions]
        buf, t, flat = _build(torch, tb, v, vals, _NAN, dtype, device)
        in_vals.append(vals)
        bufs.append(buf)
        tensors.append(t)
        flats.append(flat)
    obuf, otensor, oflat = _build(torch, tb, out_view, [SENTINEL] * len(out_view.positions), SENTINEL,
                                  out_dtype, device)
    # Python-side reads of the (exactly representable) inputs after dtype rounding
    in_read = []
    for b, v in zip(bufs, in_views, strict=True):
        back = _read(tb, b)
        in_read.append([back[p] for p in v.positions])
    ref = case["ref"](case, in_read)
    # Everything used after the student's code ran is bound now, and the grader's module globals are
    # snapshotted: a launcher that rebinds them (or mutates TOLERANCES) is caught, not obeyed.
    rel, abs_tol = TOLERANCES[dtype_name]
    real_error, same_binding = REAL_ASSERTION_ERROR, _same_bindings
    snapshots = [(ns, dict(ns)) for ns in _NAMESPACES]
    returned = None
    try:
        returned = launch(*tensors, otensor, *extra_args)
        if device != "cpu":
            torch.cuda.synchronize()
    except _BASE_EXC as exc:  # noqa: BLE001 - anything the student's code raises is feedback
        etype = _TYPE(exc).__name__
        if etype == "NotImplementedError":
            return "아직 구현하지 않았습니다 (NotImplementedError). launch와 커널을 완성하세요."
        text = _trusted_str(exc)
        return f"실행 중 오류가 났습니다: {etype}: {text}"
    for ns, snap in snapshots:
        if not same_binding(ns, snap):
            raise real_error(f"❌ {kernel}: 채점 환경이 바뀌었습니다 — launch가 채점 모듈의 이름을 바꿨습니다. "
                             "채점기를 건드리는 코드를 지우세요.")
    _trusted.guard(kernel)
    _trusted.guard_torch(torch, kernel)
    out_all = _read(tb, obuf)
    # inputs untouched?
    for v, b, flat in zip(in_views, bufs, flats, strict=True):
        if not _same_list(_read(tb, b), flat):
            return f"입력 {v.name}을(를) 덮어썼습니다: 커널은 출력에만 써야 합니다 (포인터/마스크를 확인하세요)."
    # margins untouched?
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
    unwritten = [k for k, g in enumerate(got) if g == SENTINEL]
    if len(unwritten) == len(got):
        msg = "결과가 전혀 쓰이지 않았습니다. tl.store가 있는지, 주어진 출력 텐서에 쓰는지 확인하세요."
        if returned is not None and _TYPE(returned).__name__ in ("Tensor", "Parameter"):
            msg += " (launch가 새 텐서를 반환했지만, 채점은 인자로 받은 출력에 쓴 값을 봅니다.)"
        return msg
    if unwritten:
        first = unwritten[0]
        return (f"출력 {len(unwritten)}개가 쓰이지 않았습니다 (처음: {_idx(out_view, first)}). "
                + case.get("unwritten_hint", "그리드 크기(cdiv로 올림했는지)나 마지막 블록·타일 처리를 확인하세요."))
    bad, max_err, nan_first = [], 0.0, None
    for k, (g, r) in enumerate(zip(got, ref, strict=True)):
        if g != g or g in (float("inf"), float("-inf")):
            if nan_first is None:
                nan_first = k
            continue
        d = g - r if g >= r else r - g
        if d > max_err:
            max_err = d
        if d > rel * (r if r >= 0 else -r) + abs_tol:
            bad.append(k)
    if nan_first is not None:
        return (f"결과에 NaN/inf가 있습니다 (처음: {_idx(out_view, nan_first)}): 범위 밖 입력(NaN으로 채운 여백)을 "
                "마스크 없이 읽은 것 같습니다. " + case["nan_hint"])
    if not bad:
        return None
    first = bad[0]
    facts = (f"처음 틀린 원소 {_idx(out_view, first)}: {_fmt(got[first])} (기대 {_fmt(ref[first])}), "
             f"틀린 원소 {len(bad)}/{len(got)}개, 최대 오차 {format(max_err, '.3g')}")
    return f"값이 다릅니다 — {facts}. " + case["diagnose"](got, ref, bad, in_read)


def _same_bindings(ns, snap) -> bool:
    if len(ns) != len(snap):
        return False
    for k, v in snap.items():
        if ns.get(k, _same_bindings) is not v:
            return False
    return True


def _trusted_str(exc) -> str:
    try:
        text = "".__class__(exc)
    except _BASE_EXC:
        text = "<메시지를 읽을 수 없음>"
    text = text.strip().splitlines()[-1] if text.strip() else ""
    return text[:300]


def _run_cases(kernel, launch, cases, extra_for, seed, dtype_name, hint=None, after=None):
    """Run every case; return the number of runs or raise the genuine AssertionError naming the case."""
    user_hint = hint
    torch, tb = _torch()
    device = _device(torch)
    rng = _Rand(seed)
    passed_layouts = set()
    runs = 0
    for n, case in enumerate(cases, 1):
        for extra in extra_for(case):
            reason = _run_case(kernel, launch, case, extra, rng, torch, tb, device, dtype_name)
            if reason is None and after is not None:
                reason = after(case, extra)
            runs += 1
            if reason is not None:
                where = ", ".join(v.where() for v in case["inputs"] + [case["output"]])
                if extra:
                    where += f", num_programs={extra[0]}"
                hint = ""
                layouts = {v.layout for v in case["inputs"] + [case["output"]]}
                if reason.startswith(("값이 다릅니다", "결과에 NaN", "출력 행 사이")) and (
                    "packed" in passed_layouts and layouts - {"packed"}
                ):
                    hint = (" 연속 배치(contiguous)에서는 맞았습니다: stride를 직접 계산하지 말고 "
                            "x.stride(0), x.stride(1)을 커널에 넘기세요.")
                if user_hint:
                    hint += f" (힌트: {user_hint})"
                raise REAL_ASSERTION_ERROR(f"❌ {kernel} (경우 {n}/{len(cases)}: {where}): {reason}{hint}")
        if all(v.layout == "packed" for v in case["inputs"] + [case["output"]]):
            passed_layouts.add("packed")
    return runs


# --------------------------------------------------------------------------- the checks' common path


def _check(exercise, kernel_obj, cases, extras, seed, dtype, name, hint, after_factory=None):
    """genuine kernel -> static checks -> cross-compile -> run through the trusted launcher -> ✅ line."""
    _trusted.guard(name)
    if dtype not in TOLERANCES:
        raise ValueError(f"dtype must be one of {sorted(TOLERANCES)}, got {dtype!r}")
    py = launchers.genuine(kernel_obj, exercise, name)
    arg_names = launchers.check_arguments(py, exercise, name)
    try:
        functions = launchers.student_functions(py, exercise)
    except (OSError, TypeError):
        raise REAL_ASSERTION_ERROR(
            f"❌ {name}: 커널의 소스 코드를 읽을 수 없습니다. 노트북 셀에서 @triton.jit으로 정의한 커널을 "
            "넘기세요.") from None
    if kernel_static.unfinished(functions):
        raise REAL_ASSERTION_ERROR(f"❌ {name}: 아직 구현하지 않았습니다 (NotImplementedError). 커널의 TODO를 "
                                   "채우세요.")
    cycle = kernel_static.recursion(functions)
    if cycle:
        raise REAL_ASSERTION_ERROR(
            f"❌ {name}: @triton.jit 함수의 재귀 호출({' → '.join(cycle)})은 GPU용으로 컴파일되지 않습니다 "
            "(Triton 컴파일러가 끝나지 않습니다; 해석기만 실행합니다). 반복문(for ... in range)으로 바꾸세요.")
    found = kernel_static.unmasked_loads(functions)
    if found:
        raise REAL_ASSERTION_ERROR(f"❌ {name}: {kernel_static.describe(found, py.__name__)}")
    ex = launchers.EXERCISES[exercise]
    all_extras = [e for case in cases for e in extras(case)]
    constexpr_sets = ex["constexprs"](cases, [e[0] for e in all_extras if e])
    runtime_ints = launchers.runtime_params(py, exercise)
    if runtime_ints:  # compiled as Triton compiles them on a GPU: plain i32 arguments
        constexpr_sets = [{k: v for k, v in c.items() if k not in runtime_ints} for c in constexpr_sets[-1:]]
    sig = launchers.signature(exercise, arg_names, dtype, runtime_ints)
    compiled = kernel_compile.check(name, launchers.fingerprint(py, exercise),
                                    lambda: launchers.rebuild(py, exercise, "compile"), sig, constexpr_sets)
    runner = launchers.rebuild(py, exercise, "run")
    launch_copy = ex["launch"]
    after = after_factory() if after_factory is not None else None
    if after is not None:
        def launch(*args):
            return launch_copy(runner, *args, *after.tensors(args))
    else:
        def launch(*args):
            return launch_copy(runner, *args)
    runs = _run_cases(name, launch, cases, extras, seed, dtype, hint, after.check if after is not None else None)
    _trusted.guard(name)
    what = f"{len(cases)}개 경우" if runs == len(cases) else f"{len(cases)}개 경우 × 실행 {runs}번"
    print(f"✅ {name}: {what} 모두 통과 (여백 오염·미기록 원소 없음, 기준값과 일치); {compiled}")
    return None


class _Ownership:
    """The persistent launcher's visits/owner records (written by the notebook's given ``record_tile``, the
    grader's copy): every tile computed once, by program tile % P, and no tile number past the last one. The
    records have a margin after the last tile, so a loop that runs past ``num_tiles`` records there (checked
    with ``ownership=True``) instead of writing outside the tensors."""

    def __init__(self, strict: bool):
        self.strict = strict
        self.current = None

    def tensors(self, args):
        torch, tb = _torch()
        a, b, c, num_programs = args
        M = tb.size(a)[0]
        N = tb.size(b)[1]
        tiles = max(((M + 31) // 32) * ((N + 31) // 32), 1)
        size = tiles + num_programs + 64  # margin: tile numbers a loop past num_tiles reaches
        device = _device(torch)
        visits = torch.tensor([0] * size, dtype=torch.int32)
        owner = torch.tensor([-1] * size, dtype=torch.int32)
        if not (_same_list(tb.tolist(visits), [0] * size) and _same_list(tb.tolist(owner), [-1] * size)):
            raise REAL_ASSERTION_ERROR("❌ 채점 환경이 바뀌었습니다: torch.tensor가 준 값과 다른 텐서를 만듭니다.")
        if device != "cpu":
            visits, owner = tb.to(visits, device), tb.to(owner, device)
        self.current = (visits, owner, tiles, num_programs, M, N)
        return visits, owner

    def check(self, case, extra):
        if not self.strict or self.current is None:
            return None
        torch, tb = _torch()
        visits, owner, tiles, P, M, N = self.current
        v = _read(tb, visits)
        o = _read(tb, owner)
        if M == 0 or N == 0:
            return None
        past = [t for t in range(tiles, len(v)) if v[t] != 0 or o[t] != -1]
        if past:
            return (f"tile 번호 {past[0]}까지 계산했습니다 (tile은 0–{tiles - 1}번, {tiles}개; program {P}개): "
                    "persistent 루프가 num_tiles를 넘었습니다. range(pid, num_tiles, NUM_PROGRAMS)처럼 끝을 "
                    "num_tiles로(포함하지 않음) 두세요.")
        if all(v[t] == 0 for t in range(tiles)):
            return ("값은 맞지만 채점용 기록이 없습니다: persistent 루프 안에서 tile 하나를 저장한 뒤 "
                    "record_tile(tile_id, visits_ptr, owner_ptr)을 호출하세요.")
        for t in range(tiles):
            if v[t] != 1:
                what = "계산되지 않았습니다" if v[t] == 0 else f"{int(v[t])}번 계산되었습니다"
                return (f"tile {t}이(가) {what} (tile {tiles}개, program {P}개): 모든 tile을 정확히 한 번씩 "
                        "계산해야 합니다. 루프가 pid에서 시작해 NUM_PROGRAMS씩 건너뛰며 num_tiles 직전까지 도는지 "
                        "확인하세요.")
            if o[t] != t % P:
                return (f"tile {t}을(를) program {int(o[t])}이(가) 계산했습니다 (기대: program {t % P}): program pid는 "
                        "tile pid, pid + NUM_PROGRAMS, pid + 2·NUM_PROGRAMS, …를 계산해야 합니다.")
        return None


# --------------------------------------------------------------------------- public checks


def check_matmul(kernel, *, hidden=False, noncontiguous=True, dtype="float16", shapes=(), seed=0,
                 name="matmul", hint=None, aligned=False):
    """Check week 7's ``student_matmul_kernel`` (C = A @ B) through the locked launcher's copy (16×16×16
    tiles, one program per C tile); ``shapes``: extra (M, N, K).

    ``dtype``: inputs and output dtype ("float16" default, "float32"; "bfloat16" only on a GPU).
    ``aligned=True``: only views whose row strides and offsets are multiples of 16 bytes, no transposed views.
    """
    if dtype not in TOLERANCES:
        raise ValueError(f"dtype must be one of {sorted(TOLERANCES)}, got {dtype!r}")
    cases = kernel_cases.matmul_cases(hidden, noncontiguous, shapes, aligned)
    return _check("matmul", kernel, cases, lambda case: [()], seed, dtype, name, hint)


def check_persistent(kernel, *, hidden=False, noncontiguous=True, dtype="float16", num_programs=None, seed=0,
                     name="persistent_matmul", hint=None, aligned=False, ownership=False):
    """Check week 7's ``student_persistent_kernel`` through the locked launcher's copy (32×32×32 tiles) for
    several program counts: 1 (one program loops over every tile), 3 (tiles split unevenly) and 1000 (more
    programs than tiles); ``num_programs`` overrides them. A count below the number of tiles gives a program
    two tiles or more: only then does an accumulator that is not reset per tile show (and get its own
    feedback). ``ownership=True`` also requires every tile to be computed exactly once, by program
    ``tile % num_programs``, and no tile past the last (the visits/owner records of the notebook's given
    ``record_tile``, the grader's copy). ``aligned=True`` as in ``check_matmul``."""
    if dtype not in TOLERANCES:
        raise ValueError(f"dtype must be one of {sorted(TOLERANCES)}, got {dtype!r}")
    counts = list(num_programs) if num_programs is not None else [1, 3, 1000]
    for p in counts:
        if _TYPE(p) is not (0).__class__ or p < 1:
            raise ValueError(f"num_programs must be positive ints, got {p!r}")
    cases = kernel_cases.persistent_cases(hidden, noncontiguous, aligned)

    def extra_for(case):
        return [(p,) for p in counts]

    return _check("persistent", kernel, cases, extra_for, seed, dtype, name, hint,
                  after_factory=lambda: _Ownership(ownership))


def check_vector_add(kernel, *, hidden=False, dtype="float32", sizes=(), seed=0, name="vector_add", hint=None):
    """Check week 6's ``add_kernel`` (out = x + y) through the locked launcher's copy (BLOCK_SIZE=128)."""
    if dtype not in TOLERANCES:
        raise ValueError(f"dtype must be one of {sorted(TOLERANCES)}, got {dtype!r}")
    cases = kernel_cases.vector_add_cases(hidden, sizes)
    return _check("vector_add", kernel, cases, lambda case: [()], seed, dtype, name, hint)


def check_softmax(kernel, *, hidden=False, dtype="float32", shapes=(), seed=0, name="softmax", hint=None):
    """Check week 6's ``softmax_kernel`` (row-wise softmax) through the locked launcher's copy (one program
    per row, BLOCK_SIZE = next_power_of_2(n_cols)). Rows are padded in memory (row stride > n_cols)."""
    if dtype not in TOLERANCES:
        raise ValueError(f"dtype must be one of {sorted(TOLERANCES)}, got {dtype!r}")
    cases = kernel_cases.softmax_cases(hidden, shapes)
    return _check("softmax", kernel, cases, lambda case: [()], seed, dtype, name, hint)


# The namespaces whose bindings must not change while a student's kernel runs.
_NAMESPACES = (globals(), _trusted.__dict__, _trusted.GENUINE, kernel_cases.__dict__, launchers.__dict__,
               kernel_compile.__dict__, kernel_static.__dict__)


_seal.seal(__name__)
