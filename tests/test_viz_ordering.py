"""gemm_lab.viz.ordering draws without error on the headless Agg backend."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gemm_lab.viz import ordering  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _numbers(ax):
    return [t.get_text() for t in ax.texts]


def test_order_heatmap_numbers_the_grouped_launch_order():
    fig = ordering.order_heatmap(9, 9, 3, window=9)
    assert isinstance(fig, Figure)
    texts = _numbers(fig.axes[0])
    assert len(texts) == 81
    # row 0 of the grouped 9x9 order (G=3) reads 0 3 6 9 ... 24; row 3 starts the next group at 27
    assert texts[:9] == [str(3 * j) for j in range(9)] and texts[27] == "27"
    assert "3 A block rows" in fig.axes[0].get_xlabel() and "3 B block cols" in fig.axes[0].get_xlabel()


def test_compare_orders_figure_has_both_orders():
    fig = ordering.compare_orders_figure(8, 8, 2, window=8)
    assert len(fig.axes) == 2
    assert "row-major" in fig.axes[0].get_title() and "GROUP_M=2" in fig.axes[1].get_title()
    assert "1 A block rows" in fig.axes[0].get_xlabel() and "8 B block cols" in fig.axes[0].get_xlabel()
    assert "2 A block rows" in fig.axes[1].get_xlabel() and "4 B block cols" in fig.axes[1].get_xlabel()


def test_bad_grid_is_rejected():
    with pytest.raises(ValueError):
        ordering.order_heatmap(0, 9, 3)
    with pytest.raises(TypeError):
        ordering.order_heatmap(9, 9, 1.5)


def test_group_m_widget_builds_headless():
    widget = ordering.group_m_widget(6, 6, window=6)
    assert widget is not None
    slider = widget.children[0]
    slider.value = 2  # redraws without error
    assert slider.description == "GROUP_M"


def test_speed_figure_from_a_table():
    table = pd.DataFrame({"config": ["64x32x32", "64x32x32"], "GROUP_M": [1, 8], "tflops": [146.7, 199.5]})
    fig = ordering.speed_figure(table)
    assert isinstance(fig, Figure)
    with pytest.raises(ValueError):
        ordering.speed_figure(table.drop(columns="tflops"))
