"""gemm_lab.bench.autotune on the CPU: the rows it writes (from fake measurements) are what
gemm_lab.results_autotune reads back, the fresh Triton state it builds is fresh, and both parts refuse
clearly without a GPU. (The measurements themselves: `python -m gemm_lab.bench --only autotune t4limit`.)"""

from __future__ import annotations

import math
import os

import pandas as pd
import pytest

from gemm_lab import runtime  # before triton: decides TRITON_INTERPRET

# isort: split
import triton

from gemm_lab import bench, calc
from gemm_lab.bench import autotune as ba
from gemm_lab.results_autotune import (
    AUTOTUNE_COST_COLUMNS,
    T4_LIMIT_COLUMNS,
    measured_autotune_case,
    measured_t4_limit,
    t4_limit_csv_name,
)

ENV = {"gpu": "NVIDIA H200", "compute_capability": "9.0", "torch": "2.11.0+cu130", "triton": "3.6.0",
       "date": "2026-12-03"}


def fake_run(cache="cold", tuning_ms=3000.0, tuned_ms=0.2):
    return ba.AutotuneRun(cache, 13, ba.tile_name(ba.FIXED), 0.7, "128x256x64 s3 w8 G8", tuned_ms, tuning_ms, 2e-4)


def test_the_fixed_config_is_the_seeds():
    assert ba.tile_name(ba.FIXED) == "64x32x32 s5 w2 G8"
    assert ba.tile_name(ba.OVERSIZED) == "256x256x64 s4 w8 G8"
    assert [ba.tile_name(c) for c in ba.t4_limit_configs()[:3]] == [ba.tile_name(c) for c in calc.SEED_CONFIGS]
    cfg = ba.triton_configs([ba.tile_dict(ba.OVERSIZED)])[0]
    assert (cfg.num_stages, cfg.num_warps, ba.config_name(cfg)) == (4, 8, "256x256x64 s4 w8 G8")


def only_results_in(folder, monkeypatch):
    """Search nothing but ``folder``: neither the package data nor the clone's committed results/."""
    from gemm_lab import results

    monkeypatch.setenv("GEMM_LAB_RESULTS", str(folder))
    monkeypatch.setattr(results, "PACKAGED", folder / "no-packaged-results")
    monkeypatch.setattr(results, "CLONE", folder / "no-clone-results")


def test_autotune_rows_round_trip(tmp_path, monkeypatch):
    only_results_in(tmp_path, monkeypatch)
    path = str(tmp_path / "autotune_cost.csv")
    assert measured_autotune_case() is None
    ba.write_rows(path, [ba.autotune_cost_row(ENV, 4096, 4096, 4096, fake_run("cold", 3000.0)),
                         ba.autotune_cost_row(ENV, 4096, 4096, 4096, fake_run("warm", 900.0))],
                  AUTOTUNE_COST_COLUMNS, append=True)
    ba.write_rows(path, [ba.autotune_cost_row(dict(ENV, date="2026-12-04"), 4096, 4096, 4096,
                                              fake_run("cold", 2500.0))], AUTOTUNE_COST_COLUMNS, append=True)
    df = pd.read_csv(path)
    assert list(df.columns) == list(AUTOTUNE_COST_COLUMNS) and len(df) == 3
    assert list(df.compile_cache) == ["cold", "warm", "cold"]
    cold, warm = measured_autotune_case(), measured_autotune_case(compile_cache="warm")
    assert (cold.tuned.tuning_ms, warm.tuned.tuning_ms) == (2500.0, 900.0)
    assert cold.source.startswith("results/autotune_cost.csv (NVIDIA H200, triton 3.6.0, 2026-12-04")
    assert cold.fixed.label == "fixed 64x32x32 s5 w2 G8" and "13 configs" in cold.tuned.label
    assert calc.exercise3_answers(cold).break_even == calc.break_even_calls(0.7, 0.2, 2500.0)


def test_autotune_row_refuses_bad_measurements():
    with pytest.raises(ValueError, match="compile_cache"):
        ba.autotune_cost_row(ENV, 4096, 4096, 4096, fake_run("lukewarm"))
    with pytest.raises(ValueError, match="tuning_ms"):
        ba.autotune_cost_row(ENV, 4096, 4096, 4096, fake_run(tuning_ms=-1.0))
    with pytest.raises(ValueError, match="tuned_ms"):
        ba.autotune_cost_row(ENV, 4096, 4096, 4096, fake_run(tuned_ms=math.nan))
    with pytest.raises(ValueError, match="env lacks"):
        ba.autotune_cost_row({"gpu": "X"}, 4096, 4096, 4096, fake_run())
    with pytest.raises(TypeError, match="AutotuneRun"):
        ba.autotune_cost_row(ENV, 4096, 4096, 4096, {"tuned_ms": 0.2})
    with pytest.raises(ValueError):
        ba.autotune_cost_row(ENV, 0, 4096, 4096, fake_run())


