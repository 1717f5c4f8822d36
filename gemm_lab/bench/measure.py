"""One shape measured: inputs, the CSV columns every file starts with, and every kernel of a menu timed
beside torch.matmul in the same run (see results/README.md for the columns)."""

from __future__ import annotations

import datetime as _dt

from gemm_lab import runtime

# isort: split
import torch

from gemm_lab import kernels as K
from gemm_lab.bench.menu import matmul_menu
from gemm_lab.timing import (
    DEFAULT_REP_MS,
    DEFAULT_WARMUP_MS,
    do_bench_ms,
    graph_bench_ms,
    host_us,
    median,
    require_gpu,
    tflops,
)


def env_info() -> dict:
    """gpu, compute_capability, torch, triton, date (UTC, ISO): the columns every CSV starts with."""
    info = runtime.describe()
    return {
        "gpu": info["device_name"],
        "compute_capability": info["compute_capability"],
        "torch": info["torch"],
        "triton": info["triton"],
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
    }


DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def random_inputs(M: int, N: int, Kd: int, dtype: str = "fp16", seed: int = 0):
    g = torch.Generator(device=runtime.device()).manual_seed(seed)
    dt = DTYPES[dtype]
    a = torch.randn((M, Kd), device=runtime.device(), dtype=torch.float32, generator=g).to(dt)
    b = torch.randn((Kd, N), device=runtime.device(), dtype=torch.float32, generator=g).to(dt)
    return a, b


# ------------------------------------------------------------------------------ kernel menu
def _measure(fn, a, b, out, ref, warmup, rep, graph=False):
    """(ms, rel_err, host_us, graph_ms, error string) for one kernel on one shape; graph_ms is NaN
    unless ``graph``."""
    nan = float("nan")
    try:
        out.fill_(nan)
        fn(a, b, out)
        torch.cuda.synchronize()
        err = K.relative_error(out, ref)
        ms = do_bench_ms(lambda: fn(a, b, out), warmup, rep)
        gms = graph_bench_ms(lambda: fn(a, b, out), min(rep, 50)) if graph else nan
        return ms, err, host_us(lambda: fn(a, b, out)), gms, ""
    except Exception as exc:  # OutOfResources and friends: record, don't stop the sweep
        torch.cuda.synchronize()
        msg = str(exc).strip().splitlines()
        return nan, nan, nan, nan, f"{exc.__class__.__name__}: {(msg[0] if msg else '')[:160]}"


def bench_shape(M, N, Kd, dtype="fp16", menu=None, warmup=DEFAULT_WARMUP_MS, rep=DEFAULT_REP_MS, seed=0,
                paired: bool = True, torch_repeats: int = 3, graph: bool = False) -> list[dict]:
    """One row per kernel for one shape; the first row is torch.matmul.

    ``paired=True``: torch.matmul is timed again right before every kernel (``torch_ms`` holds that
    neighbouring time), so torch.matmul is measured all through the shape's run; ``ratio_to_torch`` is
    the median of all those torch times / the kernel's time (the torch row reports that median). A single
    neighbouring time is not used for the ratio: single neighbouring times scatter far more than the median
    (results/matmul.csv keeps each in `torch_ms`).
    ``graph=True`` adds ``graph_ms`` (CUDA-graph replay: GPU time without launch overhead, L2 not
    flushed), ``graph_tflops`` and ``graph_ratio_to_torch`` (median torch graph time / the kernel's).
    """
    require_gpu()
    a, b = random_inputs(M, N, Kd, dtype, seed)
    ref = K.reference_matmul(a, b)
    out = torch.empty((M, N), device=a.device, dtype=a.dtype)
    env = env_info()

    def torch_time():
        return do_bench_ms(lambda: torch.matmul(a, b, out=out), warmup, rep)

    def torch_graph_time():
        return graph_bench_ms(lambda: torch.matmul(a, b, out=out), min(rep, 50)) if graph else float("nan")

    t_torch = [torch_time()]
    g_torch = [torch_graph_time()]
    torch_err = K.relative_error(torch.matmul(a, b), ref)
    rows = []
    for kernel, config, fn in menu if menu is not None else matmul_menu():
        pair = torch_time() if paired else None
        gpair = torch_graph_time()
        ms, err, hus, gms, msg = _measure(fn, a, b, out, ref, warmup, rep, graph)
        if pair is not None:
            t_torch.append(pair)
        g_torch.append(gpair)
        rows.append(dict(env, M=M, N=N, K=Kd, dtype=dtype, kernel=kernel, config=config, ms=ms,
                         tflops=tflops(M, N, Kd, ms), rel_err=err, host_us=hus, error=msg, torch_ms=pair,
                         graph_ms=gms))
    while len(t_torch) < torch_repeats:
        t_torch.append(torch_time())
    ts = sorted(t_torch)
    torch_ms = median(ts)
    rows.insert(0, dict(env, M=M, N=N, K=Kd, dtype=dtype, kernel="torch.matmul", config="cuBLAS", ms=torch_ms,
                        tflops=tflops(M, N, Kd, torch_ms), rel_err=torch_err,
                        host_us=host_us(lambda: torch.matmul(a, b, out=out)),
                        error=f"torch.matmul timings (ms) min {ts[0]:.4f} max {ts[-1]:.4f} n {len(ts)}",
                        torch_ms=torch_ms, graph_ms=median(g_torch)))
    for r in rows:
        r["ratio_to_torch"] = torch_ms / r["ms"]
        if graph:
            r["graph_tflops"] = tflops(M, N, Kd, r["graph_ms"])
            r["graph_ratio_to_torch"] = rows[0]["graph_ms"] / r["graph_ms"]
        else:
            del r["graph_ms"]
    return rows
