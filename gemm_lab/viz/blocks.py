"""Pictures for week 6: which program owns which elements, what the mask hides, and the HBM traffic
of a naive (five-kernel) softmax against the fused one.

Every number drawn comes from :mod:`gemm_lab.calc.softmax` (``block_offsets``, ``softmax_traffic``,
``naive_softmax_passes``); this module only draws. Labels are in English (the notebooks' fonts may
lack Hangul glyphs); the notebooks explain the pictures in Korean.

Public functions (each returns the matplotlib ``Figure``; pass ``ax=`` to draw into your own axes):

* :func:`plot_pid_blocks` — the vector ``0 … N−1`` coloured by the ``pid`` that owns each element,
  with the lanes of the last block that fall past ``N``.
* :func:`plot_block_masks` — one row per ``pid``, one column per lane of ``tl.arange(0, BLOCK_SIZE)``:
  the offset each lane computes and whether ``mask = offsets < N`` lets it through.
* :func:`plot_row_padding` — one softmax row of ``N`` elements read with ``BLOCK_SIZE`` lanes: the
  valid part and the padded part filled with ``other``.
* :func:`plot_hbm_traffic` — bytes moved through HBM by the five steps of ``naive_softmax`` (stacked)
  against the fused kernel's one read and one write.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from gemm_lab.calc._validate import as_int, is_power_of_two

__all__ = ["MAX_LANES", "plot_pid_blocks", "plot_block_masks", "plot_row_padding", "plot_hbm_traffic"]

#: Largest number of lanes (grid × BLOCK_SIZE) the per-element pictures draw legibly.
MAX_LANES = 256

_MASKED_COLOR = "#d9d9d9"


def _check_blocks(N, BLOCK_SIZE, max_lanes: int = MAX_LANES) -> tuple[int, int, int]:
    N = as_int("N", N)
    BLOCK_SIZE = as_int("BLOCK_SIZE", BLOCK_SIZE)
    if not is_power_of_two(BLOCK_SIZE):
        raise ValueError(
            f"BLOCK_SIZE must be a power of two (tl.arange requires it), got {BLOCK_SIZE}"
        )
    grid = -(-N // BLOCK_SIZE)
    if grid * BLOCK_SIZE > max_lanes:
        raise ValueError(
            f"grid × BLOCK_SIZE = {grid * BLOCK_SIZE} lanes is too many to draw one by one "
            f"(at most {max_lanes}); pick a smaller N or BLOCK_SIZE"
        )
    return N, BLOCK_SIZE, grid


def _blocks(N: int, BLOCK_SIZE: int) -> list[tuple[int, list[int], list[bool]]]:
    """(pid, offsets, mask) of every program, from gemm_lab.calc.softmax.block_offsets."""
    from gemm_lab.calc.softmax import block_offsets

    table = block_offsets(N, BLOCK_SIZE)
    return [
        (int(row.pid), [int(o) for o in row.offsets], [bool(m) for m in row.mask])
        for row in table.itertuples(index=False)
    ]


def _pid_color(pid: int):
    return plt.get_cmap("tab10")(pid % 10)


def _new_axes(ax, width: float, height: float):
    if ax is None:
        fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    else:
        fig = ax.figure
    return fig, ax


def plot_pid_blocks(N: int, BLOCK_SIZE: int, *, ax=None):
    """Draw the vector ``x[0 … N−1]`` coloured by the program (``pid``) that owns each element.

    The ``grid = cdiv(N, BLOCK_SIZE)`` programs each take ``BLOCK_SIZE`` consecutive offsets; lanes of
    the last block that fall at ``offset >= N`` are drawn hatched and grey (the mask switches them off).
    Returns the Figure.
    """
    N, BLOCK_SIZE, grid = _check_blocks(N, BLOCK_SIZE)
    blocks = _blocks(N, BLOCK_SIZE)
    lanes = grid * BLOCK_SIZE
    fig, ax = _new_axes(ax, max(6.0, 0.45 * lanes + 1.5), 2.2)
    for pid, offsets, mask in blocks:
        for off, ok in zip(offsets, mask, strict=True):
            if ok:
                ax.add_patch(Rectangle((off, 0), 1, 1, facecolor=_pid_color(pid), edgecolor="black",
                                       alpha=0.85, label=None))
                ax.text(off + 0.5, 0.5, str(off), ha="center", va="center", fontsize=8)
            else:
                ax.add_patch(Rectangle((off, 0), 1, 1, facecolor=_MASKED_COLOR, edgecolor="grey",
                                       hatch="xx", linestyle="--"))
        start, end = offsets[0], offsets[-1]
        ax.annotate("", xy=(start + 0.05, -0.25), xytext=(end + 0.95, -0.25),
                    arrowprops=dict(arrowstyle="<->", color=_pid_color(pid)))
        ax.text((start + end + 1) / 2, -0.55, f"pid={pid}", ha="center", va="top", fontsize=9,
                color=_pid_color(pid), fontweight="bold")
    if lanes > N:
        ax.text(N + (lanes - N) / 2, 1.15, "offset >= N: masked", ha="center", va="bottom",
                fontsize=8, color="dimgrey")
    ax.set_xlim(-0.2, lanes + 0.2)
    ax.set_ylim(-1.1, 1.6)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"N = {N}, BLOCK_SIZE = {BLOCK_SIZE}: grid = cdiv({N}, {BLOCK_SIZE}) = {grid} programs",
                 fontsize=10)
    return fig


def plot_block_masks(N: int, BLOCK_SIZE: int, *, ax=None):
    """One row per ``pid``, one column per lane ``i`` of ``tl.arange(0, BLOCK_SIZE)``.

    Each cell shows ``offsets = pid * BLOCK_SIZE + i`` and is coloured when ``mask = offsets < N`` is
    True, grey and hatched when it is False (no load, no store). Returns the Figure.
    """
    N, BLOCK_SIZE, grid = _check_blocks(N, BLOCK_SIZE)
    blocks = _blocks(N, BLOCK_SIZE)
    fig, ax = _new_axes(ax, max(4.0, 0.7 * BLOCK_SIZE + 2.0), 0.6 * grid + 1.2)
    for pid, offsets, mask in blocks:
        y = grid - 1 - pid
        for lane, (off, ok) in enumerate(zip(offsets, mask, strict=True)):
            if ok:
                ax.add_patch(Rectangle((lane, y), 1, 1, facecolor=_pid_color(pid), edgecolor="black",
                                       alpha=0.85))
            else:
                ax.add_patch(Rectangle((lane, y), 1, 1, facecolor=_MASKED_COLOR, edgecolor="grey",
                                       hatch="xx"))
            ax.text(lane + 0.5, y + 0.62, str(off), ha="center", va="center", fontsize=8)
            ax.text(lane + 0.5, y + 0.25, "T" if ok else "F", ha="center", va="center", fontsize=7,
                    color="black" if ok else "firebrick")
        ax.text(-0.2, y + 0.5, f"pid={pid}", ha="right", va="center", fontsize=9)
    for lane in range(BLOCK_SIZE):
        ax.text(lane + 0.5, grid + 0.15, str(lane), ha="center", va="bottom", fontsize=7, color="dimgrey")
    ax.text(-0.2, grid + 0.15, "lane i", ha="right", va="bottom", fontsize=7, color="dimgrey")
    ax.set_xlim(-2.2, BLOCK_SIZE + 0.2)
    ax.set_ylim(-0.2, grid + 0.7)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"offsets = pid*{BLOCK_SIZE} + tl.arange(0, {BLOCK_SIZE}); mask = offsets < {N} (T/F)",
                 fontsize=10)
    return fig


def plot_row_padding(N: int, BLOCK_SIZE: int | None = None, other: float = float("-inf"), *, ax=None):
    """One softmax row of ``N`` elements read with ``BLOCK_SIZE`` lanes (default: next power of two).

    Draws the ``N`` valid lanes and the ``BLOCK_SIZE − N`` padded lanes that ``tl.load(..., mask=mask,
    other=other)`` fills with ``other``. Returns the Figure.
    """
    N = as_int("N", N)
    if BLOCK_SIZE is None:
        BLOCK_SIZE = 1 << (N - 1).bit_length()
    BLOCK_SIZE = as_int("BLOCK_SIZE", BLOCK_SIZE)
    if not is_power_of_two(BLOCK_SIZE):
        raise ValueError(f"BLOCK_SIZE must be a power of two (tl.arange requires it), got {BLOCK_SIZE}")
    if BLOCK_SIZE < N:
        raise ValueError(f"BLOCK_SIZE={BLOCK_SIZE} < N={N}: one block cannot hold the whole row")
    if isinstance(other, bool) or not isinstance(other, (int, float)) or math.isnan(other):
        raise TypeError(f"other must be a real number (e.g. float('-inf') or 0.0), got {other!r}")
    padded = BLOCK_SIZE - N
    fig, ax = _new_axes(ax, 8.0, 1.8)
    ax.add_patch(Rectangle((0, 0), N, 1, facecolor=_pid_color(0), edgecolor="black", alpha=0.85))
    ax.text(N / 2, 0.5, f"mask = True: {N} elements of the row", ha="center", va="center", fontsize=9)
    if padded:
        ax.add_patch(Rectangle((N, 0), padded, 1, facecolor=_MASKED_COLOR, edgecolor="grey", hatch="//"))
        ax.text(N + padded / 2, 0.5, f"{padded} lanes\nother = {other}", ha="center", va="center",
                fontsize=8, color="firebrick", bbox=dict(facecolor="white", edgecolor="none", alpha=0.85))
    for x in (0, N, BLOCK_SIZE):
        ax.text(x, -0.12, str(x), ha="center", va="top", fontsize=8)
    ax.set_xlim(-0.02 * BLOCK_SIZE, 1.02 * BLOCK_SIZE)
    ax.set_ylim(-0.5, 1.3)
    ax.axis("off")
    ax.set_title(f"row of N = {N} read with BLOCK_SIZE = {BLOCK_SIZE} lanes (tl.arange(0, {BLOCK_SIZE}))",
                 fontsize=10)
    return fig


def plot_hbm_traffic(M: int, N: int, dtype_bytes: int = 4, *, ax=None):
    """Bytes read and written through HBM: ``naive_softmax``'s five kernels against the fused kernel.

    The naive bar is stacked step by step (reads plain, writes hatched), from
    ``naive_softmax_passes``; the fused bar is one read of X and one write of Y (``fused_bytes`` of
    ``softmax_traffic``). Heights in MB (10^6 bytes); each bar is labelled with its total and its
    memory time on the course's virtual FP32 device. Returns the Figure.
    """
    from gemm_lab.calc.softmax import naive_softmax_passes, softmax_traffic

    M = as_int("M", M)
    N = as_int("N", N)
    dtype_bytes = as_int("dtype_bytes", dtype_bytes)
    passes = naive_softmax_passes(M, N, dtype_bytes=dtype_bytes)
    traffic = softmax_traffic(M, N, dtype_bytes=dtype_bytes)
    fig, ax = _new_axes(ax, 8.0, 4.2)
    cmap = plt.get_cmap("tab10")
    bottom = 0.0
    for i, row in enumerate(passes.itertuples(index=False)):
        r, w = row.read_bytes / 1e6, row.write_bytes / 1e6
        ax.bar(0, r, bottom=bottom, color=cmap(i), edgecolor="black", label=f"{row.step}. {row.op}")
        bottom += r
        ax.bar(0, w, bottom=bottom, color=cmap(i), edgecolor="black", hatch="//")
        bottom += w
    half = traffic.fused_bytes / 2 / 1e6
    ax.bar(1, half, color=cmap(7), edgecolor="black", label="fused: tl.load X once, tl.store Y once")
    ax.bar(1, half, bottom=half, color=cmap(7), edgecolor="black", hatch="//")
    top = traffic.naive_bytes / 1e6
    ax.text(0, bottom + 0.02 * top, f"{traffic.naive_bytes / 1e6:,.2f} MB\n{traffic.naive_ms:.4f} ms",
            ha="center", va="bottom", fontsize=9)
    ax.text(1, 2 * half + 0.02 * top, f"{traffic.fused_bytes / 1e6:,.2f} MB\n{traffic.fused_ms:.4f} ms",
            ha="center", va="bottom", fontsize=9)
    ax.set_xticks([0, 1], ["naive_softmax\n(5 kernels)", "fused softmax_kernel\n(1 kernel)"])
    ax.set_ylabel("HBM traffic (MB); hatched = writes")
    ax.set_ylim(0, top * 1.25)
    ax.set_title(f"softmax of a {M} x {N} matrix ({dtype_bytes}-byte elements): "
                 f"speed-up {traffic.speedup:.2f}x", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig
