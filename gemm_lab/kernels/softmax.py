"""Row-wise softmax: the naive five-pass torch version and the fused kernel of Triton Tutorial 02."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gemm_lab import runtime  # noqa: F401  (gemm_lab.kernels imports it before triton)

from . import _validate as v

MAX_BLOCK_SIZE = 1 << 16  # one row must fit in one program's registers


def naive_softmax(x: torch.Tensor) -> torch.Tensor:
    """Tutorial 02's naive_softmax: five torch passes (reads 5MN + 2M, writes 3MN + 2M elements)."""
    v.check_tensor("x", x, dims=2, dtypes=v.FLOAT_DTYPES + (torch.float64,))
    if x.shape[1] == 0 and x.shape[0] > 0:
        raise ValueError("softmax of an empty row is undefined (x has 0 columns)")
    if x.numel() == 0:
        return torch.empty_like(x)
    x_max = x.max(dim=1)[0]               # read MN, write M
    z = x - x_max[:, None]                # read MN + M, write MN
    numerator = torch.exp(z)              # read MN, write MN
    denominator = numerator.sum(dim=1)    # read MN, write M
    return numerator / denominator[:, None]  # read MN + M, write MN


def reference_softmax(x: torch.Tensor) -> torch.Tensor:
    """torch reference, computed in float32 and returned in x's dtype."""
    return torch.softmax(x.float(), dim=1).to(x.dtype)


@triton.jit
def softmax_kernel(
    output_ptr, input_ptr,
    input_row_stride, input_col_stride, output_row_stride, output_col_stride,
    n_rows, n_cols,
    BLOCK_SIZE: tl.constexpr,
):
    # one program per row; the whole row is loaded at once (BLOCK_SIZE >= n_cols)
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx.to(tl.int64) * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets * input_col_stride
    mask = col_offsets < n_cols
    # padding is -inf so that it changes neither the max nor the sum (exp(-inf) = 0)
    row = tl.load(input_ptrs, mask=mask, other=-float("inf")).to(tl.float32)
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx.to(tl.int64) * output_row_stride
    output_ptrs = output_row_start_ptr + col_offsets * output_col_stride
    tl.store(output_ptrs, softmax_output.to(output_ptr.dtype.element_ty), mask=mask)


def _num_warps(block_size: int) -> int:
    if block_size >= 8192:
        return 16
    if block_size >= 2048:
        return 8
    return 4


def softmax(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """Fused row-wise softmax of a 2-D tensor (any strides), computed in fp32.

    BLOCK_SIZE = next_power_of_2(n_cols); rows longer than 65,536 are refused (they don't fit one
    program). ``out`` may be a strided view; it must not overlap ``x``.
    """
    v.check_tensor("x", x, dims=2, dtypes=v.FLOAT_DTYPES)
    v.check_no_interpreter_bf16(what="softmax", x=x)
    n_rows, n_cols = x.shape
    if out is None:
        out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    else:
        v.check_out("out", out, (n_rows, n_cols), (x.dtype,), x, x=x)
    if n_rows == 0:
        return out
    if n_cols == 0:
        raise ValueError("softmax of an empty row is undefined (x has 0 columns)")
    block_size = triton.next_power_of_2(n_cols)
    if block_size > MAX_BLOCK_SIZE:
        raise ValueError(f"rows of {n_cols} elements do not fit one program (max {MAX_BLOCK_SIZE})")
    v.check_int32("x", x[:1])
    softmax_kernel[(n_rows,)](
        out, x, x.stride(0), x.stride(1), out.stride(0), out.stride(1), n_rows, n_cols,
        BLOCK_SIZE=block_size, num_warps=_num_warps(block_size),
    )
    return out
