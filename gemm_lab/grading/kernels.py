"""Kernel checks: run a student's launcher on poisoned views and explain what went wrong, in Korean.

``check_vector_add(launch)`` (``launch(x, y, out)``), ``check_softmax(launch)`` (``launch(x, out)``, row-wise),
``check_matmul(launch)`` (``launch(a, b, c)``), ``check_persistent(launch)`` (``launch(a, b, c, num_programs)``).
The launcher must write its result into the output it is given.

Every input and output is a view inside a larger 1-D buffer:

* input margins (before, after and between rows) hold NaN, so an unmasked read pollutes the result;
* the output buffer, margins *and* interior, is filled with a sentinel (-7776.0), so an unmasked write
  shows up in the margins and an element that was never written still holds the sentinel.

Shapes: small, non-multiples of the usual tile sizes; ``hidden=True`` adds one-row, tall-skinny,
K-not-a-multiple-of-BLOCK_K, padded-row and (for matmul) transposed-input cases. Inputs are drawn by a
private generator from values exactly representable in fp16 (multiples of 1/16 in [-2, 2]), so the fp32
accumulation is exact and the pure-Python reference is the true answer; fp16 outputs are compared with a
relative tolerance (``rel * |ref| + abs``, see ``TOLERANCES``), never the course's ``atol=1e-2, rtol=0``,
which a correct kernel fails at fp16 magnitudes 16-32.

What the margins cannot see: an unmasked *load* whose lanes are then masked at the store (the NaN is
read but never stored) gives a right answer here; on a GPU it may read out of bounds. Only a sanitizer
(``compute-sanitizer``) catches that. bf16 only works on a GPU (the interpreter's bf16 ``tl.dot`` is wrong).

Tamper resistance (see ``gemm_lab.grading.integrity``): inputs are written and read back through the
C-level ``torch._C.TensorBase`` methods (an immutable type: a notebook cannot patch them), the reference
is computed in plain Python, nothing calls ``torch.allclose``/``np.allclose``, and the built-ins are
checked again after the student's launcher ran. torch is imported only when a kernel check runs.
"""

from __future__ import annotations

from types import MappingProxyType as _MappingProxy

from . import _seal, _trusted
from .feedback import REAL_ASSERTION_ERROR

__all__ = ["check_vector_add", "check_softmax", "check_matmul", "check_persistent", "TOLERANCES", "SENTINEL"]

SENTINEL = -7776.0  # exactly representable in fp16/bf16/fp32, never a result of these inputs
# output dtype -> (rel, abs): |got - ref| <= rel * |ref| + abs
TOLERANCES = _MappingProxy({
    "float16": (2.0 ** -8, 2.0 ** -10),
    "bfloat16": (2.0 ** -6, 2.0 ** -8),
    "float32": (1e-4, 1e-6),
})
_NAN = float("nan")
_BASE_EXC = _trusted.REAL_BASE_EXCEPTION
_TYPE = (0).__class__.__class__
_FLOAT = (0.0).__class__
_INT = (0).__class__
_LIST = [].__class__


class _Fail(_trusted.REAL_EXCEPTION):
    pass


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


def _math_exp():
    import math

    f = math.exp
    if _TYPE(f) is not [].append.__class__ or f.__name__ != "exp" or f.__self__.__name__ != "math":
        raise REAL_ASSERTION_ERROR("❌ 채점 환경이 바뀌었습니다: math.exp가 바뀌어 있습니다.")
    return f


