"""Rewrite the "## Results" section of results/README.md from the CSVs in results/ (every number in
that section comes from a CSV; nothing is typed in).

    python scripts/results_tables.py [--results results]
"""

from __future__ import annotations

import argparse
import os

import pandas as pd


def md(df: pd.DataFrame, floatfmt: str = "{:.3f}") -> str:
    def cell(v):
        if isinstance(v, float):
            return "" if v != v else floatfmt.format(v)
        return str(v)

    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "| " + " | ".join("---" for _ in df.columns) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def _read(results: str, name: str) -> pd.DataFrame | None:
    path = os.path.join(results, name)
    return pd.read_csv(path) if os.path.exists(path) else None


def _shapes(df: pd.DataFrame, dtype: str = "fp16") -> list[tuple[int, int, int]]:
    """The (M, N, K) of ``dtype`` rows: squares first, each group by size."""
    return sorted({(int(r.M), int(r.N), int(r.K)) for r in df[df.dtype == dtype].itertuples()},
                  key=lambda s: (s[0] != s[1] or s[1] != s[2], s[0] * s[1] * s[2]))


def ratio_table(df: pd.DataFrame, shapes: list[tuple[int, int, int]], dtype: str = "fp16",
                prefix: str = "") -> pd.DataFrame:
    """TFLOP/s (ratio to torch.matmul) per kernel and shape; prefix "graph_" for the CUDA-graph times."""
    df = df[df.dtype == dtype]
    rows = {}
    for M, N, K in shapes:
        part = df[(df.M == M) & (df.N == N) & (df.K == K)]
        for _, r in part.iterrows():
            key = (r.kernel, r.config)
            ms, tf, ratio = r[prefix + "ms"], r[prefix + "tflops"], r[prefix + "ratio_to_torch"]
            rows.setdefault(key, {})[f"{M}×{N}×{K}"] = f"{tf:.0f} ({ratio:.2f})" if ms == ms else "fails"
    out = pd.DataFrame([{"kernel": k, "config": c, **v} for (k, c), v in rows.items()])
    return out.fillna("")


def _ratio(df: pd.DataFrame, size: int, kernel: str, col: str = "ratio_to_torch"):
    """The row of ``kernel`` at size³ (fp16) with the highest ``col``, or None."""
    part = df[(df.M == size) & (df.N == size) & (df.K == size) & (df.dtype == "fp16") & (df.kernel == kernel)]
    part = part.dropna(subset=[col])
    return None if part.empty else part.sort_values(col).iloc[-1]


def targets_table(results: str) -> str:
    """Issue 3's targets, read from every CSV that measured them (one column per file)."""
    frames = {f: _read(results, f) for f in ("matmul.csv", "matmul_run1.csv", "persistent_variants.csv")}
    frames = {f: df for f, df in frames.items() if df is not None}
    if not frames:
        return ""
    rows = []

    def add(what, target, fn):
        row = {"target": what, "wanted": target}
        for f, df in frames.items():
            row[f"`{f}`"] = fn(df)
        rows.append(row)

    def cell(r, col="ratio_to_torch"):
        return "" if r is None else f"{r[col]:.2f}"

    def best_persistent(df, size, col="ratio_to_torch"):
        kernels = [k for k in df.kernel.unique() if k.startswith("persistent")]
        cands = [c for c in (_ratio(df, size, k, col=col) for k in kernels) if c is not None]
        return max(cands, key=lambda c: c[col]) if cands else None

    add("autotuned / torch.matmul, 4096³", "≥ 0.90", lambda df: cell(_ratio(df, 4096, "autotuned")))
    add("autotuned / torch.matmul, 8192³", "≥ 0.95", lambda df: cell(_ratio(df, 8192, "autotuned")))
    for size in (4096, 8192):
        def best(df, size=size):
            r = best_persistent(df, size)
            return "" if r is None else f"{r.ratio_to_torch:.2f} ({r.kernel} {r.config})"
        add(f"best persistent variant / torch.matmul, {size}³", "> autotuned, ≥ 0.95 (4096³); moonshot > 1",
            best)
    for size in (4096, 8192):
        def graph(df, size=size):
            if "graph_ratio_to_torch" not in df:
                return "not measured"
            r = best_persistent(df, size, "graph_ratio_to_torch")
            a = _ratio(df, size, "autotuned", col="graph_ratio_to_torch")
            return "" if r is None else (f"{r.graph_ratio_to_torch:.2f} ({r.kernel}); autotuned "
                                         f"{cell(a, 'graph_ratio_to_torch')}")
        add(f"same, CUDA-graph GPU time, {size}³", "", graph)
    return md(pd.DataFrame(rows))


