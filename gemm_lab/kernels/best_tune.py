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


# Hopper, fp16/bf16, operands a TMA descriptor can take as they are: the persistent TMA kernel at tiles small
# enough for 1024^2-class outputs (64x128 -> 128 tiles for 132 SMs at 1024^2)
def _tma(bm, bn, bk, s, w):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_stages=s, num_warps=w, flatten=False)


SMALL_TMA = [_tma(64, 128, 64, 4, 4), _tma(128, 64, 64, 4, 4), _tma(128, 128, 64, 4, 8), _tma(64, 64, 64, 4, 4)]
MID_TMA = [_tma(128, 128, 64, 4, 8), _tma(128, 256, 64, 3, 8), _tma(64, 128, 64, 4, 4)]


def aligned(M: int, N: int, K: int, strides) -> bool:
    """Every size and every non-unit stride a multiple of 16: what Triton's own specialization sees."""
    return all(x % 16 == 0 for x in (M, N, K)) and all(s == 1 or s % 16 == 0 for s in strides)


def candidates(M: int, N: int, K: int, strides, arch: str, small: bool, tma_ok: bool = False
               ) -> list[tuple[str, dict]]:
    """(kernel, config) pairs to time: ``"hinted"`` always; ``"tutorial03"`` too when the shape is aligned
    (unaligned, it loads 2 bytes at a time and is never the fastest); ``"tma"`` (the persistent TMA kernel)
    when ``tma_ok`` (Hopper, fp16/bf16, every operand a valid TMA descriptor as it is)."""
    hinted = SMALL_HINTED if small else configs_for(arch)
    out = [("hinted", c) for c in hinted]
    if aligned(M, N, K, strides):
        out += [("tutorial03", c) for c in (SMALL_TUTORIAL if small else configs_for(arch))]
    if tma_ok:
        out += [("tma", c) for c in (SMALL_TMA if small else MID_TMA)]
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
