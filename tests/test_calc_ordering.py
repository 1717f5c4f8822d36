"""gemm_lab.calc.ordering against seed week 7 §4.1, §4.2, §7.1 and exercise 2.1 (§9.2)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemm_lab.calc.ordering import (
    compare_orders,
    format_order_grid,
    order_grid,
    order_table,
    pid_to_tile,
    unique_input_tiles,
)


def seed_script_coords(num_pid_m, num_pid_n, G, n):
    """The seed's §7.1 verification script, verbatim in substance."""
    out = []
    for pid in range(n):
        num_in_grp = G * num_pid_n
        grp_id = pid // num_in_grp
        first_m = grp_id * G
        g_size = min(num_pid_m - first_m, G)
        out.append((first_m + ((pid % num_in_grp) % g_size), (pid % num_in_grp) // g_size))
    return out


def test_section_4_1_tables():
    rm = order_table(9, 9, 1, 9)
    gr = order_table(9, 9, 3, 9)
    assert list(rm.columns) == ["pid", "pid_m", "pid_n"]
    assert list(zip(rm.pid_m, rm.pid_n, strict=True)) == [(0, n) for n in range(9)]
    assert list(zip(gr.pid_m, gr.pid_n, strict=True)) == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2)]
    assert list(gr.pid) == list(range(9))


def test_section_4_1_picture():
    text = format_order_grid(9, 9, 3, n_programs=9, rows=3)
    assert text.splitlines()[1:] == ["m=0 [0 3 6 . . . . . .]", "m=1 [1 4 7 . . . . . .]", "m=2 [2 5 8 . . . . . .]"]
    text = format_order_grid(9, 9, 1, n_programs=9, rows=2)
    assert text.splitlines()[1:] == ["m=0 [0 1 2 3 4 5 6 7 8]", "m=1 [. . . . . . . . .]"]


def test_section_4_2_counts():
    rm = unique_input_tiles(9, 9, 9, 1, 9)
    gr = unique_input_tiles(9, 9, 9, 3, 9)
    assert (rm.a_rows, rm.b_cols, rm.a_tiles, rm.b_tiles, rm.tiles) == (1, 9, 9, 81, 90)
    assert (gr.a_rows, gr.b_cols, gr.a_tiles, gr.b_tiles, gr.tiles) == (3, 3, 27, 27, 54)
    c = compare_orders(9, 9, 9, 3, 9)
    assert (c.row_major, c.grouped, c.saved) == (90, 54, 36)
    assert c.reduction_pct == pytest.approx(40.0)
    assert f"{c.reduction_pct:.1f}" == "40.0"


def test_exercise_2_1():
    gr = order_table(8, 8, 2, 8)
    assert list(zip(gr.pid_m, gr.pid_n, strict=True)) == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3)]
    rm = order_table(8, 8, 1, 8)
    assert list(zip(rm.pid_m, rm.pid_n, strict=True)) == [(0, n) for n in range(8)]
    c = compare_orders(8, 8, 8, 2, 8)
    assert (c.row_major, c.grouped) == (72, 48)
    assert (c.grouped_tiles.a_rows, c.grouped_tiles.b_cols) == (2, 4)
    assert round(c.reduction_pct, 2) == 33.33


def test_last_smaller_group():
    # 5 tile rows, GROUP_M=2: the last group has one row, so it runs row-major over n.
    assert [pid_to_tile(p, 5, 3, 2) for p in range(12, 15)] == [(4, 0), (4, 1), (4, 2)]
    assert seed_script_coords(5, 3, 2, 15) == [pid_to_tile(p, 5, 3, 2) for p in range(15)]


def test_group_m_larger_than_grid_is_column_major():
    assert [pid_to_tile(p, 3, 2, 8) for p in range(6)] == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]


def test_order_grid():
    g = order_grid(9, 9, 3)
    assert g[0][:3] == [0, 3, 6] and g[2][2] == 8 and g[3][0] == 27
    assert sorted(p for row in g for p in row) == list(range(81))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 14))
def test_every_tile_assigned_exactly_once(num_pid_m, num_pid_n, G):
    coords = [pid_to_tile(p, num_pid_m, num_pid_n, G) for p in range(num_pid_m * num_pid_n)]
    assert sorted(coords) == [(m, n) for m in range(num_pid_m) for n in range(num_pid_n)]
    assert coords == seed_script_coords(num_pid_m, num_pid_n, G, num_pid_m * num_pid_n)
    if G == 1:
        assert coords == [(p // num_pid_n, p % num_pid_n) for p in range(num_pid_m * num_pid_n)]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 10), st.integers(1, 10), st.integers(1, 5), st.integers(1, 6), st.data())
def test_input_tiles_formula(num_pid_m, num_pid_n, G, k_blocks, data):
    window = data.draw(st.integers(1, num_pid_m * num_pid_n))
    t = unique_input_tiles(num_pid_m, num_pid_n, k_blocks, G, window)
    assert t.tiles == (t.a_rows + t.b_cols) * k_blocks
    assert len(t.tile_coords) == window and len(set(t.tile_coords)) == window
    assert t.a_rows * t.b_cols >= window  # the window fits in the rows × cols rectangle


def test_bad_inputs():
    with pytest.raises(ValueError, match="window"):
        unique_input_tiles(9, 9, 9, 3, 82)
    with pytest.raises(ValueError, match="GROUP_M"):
        pid_to_tile(0, 9, 9, 0)
    with pytest.raises(ValueError, match="out of range"):
        pid_to_tile(81, 9, 9, 3)
    with pytest.raises(ValueError):
        pid_to_tile(-1, 9, 9, 3)
    with pytest.raises(ValueError, match="n_programs"):
        order_table(2, 2, 1, 5)
    with pytest.raises(TypeError):
        order_table(2, "2", 1)
