"""Vector addition (Triton Tutorial 01): one program adds one BLOCK_SIZE-long block of elements."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gemm_lab import runtime  # noqa: F401  (gemm_lab.kernels imports it before triton)

from . import _validate as v

_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32, torch.int64)


@triton.jit
def add_kernel(
    x_ptr, y_ptr, output_ptr,       # pointers to the first input, second input and output
    n_elements,                     # number of elements
    stride_x, stride_y, stride_out,  # element strides (1 for contiguous tensors)
    BLOCK_SIZE: tl.constexpr,       # elements each program handles
    UPCAST: tl.constexpr,           # add 16-bit floats in fp32 (same rounded result, interpreter-safe)
):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements  # the last block may run past the end
    x = tl.load(x_ptr + offsets * stride_x, mask=mask)
    y = tl.load(y_ptr + offsets * stride_y, mask=mask)
    if UPCAST:
        output = (x.to(tl.float32) + y.to(tl.float32)).to(output_ptr.dtype.element_ty)
    else:
        output = x + y
    tl.store(output_ptr + offsets * stride_out, output, mask=mask)


def reference_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """torch reference."""
    return x + y


def vector_add(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor | None = None, *,
               BLOCK_SIZE: int = 1024) -> torch.Tensor:
    """out = x + y for two tensors of one shape and dtype.

    1-D tensors may have any stride; N-D tensors must be contiguous (they are added as flat vectors).
    ``out`` (optional) must have the same shape and dtype and must not overlap the inputs.
    """
    v.check_tensor("x", x, dtypes=_DTYPES)
    v.check_tensor("y", y, dtypes=_DTYPES)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got {tuple(x.shape)} and {tuple(y.shape)}")
    if x.dtype != y.dtype:
        raise TypeError(f"x and y must have the same dtype, got {v.dtype_name(x.dtype)} and {v.dtype_name(y.dtype)}")
    v.check_same_device(x=x, y=y)
    v.check_no_interpreter_bf16(what="vector_add", x=x, y=y)
    v.check_pow2("BLOCK_SIZE", BLOCK_SIZE, minimum=16, maximum=1 << 16)
    if out is None:
        out = torch.empty_like(x, memory_format=torch.contiguous_format)
    else:
        v.check_tensor("out", out, dtypes=(x.dtype,))
        if out.shape != x.shape:
            raise ValueError(f"out has shape {tuple(out.shape)}, expected {tuple(x.shape)}")
        v.check_same_device(out=out, x=x)
        v.check_writable("out", out)
        v.check_no_overlap("out", out, x=x, y=y)
    n = x.numel()
    if n == 0:
        return out
    if x.dim() == 1:
        strides = (x.stride(0), y.stride(0), out.stride(0))
    else:
        for name, t in (("x", x), ("y", y), ("out", out)):
            if not t.is_contiguous():
                raise ValueError(f"{name} is a non-contiguous {t.dim()}-D tensor: pass 1-D views or call .contiguous()")
        strides = (1, 1, 1)
    for name, t in (("x", x), ("y", y), ("out", out)):
        v.check_int32(name, t)
    upcast = x.dtype in (torch.float16, torch.bfloat16)
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    add_kernel[grid](x, y, out, n, *strides, BLOCK_SIZE=BLOCK_SIZE, UPCAST=upcast)
    return out
