"""gemm_lab.viz.blocks draws what gemm_lab.calc.softmax computes (headless Agg backend)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from gemm_lab.calc.softmax import block_offsets, naive_softmax_passes, softmax_traffic  # noqa: E402
from gemm_lab.viz import blocks  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _cells(ax):
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def _masked(cells):
    return [p for p in cells if p.get_hatch()]


@pytest.mark.parametrize("N, BLOCK_SIZE", [(10, 4), (13, 4), (16, 8), (1, 1), (33, 16)])
def test_pid_blocks_one_cell_per_lane_and_masked_lanes_past_n(N, BLOCK_SIZE):
    fig = blocks.plot_pid_blocks(N, BLOCK_SIZE)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    grid = len(block_offsets(N, BLOCK_SIZE))
    cells = _cells(ax)
    assert len(cells) == grid * BLOCK_SIZE
    masked = _masked(cells)
    assert len(masked) == grid * BLOCK_SIZE - N
    # masked cells sit exactly at offsets N ... grid*BLOCK_SIZE-1
    assert sorted(int(p.get_x()) for p in masked) == list(range(N, grid * BLOCK_SIZE))
    labels = [t.get_text() for t in ax.texts]
    assert [f"pid={p}" for p in range(grid)] == [s for s in labels if s.startswith("pid=")]
    # every valid element is labelled with its index
    assert {str(i) for i in range(N)} <= set(labels)
    assert f"grid = cdiv({N}, {BLOCK_SIZE}) = {grid}" in ax.get_title()


def test_pid_blocks_colour_each_element_by_its_owner():
    fig = blocks.plot_pid_blocks(10, 4)
    cells = [p for p in _cells(fig.axes[0]) if not p.get_hatch()]
    by_x = {int(p.get_x()): p.get_facecolor() for p in cells}
    table = block_offsets(10, 4)
    for row in table.itertuples(index=False):
        owned = [o for o, m in zip(row.offsets, row.mask, strict=True) if m]
        colours = {by_x[o] for o in owned}
        assert len(colours) == 1
    # three programs, three different colours
    assert len(set(by_x.values())) == 3


def test_block_masks_match_calc_table_for_seed_example():
    fig = blocks.plot_block_masks(10, 4)
    ax = fig.axes[0]
    table = block_offsets(10, 4)
    grid = len(table)
    cells = _cells(ax)
    assert len(cells) == grid * 4
    # cell at (lane, row) with row = grid-1-pid; hatched exactly where mask is False
    hatched = {(int(p.get_x()), int(p.get_y())) for p in _masked(cells)}
    expected = {(lane, grid - 1 - row.pid)
                for row in table.itertuples(index=False)
                for lane, m in enumerate(row.mask) if not m}
    assert hatched == expected == {(2, 0), (3, 0)}
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("F") == 2 and texts.count("T") == 10
    for off in range(12):
        assert str(off) in texts


def test_row_padding_shows_valid_and_padded_lanes():
    fig = blocks.plot_row_padding(781, 1024, other=float("-inf"))
    ax = fig.axes[0]
    cells = _cells(ax)
    assert len(cells) == 2
    valid, padded = sorted(cells, key=lambda p: p.get_x())
    assert valid.get_width() == 781 and padded.get_x() == 781 and padded.get_width() == 243
    text = " ".join(t.get_text() for t in ax.texts)
    assert "243 lanes" in text and "other = -inf" in text


def test_row_padding_defaults_to_next_power_of_two_and_draws_no_padding_when_full():
    ax = blocks.plot_row_padding(781).axes[0]
    assert sum(p.get_width() for p in _cells(ax)) == 1024
    ax = blocks.plot_row_padding(1024, other=0.0).axes[0]
    assert len(_cells(ax)) == 1


def test_hbm_traffic_bars_add_up_to_calc_bytes():
    M, N = 4096, 1024
    fig = blocks.plot_hbm_traffic(M, N)
    ax = fig.axes[0]
    traffic = softmax_traffic(M, N)
    passes = naive_softmax_passes(M, N)
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    naive = [p for p in bars if abs(p.get_x() + p.get_width() / 2) < 1e-9]
    fused = [p for p in bars if abs(p.get_x() + p.get_width() / 2 - 1) < 1e-9]
    assert len(naive) == 2 * len(passes) == 10
    assert len(fused) == 2
    assert sum(p.get_height() for p in naive) == pytest.approx(traffic.naive_bytes / 1e6)
    assert sum(p.get_height() for p in fused) == pytest.approx(traffic.fused_bytes / 1e6)
    # each step is a read segment then a write segment, in order
    heights = [p.get_height() for p in naive]
    expected = [v / 1e6 for r, w in zip(passes.read_bytes, passes.write_bytes, strict=True) for v in (r, w)]
    assert heights == pytest.approx(expected)
    assert f"{traffic.speedup:.2f}x" in ax.get_title()
    text = " ".join(t.get_text() for t in ax.texts)
    assert f"{traffic.naive_ms:.4f} ms" in text and f"{traffic.fused_ms:.4f} ms" in text


def test_hbm_traffic_scales_with_dtype_bytes():
    ax4 = blocks.plot_hbm_traffic(64, 32, dtype_bytes=4).axes[0]
    ax2 = blocks.plot_hbm_traffic(64, 32, dtype_bytes=2).axes[0]
    t4 = sum(p.get_height() for p in ax4.patches)
    t2 = sum(p.get_height() for p in ax2.patches)
    assert t4 == pytest.approx(2 * t2)


def test_draws_into_given_axes():
    fig, ax = plt.subplots()
    assert blocks.plot_block_masks(10, 4, ax=ax) is fig
    assert len(fig.axes) == 1


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda: blocks.plot_pid_blocks(10, 3), ValueError),        # not a power of two
        (lambda: blocks.plot_pid_blocks(0, 4), ValueError),         # empty vector
        (lambda: blocks.plot_pid_blocks(10.0, 4), ValueError),      # float size
        (lambda: blocks.plot_pid_blocks("10", 4), TypeError),
        (lambda: blocks.plot_block_masks(10, True), TypeError),
        (lambda: blocks.plot_block_masks(1000, 4), ValueError),     # too many lanes to draw
        (lambda: blocks.plot_row_padding(781, 512), ValueError),    # block smaller than the row
        (lambda: blocks.plot_row_padding(781, 1000), ValueError),   # not a power of two
        (lambda: blocks.plot_row_padding(781, 1024, other="0"), TypeError),
        (lambda: blocks.plot_row_padding(781, 1024, other=float("nan")), TypeError),
        (lambda: blocks.plot_hbm_traffic(0, 1024), ValueError),
        (lambda: blocks.plot_hbm_traffic(4096, 1024, dtype_bytes=0), ValueError),
    ],
)
def test_bad_input_raises_clear_errors(call, exc):
    with pytest.raises(exc):
        call()
