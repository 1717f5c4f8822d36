"""gemm_lab.calc.autotune against seed week 7 exercise 3 (§9.3), and the measured case read from results/."""

import pytest

from gemm_lab.calc.autotune import (
    SEED_EXERCISE3,
    break_even_calls,
    exercise3_answers,
    exercise3_table,
    speedup,
    tflops,
    total_time_ms,
)


def test_tflops_formula():
    assert tflops(4096, 4096, 4096, 1.0) == pytest.approx(137.438953472)
    assert f"{tflops(4096, 4096, 4096, 1.6):.4f}" == "85.8993"
    assert f"{tflops(4096, 4096, 4096, 0.6872):.4f}" == "199.9985"
    assert f"{tflops(4096, 4096, 4096, 0.7):.4f}" == "196.3414"
    assert f"{tflops(4096, 4096, 4096, 1.6):.2f}" == "85.90"
    assert f"{tflops(4096, 4096, 4096, 0.6872):.2f}" == "200.00"


def test_exercise3_answers():
    a = exercise3_answers()
    assert [f"{x:.4f}" for x in (a.tflops_fixed, a.tflops_tuned, a.tflops_cublas)] == ["85.8993", "199.9985", "196.3414"]
    assert f"{a.speedup_vs_fixed:.4f}" == "2.3283" and f"{a.speedup_vs_fixed:.2f}" == "2.33"
    assert f"{a.speedup_vs_cublas:.4f}" == "1.0186" and f"{a.speedup_vs_cublas:.2f}" == "1.02"
    assert a.one_call_fixed_ms == pytest.approx(1.6)
    assert f"{a.one_call_tuned_ms:.4f}" == "900.6872"
    assert f"{a.many_calls_fixed_ms:.1f}" == "1600.0"
    assert f"{a.many_calls_tuned_ms:.1f}" == "1587.2"
    assert a.break_even == 986


def test_break_even_is_the_smallest_n():
    n = break_even_calls(1.6, 0.6872, 900.0)
    assert total_time_ms(n, 0.6872, 900.0) <= total_time_ms(n, 1.6)
    assert total_time_ms(n - 1, 0.6872, 900.0) > total_time_ms(n - 1, 1.6)
    assert f"{900 / (1.6 - 0.6872):.2f}" == "985.98"


def test_break_even_exact_ratio_not_rounded_up():
    assert break_even_calls(1.3, 0.3, 10.0) == 10  # 10 / 1.0 exactly
    assert break_even_calls(0.3, 0.1, 0.6) == 3  # 0.6 / 0.2 = 3 (binary floats would give 3.0000000000000004)


def test_no_typed_in_gpu_measurement():
    """The real GPU's autotune cost comes from results/autotune_cost.csv only."""
    import gemm_lab.calc as calc
    from gemm_lab.calc import autotune

    assert not hasattr(calc, "FACTS_H200_AUTOTUNE") and not hasattr(autotune, "FACTS_H200_AUTOTUNE")
    assert [n for n in vars(autotune) if isinstance(getattr(autotune, n), autotune.AutotuneCase)] == ["SEED_EXERCISE3"]


def test_table():
    df = exercise3_table()
    assert list(df.index) == ["fixed", "tuned", "cublas"]
    assert [f"{x:.4f}" for x in df["tflops"]] == ["85.8993", "199.9985", "196.3414"]
    assert [f"{x:.4f}" for x in df["tuned_speedup"]] == ["2.3283", "1.0000", "1.0186"]
    assert [f"{x:.1f}" for x in df["n_calls_ms"]] == ["1600.0", "1587.2", "700.0"]
    assert SEED_EXERCISE3.tuned.tuning_ms == 900.0


def test_bad_inputs():
    with pytest.raises(ValueError, match="never pays back"):
        break_even_calls(0.5, 0.6, 100.0)
    # a slower tuned kernel never breaks even, even when tuning is free
    with pytest.raises(ValueError, match="tuned_ms.*never pays back"):
        break_even_calls(0.5, 0.6, 0.0)
    with pytest.raises(ValueError, match="tuned_ms"):
        break_even_calls(1.0, 2.0, 0.0)
    assert break_even_calls(1.0, 1.0, 0.0) == 1  # equal kernels, free tuning: even at the first call
    with pytest.raises(ValueError, match="never pays back"):
        break_even_calls(1.0, 1.0, 0.001)
    with pytest.raises(ValueError):
        tflops(4096, 4096, 4096, 0.0)
    with pytest.raises(TypeError):
        tflops(4096, 4096, 4096, "1.6")
    with pytest.raises(ValueError):
        speedup(-1.0, 1.0)
    with pytest.raises(ValueError):
        total_time_ms(-1, 1.0)
    with pytest.raises(ValueError):
        total_time_ms(10, 1.0, -5.0)
    with pytest.raises(ValueError):
        tflops(4096, 4096, 4096, float("nan"))
    with pytest.raises(TypeError):
        exercise3_answers("seed")


