"""Stream-K on the persistent TMA kernel: the output tiles that would leave the last wave part-empty are
shared out among all programs by K iterations instead of by tile.

A persistent kernel over T tiles on P programs runs ceil(T / P) waves; when T % P is small the last wave
keeps most SMs idle (960 tiles of 128x256 on 132 SMs: 8 waves, the last 27 % busy; 200 tiles: 2 waves, the
second 52 % busy). Here the first ``T - SK_TILES`` tiles go tile by tile as in ``persistent_tma`` (whole
waves), and the last ``SK_TILES`` tiles' K iterations, ``SK_TILES * cdiv(K, BLOCK_K)`` in all, are cut into
P equal contiguous ranges, one per program (Osama et al., "Stream-K", PPoPP 2023, the data-parallel +
one-wave hybrid). A range covers the end of one tile, whole tiles, and the start of another: a whole tile
is stored as usual; a part is written as an fp32 partial tile into the workspace (two slots per program:
its first part and its last), a counter per tile is incremented, and the program that brings the count to
the number of contributors sums the tile's partials in program order (the same bits on every run, whoever
arrives last), applies the activation and stores the tile. No program waits for another, so the kernel
cannot deadlock when fewer programs than P are resident at once (another stream holding SMs).

The workspace and counters are the caller's: ``workspace(...)`` gives their shapes; the counters must be
zero at launch (``best_kernels.StreamK`` allocates both per call). In the CPU interpreter programs run one
after another, which exercises the same partial and counter logic.
"""

from __future__ import annotations

import triton
import triton.language as tl

from ._schedule import tile_coords
from .persistent_tma import halves, store_part, store_tile, tile_dot


@triton.jit
def _range_start(p, base, extra):
    # program p's first stream-K iteration: P ranges of ``base`` iterations, the first ``extra`` one longer
    return p * base + tl.minimum(p, extra)


@triton.jit
def _owner(g, base, extra):
    # the program whose range holds stream-K iteration g (inverse of _range_start)
    long_part = extra * (base + 1)
    return tl.where(g < long_part, g // (base + 1), extra + (g - long_part) // base)


@triton.jit
def _half_offsets(BLOCK_M: tl.constexpr, HALF: tl.constexpr):
    # element offsets of a contiguous [BLOCK_M, HALF] fp32 half tile in the workspace
    return tl.arange(0, BLOCK_M)[:, None] * HALF + tl.arange(0, HALF)[None, :]


@triton.jit
def tma_stream_k_kernel(
    a_desc, b_desc, c_desc, ws_ptr, count_ptr,
    M, N, K, SK_TILES,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr,
    A_TRANS: tl.constexpr,
    B_TRANS: tl.constexpr,
    FLATTEN: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_pid_in_group = GROUP_M * num_pid_n
    dp_tiles = num_pid_m * num_pid_n - SK_TILES

    # whole waves, tile by tile
    for tile_id in tl.range(pid, dp_tiles, NUM_PROGRAMS, flatten=FLATTEN):
        pid_m, pid_n = tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_M)
        acc = tile_dot(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, 0, k_tiles,
                        BLOCK_M, BLOCK_N, BLOCK_K, A_TRANS, B_TRANS)
        store_tile(c_desc, acc, pid_m * BLOCK_M, pid_n * BLOCK_N, c_desc.dtype, BLOCK_M, BLOCK_N, True, ACTIVATION)

    # the rest by K iterations: this program's range [start, end) of SK_TILES * k_tiles
    total = SK_TILES * k_tiles
    base = total // NUM_PROGRAMS
    extra = total % NUM_PROGRAMS
    start = _range_start(pid, base, extra)
    end = _range_start(pid + 1, base, extra)
    HALF: tl.constexpr = BLOCK_N // 2
    it = start
    while it < end:
        t = it // k_tiles
        k_lo = it - t * k_tiles
        k_hi = tl.minimum(k_tiles, k_lo + (end - it))
        pid_m, pid_n = tile_coords(dp_tiles + t, num_pid_in_group, num_pid_m, GROUP_M)
        acc = tile_dot(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, k_lo, k_hi,
                        BLOCK_M, BLOCK_N, BLOCK_K, A_TRANS, B_TRANS)
        if k_hi - k_lo == k_tiles:
            store_tile(c_desc, acc, pid_m * BLOCK_M, pid_n * BLOCK_N, c_desc.dtype, BLOCK_M, BLOCK_N, True, ACTIVATION)
        else:
            # slot 0: this program's first part (its range starts inside this tile), slot 1: its last. The part
            # goes out, and is summed, as two [BLOCK_M, HALF] halves with their offsets made where they are
            # used: a whole tile's offsets kept across the loop held as many registers as the accumulator
            slot = (it != start).to(tl.int64)
            part = ws_ptr + (pid * 2 + slot) * (BLOCK_M * BLOCK_N)
            acc0, acc1 = halves(acc, BLOCK_M, BLOCK_N)
            tl.store(part + _half_offsets(BLOCK_M, HALF), acc0)
            tl.store(part + BLOCK_M * HALF + _half_offsets(BLOCK_M, HALF), acc1)
            tl.debug_barrier()  # every thread's part is written before the counter says so
            first_g = t * k_tiles
            p0 = _owner(first_g, base, extra)
            p1 = _owner(first_g + k_tiles - 1, base, extra)
            arrived = tl.atomic_add(count_ptr + t, 1, sem="acq_rel", scope="gpu")
            if arrived == p1 - p0:  # the last contributor: sum every part in program order, half by half
                for h in tl.static_range(2):
                    tot = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
                    for p in range(p0, p1 + 1):
                        s = (_range_start(p, base, extra) < first_g).to(tl.int64)
                        tot += tl.load(ws_ptr + (p * 2 + s) * (BLOCK_M * BLOCK_N) + h * (BLOCK_M * HALF)
                                       + _half_offsets(BLOCK_M, HALF), cache_modifier=".cg")
                    store_part(c_desc, tot, pid_m * BLOCK_M, pid_n * BLOCK_N + h * HALF, c_desc.dtype, ACTIVATION)
        it += k_hi - k_lo


def stream_k_tiles(tiles: int, programs: int, k_tiles: int) -> int:
    """How many of the last tiles go by K iterations: none when every wave is full; else the part-empty
    last wave plus one whole wave before it (where there is one), so each program's range is at least one
    tile long and splits at most two tiles; none when the ranges would be shorter than two K steps."""
    rem = tiles % programs
    if rem == 0:
        return 0
    sk = rem + programs if tiles >= rem + programs else tiles
    return sk if sk * k_tiles >= 2 * programs else 0


def workspace(programs: int, BLOCK_M: int, BLOCK_N: int) -> tuple[int, int, int]:
    """The fp32 partial-tile workspace's shape: two slots per program."""
    return (programs * 2, BLOCK_M, BLOCK_N)
