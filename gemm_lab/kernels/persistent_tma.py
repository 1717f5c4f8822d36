"""Persistent matmul through tensor descriptors (TMA on Hopper), in the style of Triton Tutorial 09.

Each program loops over tiles in grouped order; A and B tiles are loaded with ``desc.load`` (the
bulk tensor copy engine on sm_90, which also zero-fills out-of-range rows and columns, so no masks),
and the epilogue stores C through a descriptor, optionally as two BLOCK_N/2-wide halves
(``epilogue_subtile``: smaller shared-memory staging, so a deeper pipeline fits).

Descriptors need a unit inner stride and 16-byte aligned base and outer strides. Transposed views of
A or B are used as they are (the kernel loads the transposed tile and flips it); any other layout
(e.g. a 300-column fp16 matrix, 600-byte rows) is first copied into an aligned, padded buffer, and an
output that can't take a descriptor is computed into a temporary and copied into ``out``.

On a GPU without TMA (before sm_90) Triton lowers descriptor loads to ordinary loads; in the CPU
interpreter (triton >= 3.5) descriptors are emulated. Where neither works the launcher raises
RuntimeError.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gemm_lab import runtime

from . import _validate as v
from ._schedule import num_programs, resolve_num_sms, tile_coords
from .matmul import check_tile, leaky_relu, trivial_result, validate_matmul

try:  # triton >= 3.3
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # pragma: no cover - older triton
    TensorDescriptor = None



@triton.jit
def tile_dot(a_desc, b_desc, offs_am, offs_bn, k_lo, k_hi, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             BLOCK_K: tl.constexpr, A_TRANS: tl.constexpr, B_TRANS: tl.constexpr):
    """One output tile's K loop over steps [k_lo, k_hi): descriptor loads of A and B tiles (transposed
    tiles flipped), accumulated in fp32. Inlined where it is called, as every @triton.jit function is."""
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in range(k_lo, k_hi):
        offs_k = ki * BLOCK_K
        if A_TRANS:
            a = a_desc.load([offs_k, offs_am]).T
        else:
            a = a_desc.load([offs_am, offs_k])
        if B_TRANS:
            b = b_desc.load([offs_bn, offs_k]).T
        else:
            b = b_desc.load([offs_k, offs_bn])
        accumulator = tl.dot(a, b, accumulator)
    return accumulator


@triton.jit
def halves(accumulator, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """A [BLOCK_M, BLOCK_N] tile as its left and right [BLOCK_M, BLOCK_N // 2] halves."""
    acc = tl.permute(tl.reshape(accumulator, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
    return tl.split(acc)


@triton.jit
def store_part(c_desc, acc, offs_cm, offs_cn, dtype, ACTIVATION: tl.constexpr):
    """The activation, then ``acc`` stored through ``c_desc`` at (offs_cm, offs_cn) as ``dtype``."""
    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    c_desc.store([offs_cm, offs_cn], acc.to(dtype))


@triton.jit
def store_tile(c_desc, accumulator, offs_cm, offs_cn, dtype, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               SUBTILE: tl.constexpr, ACTIVATION: tl.constexpr):
    """The epilogue: the tile stored through ``c_desc`` (``store_part``), whole or (``SUBTILE``) as its two
    halves (smaller shared-memory staging, so a deeper pipeline fits)."""
    if SUBTILE:
        acc0, acc1 = halves(accumulator, BLOCK_M, BLOCK_N)
        store_part(c_desc, acc0, offs_cm, offs_cn, dtype, ACTIVATION)
        store_part(c_desc, acc1, offs_cm, offs_cn + BLOCK_N // 2, dtype, ACTIVATION)
    else:
        store_part(c_desc, accumulator, offs_cm, offs_cn, dtype, ACTIVATION)


@triton.jit
def tma_persistent_kernel(
    a_desc, b_desc, c_desc,
    M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr,
    A_TRANS: tl.constexpr,          # a_desc describes A^T ([K, M]) instead of A ([M, K])
    B_TRANS: tl.constexpr,          # b_desc describes B^T ([N, K]) instead of B ([K, N])
    EPILOGUE_SUBTILE: tl.constexpr,  # store C as two [BLOCK_M, BLOCK_N // 2] halves
    FLATTEN: tl.constexpr,
    WARP_SPECIALIZE: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    dtype = c_desc.dtype
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    # the epilogue recomputes its tile id separately: breaks the dependency between loop parts
    tile_id_c = start_pid - NUM_PROGRAMS

    for tile_id in tl.range(start_pid, num_tiles, NUM_PROGRAMS, flatten=FLATTEN, warp_specialize=WARP_SPECIALIZE):
        pid_m, pid_n = tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_M)
        offs_am = pid_m * BLOCK_M
        offs_bn = pid_n * BLOCK_N
        accumulator = tile_dot(a_desc, b_desc, offs_am, offs_bn, 0, k_tiles, BLOCK_M, BLOCK_N, BLOCK_K, A_TRANS, B_TRANS)

        tile_id_c += NUM_PROGRAMS
        pid_m, pid_n = tile_coords(tile_id_c, num_pid_in_group, num_pid_m, GROUP_M)
        offs_cm = pid_m * BLOCK_M
        offs_cn = pid_n * BLOCK_N
        store_tile(c_desc, accumulator, offs_cm, offs_cn, dtype, BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE, ACTIVATION)


def _descriptor_ok(t: torch.Tensor) -> bool:
    es = t.element_size()
    return (
        t.stride(-1) == 1
        and t.data_ptr() % 16 == 0
        and all((s * es) % 16 == 0 for s in t.stride()[:-1])
        and min(t.shape) > 0
    )


def _store_ok(t: torch.Tensor) -> bool:
    """Whether a descriptor store into ``t`` writes nothing outside it: TMA stores write whole 16-byte
    chunks, so a row whose byte length is not a multiple of 16 (``buf[:, :N]`` with N * elsize % 16 != 0,
    however aligned its row stride) gets up to 15 bytes past its end overwritten (triton issue #11583).
    Such an output is computed into a padded buffer of our own and copied into place."""
    return _descriptor_ok(t) and (t.shape[-1] * t.element_size()) % 16 == 0


def padded_cols(cols: int, elem_size: int, align_bytes: int = 16) -> int:
    """A row stride (elements) for ``cols`` columns whose rows start on ``align_bytes`` boundaries."""
    per = max(1, align_bytes // elem_size)
    return triton.cdiv(cols, per) * per


def aligned_copy(t: torch.Tensor) -> torch.Tensor:
    """A copy of a 2-D tensor whose rows start at 16-byte boundaries (padded row stride)."""
    rows, cols = t.shape
    buf = torch.empty((rows, padded_cols(cols, t.element_size())), dtype=t.dtype, device=t.device)
    view = buf[:, :cols]
    view.copy_(t)
    return view


def _operand(t: torch.Tensor) -> tuple[torch.Tensor, bool]:
    """The tensor a descriptor is built on, and whether it is the transpose of ``t``."""
    if _descriptor_ok(t):
        return t, False
    if _descriptor_ok(t.t()):
        return t.t(), True
    return aligned_copy(t), False


_ALLOCATOR_SET = []


def _set_allocator() -> None:
    # device-side scratch (descriptors made in the kernel, warp specialization) needs an allocator
    if not _ALLOCATOR_SET and runtime.on_gpu() and hasattr(triton, "set_allocator"):
        _ALLOCATOR_SET.append(True)
        def alloc(size: int, alignment: int, stream):
            return torch.empty(size, device="cuda", dtype=torch.int8)

        triton.set_allocator(alloc)


def tma_persistent_matmul(a: torch.Tensor, b: torch.Tensor, *, BLOCK_M: int = 128, BLOCK_N: int = 256,
                          BLOCK_K: int | None = None, GROUP_M: int = 8, num_stages: int = 3, num_warps: int = 8,
                          programs_per_sm: int = 1, num_sms: int | None = None, epilogue_subtile: bool = True,
                          flatten: bool = False, warp_specialize: bool = False, activation: str | None = None,
                          out: torch.Tensor | None = None) -> torch.Tensor:
    """C = activation(A @ B) with the persistent tensor-descriptor kernel (same inputs as ``matmul``).

    Defaults: 128x256x64 tiles (BLOCK_K = 32 for fp32 inputs, whose 64-deep tiles would not fit shared
    memory), 3 stages, 8 warps, the split epilogue, grid = SMs x programs_per_sm.
    """
    if TensorDescriptor is None:
        raise RuntimeError(f"triton {triton.__version__} has no triton.tools.tensor_descriptor: "
                           "the TMA variant needs triton >= 3.3")
    out = validate_matmul(a, b, out, activation)
    if BLOCK_K is None:
        BLOCK_K = 32 if a.dtype == torch.float32 else 64
    check_tile(BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
    v.check_positive_int("programs_per_sm", programs_per_sm)
    if BLOCK_M > 256 or BLOCK_N > 256 or BLOCK_K > 256:
        raise ValueError("tensor-descriptor blocks are limited to 256 elements per dimension")
    if epilogue_subtile and BLOCK_N < 32:
        raise ValueError("epilogue_subtile needs BLOCK_N >= 32")
    M, K = a.shape
    N = b.shape[1]
    if trivial_result(out, K):
        return out
    resolve_num_sms(num_sms)
    a_op, a_trans = _operand(a)
    b_op, b_trans = _operand(b)
    target = out if _store_ok(out) else aligned_copy(out)  # the padded copy is ours: its padding may be hit
    a_desc = TensorDescriptor.from_tensor(a_op, [BLOCK_K, BLOCK_M] if a_trans else [BLOCK_M, BLOCK_K])
    b_desc = TensorDescriptor.from_tensor(b_op, [BLOCK_N, BLOCK_K] if b_trans else [BLOCK_K, BLOCK_N])
    c_desc = TensorDescriptor.from_tensor(target, [BLOCK_M, BLOCK_N // 2 if epilogue_subtile else BLOCK_N])
    P = num_programs(M, N, BLOCK_M, BLOCK_N, programs_per_sm, num_sms)
    _set_allocator()
    try:
        tma_persistent_kernel[(P,)](
            a_desc, b_desc, c_desc, M, N, K,
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, NUM_PROGRAMS=P,
            A_TRANS=a_trans, B_TRANS=b_trans, EPILOGUE_SUBTILE=bool(epilogue_subtile), FLATTEN=bool(flatten),
            WARP_SPECIALIZE=bool(warp_specialize), ACTIVATION=activation or "",
            num_warps=num_warps, num_stages=num_stages,
        )
    except (AttributeError, NotImplementedError) as exc:
        if runtime.INTERPRET:
            raise RuntimeError(f"the tensor-descriptor kernel does not run in this triton's interpreter "
                               f"(triton {triton.__version__}): {exc}") from exc
        raise
    if target is not out:
        out.copy_(target)
    return out
