"""How ``best_matmul`` tunes its tiled paths: the candidate (kernel, config) list per shape, and a tuner
that times each candidate as a CUDA-graph replay.

Why not ``@triton.autotune``: its benchmark is ``do_bench``, one launch per timing with the L2 flushed in
between. At 512^3 the kernel runs ~3 us and a Python launch costs more than that, so ``do_bench`` ranks
the configs by host time plus noise (measured on the H200: the autotuner's pick ran at 0.79 of
torch.matmul at 512^3 where the fastest candidate, replayed from a CUDA graph, reaches 1.07). Replaying
each candidate from a CUDA graph times the GPU alone. The candidates mix two kernels: the Tutorial-03
kernel (fine when every size and stride is a multiple of 16) and ``hinted_matmul_kernel`` (the only one
that vectorizes and pipelines when they are not, e.g. 500x600x300); lists from ``small_configs.csv``.
"""

from __future__ import annotations

import math
import statistics

import triton

from gemm_lab.timing import graph_bench_ms, host_time_ms

from .autotuned import _cfg, configs_for
from .best_kernels import LAUNCH_RANK
from .best_pad import ROW_ALIGN_BYTES
from .hinted import hint
from .stream_k import stream_k_tiles

# small outputs (M*N up to 1024^2): the configs that ranked first at 500x600x300, 512^3 and 1024^3 on the
# H200 (small_configs.csv), plus two narrow ones for very small M or N
SMALL_HINTED = [
    _cfg(64, 64, 32, 8, 5, 4), _cfg(64, 64, 64, 8, 3, 8), _cfg(64, 64, 64, 8, 4, 4), _cfg(64, 32, 64, 8, 4, 4),
    _cfg(64, 32, 128, 8, 3, 4), _cfg(64, 128, 64, 8, 4, 4), _cfg(128, 64, 64, 8, 4, 4), _cfg(64, 128, 32, 8, 4, 4),
    _cfg(32, 64, 64, 8, 4, 4), _cfg(64, 128, 64, 8, 5, 4),
]
SMALL_TUTORIAL = [_cfg(64, 128, 64, 8, 4, 4), _cfg(128, 64, 64, 8, 4, 4), _cfg(64, 32, 64, 8, 4, 4),
                  _cfg(64, 128, 64, 8, 5, 4)]


# Hopper, fp16/bf16: the persistent TMA kernel at tiles small enough for 1024^2-class outputs (64x128 -> 128
# tiles for 132 SMs at 1024^2). Operands a descriptor can't take as they are (a row not 16-byte aligned,
# e.g. K or N odd in fp16) are copied into a padded buffer first, inside the timed call: the tuner weighs
# the copy against the hinted kernel's narrower loads (what Inductor's pad-mm pass decides by timing too).
def _tma(bm, bn, bk, s, w, flatten=False):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_stages=s, num_warps=w, flatten=flatten)


SMALL_TMA = [_tma(64, 128, 64, 4, 4), _tma(128, 64, 64, 4, 4), _tma(128, 128, 64, 4, 8), _tma(64, 64, 64, 4, 4)]
# mid-size outputs: the TMA kernel won 3 of 4 mid-size random shapes on the H100 (128x128x64 s4 w8 and
# 128x256x64 s3 w8), still 0.62-0.70 of Inductor there: one warpgroup per 128x128 tile and a shallower
# pipeline (more programs resident per SM), and the flattened loop, are timed beside them
MID_TMA = [_tma(128, 128, 64, 4, 8), _tma(128, 256, 64, 3, 8), _tma(64, 128, 64, 4, 4), _tma(128, 128, 64, 3, 4),
           _tma(128, 128, 64, 4, 8, True)]
# large outputs: the 4096^3 / 8192^3 pick first (small_configs.csv), then a 128x128 tile for shapes whose
# 128x256 tile count leaves the last wave mostly empty (e.g. 408 tiles on 132 SMs: 4 waves, 77 % busy);
# then a deeper 128x256 pipeline (229,376 B of 232,448), the tall 256x128 tile and one warpgroup per
# 128x128 tile, for shapes where the first two ran at 0.75 of cuBLAS on the H100 (7563x4040x2776)
LARGE_TMA = [_tma(128, 256, 64, 3, 8, True), _tma(128, 128, 64, 4, 8, True), _tma(128, 256, 64, 4, 8, True),
             _tma(256, 128, 64, 3, 8, True), _tma(128, 128, 64, 3, 4, True)]
