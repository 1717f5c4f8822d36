"""Benchmark pictures: TFLOP/s per kernel variant against torch.matmul, TFLOP/s over programs_per_sm.

The functions take plain tables, not a CSV schema: the notebook selects the rows it wants from
``results/`` (or from a live run) and passes

* :func:`variant_bars` — ``{variant: TFLOP/s}`` (a Mapping or a pandas Series), or a DataFrame with
  one row per variant and one column per shape; plus torch.matmul's TFLOP/s (one number, or one per
  column). Each bar is labelled with its ratio to torch.matmul measured in the same run.
* :func:`programs_per_sm_plot` — ``{programs_per_sm: TFLOP/s}`` (Mapping or Series), or a DataFrame
  indexed by programs_per_sm with one column per line; plus reference levels drawn as horizontal lines
  (e.g. ``{"naive tiled": ..., "torch.matmul": ...}``, their TFLOP/s taken from the same CSV).

Labels are English (the notebooks' fonts may lack Hangul). Every function returns the ``Axes``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

__all__ = ["variant_bars", "programs_per_sm_plot"]


def _rate(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number (TFLOP/s), got {type(value).__name__} ({value!r})")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite TFLOP/s >= 0, got {value!r}")
    return value


def _as_table(data, what: str) -> tuple[list, dict[str, list[float]]]:
    """(row labels, {column: values}) from a Mapping, a Series or a DataFrame."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None and isinstance(data, pd.DataFrame):
        if data.empty:
            raise ValueError(f"{what} is empty")
        rows = list(data.index)
        cols = {str(c): [_rate(f"{what}[{r!r}, {c!r}]", v) for r, v in data[c].items()] for c in data.columns}
        return rows, cols
    if pd is not None and isinstance(data, pd.Series):
        data = data.to_dict()
    if not isinstance(data, Mapping):
        raise TypeError(f"{what} must be a Mapping, a pandas Series or a DataFrame, got {type(data).__name__}")
    if not data:
        raise ValueError(f"{what} is empty")
    rows = list(data)
    return rows, {"": [_rate(f"{what}[{r!r}]", data[r]) for r in rows]}


def _new_axes(ax, figsize):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def variant_bars(tflops, *, torch_tflops=None, ax=None, title: str | None = None):
    """Horizontal bars of TFLOP/s per variant (first variant on top), torch.matmul as a dashed line and
    each bar labelled with its ratio to it.

    ``tflops``: ``{variant: TFLOP/s}`` or a DataFrame (rows: variants, columns: shapes).
    ``torch_tflops``: None, one number, or ``{column: TFLOP/s}`` for a DataFrame.
    """
    variants, columns = _as_table(tflops, "tflops")
    names = list(columns)
    if torch_tflops is None:
        torch_by_col = dict.fromkeys(names)
    elif isinstance(torch_tflops, Mapping) or hasattr(torch_tflops, "to_dict"):
        given = dict(torch_tflops.to_dict() if hasattr(torch_tflops, "to_dict") else torch_tflops)
        given = {str(k): v for k, v in given.items()}
        missing = [c for c in names if c not in given]
        if missing:
            raise ValueError(f"torch_tflops has no value for column(s) {missing}")
        torch_by_col = {c: _rate(f"torch_tflops[{c!r}]", given[c]) for c in names}
    else:
        value = _rate("torch_tflops", torch_tflops)
        torch_by_col = dict.fromkeys(names, value)

    ax = _new_axes(ax, (8.0, 0.45 * len(variants) * len(names) + 1.5))
    n = len(names)
    height = 0.8 / n
    top = 0.0
    styles = ["--", ":", "-.", (0, (5, 1))]
    for j, col in enumerate(names):
        ys = [i - 0.4 + height * (j + 0.5) for i in range(len(variants))]
        bars = ax.barh(ys, columns[col], height=height, label=col or None, edgecolor="black")
        ref = torch_by_col[col]
        top = max(top, *columns[col], ref or 0.0)
        if ref is not None:
            ax.axvline(ref, color="black", linestyle=styles[j % len(styles)], linewidth=1,
                       label="torch.matmul" + (f" ({col})" if col else ""))
            for bar, value in zip(bars, columns[col], strict=True):
                ratio = value / ref if ref > 0 else float("nan")
                ax.annotate(f"{ratio:.2f}×", (value, bar.get_y() + bar.get_height() / 2), ha="left",
                            va="center", xytext=(3, 0), textcoords="offset points", fontsize="small")
    ax.set_yticks(range(len(variants)), [str(v) for v in variants])
    ax.invert_yaxis()
    ax.set_xlabel("TFLOP/s")
    ax.set_xlim(0, top * 1.15 if top > 0 else 1.0)
    if n > 1 or any(v is not None for v in torch_by_col.values()):
        ax.legend(loc="best", fontsize="small")
    ax.set_title(title if title is not None else "TFLOP/s per variant (label: ratio to torch.matmul)")
    return ax


def programs_per_sm_plot(tflops, *, references: Mapping[str, float] | None = None, ax=None,
                         title: str | None = None):
    """TFLOP/s over programs_per_sm (one line per column), reference levels as horizontal lines."""
    pps, columns = _as_table(tflops, "tflops")
    xs = []
    for p in pps:
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or p <= 0:
            raise ValueError(f"programs_per_sm values must be positive numbers, got {p!r}")
        xs.append(float(p))
    refs = {}
    if references is not None:
        if not isinstance(references, Mapping):
            raise TypeError(f"references must be a Mapping {{label: TFLOP/s}}, got {type(references).__name__}")
        refs = {str(k): _rate(f"references[{k!r}]", v) for k, v in references.items()}
    ax = _new_axes(ax, (6, 3.6))
    order = sorted(range(len(xs)), key=xs.__getitem__)
    for col, values in columns.items():
        ax.plot([xs[i] for i in order], [values[i] for i in order], marker="o", label=col or "persistent")
    styles = ["--", ":", "-."]
    for k, (label, level) in enumerate(refs.items()):
        ax.axhline(level, color="black", linestyle=styles[k % len(styles)], linewidth=1, label=label)
    top = max([v for vals in columns.values() for v in vals] + list(refs.values()))
    ax.set_xticks(sorted(set(xs)))
    ax.set_xlabel("programs_per_sm (grid = SMs × programs_per_sm)")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title(title if title is not None else "Persistent kernel: TFLOP/s over programs_per_sm")
    return ax
