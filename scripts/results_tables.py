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


def ratio_table(df: pd.DataFrame, shapes: list[tuple[int, int, int]], dtype: str = "fp16") -> pd.DataFrame:
    df = df[df.dtype == dtype]
    rows = {}
    for M, N, K in shapes:
        part = df[(df.M == M) & (df.N == N) & (df.K == K)]
        for _, r in part.iterrows():
            key = (r.kernel, r.config)
            rows.setdefault(key, {})[f"{M}×{N}×{K}"] = (f"{r.tflops:.0f} ({r.ratio_to_torch:.2f})"
                                                       if r.ms == r.ms else "fails")
    out = pd.DataFrame([{"kernel": k, "config": c, **v} for (k, c), v in rows.items()])
    return out.fillna("")


def section(results: str) -> str:
    parts = []
    path = os.path.join(results, "matmul.csv")
    if os.path.exists(path):
        df = pd.read_csv(path)
        shapes = sorted({(int(r.M), int(r.N), int(r.K)) for r in df[df.dtype == "fp16"].itertuples()},
                        key=lambda s: (s[0] != s[1] or s[1] != s[2], s[0] * s[1] * s[2]))
        parts.append("### Main sweep (`matmul.csv`): TFLOP/s (ratio to torch.matmul, same run)\n\n"
                     + md(ratio_table(df, shapes)))
        if (df.dtype == "bf16").any():
            bshapes = sorted({(int(r.M), int(r.N), int(r.K)) for r in df[df.dtype == "bf16"].itertuples()})
            parts.append("bf16:\n\n" + md(ratio_table(df, bshapes, "bf16")))
    for name, title in (("persistent_variants.csv", "Persistent variants (`persistent_variants.csv`)"),
                        ("persistent_variants_quick.csv", "Persistent variants, first call "
                                                          "(`persistent_variants_quick.csv`, one torch time per shape)")):
        path = os.path.join(results, name)
        if os.path.exists(path):
            df = pd.read_csv(path)
            shapes = sorted({(int(r.M), int(r.N), int(r.K)) for r in df.itertuples()})
            parts.append(f"### {title}: TFLOP/s (ratio to torch.matmul)\n\n" + md(ratio_table(df, shapes)))
    path = os.path.join(results, "persistent_programs.csv")
    if os.path.exists(path):
        df = pd.read_csv(path)
        t = df[["M", "kernel", "config", "ms", "tflops", "ratio_to_torch", "ratio_to_tiled"]]
        parts.append("### Naive persistent kernel, grid = p × SMs (`persistent_programs.csv`)\n\n" + md(t))
    path = os.path.join(results, "group_order.csv")
    if os.path.exists(path):
        df = pd.read_csv(path).dropna(subset=["GROUP_M"])
        t = df.pivot_table(index="tile", columns="GROUP_M", values="tflops").reset_index()
        t.columns = ["tile", "TFLOP/s G=1", "TFLOP/s G=8"]
        sp = df.groupby("tile")["speedup_G8_over_G1"].first()
        t["G8 / G1 speed"] = [sp[x] for x in t.tile]
        parts.append(f"### GROUP_M = 1 vs 8 at {int(df.M.iloc[0])}³ (`group_order.csv`)\n\n" + md(t, "{:.2f}"))
    path = os.path.join(results, "tma_configs.csv")
    if os.path.exists(path):
        df = pd.read_csv(path)
        best = (df[df.kernel != "torch.matmul"].dropna(subset=["ms"]).sort_values("tflops", ascending=False)
                .groupby("M").head(5))
        t = best[["M", "config", "ms", "tflops", "ratio_to_torch"]]
        fails = df[df.error.notna() & (df.kernel != "torch.matmul")][["M", "config", "error"]]
        torch_rows = df[df.kernel == "torch.matmul"][["M", "ms", "tflops", "error"]]
        parts.append("### TMA persistent kernel: the five best options per size (`tma_configs.csv`)\n\n" + md(t)
                     + "\n\ntorch.matmul in that run:\n\n" + md(torch_rows)
                     + "\n\nOptions that did not run:\n\n" + md(fails.drop_duplicates("config")))
    path = os.path.join(results, "compiled_kernels.csv")
    if os.path.exists(path):
        df = pd.read_csv(path)
        t = df[["kernel", "config", "aligned", "shared", "n_regs", "n_spills", "mma"]]
        parts.append("### Compiled on the H200 (`compiled_kernels.csv`)\n\n" + md(t))
    path = os.path.join(results, "softmax.csv")
    if os.path.exists(path):
        df = pd.read_csv(path)
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
