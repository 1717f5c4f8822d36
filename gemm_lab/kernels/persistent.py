"""The persistent-matmul case study: the blog's naive tiled and naive persistent kernels, and a
persistent kernel that walks its tiles in grouped (GROUP_M) order.

A persistent kernel launches ``min(num_sms * programs_per_sm, num_tiles)`` programs; program p
computes tiles p, p + P, p + 2P, ... The tensor-descriptor (TMA) variant lives in ``persistent_tma``.
In the interpreter there are no SMs: ``num_sms`` defaults to ``INTERPRETER_NUM_SMS`` (pass a
small number to see several tiles per program).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gemm_lab import runtime  # noqa: F401  (gemm_lab.kernels imports it before triton)

from . import _validate as v
from ._schedule import INTERPRETER_NUM_SMS, num_programs, resolve_num_sms, tile_coords  # noqa: F401 (re-exported)
from .matmul import check_tile, trivial_result, validate_matmul
from .persistent_tma import tma_persistent_matmul

VARIANTS = ("naive", "grouped", "tma")
BLOG_CONFIG = dict(BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, num_stages=4, num_warps=4)


@triton.jit
def tiled_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    NUM_STAGES: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """The blog's naive tiled kernel: one program computes one C tile (row-major tile order)."""
    tile_id = tl.program_id(0)
    num_n_tiles = tl.cdiv(N, BLOCK_N)
    tile_m = tile_id // num_n_tiles
    tile_n = tile_id % num_n_tiles

    offsets_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offsets_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    a_row = a_ptr + offsets_m[:, None] * stride_am
    b_col = b_ptr + offsets_n[None, :] * stride_bn
    mask_m = offsets_m[:, None] < M
    mask_n = offsets_n[None, :] < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, num_stages=NUM_STAGES):
        offsets_k = k + tl.arange(0, BLOCK_K)
        mask_a = mask_m & (offsets_k[None, :] < K)
        mask_b = mask_n & (offsets_k[:, None] < K)
        a_tile = tl.load(a_row + offsets_k[None, :] * stride_ak, mask=mask_a, other=0.0)
        b_tile = tl.load(b_col + offsets_k[:, None] * stride_bk, mask=mask_b, other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)

    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + offsets_m[:, None] * stride_cm + offsets_n[None, :] * stride_cn, c, mask=mask_m & mask_n)


@triton.jit
def persistent_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    NUM_PROGRAMS: tl.constexpr,
    NUM_STAGES: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """The blog's naive persistent kernel: program p computes tiles p, p + NUM_PROGRAMS, ..."""
    start_tile = tl.program_id(0)
    num_m_tiles = tl.cdiv(M, BLOCK_M)
    num_n_tiles = tl.cdiv(N, BLOCK_N)
    num_tiles = num_m_tiles * num_n_tiles

    for tile_id in tl.range(start_tile, num_tiles, NUM_PROGRAMS):
        tile_m = tile_id // num_n_tiles
        tile_n = tile_id % num_n_tiles

        # pointers, masks and the accumulator are set up again for every tile
        offsets_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offsets_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
        a_row = a_ptr + offsets_m[:, None] * stride_am
        b_col = b_ptr + offsets_n[None, :] * stride_bn
        mask_m = offsets_m[:, None] < M
        mask_n = offsets_n[None, :] < N

        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in tl.range(0, K, BLOCK_K, num_stages=NUM_STAGES):
            offsets_k = k + tl.arange(0, BLOCK_K)
            mask_a = mask_m & (offsets_k[None, :] < K)
            mask_b = mask_n & (offsets_k[:, None] < K)
            a_tile = tl.load(a_row + offsets_k[None, :] * stride_ak, mask=mask_a, other=0.0)
            b_tile = tl.load(b_col + offsets_k[:, None] * stride_bk, mask=mask_b, other=0.0)
            acc = tl.dot(a_tile, b_tile, acc)

        c = acc.to(c_ptr.dtype.element_ty)
        tl.store(c_ptr + offsets_m[:, None] * stride_cm + offsets_n[None, :] * stride_cn, c, mask=mask_m & mask_n)


@triton.jit
def grouped_persistent_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    NUM_PROGRAMS: tl.constexpr,
    NUM_STAGES: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    FLATTEN: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    """Persistent kernel whose programs walk the tiles in grouped order (Tutorial 09's pointer version)."""
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    offs_k_for_mask = tl.arange(0, BLOCK_K)

    for tile_id in tl.range(start_pid, num_tiles, NUM_PROGRAMS, flatten=FLATTEN):
        pid_m, pid_n = tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_M)
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in tl.range(0, k_tiles, num_stages=NUM_STAGES):
            offs_k = ki * BLOCK_K + offs_k_for_mask
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
            a = tl.load(a_ptrs, mask=offs_k_for_mask[None, :] < K - ki * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k_for_mask[:, None] < K - ki * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)

        if ACTIVATION == "leaky_relu":
            acc = tl.where(acc >= 0, acc, 0.01 * acc)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


