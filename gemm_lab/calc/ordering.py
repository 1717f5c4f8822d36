"""Program launch order: row-major vs grouped ("super-grouping", Tutorial 03 §L2 Cache Optimizations).

``pid_to_tile`` is Tutorial 03's arithmetic line for line (the seed's §7.1 script)::

    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)   # the last group may be smaller
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

``GROUP_M = 1`` gives row-major order (``pid_m = pid // num_pid_n``, ``pid_n = pid % num_pid_n``).

Input-tile counting (seed §4.2): a window of consecutive programs needs, for each distinct ``pid_m``,
a whole block row of A (``k_blocks`` tiles) and, for each distinct ``pid_n``, a whole block column of
B (``k_blocks`` tiles): ``tiles = (rows + cols) × k_blocks``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._validate import as_int, check_table

__all__ = [
    "pid_to_tile", "order_table", "order_grid", "format_order_grid", "InputTiles", "unique_input_tiles",
    "OrderComparison", "compare_orders",
]


def _grid_args(num_pid_m: object, num_pid_n: object, GROUP_M: object) -> tuple[int, int, int]:
    return as_int("num_pid_m", num_pid_m), as_int("num_pid_n", num_pid_n), as_int("GROUP_M", GROUP_M)


def _pid_to_tile(pid: int, num_pid_m: int, num_pid_n: int, GROUP_M: int) -> tuple[int, int]:
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


def pid_to_tile(pid: int, num_pid_m: int, num_pid_n: int, GROUP_M: int = 1) -> tuple[int, int]:
    """Output tile ``(pid_m, pid_n)`` computed by program ``pid`` (Tutorial 03's grouped order).

    ``pid`` must be in ``0 … num_pid_m × num_pid_n − 1``; ``GROUP_M >= 1`` (a ``GROUP_M`` larger than
    ``num_pid_m`` is allowed: one group, column-major order). 9×9, GROUP_M=3: pid 1 → (1, 0).
    """
    num_pid_m, num_pid_n, GROUP_M = _grid_args(num_pid_m, num_pid_n, GROUP_M)
    pid = as_int("pid", pid, minimum=0)
    if pid >= num_pid_m * num_pid_n:
        raise ValueError(f"pid={pid} is out of range: the grid has {num_pid_m} × {num_pid_n} = "
                         f"{num_pid_m * num_pid_n} programs (0 … {num_pid_m * num_pid_n - 1})")
    return _pid_to_tile(pid, num_pid_m, num_pid_n, GROUP_M)


def _n_programs(n_programs: object, total: int, name: str = "n_programs") -> int:
    if n_programs is None:
        return total
    n = as_int(name, n_programs)
    if n > total:
        raise ValueError(f"{name}={n} is larger than the grid ({total} programs)")
    return n


def order_table(num_pid_m: int, num_pid_n: int, GROUP_M: int, n_programs: int | None = None):
    """DataFrame with columns ``pid, pid_m, pid_n`` for the first ``n_programs`` programs (all by default).

    Seed §4.1: ``order_table(9, 9, 3, 9)``; §9.2: ``order_table(8, 8, 2, 8)``; row-major: ``GROUP_M=1``.
    """
    import pandas as pd

    num_pid_m, num_pid_n, GROUP_M = _grid_args(num_pid_m, num_pid_n, GROUP_M)
    n = _n_programs(n_programs, num_pid_m * num_pid_n)
    check_table("num_pid_m, num_pid_n, n_programs", n)
    rows = [(pid, *_pid_to_tile(pid, num_pid_m, num_pid_n, GROUP_M)) for pid in range(n)]
    return pd.DataFrame(rows, columns=["pid", "pid_m", "pid_n"])


def order_grid(num_pid_m: int, num_pid_n: int, GROUP_M: int) -> list[list[int]]:
    """``grid[pid_m][pid_n]`` = the pid (launch index) that computes that tile, for heat maps."""
    num_pid_m, num_pid_n, GROUP_M = _grid_args(num_pid_m, num_pid_n, GROUP_M)
    check_table("num_pid_m, num_pid_n", num_pid_m * num_pid_n)
    grid = [[-1] * num_pid_n for _ in range(num_pid_m)]
    for pid in range(num_pid_m * num_pid_n):
        m, n = _pid_to_tile(pid, num_pid_m, num_pid_n, GROUP_M)
        grid[m][n] = pid
    return grid


def format_order_grid(num_pid_m: int, num_pid_n: int, GROUP_M: int, n_programs: int | None = None,
                      rows: int | None = None) -> str:
    """The seed's text picture (§4.1): launch index of each tile, ``.`` for programs ``>= n_programs``.

    ``rows`` limits how many tile rows are printed (the seed prints 3 of 9).
    """
    grid = order_grid(num_pid_m, num_pid_n, GROUP_M)
    total = len(grid) * len(grid[0])
    n = _n_programs(n_programs, total)
    shown = len(grid) if rows is None else min(as_int("rows", rows), len(grid))
    width = len(str(n - 1))
    header = "    n=" + " ".join(str(j).rjust(width) for j in range(len(grid[0])))
    lines = [header]
    for i in range(shown):
        cells = " ".join((str(p) if p < n else ".").rjust(width) for p in grid[i])
        lines.append(f"m={i} [{cells}]")
    return "\n".join(lines)


@dataclass(frozen=True)
class InputTiles:
    """Unique input tiles a window of programs touches.

    ``a_rows``/``b_cols``: how many distinct A block rows / B block columns; ``tiles`` =
    ``a_tiles + b_tiles`` = ``(a_rows + b_cols) × k_blocks``; ``rows``/``cols``: which ones.
    """

    a_rows: int
    b_cols: int
    tiles: int
    a_tiles: int
    b_tiles: int
    rows: tuple[int, ...]
    cols: tuple[int, ...]
    tile_coords: tuple[tuple[int, int], ...]  # (pid_m, pid_n) of each program in the window


def unique_input_tiles(num_pid_m: int, num_pid_n: int, k_blocks: int, GROUP_M: int, window: int,
                       start: int = 0) -> InputTiles:
    """Unique A and B tiles needed by programs ``start … start + window − 1`` (counts of tiles).

    9×9, k_blocks=9, window 9: row-major (GROUP_M=1) 1 row + 9 cols → 90 tiles; GROUP_M=3 → 3 + 3 → 54.
    Raises ``ValueError`` when the window runs past the grid.
    """
    num_pid_m, num_pid_n, GROUP_M = _grid_args(num_pid_m, num_pid_n, GROUP_M)
    k_blocks = as_int("k_blocks", k_blocks)
    window = as_int("window", window)
    start = as_int("start", start, minimum=0)
    total = num_pid_m * num_pid_n
    if start + window > total:
        raise ValueError(f"window of {window} programs starting at pid {start} is larger than the grid "
                         f"({num_pid_m} × {num_pid_n} = {total} programs)")
    check_table("window", window)
    coords = tuple(_pid_to_tile(pid, num_pid_m, num_pid_n, GROUP_M) for pid in range(start, start + window))
    rows = tuple(sorted({m for m, _ in coords}))
    cols = tuple(sorted({n for _, n in coords}))
    a_tiles, b_tiles = len(rows) * k_blocks, len(cols) * k_blocks
    return InputTiles(len(rows), len(cols), a_tiles + b_tiles, a_tiles, b_tiles, rows, cols, coords)


@dataclass(frozen=True)
class OrderComparison:
    """Row-major vs grouped input tiles for the same window: ``saved = row_major − grouped``,
    ``reduction_pct = saved / row_major × 100`` (percent)."""

    row_major: int
    grouped: int
    saved: int
    reduction_pct: float
    row_major_tiles: InputTiles
    grouped_tiles: InputTiles


def compare_orders(num_pid_m: int, num_pid_n: int, k_blocks: int, GROUP_M: int, window: int) -> OrderComparison:
    """Seed §4.2 / exercise 2.1: 9×9, G=3, window 9 → 90 vs 54 (40.0 %); 8×8, G=2, window 8 → 72 vs 48 (33.33 %)."""
    rm = unique_input_tiles(num_pid_m, num_pid_n, k_blocks, 1, window)
    gr = unique_input_tiles(num_pid_m, num_pid_n, k_blocks, GROUP_M, window)
    saved = rm.tiles - gr.tiles
    return OrderComparison(rm.tiles, gr.tiles, saved, saved / rm.tiles * 100.0, rm, gr)
