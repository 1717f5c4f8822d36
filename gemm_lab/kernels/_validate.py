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


def check_no_overlap(out_name: str, out: torch.Tensor, **inputs: torch.Tensor) -> None:
    lo, hi = span(out)
    if hi < lo:
        return
    for name, t in inputs.items():
        a, b = span(t)
        if lo <= b and a <= hi and a <= b:
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


def check_positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def check_no_interpreter_bf16(*tensors: torch.Tensor, what: str) -> None:
    """bf16 in the interpreter: tl.dot multiplies raw bit patterns (triton issue #11584), bf16 adds give
    NaN, and fp32 -> bf16 conversion truncates instead of rounding: refuse rather than be wrong."""
    if runtime.INTERPRET and any(t.dtype == torch.bfloat16 for t in tensors):
        raise TypeError(
            f"{what} with bfloat16 tensors gives wrong results in the Triton CPU interpreter "
            "(bf16 values are stored as raw 16-bit integers, triton issue #11584; conversions truncate): "
            "use float16/float32 on the CPU, or run on a GPU"
        )
