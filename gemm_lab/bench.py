"""GPU benchmarks: do_bench wrappers, TFLOP/s and GB/s, and the sweeps whose CSVs live in results/.

Every ratio is ``torch.matmul time / kernel time`` with both measured in the same run, on the same
inputs (fresh random normal data, never zeros), as medians of ``triton.testing.do_bench``. Every
kernel's output is also checked against an fp32 reference once per shape (``rel_err`` column).

Command line (on a GPU machine; writes CSV + PNG files into --out)::

    python -m gemm_lab.bench --out results/             # everything (a few minutes on an H200)
    python -m gemm_lab.bench --out results/ --only sweep --quick

Parts (``--only``): ``sweep`` (matmul.csv + matmul.png), ``persistent`` (persistent_programs.csv,
persistent_variants.csv), ``group`` (group_order.csv), ``compiled`` (compiled_kernels.csv),
``tma_configs`` (tma_configs.csv: a search over the TMA kernel's options), ``small_configs``
(small_configs.csv: the tile configs of the Tutorial-03 and hinted kernels at small shapes and the TMA
option sets at large ones, CUDA-graph times; gemm_lab.bench_small), ``softmax`` (softmax.csv),
``host`` (host_overhead.csv: CPU time of each launcher and of its pieces; host_overhead_breakdown.csv:
best_matmul's repeat-call path step by step), ``best`` (best_matmul.csv,
best_matmul_summary.csv: best_matmul against torch.matmul at the issue-14 target shapes, three rounds),
``best_eager`` (best_matmul_eager.csv: the same at the small shapes with ``tune_for="eager"``),
``fp8`` (fp8_matmul.csv: fp8 e4m3 fp8_matmul against torch._scaled_mm, Hopper only), ``autotune``
(autotune_cost.csv) and ``t4limit`` (t4_limit_<gpu>.csv): week 7 notebook 03, see gemm_lab.bench_autotune;
``random`` (best_matmul_random*.csv + .png: best_matmul, torch.matmul and torch.compile max-autotune at 40
random shapes from ``--seed``, about 15 minutes; ``--time-limit`` splits it over runs, see gemm_lab.bench_random).
The CSV schemas are in results/README.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys
import time

from gemm_lab import runtime

# isort: split
import torch
import triton

from gemm_lab import kernels as K

DEFAULT_WARMUP_MS = 50
DEFAULT_REP_MS = 300
SQUARE_SIZES = (512, 1024, 2048, 4096, 8192)
EXTRA_SHAPES = ((500, 600, 300), (16384, 256, 4096), (256, 16384, 4096))


# ------------------------------------------------------------------------------ basic measures
def require_gpu() -> None:
    if not runtime.on_gpu():
        raise RuntimeError("benchmarks need a CUDA GPU: in the Triton interpreter times mean nothing")


def do_bench_ms(fn, warmup: int = DEFAULT_WARMUP_MS, rep: int = DEFAULT_REP_MS) -> float:
    """Median time of ``fn()`` in milliseconds (triton.testing.do_bench: CUDA events, L2 flushed)."""
    require_gpu()
    return float(triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median"))


def graph_bench_ms(fn, rep: int = 50) -> float:
    """Median GPU time of ``fn()`` in milliseconds, replayed from a CUDA graph
    (triton.testing.do_bench_cudagraph): no Python launcher or launch cost in the time, and no L2 flush
    between calls, so inputs that fit in L2 stay there. The kernel's own time, for shapes where
    ``do_bench_ms`` measures the host instead."""
    require_gpu()
    return float(triton.testing.do_bench_cudagraph(fn, rep=rep, return_mode="median"))


def tflops(M: int, N: int, K: int, ms: float) -> float:
    """2MNK / time, in TFLOP/s."""
    return 2.0 * M * N * K * 1e-12 / (ms * 1e-3)


def gbps(n_bytes: float, ms: float) -> float:
    """bytes / time, in GB/s (10^9)."""
    return n_bytes * 1e-9 / (ms * 1e-3)


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


_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def random_inputs(M: int, N: int, Kd: int, dtype: str = "fp16", seed: int = 0):
    g = torch.Generator(device=runtime.device()).manual_seed(seed)
    dt = _DTYPES[dtype]
    a = torch.randn((M, Kd), device=runtime.device(), dtype=torch.float32, generator=g).to(dt)
    b = torch.randn((Kd, N), device=runtime.device(), dtype=torch.float32, generator=g).to(dt)
    return a, b


# ------------------------------------------------------------------------------ kernel menu
def _cfg_name(bm, bn, bk, s, w, g=None, extra=""):
    return f"{bm}x{bn}x{bk} s{s} w{w}" + (f" G{g}" if g is not None else "") + extra


def matmul_menu(include_slow: bool = True) -> list[tuple[str, str, object]]:
    """(kernel, config, fn(a, b, out)) for the sweep; torch.matmul is always measured separately."""
    menu = []
    seeds = [(64, 32, 32, 5, 2), (128, 128, 32, 4, 4), (128, 256, 64, 3, 8)]
    for bm, bn, bk, s, w in seeds if include_slow else seeds[1:]:
        def f(a, b, out, bm=bm, bn=bn, bk=bk, s=s, w=w):
            return K.matmul(a, b, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_stages=s, num_warps=w, out=out)
        menu.append(("tutorial03", _cfg_name(bm, bn, bk, s, w, 8), f))
    menu.append(("autotuned", "autotune", lambda a, b, out: K.matmul_autotuned(a, b, out=out)))
    menu.append(("best_matmul", "auto", lambda a, b, out: K.best_matmul(a, b, out=out)))
    menu.append(("blog_tiled", _cfg_name(128, 64, 32, 4, 4), lambda a, b, out: K.naive_tiled_matmul(a, b, out=out)))
    for pps in (1, 2):
        menu.append((f"persistent_naive_x{pps}", _cfg_name(128, 64, 32, 4, 4, extra=f" grid={pps}xSMs"),
                     lambda a, b, out, pps=pps: K.persistent_matmul(a, b, variant="naive", programs_per_sm=pps, out=out)))
    menu.append(("persistent_grouped", _cfg_name(128, 128, 64, 4, 4, 8, " grid=2xSMs"),
                 lambda a, b, out: K.persistent_matmul(a, b, variant="grouped", BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
                                                       num_stages=4, num_warps=4, programs_per_sm=2, out=out)))
    tma = best_tma_options()
    menu.append(("persistent_tma", tma_name(tma), lambda a, b, out: K.tma_persistent_matmul(a, b, out=out, **tma)))
    return menu


# the TMA kernel's options used by the sweep: among the best of bench_tma_configs() on the H200
# (2026-12-02: within noise of the other top options; see results/tma_configs.csv). --tma overrides it.
TMA_BEST = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_stages=3, num_warps=8, epilogue_subtile=False,
                flatten=True, warp_specialize=False)


def best_tma_options() -> dict:
    return dict(TMA_BEST)


def tma_name(opts: dict) -> str:
    extra = "".join([" subtile" if opts.get("epilogue_subtile") else "", " flatten" if opts.get("flatten") else "",
                     " ws" if opts.get("warp_specialize") else "",
                     f" grid={opts['programs_per_sm']}xSMs" if opts.get("programs_per_sm", 1) != 1 else ""])
    return _cfg_name(opts["BLOCK_M"], opts["BLOCK_N"], opts["BLOCK_K"], opts["num_stages"], opts["num_warps"],
                     opts.get("GROUP_M", 8), extra)


# ------------------------------------------------------------------------------ measuring one shape
def host_us(fn, n: int = 20) -> float:
    """CPU time of one launch in microseconds (the Python launcher + Triton's launch, not the kernel)."""
    from gemm_lab.kernels.best_tune import host_time_ms

    return host_time_ms(fn, n, warmup=False) * 1e3


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
    neighbouring time is not used for the ratio: on the H200 one of them was 24 % off the median.
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
    torch_ms = _median(ts)
    rows.insert(0, dict(env, M=M, N=N, K=Kd, dtype=dtype, kernel="torch.matmul", config="cuBLAS", ms=torch_ms,
                        tflops=tflops(M, N, Kd, torch_ms), rel_err=torch_err,
                        host_us=host_us(lambda: torch.matmul(a, b, out=out)),
                        error=f"torch.matmul timings (ms) min {ts[0]:.4f} max {ts[-1]:.4f} n {len(ts)}",
                        torch_ms=torch_ms, graph_ms=_median(g_torch)))
    for r in rows:
        r["ratio_to_torch"] = torch_ms / r["ms"]
        if graph:
            r["graph_tflops"] = tflops(M, N, Kd, r["graph_ms"])
            r["graph_ratio_to_torch"] = rows[0]["graph_ms"] / r["graph_ms"]
        else:
            del r["graph_ms"]
    return rows


def _median(xs) -> float:
    ts = sorted(xs)
    if not ts:
        return float("nan")
    return ts[len(ts) // 2] if len(ts) % 2 else 0.5 * (ts[len(ts) // 2 - 1] + ts[len(ts) // 2])


SWEEP_COLUMNS = ["gpu", "compute_capability", "torch", "triton", "date", "M", "N", "K", "dtype", "kernel", "config",
                 "ms", "tflops", "ratio_to_torch", "torch_ms", "rel_err", "host_us", "graph_ms", "graph_tflops",
                 "graph_ratio_to_torch", "error"]


def sweep(shapes=None, dtypes=("fp16",), menu=None, warmup=DEFAULT_WARMUP_MS, rep=DEFAULT_REP_MS, log=True,
          csv_path: str | None = None, png_path: str | None = None, graph: bool = True, jobs=None):
    """The main matmul sweep: a DataFrame with the columns documented in results/README.md
    (``graph``: also the CUDA-graph GPU time of every kernel, see ``bench_shape``).
    ``jobs``: ((M, N, K), dtype) pairs in the order to measure them; default every shape in every dtype.
    With ``csv_path`` (and ``png_path``) the table is rewritten after every shape, so an interrupted
    run keeps what it measured."""
    import pandas as pd

    def table():
        df = pd.DataFrame(rows)
        return df[[c for c in SWEEP_COLUMNS if c in df.columns]]

    shapes = shapes or [(s, s, s) for s in SQUARE_SIZES] + list(EXTRA_SHAPES)
    jobs = jobs if jobs is not None else [(shape, dtype) for dtype in dtypes for shape in shapes]
    rows = []
    for (M, N, Kd), dtype in jobs:
        t = time.time()
        part = bench_shape(M, N, Kd, dtype, menu, warmup, rep, graph=graph)
        rows += part
        if csv_path:
            table().to_csv(csv_path, index=False)
            if png_path:
                plot_sweep(table(), png_path)
        if log:
            best = max((r for r in part[1:] if r["ms"] == r["ms"]), key=lambda r: r["tflops"], default=None)
            print(f"[bench] {dtype} {M}x{N}x{Kd}: torch {part[0]['tflops']:.1f} TFLOP/s; best "
                  f"{best['kernel'] if best else '-'} {best['ratio_to_torch'] if best else float('nan'):.3f}x "
                  f"({time.time() - t:.1f} s)", flush=True)
    return table()


# ------------------------------------------------------------------------------ case-study tables
def bench_persistent_programs(sizes=(4096, 8192), programs=(1, 2, 3, 4), warmup=DEFAULT_WARMUP_MS,
                              rep=DEFAULT_REP_MS):
    """The blog's experiment: naive persistent kernel with grid = p x SMs, against the naive tiled one."""
    import pandas as pd

    rows = []
    for s in sizes:
        menu = [("blog_tiled", _cfg_name(128, 64, 32, 4, 4), lambda a, b, out: K.naive_tiled_matmul(a, b, out=out))]
        for p in programs:
            menu.append(("persistent_naive", _cfg_name(128, 64, 32, 4, 4, extra=f" grid={p}xSMs"),
                         lambda a, b, out, p=p: K.persistent_matmul(a, b, variant="naive", programs_per_sm=p, out=out)))
        part = bench_shape(s, s, s, "fp16", menu, warmup, rep)
        tiled_ms = part[1]["ms"]
        for r, p in zip(part, [None, None] + list(programs), strict=True):
            r["programs_per_sm"] = p
            r["num_programs"] = None if p is None else K.persistent.num_programs(s, s, 128, 64, p)
            r["ratio_to_tiled"] = tiled_ms / r["ms"] if r["ms"] == r["ms"] else float("nan")
        rows += part
    return pd.DataFrame(rows)


def bench_persistent_variants(sizes=(4096, 8192), warmup=DEFAULT_WARMUP_MS, rep=DEFAULT_REP_MS):
    """Each persistent variant (and the tiled kernels they grew from) against torch.matmul."""
    import pandas as pd

    tma = best_tma_options()
    menu = [
        ("blog_tiled", _cfg_name(128, 64, 32, 4, 4), lambda a, b, out: K.naive_tiled_matmul(a, b, out=out)),
        ("autotuned", "autotune", lambda a, b, out: K.matmul_autotuned(a, b, out=out)),
        ("persistent_naive", _cfg_name(128, 64, 32, 4, 4, extra=" grid=1xSMs"),
         lambda a, b, out: K.persistent_matmul(a, b, variant="naive", out=out)),
        ("persistent_grouped", _cfg_name(128, 64, 32, 4, 4, 8, " grid=2xSMs"),
         lambda a, b, out: K.persistent_matmul(a, b, variant="grouped", programs_per_sm=2, out=out)),
        ("persistent_grouped", _cfg_name(128, 128, 64, 4, 4, 8, " grid=2xSMs"),
         lambda a, b, out: K.persistent_matmul(a, b, variant="grouped", BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
                                               num_stages=4, num_warps=4, programs_per_sm=2, out=out)),
        ("persistent_grouped", _cfg_name(128, 256, 64, 3, 8, 8, " flatten grid=1xSMs"),
         lambda a, b, out: K.persistent_matmul(a, b, variant="grouped", BLOCK_M=128, BLOCK_N=256, BLOCK_K=64,
                                               num_stages=3, num_warps=8, flatten=True, out=out)),
    ]
    base = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_stages=3, num_warps=8, epilogue_subtile=False,
                flatten=False, warp_specialize=False)
    variants = [base, dict(base, epilogue_subtile=True), dict(base, flatten=True),
                dict(base, num_stages=4, epilogue_subtile=True, warp_specialize=True)]
    if tma not in variants:
        variants.append(tma)
    for o in variants:
        menu.append(("persistent_tma", tma_name(o), lambda a, b, out, o=o: K.tma_persistent_matmul(a, b, out=out, **o)))
    rows = []
    for s in sizes:
        rows += bench_shape(s, s, s, "fp16", menu, warmup, rep)
    return pd.DataFrame(rows)


def bench_group_order(size=8192, warmup=DEFAULT_WARMUP_MS, rep=DEFAULT_REP_MS):
    """GROUP_M = 1 (row-major) against 8 for small and large tiles of the Tutorial-03 kernel."""
    import pandas as pd

    configs = [(64, 32, 32, 5, 2), (64, 64, 32, 4, 4), (128, 64, 32, 4, 4), (128, 128, 32, 4, 4), (128, 256, 64, 3, 8)]
    menu = []
    for bm, bn, bk, s, w in configs:
        for g in (1, 8):
            menu.append(("tutorial03", _cfg_name(bm, bn, bk, s, w, g),
                         lambda a, b, out, bm=bm, bn=bn, bk=bk, s=s, w=w, g=g: K.matmul(
                             a, b, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=g, num_stages=s, num_warps=w, out=out)))
    rows = bench_shape(size, size, size, "fp16", menu, warmup, rep)
    df = pd.DataFrame(rows)
    df["GROUP_M"] = [None] + [g for _ in configs for g in (1, 8)]
    df["tile"] = [None] + [f"{bm}x{bn}x{bk} s{s} w{w}" for bm, bn, bk, s, w in configs for _ in (1, 8)]
    speed = {}
    for _, r in df.iloc[1:].iterrows():
        speed.setdefault(r["tile"], {})[r["GROUP_M"]] = r["ms"]
    df["speedup_G8_over_G1"] = [None] + [speed[t][1] / speed[t][8] for t in df["tile"].iloc[1:]]
    return df


def compiled_kernels_table():
    """shared / n_regs / n_spills of the naive tiled and persistent kernels (and the seed configs),
    compiled for the live GPU (registers and spills exist only there)."""
    import pandas as pd

    from gemm_lab.calc.roofline import BLOG_CONFIG, SEED_CONFIGS
    from gemm_lab.compile import compile_artifacts

    env = env_info()
    rows = []
    jobs = [("blog_tiled", BLOG_CONFIG, True), ("persistent", BLOG_CONFIG, True),
            ("grouped_persistent", BLOG_CONFIG, True)]
    jobs += [("matmul", c, True) for c in SEED_CONFIGS] + [("matmul", c, False) for c in SEED_CONFIGS]
    for kernel, cfg, aligned in jobs:
        art = compile_artifacts(kernel, cfg, target=None, aligned=aligned)
        row = art.summary()
        rows.append(dict(env, kernel=kernel, config=_cfg_name(cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K, cfg.num_stages,
                                                              cfg.num_warps),
                         aligned=aligned, target=art.target, shared=row["shared"], n_regs=row["n_regs"],
                         n_spills=row["n_spills"], num_warps=row["num_warps"], num_stages=row["num_stages"],
                         mma=row["mma"], load_error=art.metadata.get("load_error", "")))
    return pd.DataFrame(rows)


def bench_tma_configs(sizes=(4096, 8192), warmup=25, rep=150, options_list=None):
    """A search over the TMA persistent kernel's options; returns the DataFrame (best first per size)."""
    import pandas as pd

    if options_list is None:
        options_list = []
        for bm, bn, bk, s, w in [(128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (256, 128, 64, 3, 8),
                                 (256, 128, 64, 4, 8), (128, 128, 64, 4, 4), (128, 128, 64, 5, 8),
                                 (128, 256, 32, 5, 8)]:
            for sub in (False, True):
                for flat in (False, True):
                    options_list.append(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_stages=s, num_warps=w,
                                             epilogue_subtile=sub, flatten=flat, warp_specialize=False))
        for bm, bn, bk, s, w in [(128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (128, 128, 64, 4, 4)]:
            options_list.append(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_stages=s, num_warps=w,
                                     epilogue_subtile=True, flatten=False, warp_specialize=True))
    menu = [("persistent_tma", tma_name(o), lambda a, b, out, o=o: K.tma_persistent_matmul(a, b, out=out, **o))
            for o in options_list]
    rows = []
    for s in sizes:
        part = bench_shape(s, s, s, "fp16", menu, warmup, rep)
        for r, o in zip(part, [None] + options_list, strict=True):
            r["options"] = "" if o is None else repr(o)
        rows += part
    return pd.DataFrame(rows)


def bench_host_overhead(size: int = 1024, n: int = 200):
    """CPU microseconds per call of each launcher and of its pieces (input checks, tensor descriptors,
    Triton's own launch of the compiled kernel), at one shape: where the time of a launch-bound small
    matmul goes. Measured at 1024^3, where every kernel is faster on the GPU than its launch on the host,
    so the launch queue never fills."""
    import pandas as pd

    from gemm_lab.kernels.matmul import check_tile, validate_matmul
    from gemm_lab.kernels.persistent import num_programs
    from gemm_lab.kernels.persistent_tma import TensorDescriptor

    require_gpu()
    env = env_info()
    a, b = random_inputs(size, size, size)
    out = torch.empty((size, size), device=a.device, dtype=a.dtype)
    M = N = Kd = size
    tile = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=4)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))

    def matmul_direct():
        K.matmul_kernel[grid](a, b, out, M, N, Kd, *strides, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32,
                              GROUP_SIZE_M=8, ACTIVATION="", num_warps=4, num_stages=4)

    def matmul_checks():
        validate_matmul(a, b, out, None)
        check_tile(128, 128, 32, 8, 4, 4)

    tma = best_tma_options()
    bm, bn, bk = tma["BLOCK_M"], tma["BLOCK_N"], tma["BLOCK_K"]

    def descriptors():
        return (TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bk, bn]),
                TensorDescriptor.from_tensor(out, [bm, bn]))

    descs = descriptors()
    P = num_programs(M, N, bm, bn, 1)

    def tma_direct():
        K.tma_persistent_kernel[(P,)](
            *descs, M, N, Kd, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, NUM_PROGRAMS=P, A_TRANS=False,
            B_TRANS=False, EPILOGUE_SUBTILE=False, FLATTEN=bool(tma["flatten"]), WARP_SPECIALIZE=False,
            ACTIVATION="", num_warps=tma["num_warps"], num_stages=tma["num_stages"])

    jobs = [
        ("torch.matmul", "cuBLAS", lambda: torch.matmul(a, b, out=out)),
        ("matmul (launcher)", _cfg_name(128, 128, 32, 4, 4, 8), lambda: K.matmul(a, b, out=out, **tile)),
        ("matmul: input checks only", "", matmul_checks),
        ("matmul: matmul_kernel[grid](...) only", _cfg_name(128, 128, 32, 4, 4, 8), matmul_direct),
        ("autotuned (launcher)", "autotune", lambda: K.matmul_autotuned(a, b, out=out)),
        ("persistent naive (launcher)", _cfg_name(128, 64, 32, 4, 4, extra=" grid=1xSMs"),
         lambda: K.persistent_matmul(a, b, variant="naive", out=out)),
        ("persistent_tma (launcher)", tma_name(tma), lambda: K.tma_persistent_matmul(a, b, out=out, **tma)),
        ("persistent_tma: three TensorDescriptor.from_tensor only", "", descriptors),
        ("persistent_tma: tma_persistent_kernel[grid](...) only", tma_name(tma), tma_direct),
    ]
    rows = []
    for what, config, fn in jobs:
        fn()  # compile / autotune outside the timing
        torch.cuda.synchronize()
        rows.append(dict(env, M=M, N=N, K=Kd, dtype="fp16", call=what, config=config, host_us=host_us(fn, n)))
    from gemm_lab.bench_best import host_overhead_rows

    return pd.DataFrame(rows + host_overhead_rows(size, n))