SHORT_K_TMA = _tma(128, 128, 128, 2, 8, True)   # K <= 128: the whole K in one or two loads per tile
# large outputs whose operand rows a descriptor takes but that are not whole 128-byte lines (e.g. K = 2776
# fp16, 5552-byte rows): every 128-byte row piece of a tile then spans two lines. The first two large
# configs once more on copies padded to 128-byte rows (``pad``), the copy inside the timed call, as the
# unaligned shapes' copies are: the tuner weighs one pass over the operands against the wider line use
# (the tuner's pick at 7563x4040x2776 on the H100: results/best_matmul_random.md)
PAD_TMA = [dict(c, pad=True) for c in LARGE_TMA[:2]]
LARGE_HINTED = [_cfg(128, 256, 64, 8, 3, 8), _cfg(128, 128, 64, 8, 4, 4)]
# one of M, N <= 32: tiles that do not waste most of a 64-wide side
NARROW_N = [_cfg(128, 16, 64, 8, 4, 4), _cfg(64, 16, 128, 8, 4, 4), _cfg(64, 32, 128, 8, 4, 4)]
NARROW_M = [_cfg(16, 128, 64, 8, 4, 4), _cfg(16, 64, 128, 8, 4, 4), _cfg(32, 64, 128, 8, 4, 4)]
SPLITK_MIN_K = 512
# short K (<= 128) at mid-size outputs: the whole K in one tile, so the kernel is one load and one store
SHORT_K_HINTED = [_cfg(128, 128, 128, 8, 2, 8), _cfg(64, 128, 128, 8, 2, 4)]
# short K at small outputs (137x701x88 ran at 0.65 of Inductor with 32x64x64 tiles): the whole K in one
# step, and narrower tiles so that a 100k-element output still gets about a program per SM; four warps on
# the 32x32 and 16x64 tiles ran 3-5 % faster than two there on the H100 (2.93-2.99 us against 3.15)
SMALL_SHORT_K = [_cfg(32, 32, 128, 8, 2, 2), _cfg(32, 64, 128, 8, 2, 4), _cfg(64, 64, 128, 8, 2, 4),
                 _cfg(32, 32, 128, 8, 2, 4), _cfg(16, 64, 128, 8, 2, 4)]
# 128 < K <= 256 at small outputs: the whole K in one 256-deep step (136x451x133 on the H100: 3.57 us
# against 4.2 for the best 64-deep tile, Inductor 3.26)
SMALL_MID_K = [_cfg(32, 32, 256, 8, 1, 4), _cfg(32, 32, 128, 8, 2, 4)]
# swap-AB for a skinny M (C^T = B^T A^T): the long N becomes the tile's 128-row side, which Hopper's
# warpgroup MMA needs (64 rows per warpgroup), and the short M the narrow side (an MMA may be 16 wide)
SWAP_AB = [_cfg(128, 16, 64, 8, 4, 4), _cfg(128, 32, 64, 8, 4, 4), _cfg(64, 32, 128, 8, 4, 4),
           _cfg(128, 64, 64, 8, 4, 4)]
SWAP_MAX_M = 64