def best_targets_table(results: str) -> str | None:
    """Issue 14's targets for best_matmul (best_matmul_summary.csv) and its launch overhead."""
    df = _read(results, "best_matmul_summary.csv")
    if df is None:
        return None
    t = df.sort_values(["M", "dtype"])[["M", "N", "K", "dtype", "choice", "target", "graph_ratio_median",
                                        "do_bench_ratio_median", "graph_ratios", "do_bench_ratios", "met"]]
    t = t.rename(columns={"target": "wanted ≥", "graph_ratio_median": "CUDA graph (median)",
                          "do_bench_ratio_median": "do_bench (median)", "graph_ratios": "CUDA graph, 3 rounds",
                          "do_bench_ratios": "do_bench, 3 rounds", "met": "met (CUDA graph)"})
    text = md(t)
    host = _read(results, "host_overhead_breakdown.csv")
    if host is not None:
        text += ("\n\nLaunch overhead, CPU µs per call, `best_matmul(a, b, out=)` with a cached plan, each step of its "
                 "repeat-call path timed alone beside torch.matmul in the same run (`host_overhead_breakdown.csv`; "
                 "wanted ≤ 20 µs for the Tutorial-03 / autotuned path at 1024³, ≤ 30 µs for TMA):\n\n"
                 + md(host[["M", "plan", "step", "host_us"]], "{:.1f}"))
    fp8 = _read(results, "fp8_matmul.csv")
    if fp8 is not None:
        g = fp8.groupby(["M", "kernel"], sort=False)
        t = g.agg(graph_ms=("graph_ms", "median"), ms=("ms", "median"), rel_err=("rel_err", "max"),
                  graph_ratio=("graph_ratio_to_scaled_mm", "median"), ratio=("ratio_to_scaled_mm", "median"),
                  ratio_fast=("ratio_to_fast_accum", "median")).reset_index()
        t = t.rename(columns={"graph_ratio": "ratio to _scaled_mm, CUDA graph (median of 3)",
                              "ratio": "ratio, do_bench (median of 3)", "ratio_fast": "ratio to fast-accum, graph"})
        text += ("\n\nfp8 e4m3 → fp16 (`fp8_matmul.csv`; wanted ≥ 0.90 of torch._scaled_mm at 4096³ and 8192³):"
                 "\n\n" + md(t, "{:.4g}"))
    return text


def small_configs_table(results: str) -> str | None:
    """small_configs.csv: per (shape, dtype) the three fastest candidates and the fastest Tutorial-03 one."""
    df = _read(results, "small_configs.csv")
    if df is None:
        return None
    rows = []
    for (M, N, Kd, dtype), g in df[df.kernel != "torch.matmul"].groupby(["M", "N", "K", "dtype"]):
        g = g.dropna(subset=["graph_ms"]).sort_values("graph_ms")
        pick = list(g.head(3).itertuples())
        tut = g[g.kernel == "tutorial03"].head(1)
        if len(tut) and tut.index[0] not in g.head(3).index:
            pick += list(tut.itertuples())
        rows += [dict(M=M, N=N, K=Kd, dtype=dtype, kernel=r.kernel, config=r.config, graph_us=r.graph_ms * 1e3,
                      graph_ratio_to_torch=r.graph_ratio_to_torch) for r in pick]
    return md(pd.DataFrame(rows))


