"""gemm_lab.calc.roofline against every cell of seed week 7 §5.2 (and the §7.1 script)."""

import pytest

from gemm_lab.calc.devices import DEVICES, VIRTUAL_DEVICE, VIRTUAL_DEVICE_FP32
from gemm_lab.calc.roofline import BLOG_CONFIG, SEED_CONFIGS, TileConfig, roofline, roofline_table

EXPECTED = {  # seed §5.2, column by column
    "grid": (8192, 1024, 512),
    "k_steps": (128, 128, 64),
    "stage_bytes": (6144, 16384, 49152),
    "pipeline_bytes": (30720, 65536, 147456),
    "acc_bytes": (8192, 65536, 131072),
    "threads": (64, 128, 256),
    "acc_per_thread": (32, 128, 128),
    "q_read": (6442450944, 2147483648, 1610612736),
    "q_write": (33554432, 33554432, 33554432),
    "q_total": (6476005376, 2181038080, 1644167168),
    "flops": (137438953472,) * 3,
    "bound": ("memory", "memory", "compute"),
}
EXPECTED_4DP = {  # printed to 4 decimals
    "intensity": ("21.2228", "63.0154", "83.5918"),
    "roof_tflops": ("21.2228", "63.0154", "80.0000"),
    "t_memory_ms": ("6.4760", "2.1810", "1.6442"),
    "t_ideal_ms": ("6.4760", "2.1810", "1.7180"),
    "t_compute_ms": ("1.7180",) * 3,
}


@pytest.mark.parametrize("i", range(3))
def test_seed_table_every_cell(i):
    row = roofline(4096, 4096, 4096, SEED_CONFIGS[i])
    for field, values in EXPECTED.items():
        assert getattr(row, field) == values[i], field
    for field, values in EXPECTED_4DP.items():
        assert f"{getattr(row, field):.4f}" == values[i], field
    assert row.name == SEED_CONFIGS[i].name


def test_seed_kib_and_gb_labels():
    rows = [roofline(4096, 4096, 4096, c) for c in SEED_CONFIGS]
    assert [r.stage_bytes // 1024 for r in rows] == [6, 16, 48]
    assert [r.pipeline_bytes // 1024 for r in rows] == [30, 64, 144]
    assert [r.acc_bytes // 1024 for r in rows] == [8, 64, 128]
    assert [f"{r.q_total / 1e9:.3f}" for r in rows] == ["6.476", "2.181", "1.644"]


def test_q_read_closed_form_when_tiles_divide():
    M = N = K = 4096
    for c in SEED_CONFIGS:
        r = roofline(M, N, K, c)
        assert r.q_read == 2 * M * N * K * (c.BLOCK_M + c.BLOCK_N) // (c.BLOCK_M * c.BLOCK_N)


def test_package_level_roofline_is_callable():
    from gemm_lab import calc

    assert calc.roofline(4096, 4096, 4096, SEED_CONFIGS[1]) == roofline(4096, 4096, 4096, SEED_CONFIGS[1])
    assert calc.roofline.roofline_table is roofline_table


def test_table():
    df = roofline_table(4096, 4096, 4096, SEED_CONFIGS)
    assert list(df.index) == ["후보 1", "후보 2", "후보 3"]
    assert list(df["grid"]) == [8192, 1024, 512]
    assert list(df["bound"]) == ["memory", "memory", "compute"]


def test_non_divisible_counts_whole_tiles():
    r = roofline(500, 600, 300, TileConfig(128, 128, 64, 3, 4))
    assert (r.grid, r.k_steps) == (20, 5)
    assert r.q_read == 20 * 5 * 2 * (128 * 64 + 64 * 128)
    assert r.q_write == 2 * 500 * 600
    assert r.flops == 2 * 500 * 600 * 300


def test_real_device_and_ridge():
    h200 = DEVICES["h200"]
    r = roofline(4096, 4096, 4096, BLOG_CONFIG, h200)
    # I = 2MNK / (2MNK(1/64 + 1/128) + 2MN) ≈ 84.6 < ridge 989.4 / 4.8 ≈ 206: memory-bound without L2 reuse
    assert h200.ridge_intensity == pytest.approx(989.4 / 4.8)
    assert r.intensity == pytest.approx(2 * 4096 / (2 * 4096 * (1 / 64 + 1 / 128) + 2))
    assert r.bound == "memory" and r.roof_tflops < h200.fp16_tflops
    assert VIRTUAL_DEVICE.ridge_intensity == 80.0


def test_bad_inputs():
    with pytest.raises(TypeError):
        roofline(4096, 4096, 4096, (64, 32, 32, 5, 2))
    with pytest.raises(ValueError):
        roofline(0, 4096, 4096, SEED_CONFIGS[0])
    with pytest.raises(ValueError, match="fp16_tflops"):
        roofline(64, 64, 64, SEED_CONFIGS[0], VIRTUAL_DEVICE_FP32)
    with pytest.raises(ValueError, match="power of two"):
        TileConfig(96, 32, 32, 3, 4)
    with pytest.raises(ValueError, match="num_warps"):
        TileConfig(64, 32, 32, 3, 3)
    with pytest.raises(ValueError):
        TileConfig(64, 32, 32, 0, 4)
    with pytest.raises(ValueError):
        roofline_table(64, 64, 64, [])