def test_measured_autotune_case_reads_results_csv(tmp_path, monkeypatch):
    from gemm_lab.results_autotune import measured_autotune_case

    monkeypatch.setenv("GEMM_LAB_RESULTS", str(tmp_path))
    head = "gpu,triton,date,M,N,K,compile_cache,n_configs,fixed_config,fixed_ms,tuned_config,tuned_ms,tuning_ms\n"
    (tmp_path / "autotune_cost.csv").write_text(
        head
        + "GPU X,3.6.0,2026-12-01,4096,4096,4096,cold,13,64x32x32 s5 w2,0.8,128x256x64 s3 w8,0.3,1000.0\n"
        + "GPU X,3.6.0,2026-12-02,4096,4096,4096,cold,13,64x32x32 s5 w2,0.7,128x256x64 s3 w8,0.2,2500.0\n"
        + "GPU X,3.6.0,2026-12-02,4096,4096,4096,warm,13,64x32x32 s5 w2,0.7,128x256x64 s3 w8,0.2,500.0\n")
    case = measured_autotune_case()  # the latest cold row
    assert (case.fixed.kernel_ms, case.tuned.kernel_ms, case.tuned.tuning_ms) == (0.7, 0.2, 2500.0)
    assert case.source.startswith("results/autotune_cost.csv (GPU X, triton 3.6.0, 2026-12-02")
    assert "compile cache cold" in case.source and "13 configs" in case.tuned.label
    assert exercise3_answers(case).break_even == break_even_calls(0.7, 0.2, 2500.0) == 5000
    assert measured_autotune_case(compile_cache="warm").tuned.tuning_ms == 500.0
    assert measured_autotune_case(compile_cache=None).tuned.tuning_ms == 500.0  # the last row of the shape
    assert measured_autotune_case(1024, 1024, 1024) is None  # shape not measured
    with pytest.raises(ValueError, match="compile_cache"):
        measured_autotune_case(compile_cache="hot")
    (tmp_path / "bad.csv").write_text("gpu,M,N,K\nGPU X,1,1,1\n")
    with pytest.raises(ValueError, match="tuning_ms"):
        measured_autotune_case(name="bad.csv")
    (tmp_path / "old.csv").write_text(head.replace("compile_cache,", "").replace("n_configs,", "")
                                      + "GPU X,3.6.0,2026-12-01,4096,4096,4096,a,0.8,b,0.3,1000.0\n")
    with pytest.raises(ValueError, match="compile_cache"):
        measured_autotune_case(name="old.csv")
    assert measured_autotune_case(name="absent.csv") is None


def test_oor_statements_match_the_installed_triton():
    """Exercise 2.3 (first half): the statements' truth values follow Triton's own code."""
    import inspect

    from triton.compiler.compiler import CompiledKernel
    from triton.runtime.autotuner import Autotuner

    from gemm_lab import calc
    from gemm_lab.calc.autotune import OOR_STATEMENTS, oor_true_statements

    assert oor_true_statements() == {2, 3} == calc.oor_true_statements()
    assert len(OOR_STATEMENTS) == 5 and all(isinstance(t, str) and t for t, _ in OOR_STATEMENTS)
    init = inspect.getsource(CompiledKernel._init_handles)
    # 2: the check is made when the compiled kernel is loaded, against the device's limit
    assert "OutOfResources" in init and "metadata.shared >" in init
    bench = inspect.getsource(Autotuner._bench)
    # 3: the autotuner catches it and records inf; 4: it does not retry with fewer stages
    assert "OutOfResources" in bench and "inf" in bench
    assert "num_stages" not in bench
    # 5: a key already in the cache is not benchmarked again
    assert "not in self.cache" in inspect.getsource(Autotuner.run)
