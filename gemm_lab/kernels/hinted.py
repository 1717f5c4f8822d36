"""A masked tiled matmul that tells the compiler how far each size and stride is divisible.

Triton specializes an integer argument on two facts only: ``== 1`` and ``% 16 == 0``. At 500x600x300
(fp16) no size or leading stride is a multiple of 16, so the Tutorial-03 kernel is compiled for
divisibility 1 everywhere: every global load is 2 bytes wide and none can become an asynchronous copy
(``cp.async`` moves 4, 8 or 16 bytes), so the K loop is not pipelined. Yet 300 = 4 x 75 and 600 = 8 x 75:
rows start on 8- and 16-byte boundaries.

``hinted_matmul_kernel`` receives every size and stride ``x`` as ``x // d`` plus the constexpr ``d``
(the largest power of two up to 8 dividing ``x``) and multiplies them back inside the kernel: the product
carries the divisibility ``d`` into Triton's axis analysis, which then vectorizes loads, masks and stores
to ``d`` elements and pipelines the loads with ``cp.async``. Out-of-range rows and columns are masked
(no ``% M`` wrap-around, whose modulo hides contiguity), and the K tail is masked with ``other=0``; a
dimension that is a multiple of its block (``EVEN_*``, fixed by the launcher) is not masked at all.
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemm_lab import runtime  # noqa: F401  (gemm_lab.kernels imports it before triton)

from ._schedule import tile_coords
from .matmul import check_tile, leaky_relu, trivial_result, validate_matmul

MAX_HINT = 8  # 8 fp16 elements = 16 bytes, the widest vector load


def hint(x: int) -> int:
    """The largest power of two up to ``MAX_HINT`` that divides ``x`` (1 for 0 and odd values)."""
    if x <= 0:
        return 1
    d = 1
    while d < MAX_HINT and x % (2 * d) == 0:
        d *= 2
    return d


HINTED_NAMES = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")


def hinted_args(M, N, K, a, b, c) -> tuple[tuple[int, ...], dict]:
    """(quotients, constexprs): the kernel's runtime integers ``x // hint(x)`` and their ``D_*`` hints."""
    values = (M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    hints = tuple(hint(x) for x in values)
    return tuple(x // d for x, d in zip(values, hints, strict=True)), {
        f"D_{n}": d for n, d in zip(HINTED_NAMES, hints, strict=True)}


def even_flags(M: int, N: int, K: int, cfg: dict) -> dict:
    """EVEN_M / EVEN_N / EVEN_K for a config: which sizes are multiples of their block (no mask needed)."""
    return dict(EVEN_M=M % cfg["BLOCK_SIZE_M"] == 0, EVEN_N=N % cfg["BLOCK_SIZE_N"] == 0,
                EVEN_K=K % cfg["BLOCK_SIZE_K"] == 0)


@triton.jit
def hinted_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M_q, N_q, K_q,
    stride_am_q, stride_ak_q, stride_bk_q, stride_bn_q, stride_cm_q, stride_cn_q,
    D_M: tl.constexpr, D_N: tl.constexpr, D_K: tl.constexpr,
    D_stride_am: tl.constexpr, D_stride_ak: tl.constexpr, D_stride_bk: tl.constexpr,
    D_stride_bn: tl.constexpr, D_stride_cm: tl.constexpr, D_stride_cn: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    EVEN_M: tl.constexpr, EVEN_N: tl.constexpr, EVEN_K: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    """A: [M, K], B: [K, N], C: [M, N]; each integer arrives as (quotient, constexpr divisor).
    EVEN_M / EVEN_N / EVEN_K: the size is a multiple of its block, so that dimension needs no mask."""
    M = M_q * D_M
    N = N_q * D_N
    K = K_q * D_K
    stride_am = stride_am_q * D_stride_am
    stride_ak = stride_ak_q * D_stride_ak
    stride_bk = stride_bk_q * D_stride_bk
    stride_bn = stride_bn_q * D_stride_bn
    stride_cm = stride_cm_q * D_stride_cm
    stride_cn = stride_cn_q * D_stride_cn

    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    pid_m, pid_n = tile_coords(tl.program_id(axis=0), GROUP_SIZE_M * tl.cdiv(N, BLOCK_SIZE_N), num_pid_m,
                               GROUP_SIZE_M)

    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    in_m = offs_m[:, None] < M
    in_n = offs_n[None, :] < N

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        if EVEN_K:  # no K tail: only rows / columns past M / N are masked, and only when they exist
            if EVEN_M:
                a = tl.load(a_ptrs)
            else:
                a = tl.load(a_ptrs, mask=in_m, other=0.0)
            if EVEN_N:
                b = tl.load(b_ptrs)
            else:
                b = tl.load(b_ptrs, mask=in_n, other=0.0)
        else:
            k_left = K - k * BLOCK_SIZE_K
            a = tl.load(a_ptrs, mask=in_m & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & in_n, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + stride_cm * offs_m[:, None] + stride_cn * offs_n[None, :]
    if EVEN_M and EVEN_N:
        tl.store(c_ptrs, c)
    else:
        tl.store(c_ptrs, c, mask=in_m & in_n)


def hinted_launch_spec(M: int, N: int, K: int, a, b, out, activation: str, cfg: dict):
    """(grid, runtime integers, constexprs, options) of ``hinted_matmul_kernel`` at ``cfg`` (BLOCK_SIZE_M/N/K,
    GROUP_SIZE_M, num_stages, num_warps) for these tensors; the call is
    ``hinted_matmul_kernel[grid](a, b, out, *ints, **constexprs, **options)``."""
    quotients, hints = hinted_args(M, N, K, a, b, out)
    grid = (triton.cdiv(M, cfg["BLOCK_SIZE_M"]) * triton.cdiv(N, cfg["BLOCK_SIZE_N"]),)
    consts = {k: cfg[k] for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M")}
    consts.update(hints, **even_flags(M, N, K, cfg), ACTIVATION=activation)
    return grid, quotients, consts, dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])


def hinted_matmul(a, b, *, BLOCK_M: int = 64, BLOCK_N: int = 64, BLOCK_K: int = 32, GROUP_M: int = 8,
                  num_stages: int = 4, num_warps: int = 4, activation: str | None = None, out=None):
    """C = activation(A @ B) with ``hinted_matmul_kernel`` at one config (same inputs as ``matmul``)."""
    out = validate_matmul(a, b, out, activation)
    check_tile(BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
    M, K = a.shape
    N = b.shape[1]
    if trivial_result(out, K):
        return out
    grid, ints, consts, options = hinted_launch_spec(M, N, K, a, b, out, activation or "", dict(
        BLOCK_SIZE_M=BLOCK_M, BLOCK_SIZE_N=BLOCK_N, BLOCK_SIZE_K=BLOCK_K, GROUP_SIZE_M=GROUP_M,
        num_stages=num_stages, num_warps=num_warps))
    hinted_matmul_kernel[grid](a, b, out, *ints, **consts, **options)
    return out
