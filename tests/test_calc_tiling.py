"""gemm_lab.calc.tiling against seed week 7 exercise 1 (§8, §9.1)."""

import pytest

from gemm_lab.calc.tiling import EdgeTile, KTail, TileGrid, cdiv, edge_tile, k_tail, padding_error, tile_grid


def test_cdiv():
    assert cdiv(500, 128) == 4
    assert cdiv(600, 128) == 5
    assert cdiv(300, 64) == 5
    assert cdiv(512, 128) == 4
    assert cdiv(0, 7) == 0
    assert cdiv(1, 7) == 1


def test_exercise1_grid_and_k_steps():
    g = tile_grid(500, 600, 300, 128, 128, 64)
    assert g == TileGrid(num_pid_m=4, num_pid_n=5, grid=20, k_steps=5, k_tail=44)


def test_exercise1_corner_tile():
    t = edge_tile(500, 600, 128, 128, pid_m=3, pid_n=4)
    assert t == EdgeTile(row_start=384, row_end=511, col_start=512, col_end=639, valid_rows=116,
                         valid_cols=88, total=16384, valid=10208, masked=6176)
    # out-of-range rows 500..511 (12) and cols 600..639 (40), as the seed lists
    assert t.row_end - (t.row_start + t.valid_rows) + 1 == 12
    assert t.col_end - (t.col_start + t.valid_cols) + 1 == 40
    assert (t.masked_rows, t.masked_cols) == (12, 40)
    assert t.masked == t.masked_rows * 128 + t.masked_cols * 128 - t.masked_rows * t.masked_cols


def test_interior_tile_is_fully_valid():
    t = edge_tile(500, 600, 128, 128, pid_m=1, pid_n=2)
    assert (t.valid, t.masked, t.row_start, t.col_end) == (16384, 0, 128, 383)
    assert (t.masked_rows, t.masked_cols) == (0, 0)
    odd = edge_tile(77, 45, 32, 16, pid_m=2, pid_n=2)  # rows 64..95 of 77, cols 32..47 of 45
    assert (odd.valid_rows, odd.masked_rows, odd.valid_cols, odd.masked_cols) == (13, 19, 13, 3)


def test_edge_tiles_cover_every_element_once():
    M, N, BM, BN = 37, 53, 16, 8
    g = tile_grid(M, N, 1, BM, BN, 1)
    total = sum(edge_tile(M, N, BM, BN, m, n).valid for m in range(g.num_pid_m) for n in range(g.num_pid_n))
    assert total == M * N


def test_exercise1_k_tail_and_padding():
    assert k_tail(300, 64) == KTail(last_k=4, remaining=44, read=44, padded=20)
    assert padding_error(300, 64, 0.0) == 0.0
    assert padding_error(300, 64, 1.0) == 20.0
    assert padding_error(300, 64, -2.0) == 80.0


def test_k_divisible():
    assert k_tail(4096, 32) == KTail(last_k=127, remaining=32, read=32, padded=0)
    assert tile_grid(4096, 4096, 4096, 128, 128, 32).k_tail == 32


@pytest.mark.parametrize("pid_m, pid_n", [(4, 0), (0, 5), (-1, 0)])
def test_edge_tile_pid_out_of_range(pid_m, pid_n):
    with pytest.raises(ValueError, match="pid"):
        edge_tile(500, 600, 128, 128, pid_m, pid_n)
