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

import triton

from .autotuned import _cfg, configs_for
from .hinted import hint

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
MID_TMA = [_tma(128, 128, 64, 4, 8), _tma(128, 256, 64, 3, 8), _tma(64, 128, 64, 4, 4)]
# large outputs: the 4096^3 / 8192^3 pick first (small_configs.csv), then a 128x128 tile for shapes whose
# 128x256 tile count leaves the last wave mostly empty (e.g. 408 tiles on 132 SMs: 4 waves, 77 % busy)
LARGE_TMA = [_tma(128, 256, 64, 3, 8, True), _tma(128, 128, 64, 4, 8, True)]
SHORT_K_TMA = _tma(128, 128, 128, 2, 8, True)   # K <= 128: the whole K in one or two loads per tile
LARGE_HINTED = [_cfg(128, 256, 64, 8, 3, 8), _cfg(128, 128, 64, 8, 4, 4)]
# one of M, N <= 32: tiles that do not waste most of a 64-wide side
NARROW_N = [_cfg(128, 16, 64, 8, 4, 4), _cfg(64, 16, 128, 8, 4, 4), _cfg(64, 32, 128, 8, 4, 4)]
NARROW_M = [_cfg(16, 128, 64, 8, 4, 4), _cfg(16, 64, 128, 8, 4, 4), _cfg(32, 64, 128, 8, 4, 4)]
SPLITK_MIN_K = 512


def splitk_configs(M: int, N: int, K: int, sms: int = 132) -> list[dict]:
    """Split-K candidates when the 64-wide output tiles fill at most half the SMs and K is long: one split
    that about fills the SMs and one twice as deep (the fp32 partials are summed afterwards)."""
    bn = 32 if N <= 32 else 64
    bm = 32 if M <= 32 else 64
    tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
    if tiles * 2 > sms or K < SPLITK_MIN_K:
        return []
    s1 = max(2, min(sms // tiles, K // 256, 64))
    splits = sorted({s1, min(2 * s1, K // 128, 128)})
    return [dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=64, num_warps=4, num_stages=3, split_k=s) for s in splits if s >= 2]


def aligned(M: int, N: int, K: int, strides) -> bool:
    """Every size and every non-unit stride a multiple of 16: what Triton's own specialization sees."""
    return all(x % 16 == 0 for x in (M, N, K)) and all(s == 1 or s % 16 == 0 for s in strides)


def candidates(M: int, N: int, K: int, strides, arch: str, small: bool, tma_ok: bool = False, *,
               large: bool = False, sms: int = 132) -> list[tuple[str, dict]]:
    """(kernel, config) pairs to time: ``"hinted"`` always; ``"tutorial03"`` too when the shape is aligned
    (unaligned, it loads 2 bytes at a time and is never the fastest); ``"tma"`` (the persistent TMA kernel,
    padded copies where an operand needs them) when ``tma_ok`` (Hopper, fp16/bf16); ``"splitk"`` when few
    output tiles meet a long K. ``large``: the short list for outputs of TMA_MIN_MN and more (compiles
    are what a first call pays for)."""
    is_aligned = aligned(M, N, K, strides)
    if large:
        out = [("tma", c) for c in LARGE_TMA] if tma_ok else []
        if tma_ok and K <= 128:
            out.append(("tma", SHORT_K_TMA))
        if not is_aligned or not tma_ok:
            out += [("hinted", c) for c in LARGE_HINTED]
        return out
    hinted = list(SMALL_HINTED if small else configs_for(arch))
    if N <= 32:
        hinted += NARROW_N
    if M <= 32:
        hinted += NARROW_M
    out = [("hinted", c) for c in hinted]
    if is_aligned:
        out += [("tutorial03", c) for c in (SMALL_TUTORIAL if small else configs_for(arch))]
    if tma_ok:
        out += [("tma", c) for c in (SMALL_TMA if small else MID_TMA)]
        if K <= 128 and not small:
            out.append(("tma", SHORT_K_TMA))
    out += [("splitk", c) for c in splitk_configs(M, N, K, sms)]
    return out


def hints_of(M: int, N: int, K: int, strides) -> tuple[int, ...]:
    return tuple(hint(x) for x in (M, N, K, *strides))


def graph_time_ms(fn) -> float:
    """Median GPU time of ``fn()`` replayed from a CUDA graph (short: enough to rank configs)."""
    return float(triton.testing.do_bench_cudagraph(fn, rep=10, return_mode="median"))


def host_time_ms(fn, n: int = 50, warmup: bool = True) -> float:
    """CPU time of one call of ``fn()`` in milliseconds (``n`` calls back to back, then one sync; the GPU
    work queues behind them, so this is the launch cost, not the kernel's time)."""
    import time

    import torch

    if warmup:
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    dt = (time.perf_counter() - t) / n * 1e3
    torch.cuda.synchronize()
    return dt


def pick_fastest(cands, run, time_fn=None, *, eager: bool = False, host_fn=None):
    """The candidate ``(kernel, config)`` with the smallest GPU time ``time_fn(lambda: run(cand))``.

    ``eager``: rank by the time per call when every call is made from Python instead, ``max(GPU time, CPU
    time of one launch)``, ties broken by GPU time. The launch cost belongs to the kernel (its launcher),
    not to the tile config, so each kernel's is the median of ``host_fn`` over its configs: per-config host
    timings differ by noise alone, and ranking by them picked arbitrary configs on the H200.
    ``run(cand)`` is called once first (compiles it). Candidates that fail to compile or launch (e.g.
    OutOfResources on a smaller GPU) are skipped; if every one fails, the last error is raised.
    Returns (candidate, ms, timings): ms is the winner's score, timings every candidate's GPU time."""
    time_fn = time_fn or graph_time_ms
    host_fn = host_fn or host_time_ms
    last_exc, timings, hosts = None, [], {}
    for cand in cands:
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
    launch = {kernel: sorted(h)[len(h) // 2] for kernel, h in hosts.items()}

    def score(item):
        cand, ms = item
        return (max(ms, launch[cand[0]]), ms) if eager else (ms, 0.0)

    best, best_ms = min(ran, key=score)
    return best, score((best, best_ms))[0], timings
