"""gemm_lab.calc.waves (NVIDIA Matmul Background §3: tile and wave quantization) and its picture."""

import math

import pytest

from gemm_lab.calc import tiling
from gemm_lab.calc.waves import wave_quantization


def test_4096_square_on_132_sms_one_program_per_sm():
    w = wave_quantization(4096, 4096, 128, 128, 132)
    assert (w.num_pid_m, w.num_pid_n, w.tiles, w.slots) == (32, 32, 1024, 132)
    assert (w.num_waves, w.full_waves, w.last_wave_tiles) == (8, 7, 100)
    assert w.waves == pytest.approx(1024 / 132)
    assert w.tile_efficiency == 1.0
    assert w.wave_efficiency == pytest.approx(1024 / (8 * 132))
    assert w.last_wave_fill == pytest.approx(100 / 132)


def test_500x600_single_partial_wave_and_edge_tiles():
    w = wave_quantization(500, 600, 128, 128, 132)
    assert w.tiles == tiling.tile_grid(500, 600, 300, 128, 128, 64).grid == 20
    assert (w.num_waves, w.full_waves, w.last_wave_tiles) == (1, 0, 20)
    assert w.tile_efficiency == pytest.approx(500 * 600 / (20 * 128 * 128))
    assert w.wave_efficiency == pytest.approx(20 / 132)
    assert w.efficiency == pytest.approx(w.tile_efficiency * w.wave_efficiency)


def test_exact_waves_and_programs_per_sm():
    w = wave_quantization(132 * 64, 64, 64, 64, 132)  # 132 tiles: exactly one full wave
    assert (w.num_waves, w.full_waves, w.last_wave_tiles, w.wave_efficiency) == (1, 1, 132, 1.0)
    w2 = wave_quantization(4096, 4096, 128, 128, 132, programs_per_sm=2)
    assert w2.slots == 264 and w2.num_waves == math.ceil(1024 / 264) == 4
    assert w2.last_wave_tiles == 1024 - 3 * 264


@pytest.mark.parametrize("bad, exc", [
    (dict(M=0), ValueError), (dict(num_sms=0), ValueError), (dict(BLOCK_M=64.0), ValueError),
    (dict(programs_per_sm=True), TypeError), (dict(N="600"), TypeError),
])
def test_bad_arguments_name_the_argument(bad, exc):
    args = dict(M=500, N=600, BLOCK_M=128, BLOCK_N=128, num_sms=132, programs_per_sm=1) | bad
    with pytest.raises(exc, match=next(iter(bad))):
        wave_quantization(**args)


def test_waves_figure_draws_busy_and_idle_slots():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gemm_lab.viz.waves import waves_figure

    fig = waves_figure(4096, 4096, 128, 128, 132)
    img = fig.axes[0].images[0].get_array()
    assert img.shape == (132, 8)
    assert int(img.sum()) == 1024  # one busy cell per tile
    assert int(img[:, -1].sum()) == 100  # the last wave's busy slots
    assert "8" in fig.axes[0].get_title()
    plt.close(fig)
