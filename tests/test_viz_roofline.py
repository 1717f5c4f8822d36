"""gemm_lab.viz.roofline draws without error on the headless Agg backend."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gemm_lab import calc  # noqa: E402
from gemm_lab.viz import roofline as viz_roofline  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_roofline_figure_has_one_point_per_config():
    table = calc.roofline_table(4096, 4096, 4096, calc.SEED_CONFIGS)
    fig = viz_roofline.roofline_figure(table, calc.VIRTUAL_DEVICE)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert len(ax.collections) == 3
    labels = ax.get_legend_handles_labels()[1]
    assert any("I=63.02" in s for s in labels) and any("80.00 TFLOP/s" in s for s in labels)
    assert all(s.isascii() for s in labels)  # Korean config names are not drawn (no glyphs)


def test_roofline_figure_with_measured_points():
    table = calc.roofline_table(4096, 4096, 4096, calc.SEED_CONFIGS[:2])
    first = table.index[0]
    fig = viz_roofline.roofline_figure(table, calc.get_device("h200"), measured={first: 187.4})
    assert len(fig.axes[0].collections) == 3


def test_roofline_figure_rejects_a_table_without_intensity():
    with pytest.raises(ValueError):
        viz_roofline.roofline_figure(pd.DataFrame({"x": [1.0]}))


def test_smem_figure_draws_bars_and_limits():
    table = pd.DataFrame({"textbook": [30720, 65536], "sm_75": [8192, 16384]}, index=["a", "b"])
    fig = viz_roofline.smem_figure(table, {"64 KiB": 65536})
    assert isinstance(fig, Figure)
    assert len(fig.axes[0].patches) == 4
    with pytest.raises(ValueError):
        viz_roofline.smem_figure(pd.DataFrame({"x": ["a"]}))
