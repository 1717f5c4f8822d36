"""Tiled matmul C = A @ B: the kernel of Triton Tutorial 03 (2-D pointer blocks, GROUP_M ordering,
fp32 accumulation, an optional leaky_relu epilogue), and its validating launcher."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gemm_lab import runtime  # noqa: F401  (gemm_lab.kernels imports it before triton)

from . import _validate as v

ACTIVATIONS = (None, "leaky_relu")
LEAKY_RELU_SLOPE = 0.01
# GROUP_M is a constexpr multiplied by tile counts in int32 inside the kernel: keep it small enough
MAX_GROUP_M = 2**16


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def matmul_kernel(
    # pointers to the matrices
    a_ptr, b_ptr, c_ptr,
    # matrix dimensions
    M, N, K,
    # strides: how far (in elements) one step along a dimension moves the pointer
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    # meta-parameters
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    """A: [M, K], B: [K, N], C: [M, N]; one program computes one BLOCK_SIZE_M x BLOCK_SIZE_N tile of C."""
    # -- which tile: grouped ordering (L2 cache optimization; GROUP_SIZE_M = 1 is row-major) --
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # -- 2-D pointer blocks for the first K step (rows/cols past M/N wrap: % M, % N) --
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    # -- K loop: fp32 accumulator, K tail masked with other=0.0 --
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    # -- epilogue: the activation is fused while the accumulator is still in registers --
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(c_ptr.dtype.element_ty)

    # -- store only the valid part of the tile --
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def reference_matmul(a: torch.Tensor, b: torch.Tensor, activation: str | None = None) -> torch.Tensor:
    """fp32 reference: (a.float() @ b.float()), then the activation; returned as float32."""
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"a and b must be 2-D with matching inner dimensions, got {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
    c = a.float() @ b.float()
    if activation == "leaky_relu":
        c = torch.where(c >= 0, c, LEAKY_RELU_SLOPE * c)
    elif activation is not None:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    return c


def validate_matmul(a, b, out, activation, *, interpreter_bf16_ok: bool = False) -> torch.Tensor:
    """Check a, b (and out) for C = A @ B; return the output tensor (allocated when out is None)."""
    v.check_tensor("a", a, dims=2, dtypes=v.FLOAT_DTYPES)
    v.check_tensor("b", b, dims=2, dtypes=v.FLOAT_DTYPES)
    if a.dtype != b.dtype:
        raise TypeError(f"a and b must have the same dtype, got {v.dtype_name(a.dtype)} and {v.dtype_name(b.dtype)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"inner dimensions differ: a is {tuple(a.shape)} (M, K), b is {tuple(b.shape)} (K, N)"
        )
    v.check_same_device(a=a, b=b)
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    if not interpreter_bf16_ok:
        v.check_no_interpreter_bf16(what="tl.dot", a=a, b=b)
    v.check_int32("a", a)
    v.check_int32("b", b)
    M, N = a.shape[0], b.shape[1]
    if M * N > v._INT32_MAX:
        raise ValueError(f"the product of a {tuple(a.shape)} and b {tuple(b.shape)} would have {M * N:,} elements: "
                         "offsets would overflow int32 in these kernels")
    if out is None:
        out = torch.empty((M, N), dtype=a.dtype, device=a.device)
    else:
        v.check_out("out", out, (M, N), v.FLOAT_DTYPES, a, a=a, b=b)
    return out


def check_tile(BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages) -> None:
    v.check_pow2("BLOCK_M", BLOCK_M, minimum=16, maximum=512)
    v.check_pow2("BLOCK_N", BLOCK_N, minimum=16, maximum=512)
    v.check_pow2("BLOCK_K", BLOCK_K, minimum=16, maximum=512)
    v.check_positive_int("GROUP_M", GROUP_M, maximum=MAX_GROUP_M)
    v.check_pow2("num_warps", num_warps, minimum=1, maximum=32)
    v.check_positive_int("num_stages", num_stages)


def trivial_result(out: torch.Tensor, K: int) -> bool:
    """Empty products: M or N == 0 leaves nothing to do; K == 0 gives zeros. True when handled."""
    if out.numel() == 0:
        return True
    if K == 0:
        out.zero_()
        return True
    return False


def matmul(a: torch.Tensor, b: torch.Tensor, *, BLOCK_M: int = 64, BLOCK_N: int = 64, BLOCK_K: int = 32,
           GROUP_M: int = 8, num_warps: int = 4, num_stages: int = 3, activation: str | None = None,
           out: torch.Tensor | None = None) -> torch.Tensor:
    """C = activation(A @ B) with the Tutorial-03 kernel at one fixed configuration.

    a: [M, K], b: [K, N], both float16, bfloat16 or float32 (same dtype), any strides (transposed
    views work). The product is accumulated in fp32 (fp32 inputs go through TF32 on GPUs) and
    stored in ``out``'s dtype: by default a new [M, N] tensor of the inputs' dtype; a caller may pass
    a preallocated ``out`` (any strides, must not overlap a or b). GROUP_M=1 is row-major order.
    activation: None or "leaky_relu" (slope 0.01), fused into the epilogue.
    """
    out = validate_matmul(a, b, out, activation)
    check_tile(BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
    M, K = a.shape
    N = b.shape[1]
    if trivial_result(out, K):
        return out
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    matmul_kernel[grid](
        a, b, out, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1),
        BLOCK_SIZE_M=BLOCK_M, BLOCK_SIZE_N=BLOCK_N, BLOCK_SIZE_K=BLOCK_K, GROUP_SIZE_M=GROUP_M,
        ACTIVATION=activation or "", num_warps=num_warps, num_stages=num_stages,
    )
    return out
