"""The persistent TMA matmul with its tensor descriptors made on the device (``tl.make_tensor_descriptor``),
for ``best_matmul``'s candidate list.

Why a second variant: a host-side ``TensorDescriptor`` argument makes Triton's launcher encode a
``CUtensorMap`` for each descriptor on every launch (``cuTensorMapEncodeTiled`` plus Python around it),
several microseconds of CPU per call, which at 1024^3 costs more than the kernel runs. Here the launcher
passes three pointers and integers, like the pointer kernels; each program writes its three descriptors
into a small global scratch buffer (Triton asks ``triton.set_allocator``'s allocator for it at launch).

The descriptors need what the host-side ones need: unit inner stride, 16-byte aligned base pointers and
16-byte multiple row strides; ``best_matmul`` passes operands that are not so as padded copies (as for
the host-side kernel), and ``A_TRANS`` / ``B_TRANS`` take transposed views as they are.
"""

from __future__ import annotations

import triton
import triton.language as tl

from gemm_lab import runtime  # noqa: F401  (gemm_lab.kernels imports it before triton)

from ._schedule import tile_coords
from .persistent_tma import store_tile, tile_dot


@triton.jit
def device_tma_persistent_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_a, stride_b, stride_c,     # the row stride (elements) of the tensor each descriptor describes
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr,
    A_TRANS: tl.constexpr,          # a_ptr holds A^T ([K, M], rows of M) instead of A ([M, K])
    B_TRANS: tl.constexpr,          # b_ptr holds B^T ([N, K]) instead of B ([K, N])
    FLATTEN: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    dtype = c_ptr.dtype.element_ty
    if A_TRANS:
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[K, M], strides=[stride_a, 1], block_shape=[BLOCK_K, BLOCK_M])
    else:
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_a, 1], block_shape=[BLOCK_M, BLOCK_K])
    if B_TRANS:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_b, 1], block_shape=[BLOCK_N, BLOCK_K])
    else:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_b, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_c, 1],
                                       block_shape=[BLOCK_M, BLOCK_N // 2])
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    tile_id_c = start_pid - NUM_PROGRAMS

    for tile_id in tl.range(start_pid, num_tiles, NUM_PROGRAMS, flatten=FLATTEN):
        pid_m, pid_n = tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_M)
        offs_am = pid_m * BLOCK_M
        offs_bn = pid_n * BLOCK_N
        accumulator = tile_dot(a_desc, b_desc, offs_am, offs_bn, 0, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K, A_TRANS, B_TRANS)

        tile_id_c += NUM_PROGRAMS
        pid_m, pid_n = tile_coords(tile_id_c, num_pid_in_group, num_pid_m, GROUP_M)
        offs_cm = pid_m * BLOCK_M
        offs_cn = pid_n * BLOCK_N
        store_tile(c_desc, accumulator, offs_cm, offs_cn, dtype, BLOCK_M, BLOCK_N, True, ACTIVATION)
