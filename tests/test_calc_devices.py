"""gemm_lab.calc.devices: the device table and its agreement with the facts."""

import pytest

from gemm_lab.calc.devices import DEVICES, VIRTUAL_DEVICE, devices_table, get_device
from gemm_lab.calc.occupancy import SM_LIMITS


def test_h200_matches_facts():
    h = DEVICES["h200"]
    assert (h.arch, h.sms, h.smem_per_block_optin, h.l2_bytes) == ("sm_90", 132, 232448, 60 * 1024 * 1024)


def test_virtual_device():
    assert (VIRTUAL_DEVICE.fp16_tflops, VIRTUAL_DEVICE.bandwidth_gbs) == (80.0, 1000.0)
    assert VIRTUAL_DEVICE.ridge_intensity == 80.0


def test_students_gpus_present_and_sourced():
    for key in ("colab-t4", "kaggle-t4", "kaggle-p100", "a100", "h100", "h200", "rtx5090", "virtual"):
        d = DEVICES[key]
        assert d.source, key
        if d.arch is not None:
            assert d.source.startswith("http"), key
    assert DEVICES["colab-t4"].smem_per_block_optin == 65536  # 64 KiB on a T4
    assert DEVICES["rtx5090"].sms == 170


def test_consistent_with_sm_limits():
    for d in DEVICES.values():
        if d.arch in SM_LIMITS:
            assert d.smem_per_block_optin == SM_LIMITS[d.arch].smem_per_block_optin, d.name
            assert d.regs_per_sm == SM_LIMITS[d.arch].regs_per_sm


def test_lookup_and_table():
    assert get_device("H200") is DEVICES["h200"]
    assert get_device("Colab T4") is DEVICES["colab-t4"]
    assert get_device("tesla t4 (kaggle)") is DEVICES["kaggle-t4"]
    df = devices_table()
    assert list(df.index) == list(DEVICES)
    assert {"arch", "sms", "smem_per_block_optin", "regs_per_sm", "l2_bytes", "fp16_tflops", "bandwidth_gbs",
            "source"} <= set(df.columns)
    with pytest.raises(ValueError, match="unknown device"):
        get_device("B200")
    with pytest.raises(TypeError):
        get_device(None)