def splitk_configs(M: int, N: int, K: int, sms: int = 132) -> list[dict]:
    """Split-K candidates when the output tiles fill at most half the SMs and K is long: tiles as narrow
    as the output (32 wide for M or N <= 32), K steps of 64 and 128, and splits that about fill the SMs,
    half that (fewer fp32 partials to sum) and twice that (the partials are summed by one kernel after);
    for a skinny side up to 128 whose 64-wide tiles are already many, one 128x128-tile split (and, for a side
    up to 64, the narrow tiles split further)."""
    bn = 32 if N <= 32 else 64
    bm = 32 if M <= 32 else 64
    tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
    if K < SPLITK_MIN_K:
        return []
    if tiles * 2 > sms:
        # enough small tiles, but a skinny side (e.g. M = 127, N = K = 4096) leaves 128x128 tiles few: those,
        # split so that about every SM gets one (wide tiles reuse each loaded A and B row more)
        big = triton.cdiv(M, 128) * triton.cdiv(N, 128)
        if min(M, N) > 128 or big * 2 > sms or K < 2048:
            return []
        s = max(2, min(sms // big, K // 512, 16))
        out = [dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3, split_k=s)]
        # the product streams the long operand, so it is the loads in flight that count (its rows load 2 bytes
        # at a time where they are not 16-byte aligned): for a skinny side up to 64, one tile across it by 64,
        # split until each SM runs about four programs. Not for a side up to 128: a 128-wide tile by 64 ran
        # far slower than the 128x128 split there (results/best_matmul_random.md)
        if min(M, N) <= 64 and tiles < 4 * sms:  # bm x bn is that tile: 32 or 64 across, 64 along
            s = max(2, min(4 * sms // tiles, K // 512, 16))
            out.append(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=64, num_warps=4, num_stages=3, split_k=s))
        return out
    s1 = max(2, min(sms // tiles, K // 256, 64))
    splits = sorted({max(2, s1 // 2), s1, min(2 * s1, K // 128, 128)})
    out = [dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=64, num_warps=4, num_stages=3, split_k=s) for s in splits if s >= 2]
    if K // s1 >= 256:  # slices of two or more 128-deep steps: a deeper step halves the loop trips
        out.append(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=128, num_warps=4, num_stages=3, split_k=s1))
    return out


# sm_90's opt-in shared memory per block (H100, H200): the limit the rules assume when no GPU says otherwise
SMEM_LIMIT = 232_448


def smem_bytes(kind: str, cfg: dict, elem_size: int = 2) -> int:
    """Shared memory a candidate needs, by the rule the compiler follows on sm_90 for these kernels:
    ``num_stages`` buffers of one A and one B tile, plus the TMA kernels' half-tile epilogue staging
    (128x256x64 fp16 at 3 stages: 147,456 B pointer kernel, 180,224 B TMA; calc.smem checks the rule
    against compiled kernels)."""
    if kind in ("tma", "streamk", "dtma", "splitk"):
        bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    else:
        bm, bn, bk = cfg["BLOCK_SIZE_M"], cfg["BLOCK_SIZE_N"], cfg["BLOCK_SIZE_K"]
    loop = cfg["num_stages"] * (bm * bk + bk * bn) * elem_size
    return loop + (bm * (bn // 2) * elem_size if kind in ("tma", "streamk", "dtma") else 0)


def aligned(M: int, N: int, K: int, strides) -> bool:
    """Every size and every non-unit stride a multiple of 16: what Triton's own specialization sees."""
    return all(x % 16 == 0 for x in (M, N, K)) and all(s == 1 or s % 16 == 0 for s in strides)


def candidates(M: int, N: int, K: int, strides, arch: str, small: bool, tma_ok: bool = False, *,
               large: bool = False, sms: int = 132, elem_size: int = 2,
               smem_limit: int = SMEM_LIMIT) -> list[tuple[str, dict]]:
    """(kernel, config) pairs to time (``_candidates``), less those whose shared memory (``smem_bytes`` at
    ``elem_size`` bytes an element) exceeds ``smem_limit``: no rule can pick one that cannot launch."""
    return [c for c in _candidates(M, N, K, strides, arch, small, tma_ok, large=large, sms=sms, elem_size=elem_size)
            if smem_bytes(c[0], c[1], elem_size) <= smem_limit]


def lines_split(strides, elem_size: int) -> bool:
    """Whether A or B (``strides``' first four: A's two, B's two) has 16-byte aligned rows a descriptor
    can take as they are, or transposed, that are not whole ``ROW_ALIGN_BYTES`` lines (what the ``pad``
    configs copy: ``best_kernels._load_mode``)."""
    for s0, s1 in (strides[0:2], strides[2:4]):
        row = s0 if s1 == 1 else s1 if s0 == 1 else None
        if row is not None and (row * elem_size) % 16 == 0 and (row * elem_size) % ROW_ALIGN_BYTES:
            return True
    return False


# a last wave at most this full: the stream-K form of the first large TMA config is timed beside it
STREAM_K_MAX_FILL = 0.95


def stream_k_pays(M: int, N: int, K: int, cfg: dict, sms: int) -> bool:
    """Whether ``cfg``'s tiles leave the last wave at most ``STREAM_K_MAX_FILL`` full with at least one whole
    wave before the tiles ``stream_k`` shares (its hybrid form only). Where every tile would be shared (fewer
    than two waves) it ran slower than the same config tile by tile at every shape measured on the H100,
    also with the partials written as half tiles: each fp32 partial tile is as many bytes as several K steps'
    operand tiles, moved while no MMA runs. The hybrid was the tuner's pick where the part-empty wave came
    after seven whole ones (results/best_matmul_random.md)."""
    tiles = triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"])
    shared = stream_k_tiles(tiles, sms, triton.cdiv(K, cfg["BLOCK_K"]))
    return 0 < shared < tiles and _waves(M, N, cfg["BLOCK_M"], cfg["BLOCK_N"], sms) <= STREAM_K_MAX_FILL


def _candidates(M: int, N: int, K: int, strides, arch: str, small: bool, tma_ok: bool = False, *,
                large: bool = False, sms: int = 132, elem_size: int = 2) -> list[tuple[str, dict]]:
    """(kernel, config) pairs to time: ``"hinted"`` always; ``"tutorial03"`` too when the shape is aligned
    (unaligned, it loads 2 bytes at a time and is never the fastest); ``"tma"`` (the persistent TMA kernel,
    padded copies where an operand needs them) when ``tma_ok`` (Hopper, fp16/bf16); ``"splitk"`` when few
    output tiles meet a long K; ``"hinted_swap"`` (the hinted kernel on C^T = B^T A^T) for a skinny M;
    ``"dtma"`` (the TMA kernel with descriptors made on the device, ``device_tma``) beside ``"tma"`` below
    the large class, where its cheaper launch can matter; ``"streamk"`` (``stream_k``) second in the large
    list, for the first TMA config when its tiles leave the last wave part-empty (``stream_k_pays``).
    ``large``: the short list for outputs of TMA_MIN_MN and more (compiles are what tuning pays for), with
    ``PAD_TMA`` third and fourth when an operand's rows are not whole 128-byte lines (``lines_split``).
    Split-K, where it is listed at all (few output tiles), comes right after the first tiled candidate:
    a skinny shape's tuning budget must not run out before it is timed."""
    is_aligned = aligned(M, N, K, strides)
    if large:
        out = [("tma", c) for c in LARGE_TMA] if tma_ok else []
        split = tma_ok and lines_split(strides, elem_size)
        if split:
            out[2:2] = [("tma", c) for c in PAD_TMA]
        first = (PAD_TMA if split else LARGE_TMA)[0]  # line-padded where rows split lines
        if tma_ok and stream_k_pays(M, N, K, first, sms):  # second: the first config with its last wave shared
            out[1:1] = [("streamk", first)]
        if tma_ok and K <= 128:
            out.append(("tma", SHORT_K_TMA))
        if not is_aligned or not tma_ok:
            out += [("hinted", c) for c in LARGE_HINTED]
        if K <= 128:
            out += [("hinted", c) for c in SHORT_K_HINTED]
        return out
    hinted = list(SMALL_HINTED if small else configs_for(arch))
    if N <= 32:
        hinted += NARROW_N
    if M <= 32:
        hinted += NARROW_M
    if K <= 128:
        hinted += SMALL_SHORT_K if small else SHORT_K_HINTED
    elif K <= 256 and small:
        hinted += SMALL_MID_K
    out = [("hinted", c) for c in hinted]
    if is_aligned:
        out += [("tutorial03", c) for c in (SMALL_TUTORIAL if small else configs_for(arch))]
    if tma_ok:
        tma = [("tma", c) for c in (SMALL_TMA if small else MID_TMA)]
        if K <= 128 and not small:
            tma.append(("tma", SHORT_K_TMA))
        # the same kernel with device-made descriptors: a pointer launch, a few microseconds less CPU
        if device_tma_enabled():
            tma += [("dtma", c) for c in (SMALL_TMA if small else MID_TMA)[:2]]
        # mid-size: the TMA kinds before the long pointer-kernel list (they won most mid-size shapes on the
        # H100), so that the tuning budget never leaves them out
        out = out + tma if small else tma + out
    if M <= SWAP_MAX_M and N >= 4 * M:
        out += [("hinted_swap", c) for c in SWAP_AB]
    out[1:1] = [("splitk", c) for c in splitk_configs(M, N, K, sms)]
    return out


def device_tma_enabled() -> bool:
    """``GEMM_LAB_DEVICE_TMA=0`` leaves the device-descriptor TMA kernel out of the candidate lists."""
    import os

    return os.environ.get("GEMM_LAB_DEVICE_TMA", "1").strip() != "0"


def _waves(M: int, N: int, bm: int, bn: int, sms: int) -> float:
    """How full the last wave of (bm x bn) output tiles is, 0..1 (1: every wave uses every SM)."""
    tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
    return tiles / (triton.cdiv(tiles, sms) * sms)


def heuristic(cands: list[tuple[str, dict]], M: int, N: int, K: int, sms: int = 132) -> tuple[str, dict]:
    """The candidate a first call runs before (or instead of) any timing, by rules alone:

    * split-K when the list has it (few output tiles) and K is at least twice M and N: the middle split;
    * a large output on TMA: the whole-K tile for K <= 128, else 128x256 when its last wave is at least
      80 % full, else 128x128;
    * a skinny M with swap-AB: the narrow tile that covers M;
    * N or M <= 32: the narrow tile of that side;
    * otherwise the hinted kernel at the widest tile (128x128, 64x128, 128x64, 64x64) of which there are
      at least 3/4 as many as SMs (at 1024^3 on the H200, small_configs.csv: 128 tiles of 64x128 ran
      faster than 256 of 64x64).

    Pointer kernels are preferred below the large class: their launch costs a few microseconds less than
    the TMA kernel's (three descriptors encoded per launch), which matters where the GPU time is short."""
    if not cands:
        raise ValueError("heuristic() needs at least one candidate")

    def first(kind, pred=lambda c: True):
        return next(((k, c) for k, c in cands if k == kind and pred(c)), None)

    sk = [(k, c) for k, c in cands if k == "splitk"]
    if sk and K >= 2 * max(M, N):
        return sk[len(sk) // 2] if len(sk) > 2 else sk[0]
    tma = [(k, c) for k, c in cands if k == "tma"]
    if tma and M * N >= 2048 * 2048:
        if K <= 128 and ("tma", SHORT_K_TMA) in tma:
            return "tma", SHORT_K_TMA
        wide = next((x for x in tma if x[1]["BLOCK_N"] == 256), None)
        square = next((x for x in tma if x[1]["BLOCK_M"] == 128 and x[1]["BLOCK_N"] == 128), None)
        if wide and (square is None or _waves(M, N, 128, 256, sms) >= 0.8):
            return wide
        return square or tma[0]
    bk = (lambda c: c["BLOCK_SIZE_K"] == 128) if K <= 128 else (lambda c: True)
    if M <= SWAP_MAX_M:
        pick = first("hinted_swap", lambda c: c["BLOCK_SIZE_N"] >= min(M, 32) and c["BLOCK_SIZE_M"] == 128)
        if pick:
            return pick
    if N <= 32:
        pick = first("hinted", lambda c: c["BLOCK_SIZE_N"] in (16, 32) and c["BLOCK_SIZE_N"] >= min(N, 16))
        if pick:
            return pick
    if M <= 32:
        pick = first("hinted", lambda c: c["BLOCK_SIZE_M"] in (16, 32))
        if pick:
            return pick
    for bm, bn in ((128, 128), (64, 128), (128, 64), (64, 64)):
        if triton.cdiv(M, bm) * triton.cdiv(N, bn) >= 0.75 * sms or (bm, bn) == (64, 64):
            pick = first("hinted", lambda c, bm=bm, bn=bn: (c["BLOCK_SIZE_M"], c["BLOCK_SIZE_N"]) == (bm, bn)
                         and bk(c)) or first("hinted", lambda c, bm=bm, bn=bn: (c["BLOCK_SIZE_M"],
                                                                                c["BLOCK_SIZE_N"]) == (bm, bn))
            if pick:
                return pick
    return cands[0]


def hints_of(M: int, N: int, K: int, strides) -> tuple[int, ...]:
    return tuple(hint(x) for x in (M, N, K, *strides))


def graph_time_ms(fn) -> float:
    """Median GPU time of ``fn()`` replayed from a CUDA graph (short: enough to rank configs)."""
    return graph_bench_ms(fn, rep=10)


def pick_fastest(cands, run, time_fn=None, *, eager: bool = False, host_fn=None, budget_s: float | None = None,
                 clock=None):
    """The candidate ``(kernel, config)`` with the smallest GPU time ``time_fn(lambda: run(cand))``.

    ``eager``: rank by the time per call when every call is made from Python instead, ``max(GPU time, CPU
    time of one launch)``, ties broken by GPU time. The launch cost belongs to the kernel (its launcher),
    not to the tile config, so each kernel's is the median of ``host_fn`` over its configs: per-config host
    timings differ by noise alone, and ranking by them picked arbitrary configs on the H200.
    Graph ranking: candidates within ``TIE`` of the fastest GPU time count as equal; among them the one
    with the cheapest launch (``LAUNCH_RANK``) wins, then the faster.
    ``run(cand)`` is called once first (compiles it). Candidates that fail to compile or launch (e.g.
    OutOfResources on a smaller GPU) are skipped; if every one fails, the last error is raised.
    ``budget_s``: start no candidate after that many seconds (compiling is most of it); the first one is
    always timed, so put the heuristic's pick first. Candidates left out are not in ``timings``.
    Returns (candidate, ms, timings): ms is the winner's score, timings every timed candidate's GPU time."""
    import time

    time_fn = time_fn or graph_time_ms
    host_fn = host_fn or host_time_ms
    clock = clock or time.perf_counter
    last_exc, timings, hosts = None, [], {}
    t0 = clock()
    for cand in cands:
        if budget_s is not None and timings and clock() - t0 > budget_s:
            break
        try:
            run(cand)
            ms = time_fn(lambda cand=cand: run(cand))
            if eager:
                hosts.setdefault(cand[0], []).append(host_fn(lambda cand=cand: run(cand)))
        except Exception as exc:  # noqa: BLE001 - compile/launch failures of one config: try the next
            last_exc = exc
            timings.append((cand, math.nan))
            continue
        timings.append((cand, ms))
    ran = [(cand, ms) for cand, ms in timings if ms == ms]
    if not ran:
        raise RuntimeError(f"best_matmul: none of {len(cands)} candidate configs ran") from last_exc
    launch = {kernel: statistics.median_high(h) for kernel, h in hosts.items()}

    def score(item):
        cand, ms = item
        return (max(ms, launch[cand[0]]), ms) if eager else (ms, 0.0)

    if eager:
        best, best_ms = min(ran, key=score)
        return best, score((best, best_ms))[0], timings
    # GPU time alone: within TIE of the fastest the timings do not tell the kernels apart, so the one whose
    # launch costs the host least wins (what an eager caller of the same plan pays for)
    fastest = min(ms for _, ms in ran)
    near = [(cand, ms) for cand, ms in ran if ms <= fastest * (1 + TIE)]
    best, best_ms = min(near, key=lambda item: (LAUNCH_RANK.get(_kind(item[0]), 1), item[1]))
    return best, best_ms, timings


TIE = 0.02  # graph-timing noise between two runs of one candidate (rep=10): about 1-2 %


def _kind(cand) -> str:
    return cand[0] if isinstance(cand, tuple) else str(cand)
