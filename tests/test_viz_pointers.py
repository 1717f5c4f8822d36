"""gemm_lab.viz.pointers draws without error on the headless Agg backend."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gemm_lab.viz import pointers  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_broadcast_figure_shows_the_pointer_offsets():
    fig = pointers.broadcast_figure([0, 1, 2, 3], [0, 1, 2], stride_rows=6, stride_cols=1)
    assert isinstance(fig, Figure)
    texts = {t.get_text() for t in fig.axes[2].texts}
    # element (3, 2) of the block is 3 * 6 + 2 * 1
    assert "20" in texts and "0" in texts
    assert len(fig.axes[2].texts) == 12


def test_broadcast_figure_rejects_empty_offsets():
    with pytest.raises(ValueError):
        pointers.broadcast_figure([], [0, 1], 4, 1)


def test_pointer_walk_figure_marks_every_k_step():
    fig = pointers.pointer_walk_figure(500, 600, 300, 128, 128, 64, pid_m=3, pid_n=4)
    assert isinstance(fig, Figure)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert [f"k={k}" for k in range(5)] == [s for s in labels if s.startswith("k=")]


def test_pointer_walk_figure_rejects_a_program_outside_the_grid():
    with pytest.raises(ValueError):
        pointers.pointer_walk_figure(500, 600, 300, 128, 128, 64, pid_m=4, pid_n=0)
    with pytest.raises(TypeError):
        pointers.pointer_walk_figure(500.0, 600, 300, 128, 128, 64)


def test_edge_tile_figure_exercise_1():
    fig = pointers.edge_tile_figure(500, 600, 300, 128, 128, 64, pid_m=3, pid_n=4)
    assert isinstance(fig, Figure)
    text = " ".join(t.get_text() for ax in fig.axes for t in ax.texts) + fig.axes[0].get_title()
    assert "10,208" in text and "6,176" in text and "44" in text and "20" in text