def section(results: str) -> str:
    parts = []
    best = best_targets_table(results)
    if best is not None:
        parts.append("### Issue 14's targets: `best_matmul` / torch.matmul, same run "
                     "(`best_matmul.csv`, `best_matmul_summary.csv`)\n\n" + best)
    small = small_configs_table(results)
    if small is not None:
        parts.append("### Candidate configs at small shapes and TMA options at large ones (`small_configs.csv`, CUDA "
                     "graph): the three fastest per shape and dtype, and the fastest Tutorial-03 config\n\n" + small)
    df = _read(results, "matmul.csv")
    if df is not None:
        shapes, bshapes = _shapes(df), _shapes(df, "bf16")
        parts.append("### Issue 3's targets (ratio to torch.matmul in the same run)\n\n" + targets_table(results))
        parts.append("### Main sweep (`matmul.csv`): TFLOP/s (ratio to torch.matmul, same run)\n\n"
                     + md(ratio_table(df, shapes)))
        if bshapes:
            parts.append("bf16:\n\n" + md(ratio_table(df, bshapes, "bf16")))
        if "graph_ms" in df.columns:
            parts.append("### Main sweep, GPU time only (`matmul.csv`, CUDA-graph replay, L2 warm): TFLOP/s "
                         "(ratio to torch.matmul's graph time)\n\n" + md(ratio_table(df, shapes, prefix="graph_")))
            if bshapes:
                parts.append("bf16:\n\n" + md(ratio_table(df, bshapes, "bf16", prefix="graph_")))
            host = df[df.dtype == "fp16"].pivot_table(index=["kernel", "config"], values="host_us", aggfunc="median",
                                                      sort=False).reset_index()
            parts.append("CPU time of one launch (`host_us`, median over the sweep's fp16 shapes), µs:\n\n"
                         + md(host, "{:.0f}"))
    df = _read(results, "matmul_run1.csv")
    if df is not None:
        parts.append("### The same sweep, an earlier run of the same day (`matmul_run1.csv`, do_bench only)\n\n"
                     + md(ratio_table(df, _shapes(df))))
    for name, title in (("persistent_variants.csv", "Persistent variants (`persistent_variants.csv`)"),
                        ("persistent_variants_quick.csv", "Persistent variants, first call "
                                                          "(`persistent_variants_quick.csv`, one torch time per shape)")):
        df = _read(results, name)
        if df is not None:
            parts.append(f"### {title}: TFLOP/s (ratio to torch.matmul)\n\n" + md(ratio_table(df, _shapes(df))))
    df = _read(results, "persistent_programs.csv")
    if df is not None:
        t = df[["M", "kernel", "config", "ms", "tflops", "ratio_to_torch", "ratio_to_tiled"]]
        parts.append("### Naive persistent kernel, grid = p × SMs (`persistent_programs.csv`)\n\n" + md(t))
    df = _read(results, "group_order.csv")
    if df is not None:
        df = df.dropna(subset=["GROUP_M"])
        t = df.pivot_table(index="tile", columns="GROUP_M", values="tflops").reset_index()
        t.columns = ["tile", "TFLOP/s G=1", "TFLOP/s G=8"]
        sp = df.groupby("tile")["speedup_G8_over_G1"].first()
        t["G8 / G1 speed"] = [sp[x] for x in t.tile]
        parts.append(f"### GROUP_M = 1 vs 8 at {int(df.M.iloc[0])}³ (`group_order.csv`)\n\n" + md(t, "{:.2f}"))
    df = _read(results, "tma_configs.csv")
    if df is not None:
        best = (df[df.kernel != "torch.matmul"].dropna(subset=["ms"]).sort_values("tflops", ascending=False)
                .groupby("M").head(5))
        t = best[["M", "config", "ms", "tflops", "ratio_to_torch"]]
        fails = df[df.error.notna() & (df.kernel != "torch.matmul")][["M", "config", "error"]]
        torch_rows = df[df.kernel == "torch.matmul"][["M", "ms", "tflops", "error"]]
        parts.append("### TMA persistent kernel: the five best options per size (`tma_configs.csv`)\n\n" + md(t)
                     + "\n\ntorch.matmul in that run:\n\n" + md(torch_rows)
                     + "\n\nOptions that did not run:\n\n" + md(fails.drop_duplicates("config")))
    df = _read(results, "compiled_kernels.csv")
    if df is not None:
        t = df[["kernel", "config", "aligned", "shared", "n_regs", "n_spills", "mma"]]
        parts.append("### Compiled on the H200 (`compiled_kernels.csv`)\n\n" + md(t))
    df = _read(results, "host_overhead.csv")
    if df is not None:
        parts.append("### Where a launch's CPU time goes (`host_overhead.csv`, µs per call)\n\n"
                     + md(df[["call", "config", "host_us"]], "{:.1f}"))
    df = _read(results, "softmax.csv")
    if df is not None:
        parts.append("### Softmax, fp32 (`softmax.csv`)\n\n" + md(df[["M", "N", "kernel", "ms", "gbps"]], "{:.4g}"))
    return "\n\n".join(parts) + "\n"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--results", default=os.path.join(os.path.dirname(os.path.dirname(__file__)), "results"))
    args = p.parse_args()
    readme = os.path.join(args.results, "README.md")
    with open(readme) as fh:
        text = fh.read()
    head = text.split("## Results")[0]
    with open(readme, "w") as fh:
        fh.write(head + "## Results\n\nGenerated by `python scripts/results_tables.py` from the CSVs.\n\n"
                 + section(args.results))


if __name__ == "__main__":
    main()
