"""fp8 (e4m3) matmul through the tensor-descriptor persistent kernel: fp8 tiles loaded by TMA, tl.dot
accumulating in fp32 (wgmma on Hopper), the result stored as float16 / bfloat16 / float32.

On Hopper an fp8 wgmma wants both operands K-major, so B is used as B^T rows: pass ``b`` as a
column-major view (``b = bt.t()`` with ``bt`` a contiguous [N, K] tensor, as torch._scaled_mm wants it)
and nothing is copied; a row-major ``b`` is first copied into that layout. Per-tensor scales multiply the
fp32 result before it is rounded (``scale_a * scale_b * (A @ B)``). The CPU interpreter emulates the
descriptors and fp8 values, so the launcher also runs (slowly) without a GPU; a T4 (sm_75) has neither
fp8 tensor cores nor TMA."""

from __future__ import annotations

import math

import torch

from gemm_lab import runtime

from . import _validate as v
from ._schedule import num_programs
from .matmul import check_tile
from .persistent_tma import (
    TensorDescriptor,
    _descriptor_ok,
    _set_allocator,
    _store_ok,
    aligned_copy,
    tma_persistent_kernel,
)

FP8_DTYPES = tuple(d for d in (getattr(torch, "float8_e4m3fn", None),) if d is not None)
OUT_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def _scale(name: str, s) -> float:
    if isinstance(s, bool) or not isinstance(s, (int, float)):
        raise TypeError(f"{name} must be a float, got {type(s).__name__}")
    if not math.isfinite(s) or s == 0:
        raise ValueError(f"{name} must be finite and non-zero, got {s}")
    return float(s)


def fp8_matmul(a: torch.Tensor, b: torch.Tensor, *, scale_a: float = 1.0, scale_b: float = 1.0,
               out_dtype: torch.dtype = torch.float16, BLOCK_M: int = 128, BLOCK_N: int = 256, BLOCK_K: int = 128,
               GROUP_M: int = 8, num_stages: int = 3, num_warps: int = 8, out: torch.Tensor | None = None
               ) -> torch.Tensor:
    """C = scale_a * scale_b * (A @ B) for float8_e4m3fn ``a`` [M, K] and ``b`` [K, N], fp32 accumulation."""
    if TensorDescriptor is None or not FP8_DTYPES:
        raise RuntimeError("fp8_matmul needs triton >= 3.3 (tensor descriptors) and torch with float8_e4m3fn")
    v.check_tensor("a", a, dims=2, dtypes=FP8_DTYPES)
    v.check_tensor("b", b, dims=2, dtypes=FP8_DTYPES)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)} (M, K), b is {tuple(b.shape)} (K, N)")
    v.check_same_device(a=a, b=b)
    if out_dtype not in OUT_DTYPES:
        raise TypeError(f"out_dtype must be float16, bfloat16 or float32, got {out_dtype!r}")
    if out_dtype == torch.bfloat16 and runtime.INTERPRET:
        raise TypeError("out_dtype bfloat16 gives wrong results in the Triton CPU interpreter (fp32 -> bf16 "
                        "truncates there): use float16/float32 on the CPU, or run on a GPU")
    scale = _scale("scale_a", scale_a) * _scale("scale_b", scale_b)
    check_tile(BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
    if max(BLOCK_M, BLOCK_N, BLOCK_K) > 256:
        raise ValueError("tensor-descriptor blocks are limited to 256 elements per dimension")
    M, K = a.shape
    N = b.shape[1]
    if out is None:
        out = torch.empty((M, N), dtype=out_dtype, device=a.device)
    else:
        v.check_out("out", out, (M, N), (out_dtype,), a, a=a, b=b)
    if M * N == 0:
        return out
    if K == 0:
        return out.zero_()
    if runtime.on_gpu() and runtime.capability() < (8, 9):
        raise RuntimeError(f"fp8 matmul needs fp8 tensor cores (sm_89 or newer); this GPU is sm_"
                           f"{''.join(map(str, runtime.capability()))}")
    a_op = a if _descriptor_ok(a) else aligned_copy(a)
    bt = b.t()                                   # [N, K]: K-major rows
    b_op = bt if _descriptor_ok(bt) else aligned_copy(bt)
    exact = scale == 1.0 and _store_ok(out)
    target = out if exact else torch.empty((M, N), dtype=torch.float32 if scale != 1.0 else out_dtype,
                                           device=a.device)
    if not _descriptor_ok(target):
        target = aligned_copy(target)
    a_desc = TensorDescriptor.from_tensor(a_op, [BLOCK_M, BLOCK_K])
    b_desc = TensorDescriptor.from_tensor(b_op, [BLOCK_N, BLOCK_K])
    c_desc = TensorDescriptor.from_tensor(target, [BLOCK_M, BLOCK_N // 2])
    P = num_programs(M, N, BLOCK_M, BLOCK_N)
    _set_allocator()
    tma_persistent_kernel[(P,)](
        a_desc, b_desc, c_desc, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
        NUM_PROGRAMS=P, A_TRANS=False, B_TRANS=True, EPILOGUE_SUBTILE=True, FLATTEN=False, WARP_SPECIALIZE=False,
        ACTIVATION="", num_warps=num_warps, num_stages=num_stages)
    if target is not out:
        out.copy_(target * scale if scale != 1.0 else target)
    return out


def reference_fp8_matmul(a: torch.Tensor, b: torch.Tensor, scale_a: float = 1.0, scale_b: float = 1.0):
    """fp32 reference of the same product: the fp8 values upcast exactly, multiplied in fp32 (fp64 on CPU)."""
    return (a.double() @ b.double() * (scale_a * scale_b)).float() if a.device.type == "cpu" else \
        (a.float() @ b.float()) * (scale_a * scale_b)

