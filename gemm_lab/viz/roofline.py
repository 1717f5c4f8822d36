"""Roofline and shared-memory pictures for tile configurations.

``roofline_figure`` takes the table of ``gemm_lab.calc.roofline.roofline_table`` (columns
``intensity`` and ``roof_tflops``, one row per config) and the device it was computed for;
``smem_figure`` takes a table of shared-memory bytes per config (one column per rule/arch).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure


def _ascii(name, i: int) -> str:
    """A label matplotlib's default font can draw (no Korean glyphs on Colab): ``config i``."""
    text = str(name)
    return text if text.isascii() else f"config {i + 1}"


def roofline_figure(table, device=None, *, measured: dict[str, float] | None = None,
                    title: str | None = None) -> Figure:
    """Log-log roofline of ``device`` with one point per row of ``table``.

    ``measured``: optional {config name (table index): measured TFLOP/s}, drawn as hollow markers
    at the same intensity. Non-ASCII config names are drawn as "config 1", "config 2", ...
    """
    from gemm_lab import calc

    device = device or calc.VIRTUAL_DEVICE
    missing = {"intensity", "roof_tflops"} - set(table.columns)
    if missing:
        raise ValueError(f"table lacks columns {sorted(missing)} (use calc.roofline.roofline_table)")
    peak = float(device.fp16_tflops)
    bw_tbs = float(device.bandwidth_gbs) / 1000.0
    ridge = peak / bw_tbs
    lo = min(float(table["intensity"].min()), ridge) / 4
    hi = max(float(table["intensity"].max()), ridge) * 4
    xs = np.logspace(np.log10(lo), np.log10(hi), 200)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog(xs, np.minimum(peak, xs * bw_tbs), color="black", lw=2, label=f"roof: {device.name}")
    ax.axvline(ridge, color="gray", ls=":", lw=1)
    ax.text(ridge, peak * 1.08, f"ridge {ridge:g} FLOP/B", ha="center", fontsize=8)
    colors = plt.get_cmap("tab10")
    for i, (name, row) in enumerate(table.iterrows()):
        label = _ascii(name, i)
        ax.scatter(row["intensity"], row["roof_tflops"], s=60, color=colors(i), zorder=3,
                   label=f"{label}: I={row['intensity']:.2f}, {row['roof_tflops']:.2f} TFLOP/s")
        if measured and name in measured:
            ax.scatter(row["intensity"], measured[name], s=80, facecolors="none", edgecolors=colors(i),
                       zorder=3, label=f"{label}: measured {measured[name]:.1f} TFLOP/s")
    ax.set_xlabel("arithmetic intensity I = F / Q (FLOP/byte)")
    ax.set_ylabel("attainable TFLOP/s")
    ax.set_title(title or "roofline (no L2 reuse between output tiles)", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def smem_figure(table, limits: dict[str, int] | None = None, *, title: str | None = None) -> Figure:
    """Grouped bars of shared-memory bytes (KiB) per config (rows) and rule/arch (columns),
    with a dashed line for every named limit in ``limits`` (bytes)."""
    numeric = table.select_dtypes("number")
    if numeric.empty:
        raise ValueError("table has no numeric columns of bytes")
    fig, ax = plt.subplots(figsize=(2.5 + 1.8 * len(numeric), 4))
    kib = numeric / 1024
    kib.index = [_ascii(name, i) for i, name in enumerate(kib.index)]
    kib.columns = [_ascii(name, i) for i, name in enumerate(kib.columns)]
    kib.plot.bar(ax=ax, rot=0)
    for container in ax.containers:
        ax.bar_label(container, fmt="%.0f", fontsize=7)
    for i, (name, limit) in enumerate((limits or {}).items()):
        ax.axhline(limit / 1024, color=plt.get_cmap("Set1")(i), ls="--", lw=1)
        ax.text(len(numeric) - 0.5, limit / 1024, f"{name}: {limit / 1024:g} KiB", fontsize=8,
                ha="right", va="bottom")
    ax.set_ylabel("shared memory per block (KiB)")
    ax.set_xlabel("")
    ax.set_title(title or "shared memory: textbook vs compiler", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
