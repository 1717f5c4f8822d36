"""The main matmul sweep (matmul.csv) and its picture (matmul.png)."""

from __future__ import annotations

import time

from gemm_lab.bench.measure import bench_shape
from gemm_lab.timing import DEFAULT_REP_MS, DEFAULT_WARMUP_MS

SQUARE_SIZES = (512, 1024, 2048, 4096, 8192)
EXTRA_SHAPES = ((500, 600, 300), (16384, 256, 4096), (256, 16384, 4096))
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
