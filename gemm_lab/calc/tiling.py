"""Tiling arithmetic of Tutorial 03's ``matmul_kernel`` (seed week 7, §3 and exercise 1).

All sizes are in elements. A ``(M, N, K)`` problem cut into ``BLOCK_M × BLOCK_N`` output tiles and
``BLOCK_K``-wide K steps:

* ``num_pid_m = cdiv(M, BLOCK_M)``, ``num_pid_n = cdiv(N, BLOCK_N)``, ``grid = num_pid_m × num_pid_n``
* ``k_steps = cdiv(K, BLOCK_K)`` (trip count of the K loop, ``k = 0 … k_steps − 1``)
* the last K step reads ``K − (k_steps − 1) × BLOCK_K`` columns; the rest of the ``BLOCK_K`` lanes are
  masked and filled with ``other``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._validate import as_int, as_real

__all__ = ["cdiv", "TileGrid", "tile_grid", "EdgeTile", "edge_tile", "KTail", "k_tail", "padding_error"]


def cdiv(a: int, b: int) -> int:
    """Ceiling division ``⌈a / b⌉`` of integers, as ``triton.cdiv``: ``(a + b − 1) // b``.

    ``a`` must be >= 0 and ``b`` >= 1 (``cdiv(0, b) == 0``).
    """
    a = as_int("a", a, minimum=0)
    b = as_int("b", b)
    return (a + b - 1) // b


@dataclass(frozen=True)
class TileGrid:
    """Launch grid of a tiled matmul.

    ``k_tail`` is the number of K elements the last K step really reads (``BLOCK_K`` when
    ``BLOCK_K`` divides ``K``); see :func:`k_tail` for the full breakdown.
    """

    num_pid_m: int
    num_pid_n: int
    grid: int
    k_steps: int
    k_tail: int


def tile_grid(M: int, N: int, K: int, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int) -> TileGrid:
    """Grid size (programs) and K-loop trip count for ``C[M, N] = A[M, K] @ B[K, N]``.

    ``grid = cdiv(M, BLOCK_M) × cdiv(N, BLOCK_N)`` programs, each running ``cdiv(K, BLOCK_K)`` K steps.
    Exercise 1 (500×600×300 with 128×128×64): 4 × 5 = 20 programs, 5 K steps, k_tail 44.
    """
    M, N, K = as_int("M", M), as_int("N", N), as_int("K", K)
    BLOCK_M, BLOCK_N, BLOCK_K = as_int("BLOCK_M", BLOCK_M), as_int("BLOCK_N", BLOCK_N), as_int("BLOCK_K", BLOCK_K)
    num_pid_m, num_pid_n = cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)
    k_steps = cdiv(K, BLOCK_K)
    return TileGrid(num_pid_m, num_pid_n, num_pid_m * num_pid_n, k_steps, K - (k_steps - 1) * BLOCK_K)


@dataclass(frozen=True)
class EdgeTile:
    """One output tile: index ranges (inclusive) and how many elements ``c_mask`` lets through."""

    row_start: int
    row_end: int  # inclusive: offs_cm runs row_start … row_end
    col_start: int
    col_end: int  # inclusive
    valid_rows: int
    valid_cols: int
    total: int  # BLOCK_M × BLOCK_N
    valid: int  # valid_rows × valid_cols (stored)
    masked: int  # total − valid (blocked by c_mask)

    @property
    def masked_rows(self) -> int:
        """Rows of the tile past M (``offs_cm >= M``): 500–511 → 12 for the exercise's corner tile."""
        return self.row_end - self.row_start + 1 - self.valid_rows

    @property
    def masked_cols(self) -> int:
        """Columns of the tile past N (``offs_cn >= N``): 600–639 → 40 for the exercise's corner tile."""
        return self.col_end - self.col_start + 1 - self.valid_cols


def edge_tile(M: int, N: int, BLOCK_M: int, BLOCK_N: int, pid_m: int, pid_n: int) -> EdgeTile:
    """Offsets and mask counts of output tile ``(pid_m, pid_n)``.

    ``offs_cm = pid_m × BLOCK_M + arange(BLOCK_M)``, valid where ``< M`` (same for columns with N).
    ``valid = valid_rows × valid_cols``, ``masked = BLOCK_M × BLOCK_N − valid`` (elements).
    Exercise 1 corner tile (3, 4): rows 384–511, cols 512–639, 116 × 88 = 10,208 valid, 6,176 masked.
    Raises ``ValueError`` when ``pid_m``/``pid_n`` is outside the grid.
    """
    M, N = as_int("M", M), as_int("N", N)
    BLOCK_M, BLOCK_N = as_int("BLOCK_M", BLOCK_M), as_int("BLOCK_N", BLOCK_N)
    pid_m, pid_n = as_int("pid_m", pid_m, minimum=0), as_int("pid_n", pid_n, minimum=0)
    num_pid_m, num_pid_n = cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)
    if pid_m >= num_pid_m:
        raise ValueError(f"pid_m={pid_m} is out of range: the grid has num_pid_m={num_pid_m} (0 … {num_pid_m - 1})")
    if pid_n >= num_pid_n:
        raise ValueError(f"pid_n={pid_n} is out of range: the grid has num_pid_n={num_pid_n} (0 … {num_pid_n - 1})")
    row_start, col_start = pid_m * BLOCK_M, pid_n * BLOCK_N
    valid_rows = min(BLOCK_M, M - row_start)
    valid_cols = min(BLOCK_N, N - col_start)
    total = BLOCK_M * BLOCK_N
    valid = valid_rows * valid_cols
    return EdgeTile(row_start, row_start + BLOCK_M - 1, col_start, col_start + BLOCK_N - 1,
                    valid_rows, valid_cols, total, valid, total - valid)


@dataclass(frozen=True)
class KTail:
    """The last K step: ``last_k`` (loop index), ``remaining = K − last_k × BLOCK_K``,
    ``read`` lanes loaded from memory, ``padded`` lanes filled with ``other``."""

    last_k: int
    remaining: int
    read: int
    padded: int


def k_tail(K: int, BLOCK_K: int) -> KTail:
    """The K-axis mask of the last K step (elements).

    ``last_k = cdiv(K, BLOCK_K) − 1``, ``remaining = K − last_k × BLOCK_K`` (the value of
    ``K - k * BLOCK_SIZE_K`` in the kernel), ``read = remaining``, ``padded = BLOCK_K − read``.
    Exercise 1 (K=300, BLOCK_K=64): k = 4, 44 read, 20 padded.
    """
    K, BLOCK_K = as_int("K", K), as_int("BLOCK_K", BLOCK_K)
    last_k = cdiv(K, BLOCK_K) - 1
    remaining = K - last_k * BLOCK_K
    return KTail(last_k, remaining, remaining, BLOCK_K - remaining)


def padding_error(K: int, BLOCK_K: int, other: float) -> float:
    """What a K-axis fill value ``other`` adds to every valid output element (dimensionless).

    Both A and B lanes past K are filled with ``other``, so each padded lane contributes
    ``other × other`` to the dot product: error = ``padded × other²``. ``other = 0.0`` adds 0;
    exercise 1 with ``other = 1.0`` adds 20 × 1.0 × 1.0 = +20.0.
    """
    other = as_real("other", other)
    return k_tail(K, BLOCK_K).padded * other * other
