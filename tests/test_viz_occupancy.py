"""gemm_lab.viz.occupancy (block-limit bars) and gemm_lab.viz.bench_plots (TFLOP/s pictures)."""

import math
from collections import namedtuple

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from gemm_lab.calc import occupancy as calc_occupancy  # noqa: E402
from gemm_lab.viz import bench_plots, occupancy  # noqa: E402

# The fields of gemm_lab.calc.occupancy.Occupancy (the viz only reads these)
Occ = namedtuple("Occ", "by_regs by_smem by_warps by_blocks blocks limiter")
BLOG_5090 = Occ(2, 2, 12, 24, 2, "registers")  # the blog's ncu Block Limit section


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _bars(ax):
    return [p for p in ax.patches if p.get_width() > 0]


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def test_block_limits_reads_the_four_limits_in_ncu_order():
    assert occupancy.block_limits(BLOG_5090) == {
        "registers": 2.0, "shared memory": 2.0, "warps": 12.0, "blocks / SM": 24.0,
    }


def test_block_limit_bars_heights_and_limiter_colour():
    ax = occupancy.block_limit_bars(BLOG_5090)
    bars = _bars(ax)
    assert [b.get_height() for b in bars] == [2, 2, 12, 24]
    red = mcolors.to_rgba("tab:red")
    assert [b.get_facecolor() == red for b in bars] == [True, True, False, False]
    assert _texts(ax) == ["2", "2", "12", "24"]
    (line,) = ax.get_lines()
    assert list(line.get_ydata()) == [2, 2]


def test_block_limit_bars_with_calc_occupancy_result():
    occ = calc_occupancy.blocks_per_sm(174, 4, 36_864, "sm_120")
    ax = occupancy.block_limit_bars(occ)
    heights = [b.get_height() for b in _bars(ax)]
    assert heights == [occ.by_regs, occ.by_smem, occ.by_warps, occ.by_blocks] == [2, 2, 12, 24]
    assert _texts(ax) == ["2", "2", "12", "24"]


def test_unknown_and_unlimited_limits_are_drawn_and_labelled():
    occ = Occ(None, math.inf, 16, 32, 16, "warps")
    ax = occupancy.block_limit_bars(occ)
    assert _texts(ax) == ["?", "∞", "16", "32"]
    heights = [p.get_height() for p in ax.patches]
    assert heights[0] == 0 and heights[1] > 32  # inf drawn above the finite bars


def test_compare_block_limits_draws_one_bar_per_limit_and_entry():
    h200 = Occ(2, 4, 16, 32, 2, "registers")
    ax = occupancy.compare_block_limits({"RTX 5090": BLOG_5090, "H200": h200})
    assert len(_bars(ax)) == 8
    # 5090: registers + shared memory limit; H200: registers
    assert _texts(ax) == ["2 ★", "2 ★", "12", "24", "2 ★", "4", "16", "32"]
    outlined = [b.get_linewidth() == 2 for b in _bars(ax)]
    assert outlined == [True, True, False, False, True, False, False, False]


@pytest.mark.parametrize(
    "bad, exc",
    [
        (object(), TypeError),
        (Occ("2", 2, 12, 24, 2, "x"), TypeError),
        (Occ(True, 2, 12, 24, 2, "x"), TypeError),
        (Occ(-1, 2, 12, 24, 2, "x"), ValueError),
        (Occ(math.nan, 2, 12, 24, 2, "x"), ValueError),
    ],
)
def test_block_limit_bars_rejects_bad_input(bad, exc):
    with pytest.raises(exc):
        occupancy.block_limit_bars(bad)


def test_compare_block_limits_rejects_empty_or_non_mapping():
    with pytest.raises(TypeError):
        occupancy.compare_block_limits({})
    with pytest.raises(TypeError):
        occupancy.compare_block_limits([BLOG_5090])


def test_variant_bars_heights_and_ratio_labels():
    ax = bench_plots.variant_bars({"naive tiled": 300.0, "naive persistent": 150.0}, torch_tflops=600.0)
    assert [b.get_width() for b in _bars(ax)] == [300.0, 150.0]
    assert _texts(ax) == ["0.50×", "0.25×"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["naive tiled", "naive persistent"]
    (torch_line,) = ax.get_lines()
    assert list(torch_line.get_xdata()) == [600.0, 600.0]


def test_variant_bars_dataframe_with_torch_per_shape():
    table = pd.DataFrame({"4096³": [400.0, 800.0], "8192³": [300.0, 600.0]}, index=["tiled", "tma"])
    ax = bench_plots.variant_bars(table, torch_tflops=pd.Series({"4096³": 800.0, "8192³": 600.0}))
    assert sorted(b.get_width() for b in _bars(ax)) == [300.0, 400.0, 600.0, 800.0]
    assert sorted(_texts(ax)) == ["0.50×", "0.50×", "1.00×", "1.00×"]
    assert sorted(line.get_xdata()[0] for line in ax.get_lines()) == [600.0, 800.0]


def test_variant_bars_series_without_torch():
    ax = bench_plots.variant_bars(pd.Series({"a": 1.0, "b": 2.0}))
    assert [b.get_width() for b in _bars(ax)] == [1.0, 2.0]
    assert _texts(ax) == []


@pytest.mark.parametrize(
    "tflops, torch, exc",
    [
        ({}, None, ValueError),
        ([1.0, 2.0], None, TypeError),
        ({"a": "fast"}, None, TypeError),
        ({"a": -1.0}, None, ValueError),
        ({"a": math.inf}, None, ValueError),
        ({"a": 1.0}, "600", TypeError),
        (pd.DataFrame({"x": [1.0]}, index=["a"]), {"y": 2.0}, ValueError),
    ],
)
def test_variant_bars_rejects_bad_input(tflops, torch, exc):
    with pytest.raises(exc):
        bench_plots.variant_bars(tflops, torch_tflops=torch)


def test_programs_per_sm_plot_sorts_points_and_draws_references():
    ax = bench_plots.programs_per_sm_plot({3: 376.0, 1: 243.0, 2: 367.0},
                                          references={"naive tiled": 389.0, "torch.matmul": 765.0})
    line, tiled, torch_ref = ax.get_lines()
    assert list(line.get_xdata()) == [1.0, 2.0, 3.0]
    assert list(line.get_ydata()) == [243.0, 367.0, 376.0]
    assert list(tiled.get_ydata()) == [389.0, 389.0] and list(torch_ref.get_ydata()) == [765.0, 765.0]


def test_programs_per_sm_plot_dataframe_one_line_per_column():
    table = pd.DataFrame({"4096³": [1.0, 2.0], "8192³": [3.0, 4.0]}, index=[1, 2])
    ax = bench_plots.programs_per_sm_plot(table)
    assert [list(line.get_ydata()) for line in ax.get_lines()] == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize(
    "tflops, refs, exc",
    [
        ({0: 1.0}, None, ValueError),
        ({"two": 1.0}, None, ValueError),
        ({1: 1.0}, [389.0], TypeError),
        ({1: 1.0}, {"tiled": None}, TypeError),
    ],
)
def test_programs_per_sm_plot_rejects_bad_input(tflops, refs, exc):
    with pytest.raises(exc):
        bench_plots.programs_per_sm_plot(tflops, references=refs)
