"""gemm_lab.calc.softmax against seed week 6 §4."""

import pytest

from gemm_lab.calc.devices import VIRTUAL_DEVICE_FP32
from gemm_lab.calc.softmax import block_offsets, effective_gbps, naive_softmax_passes, softmax_traffic


def test_block_offsets_n10_b4():
    df = block_offsets(10, 4)
    assert len(df) == 3  # grid = cdiv(10, 4)
    assert list(df["pid"]) == [0, 1, 2]
    assert df["offsets"][2] == [8, 9, 10, 11]
    assert df["mask"][2] == [True, True, False, False]
    assert df["mask"][0] == df["mask"][1] == [True] * 4


def test_traffic_4096x1024_fp32():
    t = softmax_traffic(4096, 1024)
    M, N = 4096, 1024
    assert 4 * M * N == 16_777_216  # one matrix, the seed's 16.78 MB
    assert t.naive_elems == 8 * M * N + 4 * M == 33_570_816
    assert t.naive_elems_approx == 8 * M * N == 33_554_432
    assert t.fused_elems == 2 * M * N == 8_388_608
    assert (t.naive_bytes, t.naive_bytes_approx, t.fused_bytes) == (134_283_264, 134_217_728, 33_554_432)
    assert t.row_bytes == 4096  # 4 KiB
    assert VIRTUAL_DEVICE_FP32.bandwidth_gbs == 1000.0 and VIRTUAL_DEVICE_FP32.fp32_tflops == 20.0
    assert t.naive_ms == pytest.approx(0.134283264)
    assert t.fused_ms == pytest.approx(0.033554432)
    assert t.naive_ms_approx == pytest.approx(0.134217728)
    assert t.speedup == pytest.approx(4 + 2 / N) and f"{t.speedup:.4f}" == "4.0020"
    assert t.speedup_approx == pytest.approx(4.0)


def test_five_passes():
    M, N = 4096, 1024
    df = naive_softmax_passes(M, N)
    assert list(df["step"]) == [1, 2, 3, 4, 5]
    assert list(df["reads"]) == [M * N, M * N + M, M * N, M * N, M * N + M]
    assert list(df["writes"]) == [M, M * N, M * N, M, M * N]
    assert df["reads"].sum() == 5 * M * N + 2 * M
    assert df["writes"].sum() == 3 * M * N + 2 * M
    assert df["reads"].sum() + df["writes"].sum() == softmax_traffic(M, N).naive_elems
    assert (df["read_bytes"] == 4 * df["reads"]).all()


def test_effective_gbps():
    t = softmax_traffic(4096, 1024)
    # the fused kernel at its memory-bound time reaches exactly the device's bandwidth
    assert effective_gbps(4096, 1024, t.fused_ms) == pytest.approx(1000.0)
    assert effective_gbps(4096, 1024, 1.0) == pytest.approx(2 * 4096 * 1024 * 4 / 1e6)


def test_bad_inputs():
    with pytest.raises(ValueError):
        block_offsets(10, 0)
    with pytest.raises(ValueError):
        softmax_traffic(0, 1024)
    with pytest.raises(TypeError):
        softmax_traffic(4096, 1024, device="virtual")
    with pytest.raises(ValueError):
        effective_gbps(4096, 1024, 0.0)
    with pytest.raises(ValueError):
        softmax_traffic(4096, 1024.0)
