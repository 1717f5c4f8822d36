"""Timing primitives shared by best_matmul's tuner and the benchmarks: median times from CUDA events
(``do_bench``, L2 flushed) and from CUDA-graph replay (GPU time only), the launch cost on the host, and the
rates derived from them. Triton and torch are imported when a timing is taken, so the kernels can import this
module at no cost."""

from __future__ import annotations

import statistics
import time

from gemm_lab import runtime

DEFAULT_WARMUP_MS = 50
DEFAULT_REP_MS = 300


def require_gpu() -> None:
    if not runtime.on_gpu():
        raise RuntimeError("benchmarks need a CUDA GPU: in the Triton interpreter times mean nothing")


def do_bench_ms(fn, warmup: int = DEFAULT_WARMUP_MS, rep: int = DEFAULT_REP_MS) -> float:
    """Median time of ``fn()`` in milliseconds (triton.testing.do_bench: CUDA events, L2 flushed)."""
    import triton

    require_gpu()
    return float(triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median"))


def graph_bench_ms(fn, rep: int = 50) -> float:
    """Median GPU time of ``fn()`` in milliseconds, replayed from a CUDA graph
    (triton.testing.do_bench_cudagraph): no Python launcher or launch cost in the time, and no L2 flush
    between calls, so inputs that fit in L2 stay there. The kernel's own time, for shapes where
    ``do_bench_ms`` measures the host instead."""
    import triton

    require_gpu()
    return float(triton.testing.do_bench_cudagraph(fn, rep=rep, return_mode="median"))


def host_time_ms(fn, n: int = 50, warmup: bool = True) -> float:
    """CPU time of one call of ``fn()`` in milliseconds (``n`` calls back to back, then one sync; the GPU
    work queues behind them, so this is the launch cost, not the kernel's time)."""
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


def host_us(fn, n: int = 20) -> float:
    """CPU time of one launch in microseconds (the Python launcher + Triton's launch, not the kernel)."""
    return host_time_ms(fn, n, warmup=False) * 1e3


def tflops(M: int, N: int, K: int, ms: float) -> float:
    """2MNK / time, in TFLOP/s."""
    return 2.0 * M * N * K * 1e-12 / (ms * 1e-3)


def gbps(n_bytes: float, ms: float) -> float:
    """bytes / time, in GB/s (10^9)."""
    return n_bytes * 1e-9 / (ms * 1e-3)


def median(xs) -> float:
    """Median of ``xs`` with NaNs (timings that failed) left out; NaN when nothing is left."""
    xs = [x for x in xs if x == x]
    return float(statistics.median(xs)) if xs else float("nan")
