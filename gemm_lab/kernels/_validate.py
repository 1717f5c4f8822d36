"""Input validation shared by the launchers: a clear ValueError/TypeError, never a wrong result."""

from __future__ import annotations

import torch

from gemm_lab import runtime

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
_INT32_MAX = 2**31 - 1


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def check_tensor(name: str, t, *, dims: int | tuple[int, ...] | None = None, dtypes=None) -> None:
    """Type, dimensionality, dtype and device of one launcher argument."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if dims is not None:
        nd = t.dim()
        if nd != dims if isinstance(dims, int) else nd not in dims:
            allowed = (dims,) if isinstance(dims, int) else tuple(dims)
            want = " or ".join(f"{d}-D" for d in allowed)
            raise ValueError(f"{name} must be {want}, got a {nd}-D tensor of shape {tuple(t.shape)}")
    big = [s for s in t.shape if s > _INT32_MAX]
    if big:
        raise ValueError(f"{name} has a dimension of {big[0]:,} elements: sizes must fit int32 (< 2**31)")
    if dtypes is not None and t.dtype not in dtypes:
        want = ", ".join(dtype_name(d) for d in dtypes)
        raise TypeError(f"{name} has dtype {dtype_name(t.dtype)}; supported: {want}")
    check_device(name, t)


def check_device(name: str, t: torch.Tensor) -> None:
    want = runtime.device()
    if t.device.type != want:
        where = "the CPU interpreter (no CUDA device)" if want == "cpu" else "a CUDA device"
        raise ValueError(
            f"{name} is on {t.device}, but kernels run on {where}: move it with .to({want!r})"
        )


def check_same_device(**tensors: torch.Tensor) -> None:
    devices = {n: t.device for n, t in tensors.items()}
    if len(set(devices.values())) > 1:
        listing = ", ".join(f"{n} on {d}" for n, d in devices.items())
        raise ValueError(f"tensors must be on one device: {listing}")


def last_offset(t: torch.Tensor) -> int:
    """Offset (in elements) of the last element of a strided tensor; -1 for an empty one."""
    last = 0
    for size, stride in zip(t.shape, t.stride(), strict=True):
        if size == 0:
            return -1
        last += (size - 1) * stride
    return last


def span(t: torch.Tensor) -> tuple[int, int]:
    """[first, last] byte address touched by a strided tensor (empty tensors: an empty span)."""
    last = last_offset(t)
    start = t.data_ptr()
    return (start, start + (last + 1) * t.element_size() - 1)


# above this many bytes in the shared span, overlap is decided conservatively (refused)
_EXACT_OVERLAP_LIMIT = 1 << 22


def _grid_box(t: torch.Tensor, row_stride: int, base: int):
    """(rows, cols) element intervals of a unit-inner-stride 2-D tensor laid on a grid of rows of
    ``row_stride`` elements starting at byte ``base``; None when it does not fit that grid."""
    es = t.element_size()
    dims = [(st, sz) for sz, st in zip(t.shape, t.stride(), strict=True) if sz > 1]
    inner = [sz for st, sz in dims if st == 1]
    outer = [(st, sz) for st, sz in dims if st != 1]
    if len(inner) > 1 or len(outer) > 1 or (outer and outer[0][0] != row_stride):
        return None
    off, rem = divmod(t.data_ptr() - base, es)
    if rem:
        return None
    row, col = divmod(off, row_stride)
    cols = inner[0] if inner else 1
    rows = outer[0][1] if outer else 1
    if col + cols > row_stride:
        return None
    return (row, row + rows), (col, col + cols)


def _byte_mask(t: torch.Tensor, lo: int, hi: int) -> torch.Tensor:
    """Bool mask over bytes [lo, hi] marking the bytes ``t``'s elements occupy."""
    es = t.element_size()
    offs = torch.zeros((), dtype=torch.int64)
    for size, stride in zip(t.shape, t.stride(), strict=True):
        offs = (offs.unsqueeze(-1) + torch.arange(size, dtype=torch.int64) * stride)
    starts = offs.reshape(-1) * es + (t.data_ptr() - lo)
    mask = torch.zeros(hi - lo + 1, dtype=torch.bool)
    for k in range(es):
        idx = starts + k
        idx = idx[(idx >= 0) & (idx <= hi - lo)]
        mask[idx] = True
    return mask