def bench_softmax(shapes=((4096, 1024), (4096, 4096), (4096, 16384)), warmup=DEFAULT_WARMUP_MS, rep=DEFAULT_REP_MS):
    """Fused softmax vs torch.softmax vs the naive five-pass version (fp32), in GB/s of 2MN elements."""
    import pandas as pd

    require_gpu()
    env = env_info()
    rows = []
    for M, N in shapes:
        x = torch.randn(M, N, device="cuda")
        for name, fn in (("triton_fused", lambda x=x: K.softmax(x)),
                         ("torch.softmax", lambda x=x: torch.softmax(x, dim=1)),
                         ("naive_5_pass", lambda x=x: K.naive_softmax(x))):
            err = K.relative_error(fn(), torch.softmax(x.double(), dim=1))
            ms = do_bench_ms(fn, warmup, rep)
            rows.append(dict(env, M=M, N=N, dtype="fp32", kernel=name, ms=ms, gbps=gbps(2 * M * N * 4, ms),
                             rel_err=err))
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ plot
def plot_sweep(df, path: str, dtype: str = "fp16") -> str:
    """TFLOP/s of every kernel on the square shapes (log-2 x axis), torch.matmul dashed; saved as PNG.
    With a ``graph_tflops`` column a second panel shows the CUDA-graph GPU times (no launch overhead)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sq = df[(df.M == df.N) & (df.N == df.K) & (df.dtype == dtype)]
    panels = [("tflops", "do_bench: median time per call, L2 flushed (launch included when host-bound)")]
    if "graph_tflops" in sq.columns and sq["graph_tflops"].notna().any():
        panels.append(("graph_tflops", "CUDA graph replay: GPU time only, L2 warm"))
    fig, axes = plt.subplots(1, len(panels), figsize=(9 * len(panels), 5.5), squeeze=False)
    for ax, (col, title) in zip(axes[0], panels, strict=True):
        for (kernel, config), g in sq.groupby(["kernel", "config"], sort=False):
            g = g.sort_values("M")
            style = dict(color="black", linestyle="--", linewidth=2.2) if kernel == "torch.matmul" else {}
            ax.plot(g.M, g[col], marker="o", label=f"{kernel} ({config})", **style)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("M = N = K")
        ax.set_ylabel("TFLOP/s (2MNK / median time)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    first = df.iloc[0]
    fig.suptitle(f"{dtype} matmul on {first.gpu} (torch {first.torch}, triton {first.triton}, {first.date})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# ------------------------------------------------------------------------------ CLI
PARTS = ("compiled", "tma_configs", "small_configs", "sweep", "persistent", "group", "softmax", "host", "best",
         "best_eager", "fp8", "autotune", "t4limit", "random")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m gemm_lab.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="results", help="folder for the CSV and PNG files")
    p.add_argument("--only", nargs="*", choices=PARTS, help="parts to run (default: all but the config searches tma_configs, small_configs)")
    p.add_argument("--quick", action="store_true", help="shorter timings (warmup 10 ms, rep 50 ms), fewer shapes")
    p.add_argument("--warmup", type=int, default=None, help="do_bench warmup in ms (default 50)")
    p.add_argument("--rep", type=int, default=None, help="do_bench repetition time in ms (default 300)")
    p.add_argument("--tma", default=None, help="options of the sweep's TMA kernel, a Python dict literal")
    p.add_argument("--seed", type=int, default=None, help="part random: the seed its shapes are drawn from")
    p.add_argument("--time-limit", type=float, default=float("inf"),
                   help="part random: start no new shape after this many seconds (a rerun resumes the CSV)")
    args = p.parse_args(argv)
    if not runtime.on_gpu():
        print("gemm_lab.bench needs a CUDA GPU (found none).", file=sys.stderr)
        return 2
    if args.tma:
        import ast

        TMA_BEST.update(ast.literal_eval(args.tma))
    os.makedirs(args.out, exist_ok=True)
    runtime.check_environment()
    warmup, rep = (10, 50) if args.quick else (DEFAULT_WARMUP_MS, DEFAULT_REP_MS)
    warmup = args.warmup or warmup
    rep = args.rep or rep
    parts = args.only or [q for q in PARTS if q not in ("tma_configs", "small_configs")]
    t0 = time.time()

    def save(df, name):
        df.to_csv(os.path.join(args.out, name), index=False)
        print(f"[bench] {name} ({time.time() - t0:.0f} s)", flush=True)
        return df

    if "compiled" in parts:
        save(compiled_kernels_table(), "compiled_kernels.csv")
    if "tma_configs" in parts:
        df = save(bench_tma_configs(warmup=min(warmup, 25), rep=min(rep, 150)), "tma_configs.csv")
        print(df[["M", "config", "ms", "tflops", "ratio_to_torch", "error"]].to_string(), flush=True)
    if "small_configs" in parts:
        import pandas as pd

        from gemm_lab.bench_small import small_config_rows

        save(pd.DataFrame(small_config_rows(rep=min(rep, 50))), "small_configs.csv")
    if "persistent" in parts:
        save(bench_persistent_programs(warmup=warmup, rep=rep), "persistent_programs.csv")
    if "group" in parts:
        save(bench_group_order(warmup=warmup, rep=rep), "group_order.csv")
    if "sweep" in parts:
        # the shapes the targets are about first, so that a run cut short still has them
        sizes = (4096, 1024) if args.quick else (4096, 8192, 2048, 1024, 512)
        shapes = [(s, s, s) for s in sizes[:1]] + [EXTRA_SHAPES[0]] + [(s, s, s) for s in sizes[1:]]
        shapes += list(EXTRA_SHAPES[1:])
        jobs = [(shape, "fp16") for shape in shapes] + ([] if args.quick else [((4096, 4096, 4096), "bf16")])
        sweep(jobs=jobs, warmup=warmup, rep=rep, csv_path=os.path.join(args.out, "matmul.csv"),
              png_path=os.path.join(args.out, "matmul.png"))
        print(f"[bench] matmul.csv + matmul.png ({time.time() - t0:.0f} s)", flush=True)
    if "persistent" in parts:
        save(bench_persistent_variants(warmup=warmup, rep=rep), "persistent_variants.csv")
    if "softmax" in parts:
        save(bench_softmax(warmup=warmup, rep=rep), "softmax.csv")
    if "host" in parts:
        import pandas as pd

        from gemm_lab.bench_best import host_breakdown_rows

        save(bench_host_overhead(), "host_overhead.csv")
        save(pd.DataFrame(host_breakdown_rows()), "host_overhead_breakdown.csv")
    if "best" in parts:
        from gemm_lab.bench_best import best_rounds, best_summary

        df = save(best_rounds(warmup=min(warmup, 25), rep=min(rep, 100),
                                csv_path=os.path.join(args.out, "best_matmul.csv")), "best_matmul.csv")
        print(save(best_summary(df), "best_matmul_summary.csv").to_string(), flush=True)
    if "best_eager" in parts:
        from gemm_lab.bench_best import EAGER_SHAPES, best_name, best_rounds, best_summary

        df = save(best_rounds(EAGER_SHAPES, warmup=min(warmup, 25), rep=min(rep, 100), tune_for="eager",
                              csv_path=os.path.join(args.out, "best_matmul_eager.csv")), "best_matmul_eager.csv")
        print(save(best_summary(df, best_name("eager")), "best_matmul_eager_summary.csv").to_string(), flush=True)
    if "fp8" in parts and runtime.capability() >= (9, 0):
        import pandas as pd

        from gemm_lab.bench_best import fp8_rows

        save(pd.DataFrame(fp8_rows(warmup=min(warmup, 25), rep=min(rep, 100))), "fp8_matmul.csv")
    if "random" in parts:
        from gemm_lab import bench_random as R

        seed = R.DEFAULT_SEED if args.seed is None else args.seed
        df = R.run(os.path.join(args.out, "best_matmul_random.csv"), seed=seed, time_limit_s=args.time_limit,
                   log=lambda m: print(m, flush=True))
        if len(df) == len(R.jobs_for(seed)):  # complete: summary (with the 1024^3 launch cost) and picture
            summ = save(R.summary(df, R.host_rows()), "best_matmul_random_summary.csv")
            R.plot(df, os.path.join(args.out, "best_matmul_random.png"))
            print(summ[summ.shape_class.isin(["all", "1024^3"])].to_string(), flush=True)
    for part in [q for q in parts if q in ("autotune", "t4limit")]:  # gemm_lab.bench_autotune (notebook w7/03)
        from gemm_lab.bench_autotune import run_part

        print(f"[bench] {os.path.basename(run_part(part, args.out, warmup, rep))} ({time.time() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
