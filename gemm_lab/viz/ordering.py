"""Pictures of program order on the tile grid: launch-order heat maps (row-major vs grouped),
the input tiles the first programs share, a GROUP_M slider, and measured speed of both orders.

The launch index of every tile comes from ``gemm_lab.calc.order_grid``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle


def _check_grid(num_pid_m: int, num_pid_n: int, GROUP_M: int) -> None:
    for name, value in (("num_pid_m", num_pid_m), ("num_pid_n", num_pid_n), ("GROUP_M", GROUP_M)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        if value <= 0:
            raise ValueError(f"{name} must be positive, got {value}")


def draw_order(ax, num_pid_m: int, num_pid_n: int, GROUP_M: int = 1, *, window: int | None = None,
               annotate: bool | None = None) -> None:
    """Draw the launch-order heat map of one ordering on ``ax``.

    ``window``: outline the first ``window`` programs and mark the A block rows (left) and
    B block columns (top) they need.
    """
    from gemm_lab import calc

    _check_grid(num_pid_m, num_pid_n, GROUP_M)
    order = np.asarray(calc.order_grid(num_pid_m, num_pid_n, GROUP_M))
    if annotate is None:
        annotate = num_pid_m * num_pid_n <= 256
    ax.imshow(order, cmap="viridis_r", aspect="equal")
    if annotate:
        for (i, j), v in np.ndenumerate(order):
            inside = window is not None and v < window
            ax.text(j, i, str(int(v)), ha="center", va="center", fontsize=7 if num_pid_n > 12 else 8,
                    color="white" if v < order.max() / 2 else "black", fontweight="bold" if inside else None)
    if window is not None:
        rows, cols = set(), set()
        for (i, j), v in np.ndenumerate(order):
            if v < window:
                rows.add(i)
                cols.add(j)
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, color="red", lw=2))
        for i in rows:
            ax.add_patch(Rectangle((-1.5, i - 0.5), 0.8, 1, color="tab:orange", clip_on=False))
        for j in cols:
            ax.add_patch(Rectangle((j - 0.5, -1.5), 1, 0.8, color="tab:blue", clip_on=False))
        ax.set_xlabel(f"first {window} programs: {len(rows)} A block rows (orange) + {len(cols)} B block cols (blue)",
                      fontsize=8)
    ax.set_xlim(-1.6, num_pid_n - 0.5)
    ax.set_ylim(num_pid_m - 0.5, -1.6)
    ax.set_xticks(range(num_pid_n))
    ax.set_yticks(range(num_pid_m))
    ax.tick_params(labelsize=7)
    label = "row-major (GROUP_M=1)" if GROUP_M == 1 else f"grouped (GROUP_M={GROUP_M})"
    ax.set_title(f"{label}: launch order of each (pid_m, pid_n)", fontsize=9, pad=14)


def order_heatmap(num_pid_m: int, num_pid_n: int, GROUP_M: int = 1, *, window: int | None = None) -> Figure:
    """One ordering's heat map (colour and number = the pid that computes the tile)."""
    size = max(3.5, 0.45 * max(num_pid_m, num_pid_n) + 1.5)
    fig, ax = plt.subplots(figsize=(size, size))
    draw_order(ax, num_pid_m, num_pid_n, GROUP_M, window=window)
    fig.tight_layout()
    return fig


def compare_orders_figure(num_pid_m: int, num_pid_n: int, GROUP_M: int, *, window: int | None = None) -> Figure:
    """Row-major and grouped ordering side by side, first ``window`` programs outlined."""
    size = max(3.5, 0.45 * max(num_pid_m, num_pid_n) + 1.5)
    fig, axes = plt.subplots(1, 2, figsize=(2 * size, size))
    draw_order(axes[0], num_pid_m, num_pid_n, 1, window=window)
    draw_order(axes[1], num_pid_m, num_pid_n, GROUP_M, window=window)
    fig.tight_layout()
    return fig


def group_m_widget(num_pid_m: int, num_pid_n: int, *, window: int | None = None, max_group: int | None = None):
    """An ipywidgets slider over GROUP_M that redraws the grouped heat map.

    Returns the widget (display it), or None when ipywidgets is not installed. Building it draws
    the first picture once; it runs headless (nbclient) without error. The picture sits in an HTML
    widget (``gemm_lab.viz.live``), not an ``Output``, which the classic notebook with ipywidgets 7.7
    cannot render.
    """
    try:
        import ipywidgets as widgets
    except ImportError:  # pragma: no cover - ipywidgets is in the course environment
        return None
    from gemm_lab.viz import live

    _check_grid(num_pid_m, num_pid_n, 1)
    max_group = max_group or num_pid_m
    slider = widgets.IntSlider(value=min(3, max_group), min=1, max=max_group, step=1, description="GROUP_M")
    out = live.output_area()

    def redraw(change=None) -> None:
        out.show(order_heatmap(num_pid_m, num_pid_n, slider.value, window=window))

    slider.observe(redraw, names="value")
    redraw()
    return widgets.VBox([slider, out])


def speed_figure(table, *, x: str = "config", group: str = "GROUP_M", value: str = "tflops",
                 title: str = "measured TFLOP/s: row-major vs grouped") -> Figure:
    """Grouped bar chart of a measured table (pandas DataFrame with columns x, group, value)."""
    missing = {x, group, value} - set(table.columns)
    if missing:
        raise ValueError(f"table lacks columns {sorted(missing)}")
    pivot = table.pivot_table(index=x, columns=group, values=value, aggfunc="median")
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(pivot), 3.6))
    pivot.plot.bar(ax=ax, rot=0)
    ax.set_ylabel(value)
    ax.set_xlabel("")
    ax.set_title(title, fontsize=10)
    for container in ax.containers:
        ax.bar_label(container, fmt="%.1f", fontsize=7)
    ax.legend(title=group, fontsize=8)
    fig.tight_layout()
    return fig
