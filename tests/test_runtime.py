"""gemm_lab.runtime: interpreter decision before triton loads, describe(), check_environment()."""

import os
import subprocess
import sys
import types

import pytest
import torch

from gemm_lab import runtime


def _run(code: str, env_update: dict) -> subprocess.CompletedProcess:
    env = {k: val for k, val in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(env_update)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CPU-only behaviour")
def test_interpreter_chosen_without_gpu():
    assert runtime.INTERPRET is True
    assert os.environ["TRITON_INTERPRET"] == "1"
    assert runtime.on_gpu() is False
    assert runtime.device() == "cpu"
    assert runtime.num_sms() is None and runtime.capability() is None


@pytest.mark.skipif(torch.cuda.is_available(), reason="CPU-only behaviour")
def test_decision_is_made_before_triton_and_announced_once():
    code = (
        "import sys\n"
        "import gemm_lab.runtime as r\n"
        "assert 'triton' not in sys.modules, 'runtime must not import triton'\n"
        "import gemm_lab.kernels, gemm_lab.runtime\n"
        "import os; print('ENV', os.environ['TRITON_INTERPRET'], r.INTERPRET)\n"
        "print('KIND', type(gemm_lab.kernels.matmul_kernel).__name__)\n"
    )
    proc = _run(code, {})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("TRITON_INTERPRET=1") == 1
    assert "ENV 1 True" in proc.stdout
    assert "KIND InterpretedFunction" in proc.stdout


def test_explicit_environment_wins():
    proc = _run("import gemm_lab.runtime as r; print('I', r.INTERPRET, r._REASON)", {"TRITON_INTERPRET": "0"})
    assert proc.returncode == 0, proc.stderr
    assert "I False TRITON_INTERPRET=0 set by the caller" in proc.stdout
    assert "CPU interpreter" not in proc.stdout


def test_describe_keys_and_versions():
    info = runtime.describe()
    for key in ("mode", "where", "device_name", "compute_capability", "arch", "sms", "smem_per_block_optin",
                "l2_bytes", "torch", "triton", "python", "warnings"):
        assert key in info
    import triton

    assert info["torch"] == torch.__version__
    assert info["triton"] == triton.__version__
    assert info["mode"] == ("gpu" if runtime.on_gpu() else "interpreter")


def test_where_detects_colab_and_kaggle(monkeypatch):
    for var in ("COLAB_RELEASE_TAG", "COLAB_GPU", "KAGGLE_KERNEL_RUN_TYPE", "KAGGLE_URL_BASE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    assert runtime.where() == "local"
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    assert runtime.where() == "kaggle"
    monkeypatch.delenv("KAGGLE_KERNEL_RUN_TYPE")
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-2026")
    assert runtime.where() == "colab"


def _fake_gpu(monkeypatch, major, minor, name):
    props = types.SimpleNamespace(name=name, major=major, minor=minor, multi_processor_count=40,
                                  shared_memory_per_block_optin=65536, L2_cache_size=4 << 20,
                                  total_memory=16 << 30)
    monkeypatch.setattr(runtime, "_cuda_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: props)


def test_check_environment_warns_on_sm75(monkeypatch, capsys):
    _fake_gpu(monkeypatch, 7, 5, "Tesla T4")
    with pytest.warns(RuntimeWarning, match="sm_75"):
        info = runtime.check_environment()
    out = capsys.readouterr().out
    assert info["arch"] == "sm_75" and info["sms"] == 40 and info["smem_per_block_optin"] == 65536
    assert "Tesla T4" in out and "WARNING" in out and "FMA" in out
    assert "64 KiB" in out


def test_check_environment_no_warning_on_sm90(monkeypatch, capsys):
    _fake_gpu(monkeypatch, 9, 0, "NVIDIA H200")
    info = runtime.check_environment()
    assert info["warnings"] == []
    assert "sm_90" in capsys.readouterr().out


def test_check_environment_prints_summary(capsys):
    info = runtime.check_environment()
    out = capsys.readouterr().out
    assert f"triton {info['triton']}" in out and f"torch {info['torch']}" in out
