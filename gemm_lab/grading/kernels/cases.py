"""The cases of the kernel checks: poisoned views, the checker's own inputs, pure-Python references.

Every input and output is a view inside a larger 1-D buffer (``_View``):

* input margins (before, after and between rows) hold NaN, so an unmasked read that reaches the output
  pollutes the result;
* the output buffer, margins *and* interior, is filled with ``SENTINEL`` (-7776.0), so an unmasked write
  shows up in the margins and an element that was never written still holds the sentinel.

Inputs are drawn by a private generator (``_Rand``) from values exactly representable in fp16 (multiples of
1/16 in [-2, 2] for matmul), so the fp32 accumulation is exact and the pure-Python reference is the true
answer; outputs are compared with a relative tolerance (``TOLERANCES``). The case builders
(``vector_add_cases``, ``softmax_cases``, ``matmul_cases``, ``persistent_cases``) give the visible cases and,
with ``hidden=True``, one-row, tall-skinny, K-not-a-multiple-of-BLOCK_K, padded-row and transposed cases.
"""

from __future__ import annotations

from types import MappingProxyType as _MappingProxy

__all__ = ["SENTINEL", "TOLERANCES", "vector_add_cases", "softmax_cases", "matmul_cases", "persistent_cases"]

SENTINEL = -7776.0  # exactly representable in fp16/bf16/fp32, never a result of these inputs
# output dtype -> (rel, abs): |got - ref| <= rel * |ref| + abs
TOLERANCES = _MappingProxy({
    "float16": (2.0 ** -8, 2.0 ** -10),
    "bfloat16": (2.0 ** -6, 2.0 ** -8),
    "float32": (1e-4, 1e-6),
})


class _Rand:
    """xorshift64*: the same values on every platform and torch version."""

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

    def __init__(self, name, shape, layout):
        self.name, self.shape, self.layout = name, shape, layout
        front, pad, back_rows = 16, 5, 160  # NaN margins: before, between rows (padded) and after the view
        if len(shape) == 1:
            (n,) = shape
            self.strides, self.offset = (1,), front
            self.size = front + n + 1100
            self.positions = [front + i for i in range(n)]
        else:
            R, C = shape
            if layout == "packed":
                strides = (C, 1)
            elif layout == "padded":
                strides = (C + pad, 1)
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
        return (k,) if len(self.shape) == 1 else divmod(k, self.shape[1])

    def where(self) -> str:
        words = {"packed": "연속", "padded": "행 사이 여백", "transposed": "전치(transposed) 뷰"}
        return f"{self.name}{list(self.shape)} {words[self.layout]}"


def _same_list(a, b) -> bool:
    """Equal element by element, NaN equal to NaN (the inputs' margins)."""
    return len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b, strict=True))


def _fmt(x) -> str:
    if x != x:
        return "nan"
    if x == SENTINEL:
        return "(쓰이지 않음)"
    return format(x, ".6g")


def _idx(view: _View, k: int) -> str:
    return f"{view.name}[{', '.join(str(i) for i in view.index(k))}]"


# --------------------------------------------------------------------------- references


def _ref_add(case, ins):
    x, y = ins
    return [a + b for a, b in zip(x, y, strict=True)]


def _ref_matmul(case, ins):
    """In float64: the inputs are multiples of 2**-4 up to 2 (``_mm_gen``), so every product and partial sum
    is exact and the order of the sums cannot change a bit."""
    import numpy as np

    a, b = ins
    M, K = case["inputs"][0].shape
    N = case["inputs"][1].shape[1]
    return (np.asarray(a, dtype=np.float64).reshape(M, K) @ np.asarray(b, dtype=np.float64).reshape(K, N)).ravel().tolist()


def _softmax_rows(x, R, C, pad_to=None):
    """Row-wise softmax; with ``pad_to``, what a kernel gets when it reads the padding up to ``pad_to`` columns
    as 0.0 instead of -inf."""
    from math import exp
    out = []
    for i in range(R):
        row = x[i * C:(i + 1) * C]
        m = max(row) if pad_to is None else max(*row, 0.0)
        e = [exp(v - m) for v in row]
        s = sum(e) + ((pad_to - C) * exp(0.0 - m) if pad_to is not None else 0.0)
        out.extend(v / s for v in e)
    return out