def overlaps(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Whether two strided tensors share a byte of memory (exact; conservative only beyond
    ``_EXACT_OVERLAP_LIMIT`` bytes of shared span that no simple layout rule decides)."""
    a_lo, a_hi = span(x)
    b_lo, b_hi = span(y)
    if a_hi < a_lo or b_hi < b_lo or a_hi < b_lo or b_hi < a_lo:
        return False
    if x.device != y.device:
        return False
    # both row- (or column-) slices of one matrix with the same row stride: compare boxes
    for xt, yt in ((x, y), (x.t(), y.t())) if x.dim() == 2 and y.dim() == 2 else ():
        if xt.element_size() != y.element_size() or xt.stride(-1) != 1 or yt.stride(-1) != 1:
            continue
        row_stride = xt.stride(0) if xt.shape[0] > 1 else yt.stride(0)
        if row_stride < 1:
            continue
        base = min(xt.data_ptr(), yt.data_ptr())
        bx, by = _grid_box(xt, row_stride, base), _grid_box(yt, row_stride, base)
        if bx is not None and by is not None:
            return all(p[0] < q[1] and q[0] < p[1] for p, q in zip(bx, by, strict=True))
    lo, hi = max(a_lo, b_lo), min(a_hi, b_hi)
    if hi - lo + 1 > _EXACT_OVERLAP_LIMIT or x.numel() > _EXACT_OVERLAP_LIMIT or y.numel() > _EXACT_OVERLAP_LIMIT:
        return True
    return bool((_byte_mask(x, lo, hi) & _byte_mask(y, lo, hi)).any().item())


def check_no_overlap(out_name: str, out: torch.Tensor, **inputs: torch.Tensor) -> None:
    for name, t in inputs.items():
        if overlaps(out, t):
            raise ValueError(f"{out_name} overlaps the memory of {name}: pass a separate output buffer")


def check_writable(name: str, t: torch.Tensor) -> None:
    """An output must give every element its own memory (no stride-0 / expanded dimensions)."""
    dims = []
    for size, stride in zip(t.shape, t.stride(), strict=True):
        if size > 1:
            if stride == 0:
                raise ValueError(
                    f"{name} has a broadcast (stride 0) dimension: every output element needs its own memory")
            dims.append((stride, size))
    # overlapping strides such as as_strided(...) with a stride smaller than the inner extent
    if len(dims) > 1:
        dims.sort()
        extent = 1
        for stride, size in dims:
            if stride < extent:
                raise ValueError(f"{name} has overlapping strides {tuple(t.stride())}: elements would share memory")
            extent = stride * size


def check_int32(name: str, t: torch.Tensor) -> None:
    """Triton computes offsets in int32 for these kernels: refuse tensors whose offsets overflow."""
    last = last_offset(t)
    if last > _INT32_MAX:
        raise ValueError(f"{name} spans {last + 1:,} elements: offsets would overflow int32 in this kernel")


def check_out(name: str, out, shape: tuple[int, ...], dtypes, like: torch.Tensor, **inputs: torch.Tensor):
    """Validate a caller's preallocated output (any strides, but no aliasing)."""
    check_tensor(name, out, dims=len(shape), dtypes=dtypes)
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{name} has shape {tuple(out.shape)}, expected {tuple(shape)}")
    if out.device != like.device:
        check_same_device(**{name: out, "input": like})
    check_writable(name, out)
    check_int32(name, out)
    check_no_overlap(name, out, **inputs)
    return out


def check_pow2(name: str, value, *, minimum: int = 1, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum or value & (value - 1):
        raise ValueError(f"{name} must be a power of two >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_positive_int(name: str, value, *, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_no_interpreter_bf16(*, what: str, **tensors: torch.Tensor) -> None:
    """bf16 in the interpreter: tl.dot multiplies raw bit patterns (triton issue #11584), bf16 adds give
    NaN, and fp32 -> bf16 conversion truncates instead of rounding: refuse rather than be wrong."""
    bf16 = [name for name, t in tensors.items() if t.dtype == torch.bfloat16]
    if runtime.INTERPRET and bf16:
        raise TypeError(
            f"{' and '.join(bf16)} {'is' if len(bf16) == 1 else 'are'} bfloat16: "
            f"{what} with bfloat16 tensors gives wrong results in the Triton CPU interpreter "
            "(bf16 values are stored as raw 16-bit integers, triton issue #11584; conversions truncate): "
            "use float16/float32 on the CPU, or run on a GPU"
        )
