"""Pictures of 2-D pointer blocks: broadcasting, the walk along K, and the masked edge tile.

Every function returns a matplotlib ``Figure`` and draws only what it is given or what
``gemm_lab.calc.tiling`` computes; labels are English (the notebooks explain them in Korean).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

_K_COLORS = plt.get_cmap("viridis")


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        if value <= 0:
            raise ValueError(f"{name} must be positive, got {value}")


def _annotated_grid(ax, values: np.ndarray, title: str, cmap: str = "Blues") -> None:
    values = np.atleast_2d(values)
    ax.imshow(values, cmap=cmap, aspect="equal", vmin=values.min() - 1, vmax=values.max() + 1)
    for (i, j), v in np.ndenumerate(values):
        ax.text(j, i, str(int(v)), ha="center", va="center", fontsize=8)
    ax.set_xticks(range(values.shape[1]))
    ax.set_yticks(range(values.shape[0]))
    ax.set_title(title, fontsize=9)


def broadcast_figure(
    offs_rows: Sequence[int],
    offs_cols: Sequence[int],
    stride_rows: int,
    stride_cols: int,
    *,
    names: tuple[str, str] = ("offs_am", "offs_k"),
    strides: tuple[str, str] = ("stride_am", "stride_ak"),
) -> Figure:
    """Show ``rows[:, None] * stride_rows + cols[None, :] * stride_cols`` as three panels.

    The result is the element offset of every pointer in the block (add it to the base pointer).
    """
    rows = np.asarray(offs_rows, dtype=np.int64)
    cols = np.asarray(offs_cols, dtype=np.int64)
    if rows.ndim != 1 or cols.ndim != 1 or rows.size == 0 or cols.size == 0:
        raise ValueError("offs_rows and offs_cols must be non-empty 1-D sequences")
    col_vec = rows[:, None] * stride_rows
    row_vec = cols[None, :] * stride_cols
    block = col_vec + row_vec
    fig, axes = plt.subplots(
        1, 3, figsize=(2.2 + 0.55 * (cols.size + 2), 0.6 * rows.size + 1.6),
        gridspec_kw={"width_ratios": [1, cols.size, cols.size]},
    )
    _annotated_grid(axes[0], col_vec, f"{names[0]}[:, None]\n* {strides[0]}\n[{rows.size}, 1]")
    _annotated_grid(axes[1], row_vec, f"{names[1]}[None, :] * {strides[1]}\n[1, {cols.size}]", "Oranges")
    _annotated_grid(axes[2], block, f"sum: pointer offsets\n[{rows.size}, {cols.size}]", "Greens")
    fig.suptitle("broadcasting 1-D offsets into a 2-D pointer block", fontsize=10)
    fig.tight_layout()
    return fig


def _draw_matrix(ax, rows: int, cols: int, title: str) -> None:
    ax.add_patch(Rectangle((0, 0), cols, rows, fill=False, lw=1.5, color="black"))
    ax.set_xlim(-0.5, cols + 0.5)
    ax.set_ylim(rows + 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=7)


def pointer_walk_figure(
    M: int, N: int, K: int, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, pid_m: int = 0, pid_n: int = 0,
) -> Figure:
    """A, B and C with the tiles one program visits: the [BM, BK] and [BK, BN] blocks at every K
    step (colour = step k; hatched = masked with other=0.0 past K) and the [BM, BN] output tile."""
    from gemm_lab import calc

    _check_positive(M=M, N=N, K=K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    grid = calc.tile_grid(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K)
    if not (0 <= pid_m < grid.num_pid_m and 0 <= pid_n < grid.num_pid_n):
        raise ValueError(f"(pid_m, pid_n)=({pid_m}, {pid_n}) is outside the {grid.num_pid_m}x{grid.num_pid_n} grid")
    fig, (ax_a, ax_b, ax_c) = plt.subplots(1, 3, figsize=(12, 4))
    _draw_matrix(ax_a, M, K, f"A [M={M}, K={K}]")
    _draw_matrix(ax_b, K, N, f"B [K={K}, N={N}]")
    _draw_matrix(ax_c, M, N, f"C [M={M}, N={N}]")
    r0, c0 = pid_m * BLOCK_M, pid_n * BLOCK_N
    steps = grid.k_steps
    for k in range(steps):
        color = _K_COLORS(k / max(steps - 1, 1))
        k0 = k * BLOCK_K
        width = min(BLOCK_K, K - k0)
        ax_a.add_patch(Rectangle((k0, r0), width, min(BLOCK_M, M - r0), color=color, alpha=0.55))
        ax_b.add_patch(Rectangle((c0, k0), min(BLOCK_N, N - c0), width, color=color, alpha=0.55))
        if width < BLOCK_K:  # the masked part of the last step (other=0.0)
            ax_a.add_patch(Rectangle((k0 + width, r0), BLOCK_K - width, BLOCK_M, fill=False,
                                     hatch="///", color="red", lw=0.8))
            ax_b.add_patch(Rectangle((c0, k0 + width), BLOCK_N, BLOCK_K - width, fill=False,
                                     hatch="///", color="red", lw=0.8))
        ax_a.text(k0 + BLOCK_K / 2, r0 + BLOCK_M / 2, f"k={k}", ha="center", va="center", fontsize=7)
        ax_b.text(c0 + BLOCK_N / 2, k0 + BLOCK_K / 2, f"k={k}", ha="center", va="center", fontsize=7)
    ax_a.annotate("", xy=(min(BLOCK_K * 1.5, K), r0 - 0.04 * M), xytext=(BLOCK_K * 0.5, r0 - 0.04 * M),
                  arrowprops={"arrowstyle": "->"})
    ax_a.text(BLOCK_K, r0 - 0.08 * M, "a_ptrs += BLOCK_K * stride_ak", fontsize=7, ha="left")
    ax_b.text(c0 + BLOCK_N + 0.02 * N, BLOCK_K, "b_ptrs +=\nBLOCK_K * stride_bk", fontsize=7, va="center")
    ax_c.add_patch(Rectangle((c0, r0), BLOCK_N, BLOCK_M, color="tab:green", alpha=0.6))
    ax_c.add_patch(Rectangle((c0, r0), BLOCK_N, BLOCK_M, fill=False, color="black", lw=1))
    ax_c.text(c0 + BLOCK_N / 2, r0 + BLOCK_M / 2, f"({pid_m}, {pid_n})", ha="center", va="center", fontsize=8)
    fig.suptitle(f"program (pid_m={pid_m}, pid_n={pid_n}): {steps} K steps of BLOCK_K={BLOCK_K}", fontsize=10)
    fig.tight_layout()
    return fig


def edge_tile_figure(M: int, N: int, K: int, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int,
                     pid_m: int, pid_n: int) -> Figure:
    """Exercise 1's picture: the output tile of (pid_m, pid_n) split into stored and masked
    elements (c_mask), and the K steps with the last one's read / padded columns."""
    from gemm_lab import calc

    _check_positive(M=M, N=N, K=K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    edge = calc.edge_tile(M, N, BLOCK_M, BLOCK_N, pid_m, pid_n)
    tail = calc.k_tail(K, BLOCK_K)
    fig, (ax_t, ax_k) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1, 1.4]})
    ax_t.add_patch(Rectangle((edge.col_start, edge.row_start), BLOCK_N, BLOCK_M, color="tab:red", alpha=0.35))
    ax_t.add_patch(Rectangle((edge.col_start, edge.row_start), edge.valid_cols, edge.valid_rows,
                             color="tab:green", alpha=0.7))
    ax_t.set_xlim(edge.col_start - 4, edge.col_end + 5)
    ax_t.set_ylim(edge.row_end + 5, edge.row_start - 4)
    ax_t.axvline(N, color="black", ls="--", lw=1)
    ax_t.axhline(M, color="black", ls="--", lw=1)
    ax_t.text(N + 1, edge.row_start + 2, f"N={N}", fontsize=8, va="top")
    ax_t.text(edge.col_start + 2, M + 1, f"M={M}", fontsize=8, va="top")
    ax_t.text(edge.col_start + edge.valid_cols / 2, edge.row_start + edge.valid_rows / 2,
              f"stored\n{edge.valid_rows} x {edge.valid_cols}\n= {edge.valid:,}", ha="center", va="center", fontsize=8)
    ax_t.set_title(f"C tile (pid_m={pid_m}, pid_n={pid_n}): rows {edge.row_start}-{edge.row_end}, "
                   f"cols {edge.col_start}-{edge.col_end}\nmasked by c_mask: {edge.masked:,} of {edge.total:,}",
                   fontsize=9)
    ax_t.set_xlabel("column (offs_cn)")
    ax_t.set_ylabel("row (offs_cm)")
    steps = tail.last_k + 1
    for k in range(steps):
        ax_k.add_patch(Rectangle((k * BLOCK_K, 0), BLOCK_K, 1, fill=False, lw=1, color="black"))
        ax_k.text(k * BLOCK_K + BLOCK_K / 2, 1.15, f"k={k}", ha="center", fontsize=8)
    last0 = tail.last_k * BLOCK_K
    ax_k.add_patch(Rectangle((0, 0), last0 + tail.read, 1, color="tab:blue", alpha=0.5))
    ax_k.add_patch(Rectangle((last0 + tail.read, 0), tail.padded, 1, fill=False, hatch="///", color="tab:red"))
    ax_k.axvline(K, color="black", ls="--", lw=1)
    ax_k.text(K, -0.25, f"K={K}", ha="center", fontsize=8)
    ax_k.text(last0 + tail.read / 2, 0.5, f"read\n{tail.read}", ha="center", va="center", fontsize=8)
    ax_k.text(last0 + tail.read + tail.padded / 2, 0.5, f"other\n{tail.padded}", ha="center", va="center", fontsize=8)
    ax_k.set_xlim(-5, steps * BLOCK_K + 5)
    ax_k.set_ylim(-0.5, 1.5)
    ax_k.set_yticks([])
    ax_k.set_title(f"K loop: {steps} steps of BLOCK_K={BLOCK_K}; last step reads {tail.read}, "
                   f"pads {tail.padded}", fontsize=9)
    fig.tight_layout()
    return fig