def _ref_softmax(case, ins):
    (x,) = ins
    R, C = case["inputs"][0].shape
    return _softmax_rows(x, R, C)


def next_pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


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
        scale = max(abs(ref[k]) for k in bad)
        worst = max(abs(got[k] - ref[k]) for k in bad)
        if scale > 0 and worst < 0.03 * scale:
            return ("오차가 작습니다(정밀도 문제): 누산기(accumulator)를 tl.float32로 두고 마지막에만 "
                    "출력 dtype으로 바꾸세요.")
        M, N = case["output"].shape
        rows, cols = {k // N for k in bad}, {k % N for k in bad}
        if K and len(bad) < len(got) and (len(rows) < M or len(cols) < N):
            return ("일부 행/열만 틀렸습니다: 가장자리 타일의 행·열 오프셋(% M, % N 또는 마스크)과 "
                    "pid_m·pid_n 계산을 확인하세요.")
        return ("포인터 계산을 확인하세요: a_ptrs/b_ptrs의 stride(stride_am, stride_ak, stride_bk, stride_bn), "
                "K 루프마다 BLOCK_K * stride_ak / BLOCK_K * stride_bk만큼 전진하는지.")

    return diagnose


def _diag_softmax(case):
    R, C = case["inputs"][0].shape

    def diagnose(got, ref, bad, ins):
        alt = _softmax_rows(ins[0], R, C, pad_to=next_pow2(C))
        close = all(abs(got[k] - alt[k]) <= 1e-4 * abs(alt[k]) + 1e-6 for k in bad)
        if close and next_pow2(C) > C:
            return ("범위 밖 칸을 -inf가 아닌 값(0.0 등)으로 읽은 것 같습니다: 합계에 exp(0 - max)가 더해졌습니다. "
                    "tl.load(..., mask=col_offsets < n_cols, other=-float('inf'))를 쓰세요.")
        if not all(0.999 < sum(got[i * C:(i + 1) * C]) < 1.001 for i in range(R)):
            return "행의 합이 1이 아닙니다: 최댓값 빼기, exp, 합으로 나누기를 같은 행 안에서 했는지 확인하세요."
        return "행 오프셋(row_idx * row_stride)과 열 오프셋을 확인하세요."

    return diagnose


# --------------------------------------------------------------------------- case builders


def _vec_gen(rng):  # vector add and softmax inputs
    return rng.grid(-4096, 4096, 1.0 / 1024)


def _mm_gen(rng):
    return rng.grid(-32, 32, 1.0 / 16)


_NAN_HINT_MM = ("K축 마스크(offs_k < K - k * BLOCK_K)와 A·B 로드의 mask를 확인하세요 "
                "(K가 BLOCK_K의 배수가 아닌 경우).")


_PADDED = ("padded", "padded", "padded")
_TRANSPOSED = ((45, 37, 29), ("transposed", "transposed", "padded"))  # a hidden case of both matmul checks


def _mm_case(M, N, K, la, lb, lc) -> dict:
    """One C = A @ B case: a [M, K] and b [K, N] inputs and a [M, N] output in the given view layouts."""
    case = {
        "inputs": [_View("a", (M, K), la), _View("b", (K, N), lb)],
        "output": _View("c", (M, N), lc),
        "gen": _mm_gen,
        "nan_hint": _NAN_HINT_MM,
        "ref": _ref_matmul,
    }
    case["diagnose"] = _diag_matmul(case)
    return case


def _mm_cases(specs, hidden_specs, hidden, extra_shapes, noncontiguous) -> list:
    """The cases of a matmul check: ``specs``, with ``hidden`` also ``hidden_specs`` and (``noncontiguous``) the
    transposed views, then ``extra_shapes`` padded."""
    if hidden:
        specs = specs + hidden_specs + [_TRANSPOSED] * noncontiguous
    specs = specs + [(s, _PADDED) for s in extra_shapes]
    return [_mm_case(M, N, K, la, lb, lc) for (M, N, K), (la, lb, lc) in specs]


def matmul_cases(hidden, extra_shapes=(), noncontiguous=True) -> list:
    return _mm_cases([
        ((64, 64, 64), ("packed", "packed", "packed")),
        ((37, 45, 50), ("packed", "packed", "packed")),       # K not a multiple of BLOCK_K, contiguous
        ((29, 40, 48), _PADDED),                              # row strides != row lengths
    ], [
        ((1, 33, 70), _PADDED),                               # one row, K not a multiple of 32/64
        ((130, 7, 45), _PADDED),                              # tall-skinny
        ((65, 129, 33), ("packed", "packed", "padded")),      # just past tile multiples
    ], hidden, extra_shapes, noncontiguous)



_PERSISTENT_TILE = 32  # the persistent launcher's BLOCK_M = BLOCK_N (exercises._launch_persistent)


def _diag_persistent(case, base):
    """``base`` (the matmul diagnosis), after looking for the persistent loop's own mistake: an accumulator
    made once before the tile loop, so each tile of a program also holds the sums of the program's earlier
    tiles (same position in the tile; a masked-off row or column adds 0 there), for some program count P."""
    M, N = case["output"].shape
    T = _PERSISTENT_TILE
    n_tiles_n = (N + T - 1) // T
    tiles = ((M + T - 1) // T) * n_tiles_n

    def carried(got, ref, P) -> bool:
        for first in range(P):
            acc = [0.0] * (T * T)  # the never-reset accumulator of program ``first``
            for t in range(first, tiles, P):
                i0, j0 = (t // n_tiles_n) * T, (t % n_tiles_n) * T
                for r in range(T if i0 + T <= M else M - i0):
                    for c in range(T if j0 + T <= N else N - j0):
                        k = (i0 + r) * N + j0 + c
                        want = ref[k] + acc[r * T + c]
                        if abs(got[k] - want) > 2.0 ** -8 * abs(want) + 2.0 ** -8:
                            return False
                        acc[r * T + c] = want
        return True

    def diagnose(got, ref, bad, ins):
        for P in range(1, tiles):
            if carried(got, ref, P):
                return ("누산기(acc)를 tile마다 0으로 다시 만들지 않은 것 같습니다: 각 tile의 값에 같은 program이 "
                        "앞서 계산한 tile들의 값이 더해져 있습니다 (program 하나가 tile을 2개 이상 맡을 때만 "
                        "드러납니다). acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)를 persistent 루프 안, "
                        "K 루프 바로 앞에 두세요.")
        return base(got, ref, bad, ins)

    return diagnose


def persistent_cases(hidden, extra_shapes=(), noncontiguous=True) -> list:
    cases = _mm_cases([((130, 70, 50), _PADDED)], [((1, 33, 70), _PADDED), ((200, 9, 45), _PADDED)], hidden,
                      extra_shapes, noncontiguous)
    for case in cases:
        case["unwritten_hint"] = (
            "프로그램 수가 타일 수보다 적으면 각 프로그램이 for tile_id in range(pid, num_tiles, NUM_PROGRAMS)로 "
            "여러 타일을 돌아야 합니다 (num_programs를 커널에 넘겼는지, 타일 좌표를 tile_id로 계산하는지 확인하세요)."
        )
        case["diagnose"] = _diag_persistent(case, case["diagnose"])
    return cases


def vector_add_cases(hidden, sizes=()) -> list:
    specs = [(1000, "packed"), (1, "packed")]
    if hidden:
        specs += [(3, "packed"), (1025, "packed"), (4097, "packed")]
    specs += [(n, "packed") for n in sizes]
    return [{
        "inputs": [_View("x", (n,), layout), _View("y", (n,), layout)],
        "output": _View("out", (n,), layout),
        "gen": _vec_gen,
        "nan_hint": "로드에 mask=offsets < n_elements를 주었는지 확인하세요.",
        "diagnose": _diag_add,
        "ref": _ref_add,
    } for n, layout in specs]


def softmax_cases(hidden, shapes=()) -> list:
    specs = [((5, 10), "packed"), ((17, 33), "padded")]
    if hidden:
        specs += [((1, 7), "padded"), ((3, 128), "packed"), ((6, 100), "padded"), ((40, 3), "padded")]
    specs += [(s, "padded") for s in shapes]
    cases = []
    for (R, C), layout in specs:
        case = {
            "inputs": [_View("x", (R, C), layout)],
            "output": _View("out", (R, C), layout),
            "gen": _vec_gen,
            "nan_hint": "열 마스크(col_offsets < n_cols)와 other=-float('inf')를 확인하세요.",
            "ref": _ref_softmax,
        }
        case["diagnose"] = _diag_softmax(case)
        cases.append(case)
    return cases
