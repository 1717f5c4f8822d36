"""Split-K matmul: for small M x N with a long K (few output tiles, too few programs to fill the GPU),
the K range is cut into SPLIT_K slices; program (tile, s) accumulates its slice in fp32 and writes a
partial tile into an fp32 workspace [SPLIT_K, M, N]; one more kernel sums the slices, applies the
activation and casts into C (one pass over the partials, no fp32 temporary).
Deterministic (no atomics): the same inputs give the same bits."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gemm_lab import runtime  # noqa: F401  (gemm_lab.kernels imports it before triton)

from . import _validate as v
from .matmul import check_tile, leaky_relu, trivial_result, validate_matmul


@triton.jit
def splitk_partial_kernel(
    a_ptr, b_ptr, ws_ptr,
    M, N, K, K_PER_SPLIT,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """Program (pid_mn, s) computes A[tile_m, ks] @ B[ks, tile_n] for ks = [s*K_PER_SPLIT, (s+1)*K_PER_SPLIT)."""
    pid = tl.program_id(0)
    s = tl.program_id(1)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    k_start = s * K_PER_SPLIT
    k_end = tl.minimum(k_start + K_PER_SPLIT, K)
    mask_m = offs_m[:, None] < M
    mask_n = offs_n[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(k_start, k_end, BLOCK_K):
        ks = k + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=mask_m & (ks[None, :] < k_end), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(ks[:, None] < k_end) & mask_n, other=0.0)
        acc = tl.dot(a, b, acc)
    ws = ws_ptr + s.to(tl.int64) * M * N + offs_m[:, None] * N + offs_n[None, :]
    tl.store(ws, acc, mask=mask_m & mask_n)


@triton.jit
def splitk_reduce_kernel(ws_ptr, c_ptr, M, N, SPLIT, stride_cm, stride_cn, BLOCK: tl.constexpr,
                         SPLIT_STEP: tl.constexpr, ACTIVATION: tl.constexpr):
    """C[m, n] = activation(sum over s of ws[s, m, n]), cast to C's dtype; ws is contiguous [SPLIT, M, N].

    SPLIT_STEP partials of a block are loaded at once (one [SPLIT_STEP, BLOCK] load) and summed by one
    reduction, so a split of up to SPLIT_STEP waits for memory once: a loop of SPLIT dependent load-and-add
    steps waits SPLIT times in a row, which is most of this kernel's time where the output is small."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mn = M * N
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s0 in range(0, SPLIT, SPLIT_STEP):
        s = s0 + tl.arange(0, SPLIT_STEP)
        parts = tl.load(ws_ptr + s[:, None].to(tl.int64) * mn + offs[None, :],
                        mask=(s[:, None] < SPLIT) & (offs[None, :] < mn), other=0.0)
        acc += tl.sum(parts, axis=0)
    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    m = offs // N
    n = offs % N
    tl.store(c_ptr + m * stride_cm + n * stride_cn, acc.to(c_ptr.dtype.element_ty), mask=offs < mn)


# fp32 workspace elements one reduce program loads per step (16 a thread at 4 warps): a block of outputs is
# this divided by the split, so small outputs still get many programs
REDUCE_ELEMS = 2048
REDUCE_MAX_STEP = 128  # what best_tune's split-K lists reach; a longer split (splitk_matmul's own) takes steps


def reduce_launch(M: int, N: int, split: int) -> tuple[tuple[int], dict]:
    """(grid, constexprs) of ``splitk_reduce_kernel`` for ``split`` partials of an M x N output."""
    step = min(triton.next_power_of_2(split), REDUCE_MAX_STEP)
    block = REDUCE_ELEMS // step
    return (triton.cdiv(M * N, block),), dict(BLOCK=block, SPLIT_STEP=step)


def splitk_grid(M: int, N: int, BLOCK_M: int, BLOCK_N: int, split_k: int) -> tuple[int, int]:
    return (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), split_k)


def k_per_split(K: int, split_k: int, BLOCK_K: int) -> int:
    """Slice length: a multiple of BLOCK_K, so only the last slice has a K tail."""
    return triton.cdiv(triton.cdiv(K, split_k), BLOCK_K) * BLOCK_K


def splitk_matmul(a: torch.Tensor, b: torch.Tensor, *, split_k: int = 4, BLOCK_M: int = 64, BLOCK_N: int = 64,
                  BLOCK_K: int = 64, num_warps: int = 4, num_stages: int = 3, activation: str | None = None,
                  out: torch.Tensor | None = None) -> torch.Tensor:
    """C = activation(A @ B) by split-K (same inputs as ``matmul``); ``split_k`` slices of K (>= 1).

    The fp32 workspace holds split_k * M * N floats; slices that would be empty are not launched.
    """
    out = validate_matmul(a, b, out, activation)
    check_tile(BLOCK_M, BLOCK_N, BLOCK_K, 1, num_warps, num_stages)
    v.check_positive_int("split_k", split_k, maximum=4096)
    M, K = a.shape
    N = b.shape[1]
    if trivial_result(out, K):
        return out
    kps = k_per_split(K, split_k, BLOCK_K)
    split = triton.cdiv(K, kps)  # no empty slices
    ws = torch.empty((split, M, N), dtype=torch.float32, device=a.device)
    v.check_int32("workspace", ws[0])
    splitk_partial_kernel[splitk_grid(M, N, BLOCK_M, BLOCK_N, split)](
        a, b, ws, M, N, K, kps, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=num_warps, num_stages=num_stages)
    reduce_into(ws, out, activation)
    return out


def reduce_into(ws: torch.Tensor, out: torch.Tensor, activation: str | None) -> None:
    """out = activation(ws.sum(0)) in one kernel (ws: contiguous fp32 [split, M, N])."""
    split, M, N = ws.shape
    grid, consts = reduce_launch(M, N, split)
    splitk_reduce_kernel[grid](ws, out, M, N, split, out.stride(0), out.stride(1), **consts,
                               ACTIVATION=activation or "", num_warps=4)