def _strides(a, b, c):
    return (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def naive_tiled_matmul(a: torch.Tensor, b: torch.Tensor, *, BLOCK_M: int = 128, BLOCK_N: int = 64,
                       BLOCK_K: int = 32, num_stages: int = 4, num_warps: int = 4,
                       out: torch.Tensor | None = None) -> torch.Tensor:
    """The blog's naive tiled matmul (one program per tile, row-major order); same inputs as ``matmul``."""
    out = validate_matmul(a, b, out, None)
    check_tile(BLOCK_M, BLOCK_N, BLOCK_K, 1, num_warps, num_stages)
    M, K = a.shape
    N = b.shape[1]
    if trivial_result(out, K):
        return out
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    tiled_matmul_kernel[grid](a, b, out, M, N, K, *_strides(a, b, out), NUM_STAGES=num_stages,
                              BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=num_warps)
    return out


def persistent_matmul(a: torch.Tensor, b: torch.Tensor, *, variant: str = "naive", programs_per_sm: int = 1,
                      num_sms: int | None = None, BLOCK_M: int | None = None, BLOCK_N: int | None = None,
                      BLOCK_K: int | None = None, GROUP_M: int = 8, num_warps: int | None = None,
                      num_stages: int | None = None, flatten: bool = False, activation: str | None = None,
                      out: torch.Tensor | None = None, **tma_options) -> torch.Tensor:
    """C = A @ B with a persistent kernel: ``variant`` "naive" (the blog's), "grouped" or "tma".

    Launches min(num_sms * programs_per_sm, num_tiles) programs (``num_sms`` defaults to the GPU's
    SM count, ``INTERPRETER_NUM_SMS`` in the interpreter). Tile sizes default to the blog's config
    (128x64x32, s4, w4) for "naive"/"grouped" and to 128x256x64 s3 w8 for "tma". ``activation``
    (None | "leaky_relu") is supported by "grouped" and "tma". Extra keyword arguments go to
    ``persistent_tma.tma_persistent_matmul`` (epilogue_subtile, warp_specialize, ...).
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    v.check_positive_int("programs_per_sm", programs_per_sm)
    if variant == "tma":
        kw = {k: val for k, val in dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=num_warps,
                                        num_stages=num_stages).items() if val is not None}
        return tma_persistent_matmul(a, b, programs_per_sm=programs_per_sm, num_sms=num_sms, GROUP_M=GROUP_M,
                                     flatten=flatten, activation=activation, out=out, **kw, **tma_options)
    if tma_options:
        raise TypeError(f"unexpected keyword arguments for variant {variant!r}: {sorted(tma_options)}")
    if variant == "naive" and activation is not None:
        raise ValueError("the naive persistent kernel has no epilogue activation: use variant='grouped' or 'tma'")
    # ``None`` means the blog's value; 0 / False are passed on and refused by check_tile
    BLOCK_M = BLOG_CONFIG["BLOCK_M"] if BLOCK_M is None else BLOCK_M
    BLOCK_N = BLOG_CONFIG["BLOCK_N"] if BLOCK_N is None else BLOCK_N
    BLOCK_K = BLOG_CONFIG["BLOCK_K"] if BLOCK_K is None else BLOCK_K
    num_warps = BLOG_CONFIG["num_warps"] if num_warps is None else num_warps
    num_stages = BLOG_CONFIG["num_stages"] if num_stages is None else num_stages
    out = validate_matmul(a, b, out, activation)
    check_tile(BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
    M, K = a.shape
    N = b.shape[1]
    if trivial_result(out, K):
        return out
    P = num_programs(M, N, BLOCK_M, BLOCK_N, programs_per_sm, num_sms)
    common = dict(NUM_PROGRAMS=P, NUM_STAGES=num_stages, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                  num_warps=num_warps)
    if variant == "naive":
        persistent_matmul_kernel[(P,)](a, b, out, M, N, K, *_strides(a, b, out), **common)
    else:
        grouped_persistent_kernel[(P,)](a, b, out, M, N, K, *_strides(a, b, out), GROUP_M=GROUP_M,
                                        FLATTEN=bool(flatten), ACTIVATION=activation or "", **common)
    return out