def fake_t4_rows():
    """What the part writes on an H200: sm_90 builds, so metadata.shared = the textbook bytes there
    (calc.compiler_smem's sm_90 rule); candidates 1-2 run, candidate 3 and 256x256x64 are dropped."""
    limit = calc.get_device("colab-t4").smem_per_block_optin
    rows = []
    for cfg in ba.t4_limit_configs():
        shared = calc.compiler_smem(cfg, "sm_90")
        fits = calc.fits(shared, limit)
        outcome = ba.LimitOutcome(
            cfg, shared, "ran" if fits else "OutOfResources",
            "" if fits else f"OutOfResources: out of resource: shared memory, Required: {shared}, Hardware limit: {limit}.",
            1e-4 if fits else math.nan, 0.3 if fits else math.inf, cfg is calc.SEED_CONFIGS[1])
        rows.append(ba.t4_limit_row(ENV, 4096, 4096, 4096, outcome, emulated_device="colab-t4", emulated_limit=limit,
                                    real_limit=calc.get_device("h200").smem_per_block_optin, launched_arch="sm_90",
                                    sm75_shared=calc.compiler_smem(cfg, "sm_75")))
    return rows


def test_t4_limit_rows_round_trip(tmp_path, monkeypatch):
    only_results_in(tmp_path, monkeypatch)
    assert measured_t4_limit() is None
    name = t4_limit_csv_name(ENV["gpu"])
    assert name == "t4_limit_h200.csv"
    ba.write_rows(str(tmp_path / name), fake_t4_rows(), T4_LIMIT_COLUMNS)
    df = measured_t4_limit()
    assert list(df.columns) == list(T4_LIMIT_COLUMNS) and len(df) == 4
    by = df.set_index("config")
    assert list(by.direct) == ["ran", "ran", "OutOfResources", "OutOfResources"]
    assert list(by.sm75_verdict) == ["fits"] * 4  # the T4's own build: one buffer, at most 64 KiB
    assert list(by.textbook_verdict) == ["fits", "fits", "OutOfResources", "OutOfResources"]
    assert by.loc["128x256x64 s3 w8 G8", "textbook_shared"] == calc.textbook_smem(calc.SEED_CONFIGS[2])
    assert math.isinf(by.loc["256x256x64 s4 w8 G8", "autotune_ms"]) and by.autotune_chosen.dtype == bool
    assert list(by.index[by.autotune_chosen]) == ["128x128x32 s4 w4 G8"]
    assert by.loc["64x32x32 s5 w2 G8", "direct_error"] == ""
    (tmp_path / "bad.csv").write_text("gpu,config\nX,Y\n")
    with pytest.raises(ValueError, match="emulated_limit"):
        measured_t4_limit("bad.csv")


@pytest.mark.parametrize("gpu, name", [
    ("NVIDIA H200", "t4_limit_h200.csv"), ("NVIDIA H100 80GB HBM3", "t4_limit_h100.csv"),
    ("NVIDIA A100-SXM4-80GB", "t4_limit_a100.csv"), ("Tesla T4", "t4_limit_t4.csv"),
    ("NVIDIA GeForce RTX 4090", "t4_limit_nvidia_geforce_rtx_4090.csv"), ("", "t4_limit_gpu.csv")])
def test_t4_limit_file_name(gpu, name):
    assert t4_limit_csv_name(gpu) == name


def test_triton_cache_dir_is_set_and_restored(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", "/somewhere/else")
    with ba.triton_cache_dir(str(tmp_path)):
        assert os.environ["TRITON_CACHE_DIR"] == str(tmp_path)
        if hasattr(triton, "knobs"):
            assert triton.knobs.cache.dir == str(tmp_path)
    assert os.environ["TRITON_CACHE_DIR"] == "/somewhere/else"
    if hasattr(triton, "knobs"):
        assert "dir" not in vars(triton.knobs.cache) and triton.knobs.cache.dir == "/somewhere/else"
    monkeypatch.delenv("TRITON_CACHE_DIR")
    with ba.triton_cache_dir(str(tmp_path)):
        assert os.environ["TRITON_CACHE_DIR"] == str(tmp_path)
    assert "TRITON_CACHE_DIR" not in os.environ


def test_fresh_autotuner_starts_empty_without_its_disk_cache(monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_AUTOTUNING", "1")  # would turn the autotuner's result cache on
    candidates = ba.triton_configs([ba.tile_dict(c) for c in ba.t4_limit_configs()])
    first, second = ba.fresh_autotuner(candidates), ba.fresh_autotuner(candidates)
    assert first.cache == {} and first.cache_results is False and first.configs == candidates
    assert first.fn is not second.fn  # a new JITFunction (or interpreter wrapper) every time
    assert first.fn.fn is ba.matmul_kernel.fn  # ... of the same Tutorial-03 kernel
    if hasattr(triton, "knobs"):
        assert "cache" not in vars(triton.knobs.autotuning)


@pytest.mark.skipif(runtime.on_gpu(), reason="CPU behaviour")
def test_parts_refuse_without_a_gpu(tmp_path, capsys):
    for part in ba.PARTS:
        with pytest.raises(RuntimeError, match=f"the '{part}' bench part needs a CUDA GPU"):
            ba.run_part(part, str(tmp_path))
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        ba.measure_autotune_cost()
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        ba.measure_t4_limit()
    assert not list(tmp_path.iterdir())
    with pytest.raises(ValueError, match="part must be one of"):
        ba.run_part("sweep", str(tmp_path))
    assert set(ba.PARTS) <= set(bench.PARTS)
    assert bench.main(["--out", str(tmp_path), "--only", "autotune", "t4limit"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err