class _Rand:
    """xorshift64*: the checker's own generator (torch.randn / random can be patched by a notebook)."""

    def __init__(self, seed: int):
        self.s = (seed * 0x9E3779B97F4A7C15 + 0x1234567) & 0xFFFFFFFFFFFFFFFF or 1

    def next(self) -> int:
        s = self.s
        s ^= (s >> 12)
        s ^= (s << 25) & 0xFFFFFFFFFFFFFFFF
        s ^= (s >> 27)
        self.s = s
        return ((s * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF) >> 11

    def grid(self, lo: int, hi: int, scale: float) -> float:
        """A value k * scale with lo <= k <= hi."""
        return (lo + self.next() % (hi - lo + 1)) * scale


# --------------------------------------------------------------------------- poisoned buffers


class _View:
    """A logical tensor placed in a flat buffer; positions are computed here, not asked from torch."""

    def __init__(self, name, shape, layout, front=16, pad=5, back_rows=160):
        self.name, self.shape, self.layout = name, shape, layout
        if len(shape) == 1:
            (n,) = shape
            step = 2 if layout == "strided" else 1
            self.strides = (step,)
            self.offset = front
            self.size = front + (n - 1) * step + 1 + 1100 if n else front + 1100
            self.positions = [front + i * step for i in range(n)]
        else:
            R, C = shape
            if layout == "packed":
                strides = (C, 1)
            elif layout == "padded":
                strides = (C + pad, 1)
            elif layout == "aligned":  # row stride and offset multiples of 16 bytes (TMA descriptors)
                strides = ((C + pad + 7) // 8 * 8, 1)
                front = 64
            elif layout == "transposed":
                strides = (1, R + pad)
            else:
                raise ValueError(f"unknown layout {layout!r}")
            self.strides = strides
            self.offset = front
            last = front + (R - 1) * strides[0] + (C - 1) * strides[1]
            ld = strides[0] if layout != "transposed" else strides[1]
            self.size = last + 1 + back_rows * (ld + 1) + 64
            self.positions = [front + i * strides[0] + j * strides[1] for i in range(R) for j in range(C)]

    def index(self, k: int) -> tuple:
        """Logical index of the k-th element (row-major)."""
        if len(self.shape) == 1:
            return (k,)
        return (k // self.shape[1], k % self.shape[1])

    def where(self) -> str:
        words = {"packed": "연속", "padded": "행 사이 여백", "aligned": "행 사이 여백(16바이트 정렬)",
                 "transposed": "전치(transposed) 뷰", "strided": "stride 2"}
        return f"{self.name}{list(self.shape)} {words[self.layout]}"


def _build(torch, tb, view: _View, values, fill, dtype, device):
    flat = [fill] * view.size
    for p, v in zip(view.positions, values, strict=True):
        flat[p] = v
    buf = torch.tensor(flat, dtype=dtype)
    back = tb.tolist(buf)
    if not _same_list(back, flat):
        raise REAL_ASSERTION_ERROR("❌ 채점 환경이 바뀌었습니다: torch.tensor가 준 값과 다른 텐서를 만듭니다.")
    if device != "cpu":
        buf = tb.to(buf, device)
    t = tb.as_strided(buf, view.shape, view.strides, view.offset)
    esize = tb.element_size(buf)
    if (
        _TYPE(t) is not _TYPE(buf)
        or tuple(tb.stride(t)) != view.strides
        or tb.storage_offset(t) != view.offset
        or tb.data_ptr(t) != tb.data_ptr(buf) + view.offset * esize
        or tuple(tb.size(t)) != view.shape
    ):
        raise REAL_ASSERTION_ERROR("❌ 채점 환경이 바뀌었습니다: 텐서 뷰(as_strided)가 요청과 다릅니다.")
    return buf, t, flat


def _same_list(a, b) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x != y and not (x != x and y != y):
            return False
    return True


def _read(tb, buf):
    return tb.tolist(tb.cpu(buf))


# --------------------------------------------------------------------------- one case


def _fmt(x) -> str:
    if x != x:
        return "nan"
    if x == SENTINEL:
        return "(쓰이지 않음)"
    return format(x, ".6g")


def _idx(view: _View, k: int) -> str:
    return f"{view.name}[{', '.join(str(i) for i in view.index(k))}]"


def _run_case(kernel, launch, case, extra_args, rng, torch, tb, device, dtype_name, ref_fn):
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
    ref = ref_fn(case, in_read)
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


def _run_cases(kernel, launch, cases, extra_for, seed, dtype_name, ref_fn, hint=None):
    """Run every case; print ✅ or raise the genuine AssertionError naming the case."""
    _trusted.guard(kernel)
    if not callable(launch):
        raise REAL_ASSERTION_ERROR(f"❌ {kernel}: launch 함수를 기대했지만 {_TYPE(launch).__name__}을(를) 받았습니다.")
    user_hint = hint
    torch, tb = _torch()
    device = _device(torch)
    rng = _Rand(seed)
    passed_layouts = set()
    for n, case in enumerate(cases, 1):
        for extra in extra_for(case):
            reason = _run_case(kernel, launch, case, extra, rng, torch, tb, device, dtype_name, ref_fn)
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
    _trusted.guard(kernel)
    runs = 0
    for case in cases:
        runs += len(extra_for(case))
    what = f"{len(cases)}개 경우" if runs == len(cases) else f"{len(cases)}개 경우 × 실행 {runs}번"
    print(f"✅ {kernel}: {what} 모두 통과 (여백 오염·미기록 원소 없음, 기준값과 일치)")
    return None


# --------------------------------------------------------------------------- references


def _ref_add(case, ins):
    x, y = ins
    return [a + b for a, b in zip(x, y, strict=True)]


def _ref_matmul(case, ins):
    a, b = ins
    M, K = case["inputs"][0].shape
    N = case["inputs"][1].shape[1]
    out = []
    for i in range(M):
        row = a[i * K:(i + 1) * K]
        for j in range(N):
            s = 0.0
            for k in range(K):
                s += row[k] * b[k * N + j]
            out.append(s)
    return out


def _softmax_rows(x, R, C, pad_to=None):
    exp = _math_exp()
    out = []
    for i in range(R):
        row = x[i * C:(i + 1) * C]
        m = row[0]
        for v in row:
            if v > m:
                m = v
        e = [exp(v - m) for v in row]
        s = 0.0
        for v in e:
            s += v
        if pad_to is not None:  # what a kernel gets when it reads padding as 0.0 instead of -inf
            m0 = m if m > 0.0 else 0.0
            e = [exp(v - m0) for v in row]
            s = 0.0
            for v in e:
                s += v
            s += (pad_to - C) * exp(0.0 - m0)
        out.extend(v / s for v in e)
    return out


def _ref_softmax(case, ins):
    (x,) = ins
    R, C = case["inputs"][0].shape
    return _softmax_rows(x, R, C)


def _next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


# --------------------------------------------------------------------------- diagnoses


def _diag_add(got, ref, bad, ins):
    return "x + y를 원소별로 더했는지, 오프셋(pid * BLOCK_SIZE + tl.arange)을 확인하세요."


def _diag_matmul(case):
    K = case["inputs"][0].shape[1]

    def diagnose(got, ref, bad, ins):
        diffs = [got[k] - ref[k] for k in bad]
        lo, hi = min(diffs), max(diffs)
        if len(bad) == len(got) and lo > 0.5 and hi - lo < 0.05 * hi + 0.1:
            return (f"K축 마스크의 other 값이 0.0이 아닌 것 같습니다: 모든 원소가 약 {format(lo, '.3g')}만큼 큽니다 "
                    "(마지막 K 블록의 빈 칸 수 × other × other). tl.load(..., mask=..., other=0.0)을 쓰세요.")
        scale = 0.0
        for k in bad:
            r = ref[k] if ref[k] >= 0 else -ref[k]
            scale = r if r > scale else scale
        worst = 0.0
        for k in bad:
            d = got[k] - ref[k]
            d = d if d >= 0 else -d
            worst = d if d > worst else worst
        if scale > 0 and worst < 0.03 * scale:
            return ("오차가 작습니다(정밀도 문제): 누산기(accumulator)를 tl.float32로 두고 마지막에만 "
                    "출력 dtype으로 바꾸세요.")
        M = case["inputs"][0].shape[0]
        N = case["inputs"][1].shape[1]
        rows = {k // N for k in bad}
        cols = {k % N for k in bad}
        if K and len(bad) < len(got) and (len(rows) < M or len(cols) < N):
            return ("일부 행/열만 틀렸습니다: 가장자리 타일의 행·열 오프셋(% M, % N 또는 마스크)과 "
                    "pid_m·pid_n 계산을 확인하세요.")
        return ("포인터 계산을 확인하세요: a_ptrs/b_ptrs의 stride(stride_am, stride_ak, stride_bk, stride_bn), "
                "K 루프마다 BLOCK_K * stride_ak / BLOCK_K * stride_bk만큼 전진하는지.")

    return diagnose


def _diag_softmax(case):
    R, C = case["inputs"][0].shape

    def diagnose(got, ref, bad, ins):
        alt = _softmax_rows(ins[0], R, C, pad_to=_next_pow2(C))
        close = True
        for k in bad:
            d = got[k] - alt[k]
            d = d if d >= 0 else -d
            if d > 1e-4 * (alt[k] if alt[k] >= 0 else -alt[k]) + 1e-6:
                close = False
                break
        if close and _next_pow2(C) > C:
            return ("범위 밖 칸을 -inf가 아닌 값(0.0 등)으로 읽은 것 같습니다: 합계에 exp(0 - max)가 더해졌습니다. "
                    "tl.load(..., mask=col_offsets < n_cols, other=-float('inf'))를 쓰세요.")
        sums_ok = True
        for i in range(R):
            s = 0.0
            for v in got[i * C:(i + 1) * C]:
                s += v
            if not (0.999 < s < 1.001):
                sums_ok = False
        if not sums_ok:
            return "행의 합이 1이 아닙니다: 최댓값 빼기, exp, 합으로 나누기를 같은 행 안에서 했는지 확인하세요."
        return "행 오프셋(row_idx * row_stride)과 열 오프셋을 확인하세요."

    return diagnose


# --------------------------------------------------------------------------- public checks

def _vec_gen(rng):
    return rng.grid(-4096, 4096, 1.0 / 1024)


def _sm_gen(rng):
    return rng.grid(-4096, 4096, 1.0 / 1024)


def _mm_gen(rng):
    return rng.grid(-32, 32, 1.0 / 16)


_NAN_HINT_MM = ("K축 마스크(offs_k < K - k * BLOCK_K)와 A·B 로드의 mask를 확인하세요 "
                "(K가 BLOCK_K의 배수가 아닌 경우).")


def _align(specs, aligned):
    """With ``aligned``, every view gets 16-byte-aligned row strides and no transposed views (TMA)."""
    if not aligned:
        return specs
    return [(shape, ("aligned",) * 3) for shape, layouts in specs if "transposed" not in layouts]


def _mm_case(M, N, K, la, lb, lc) -> dict:
    """One C = A @ B case: a [M, K] and b [K, N] inputs and a [M, N] output in the given view layouts."""
    case = {
        "inputs": [_View("a", (M, K), la), _View("b", (K, N), lb)],
        "output": _View("c", (M, N), lc),
        "gen": _mm_gen,
        "nan_hint": _NAN_HINT_MM,
    }
    case["diagnose"] = _diag_matmul(case)
    return case


def _matmul_cases(hidden, noncontiguous, extra_shapes=(), aligned=False):
    specs = [
        ((64, 64, 64), ("packed", "packed", "packed")),
        ((37, 45, 50), ("packed", "packed", "packed")),       # K not a multiple of BLOCK_K, contiguous
        ((29, 40, 48), ("padded", "padded", "padded")),       # row strides != row lengths
    ]
    if hidden:
        specs += [
            ((1, 33, 70), ("padded", "padded", "padded")),        # one row, K not a multiple of 32/64
            ((130, 7, 45), ("padded", "padded", "padded")),       # tall-skinny
            ((65, 129, 33), ("packed", "packed", "padded")),      # just past tile multiples
        ]
        if noncontiguous:
            specs += [((45, 37, 29), ("transposed", "transposed", "padded"))]
    specs += [(s, ("padded", "padded", "padded")) for s in extra_shapes]
    return [_mm_case(M, N, K, la, lb, lc) for (M, N, K), (la, lb, lc) in _align(specs, aligned)]


def check_matmul(launch, *, hidden=False, noncontiguous=True, dtype="float16", shapes=(), seed=0,
                 name="matmul", hint=None, aligned=False):
    """Check ``launch(a, b, c)`` (writes A @ B into c) on poisoned views; ``shapes``: extra (M, N, K).

    ``dtype``: inputs and output dtype ("float16" default, "float32"; "bfloat16" only on a GPU).
    ``aligned=True``: only views whose row strides and offsets are multiples of 16 bytes (what a TMA
    tensor descriptor needs), no transposed views.
    """
    if dtype not in TOLERANCES:
        raise ValueError(f"dtype must be one of {sorted(TOLERANCES)}, got {dtype!r}")
    cases = _matmul_cases(hidden, noncontiguous, shapes, aligned)
    return _run_cases(name, launch, cases, lambda case: [()], seed, dtype, _ref_matmul, hint)


def check_persistent(launch, *, hidden=False, noncontiguous=True, dtype="float16", num_programs=None, seed=0,
                     name="persistent_matmul", hint=None, aligned=False):
    """Check ``launch(a, b, c, num_programs)`` for several program counts: 1 (one program loops over every
    tile), 3 (tiles split unevenly) and 1000 (more programs than tiles); ``num_programs`` overrides them.
    ``aligned=True`` as in ``check_matmul`` (for TMA kernels)."""
    if dtype not in TOLERANCES:
        raise ValueError(f"dtype must be one of {sorted(TOLERANCES)}, got {dtype!r}")
    counts = list(num_programs) if num_programs is not None else [1, 3, 1000]
    specs = [((130, 70, 50), ("padded", "padded", "padded"))]
    if hidden:
        specs += [((1, 33, 70), ("padded", "padded", "padded")), ((200, 9, 45), ("padded", "padded", "padded"))]
        if noncontiguous:
            specs += [((45, 37, 29), ("transposed", "transposed", "padded"))]
    cases = []
    for (M, N, K), (la, lb, lc) in _align(specs, aligned):
        case = _mm_case(M, N, K, la, lb, lc)
        case["unwritten_hint"] = (
            "프로그램 수가 타일 수보다 적으면 각 프로그램이 for tile_id in range(pid, num_tiles, NUM_PROGRAMS)로 "
            "여러 타일을 돌아야 합니다 (num_programs를 커널에 넘겼는지, 타일 좌표를 tile_id로 계산하는지 확인하세요)."
        )
        cases.append(case)

    def extra_for(case):
        return [(p,) for p in counts]

    return _run_cases(name, launch, cases, extra_for, seed, dtype, _ref_matmul, hint)


def check_vector_add(launch, *, hidden=False, noncontiguous=False, dtype="float32", sizes=(), seed=0,
                     name="vector_add", hint=None):
    """Check ``launch(x, y, out)`` (writes x + y into out) on 1-D poisoned views.

    ``noncontiguous=True`` adds stride-2 views (only for kernels that take strides).
    """
    if dtype not in TOLERANCES:
        raise ValueError(f"dtype must be one of {sorted(TOLERANCES)}, got {dtype!r}")
    specs = [(1000, "packed"), (1, "packed")]
    if hidden:
        specs += [(3, "packed"), (1025, "packed"), (4097, "packed")]
        if noncontiguous:
            specs += [(777, "strided")]
    specs += [(n, "packed") for n in sizes]
    cases = []
    for n, layout in specs:
        cases.append({
            "inputs": [_View("x", (n,), layout), _View("y", (n,), layout)],
            "output": _View("out", (n,), layout),
            "gen": _vec_gen,
            "nan_hint": "로드에 mask=offsets < n_elements를 주었는지 확인하세요.",
            "diagnose": _diag_add,
        })
    return _run_cases(name, launch, cases, lambda case: [()], seed, dtype, _ref_add, hint)


def check_softmax(launch, *, hidden=False, dtype="float32", shapes=(), seed=0, name="softmax", hint=None):
    """Check ``launch(x, out)`` (row-wise softmax of a 2-D x into out) on poisoned views.

    Rows are padded in memory (row stride > n_cols), so the kernel must use x.stride(0)/out.stride(0).
    """
    if dtype not in TOLERANCES:
        raise ValueError(f"dtype must be one of {sorted(TOLERANCES)}, got {dtype!r}")
    specs = [((5, 10), "packed"), ((17, 33), "padded")]
    if hidden:
        specs += [((1, 7), "padded"), ((3, 128), "packed"), ((6, 100), "padded"), ((40, 3), "padded")]
    specs += [(s, "padded") for s in shapes]
    cases = []
    for (R, C), layout in specs:
        case = {
            "inputs": [_View("x", (R, C), layout)],
            "output": _View("out", (R, C), layout),
            "gen": _sm_gen,
            "nan_hint": "열 마스크(col_offsets < n_cols)와 other=-float('inf')를 확인하세요.",
        }
        case["diagnose"] = _diag_softmax(case)
        cases.append(case)
    return _run_cases(name, launch, cases, lambda case: [()], seed, dtype, _ref_softmax, hint)


# The namespaces whose bindings must not change while a student's launcher runs.
_NAMESPACES = (globals(), _trusted.__dict__, _trusted.GENUINE)


_seal.seal(__name__)
