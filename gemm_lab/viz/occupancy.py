"""Block-limit bars: how many blocks (programs) one SM can hold, limit by limit.

ncu's Occupancy section reports "Block Limit Registers / Shared Mem / Warps / SM"; the smallest of
them is the number of blocks an SM really holds. :func:`block_limit_bars` draws the same bars from a
:class:`gemm_lab.calc.occupancy.Occupancy` (or anything with the fields ``by_regs, by_smem,
by_warps, by_blocks, blocks``), highlighting the bar(s) that set the limit.
:func:`compare_block_limits` draws several of them side by side (one GPU or kernel per group).

Labels are English (the notebooks' fonts may lack Hangul); pass ``title=`` to change the title.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

__all__ = ["LIMIT_FIELDS", "block_limits", "block_limit_bars", "compare_block_limits"]

#: (field of Occupancy, label on the x axis), in ncu's order
LIMIT_FIELDS = (
    ("by_regs", "registers"),
    ("by_smem", "shared memory"),
    ("by_warps", "warps"),
    ("by_blocks", "blocks / SM"),
)

_LIMIT_COLOR = "tab:red"
_OTHER_COLOR = "tab:gray"


def _limit_value(name: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number or None, got {type(value).__name__} ({value!r})")
    value = float(value)
    if math.isnan(value) or value < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return value


def block_limits(occupancy) -> dict[str, float | None]:
    """The four limits of ``occupancy`` as ``{label: blocks}`` (None where a limit is unknown).

    Raises ``TypeError`` when ``occupancy`` lacks one of the fields ``by_regs, by_smem, by_warps,
    by_blocks, blocks``.
    """
    missing = [f for f, _ in LIMIT_FIELDS if not hasattr(occupancy, f)]
    if missing or not hasattr(occupancy, "blocks"):
        raise TypeError(
            "occupancy must be a gemm_lab.calc.occupancy.Occupancy (fields by_regs, by_smem, by_warps, "
            f"by_blocks, blocks); got {type(occupancy).__name__} missing {missing or ['blocks']}"
        )
    return {label: _limit_value(field, getattr(occupancy, field)) for field, label in LIMIT_FIELDS}


def _new_axes(ax, figsize):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def _display_height(value: float | None, finite_max: float) -> float:
    if value is None:
        return 0.0
    if math.isinf(value):
        return finite_max * 1.15 if finite_max > 0 else 1.0
    return value


def block_limit_bars(occupancy, *, ax=None, title: str | None = None, annotate: bool = True):
    """Bar chart of the block limits of one kernel on one SM; the limiting bar(s) in red.

    Returns the matplotlib ``Axes``. An unknown limit (None, e.g. registers on a CPU) is drawn as an
    empty hatched bar labelled "?"; an unlimited one (inf) as a bar just above the others labelled "∞".
    """
    limits = block_limits(occupancy)
    blocks = _limit_value("blocks", occupancy.blocks)
    ax = _new_axes(ax, (6, 3.2))
    finite = [v for v in limits.values() if v is not None and not math.isinf(v)]
    finite_max = max(finite, default=1.0)
    labels = list(limits)
    for i, value in enumerate(limits.values()):
        height = _display_height(value, finite_max)
        is_limit = value is not None and blocks is not None and value == blocks
        bar = ax.bar(
            i,
            height,
            color=_LIMIT_COLOR if is_limit else _OTHER_COLOR,
            hatch="//" if value is None else None,
            fill=value is not None,
            edgecolor="black",
        )
        if annotate:
            text = "?" if value is None else ("∞" if math.isinf(value) else f"{value:g}")
            ax.annotate(
                text,
                (bar[0].get_x() + bar[0].get_width() / 2, height),
                ha="center",
                va="bottom",
                xytext=(0, 2),
                textcoords="offset points",
            )
    if blocks is not None:
        ax.axhline(blocks, color=_LIMIT_COLOR, linestyle="--", linewidth=1, label=f"blocks per SM = {blocks:g}")
        ax.legend(loc="upper left")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("blocks per SM allowed")
    ax.set_ylim(0, max(finite_max * 1.3, (blocks or 0) * 1.3, 1.0))
    ax.set_title(title if title is not None else "Block limit per SM (red: the limiting resource)")
    return ax


def compare_block_limits(occupancies: Mapping[str, object], *, ax=None, title: str | None = None):
    """Grouped bars: one group per limit, one bar per entry of ``occupancies`` (e.g. GPU or kernel).

    The bar that limits its entry gets a black outline and a star above it. Returns the ``Axes``.
    """
    if not isinstance(occupancies, Mapping) or not occupancies:
        raise TypeError("occupancies must be a non-empty mapping {label: Occupancy}")
    table = {str(name): block_limits(occ) for name, occ in occupancies.items()}
    blocks = {str(name): _limit_value("blocks", occ.blocks) for name, occ in occupancies.items()}
    from matplotlib.patches import Patch

    ax = _new_axes(ax, (7, 3.5))
    finite = [v for lim in table.values() for v in lim.values() if v is not None and not math.isinf(v)]
    finite_max = max(finite, default=1.0)
    n = len(table)
    width = 0.8 / n
    labels = [label for _, label in LIMIT_FIELDS]
    handles = []
    for j, (name, limits) in enumerate(table.items()):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(len(labels))]
        heights = [_display_height(limits[label], finite_max) for label in labels]
        bars = ax.bar(xs, heights, width=width)
        handles.append(Patch(facecolor=bars[0].get_facecolor(), label=f"{name} (→ {blocks[name]:g} blocks/SM)"))
        for bar, label in zip(bars, labels, strict=True):
            value = limits[label]
            is_limit = value is not None and value == blocks[name]
            if is_limit:
                bar.set_edgecolor("black")
                bar.set_linewidth(2)
            text = "?" if value is None else ("∞" if math.isinf(value) else f"{value:g}")
            ax.annotate(text + (" ★" if is_limit else ""), (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", xytext=(0, 2), textcoords="offset points", fontsize="small")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("blocks per SM allowed")
    ax.set_ylim(0, finite_max * 1.35)
    ax.legend(handles=handles, loc="upper left", fontsize="small")
    ax.set_title(title if title is not None else "Block limits per SM (★: the limiting resource)")
    return ax
