"""gemm_lab.bench on the CPU: units, the kernel menu's correctness (interpreter), the plot, the CLI's
refusal without a GPU. (The timings themselves run only on a GPU: scripts/gpu_check.py, make bench.)"""

import math

import pandas as pd
import pytest
import torch

from gemm_lab import bench, runtime
from gemm_lab import kernels as K


def test_units():
    assert bench.tflops(4096, 4096, 4096, 1.0) == pytest.approx(137.438953472)
    assert bench.tflops(500, 600, 300, 0.0195) == pytest.approx(2 * 500 * 600 * 300 / 0.0195e-3 / 1e12)
    assert bench.gbps(2e9, 1.0) == pytest.approx(2000.0)


def test_env_info_columns():
    info = bench.env_info()
    assert set(info) == {"gpu", "compute_capability", "torch", "triton", "date"}
    assert info["torch"] == torch.__version__ and len(info["date"]) == 10


@pytest.mark.skipif(runtime.on_gpu(), reason="CPU behaviour")
def test_timing_refused_without_gpu(capsys):
    with pytest.raises(RuntimeError, match="GPU"):
        bench.do_bench_ms(lambda: None)
    assert bench.main(["--out", "/tmp/never-written"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


def test_menu_kernels_compute_the_product():
    a = torch.randn(70, 40, device=runtime.device()).half()
    b = torch.randn(40, 50, device=runtime.device()).half()
    ref = K.reference_matmul(a, b)
    names = set()
    for kernel, config, fn in bench.matmul_menu():
        out = torch.full((70, 50), float("nan"), dtype=torch.float16, device=a.device)
        fn(a, b, out)
        K.assert_close(out, ref, name=f"{kernel} {config}")
        names.add(kernel)
    assert {"tutorial03", "autotuned", "blog_tiled", "persistent_naive_x1", "persistent_grouped",
            "persistent_tma", "best_matmul"} <= names


def test_tma_name():
    name = bench.tma_name(dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_stages=3, num_warps=8,
                               epilogue_subtile=True, flatten=False, warp_specialize=True))
    assert name == "128x256x64 s3 w8 G8 subtile ws"


def _synthetic_sweep() -> list[dict]:
    """Rows shaped like a sweep's, only to exercise the plotting code (no number here is a measurement)."""
    rows = []
    for kernel in ("torch.matmul", "autotuned"):
        for s in (512, 1024):
            rows.append(dict(gpu="TestGPU", compute_capability="0.0", torch="t", triton="x", date="2026-01-01",
                             M=s, N=s, K=s, dtype="fp16", kernel=kernel, config="c", ms=1.0,
                             tflops=bench.tflops(s, s, s, 1.0), ratio_to_torch=1.0, graph_ms=0.5,
                             graph_tflops=bench.tflops(s, s, s, 0.5)))
    return rows


def test_plot_sweep_writes_png(tmp_path):
    rows = _synthetic_sweep()
    path = bench.plot_sweep(pd.DataFrame(rows).drop(columns=["graph_ms", "graph_tflops"]), str(tmp_path / "m.png"))
    with open(path, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert not math.isnan(rows[0]["tflops"])


def test_plot_sweep_draws_the_graph_panel(tmp_path):
    # with graph_tflops the figure gets a second panel
    df = pd.DataFrame(_synthetic_sweep())
    one = bench.plot_sweep(df.drop(columns=["graph_ms", "graph_tflops"]), str(tmp_path / "one.png"))
    two = bench.plot_sweep(df, str(tmp_path / "two.png"))
    from matplotlib.image import imread

    assert imread(two).shape[1] > 1.5 * imread(one).shape[1]


def test_sweep_measures_jobs_in_order_and_rewrites_the_csv(tmp_path, monkeypatch):
    # bench_shape replaced by synthetic rows: checks sweep's bookkeeping, not a measurement
    written = []

    def fake_shape(M, N, Kd, dtype, menu, warmup, rep, graph):
        return [dict(r, M=M, N=N, K=Kd, dtype=dtype) for r in _synthetic_sweep() if r["M"] == 512]

    def fake_plot(df, path):
        written.append(len(pd.read_csv(tmp_path / "m.csv")))
        return path

    from gemm_lab.bench import matmul_sweep as sweep_mod

    monkeypatch.setattr(sweep_mod, "bench_shape", fake_shape)
    monkeypatch.setattr(sweep_mod, "plot_sweep", fake_plot)
    jobs = [((64, 64, 64), "fp16"), ((32, 48, 16), "fp16"), ((64, 64, 64), "bf16")]
    df = bench.sweep(jobs=jobs, csv_path=str(tmp_path / "m.csv"), png_path=str(tmp_path / "m.png"), log=False)
    assert written == [2, 4, 6]  # the CSV holds every shape measured so far when the plot is drawn
    assert list(zip(df.M[::2], df.dtype[::2], strict=True)) == [(64, "fp16"), (32, "fp16"), (64, "bf16")]
    assert list(df.columns) == [c for c in bench.SWEEP_COLUMNS if c in df.columns]
    assert "ratio_to_torch" in df.columns and "graph_tflops" in df.columns


def test_results_readme_tables_are_current():
    """results/README.md's Results section is exactly what scripts/results_tables.py makes of the
    committed CSVs (run `python scripts/results_tables.py` after adding measurements)."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("results_tables", root / "scripts" / "results_tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    readme = (root / "results" / "README.md").read_text()
    generated = mod.section(str(root / "results"))
    assert generated.strip() in readme
    assert "### Issue 3's targets" in generated and "### Main sweep" in generated


def test_bench_shape_ratio_uses_the_median_torch_time(monkeypatch):
    """bench_shape's bookkeeping with scripted timings (no measurement): the ratio divides the median of all
    torch.matmul times of the shape (not the neighbouring one), the graph columns likewise; kernels really run
    (interpreter) so rel_err is real."""
    torch_times = iter([1.0, 1.2, 5.0])  # first, neighbour of k1, neighbour of k2 (an outlier)
    torch_graph = iter([0.9, 0.95, 0.9])
    kernel_graph = iter([0.5, 0.45])

    def fake_do_bench(fn, warmup=0, rep=0):
        fn()
        return next(torch_times) if "torch" in fn.__code__.co_names else 0.5  # torch.matmul's lambda vs a kernel's

    from gemm_lab.bench import measure

    monkeypatch.setattr(measure, "require_gpu", lambda: None)
    monkeypatch.setattr(measure, "do_bench_ms", fake_do_bench)
    monkeypatch.setattr(measure, "graph_bench_ms",
                        lambda fn, rep=0: next(torch_graph if "torch" in fn.__code__.co_names else kernel_graph))
    monkeypatch.setattr(measure, "host_us", lambda fn, n=20: 1.0)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    menu = [("k1", "c", lambda a, b, out: K.matmul(a, b, out=out, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)),
            ("k2", "c", lambda a, b, out: K.matmul(a, b, out=out, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16))]
    rows = bench.bench_shape(20, 24, 40, "fp16", menu, graph=True)
    assert [r["kernel"] for r in rows] == ["torch.matmul", "k1", "k2"]
    torch_row = rows[0]
    assert torch_row["ms"] == 1.2  # median of 1.0, 1.2, 5.0
    assert torch_row["torch_ms"] == torch_row["ms"]
    assert rows[2]["torch_ms"] == 5.0  # the neighbour is kept for inspection ...
    for r in rows[1:]:
        assert r["ratio_to_torch"] == pytest.approx(1.2 / 0.5)  # ... but not used for the ratio
        assert r["rel_err"] < 1e-2
    assert torch_row["graph_ms"] == 0.9  # median of the torch graph times 0.9, 0.9, 0.95
    assert rows[1]["graph_ratio_to_torch"] == pytest.approx(0.9 / 0.5)
    assert rows[2]["graph_ratio_to_torch"] == pytest.approx(0.9 / 0.45)
    assert rows[1]["graph_tflops"] == pytest.approx(bench.tflops(20, 24, 40, 0.5))
    monkeypatch.setattr(measure, "do_bench_ms", lambda fn, warmup=0, rep=0: 1.0)
    plain = bench.bench_shape(20, 24, 40, "fp16", menu[:1], paired=False)
    assert "graph_ms" not in plain[1] and plain[1]["torch_ms"] is None and plain[1]["ratio_to_torch"] == 1.0


def test_best_summary_medians_and_targets():
    """best_summary on rows shaped like best_rounds' (synthetic ratios, only to check the arithmetic)."""
    from gemm_lab.bench import best

    rows = []
    for r, (g, d) in enumerate(((0.95, 0.7), (0.85, 0.9), (0.91, 0.8))):
        rows.append(dict(gpu="G", torch="t", triton="x", date="d", M=1024, N=1024, K=1024, dtype="fp16",
                         kernel="best_matmul", config="autotuned_small: why", round=r, graph_ratio_to_torch=g,
                         ratio_to_torch=d, rel_err=1e-4))
        rows.append(dict(rows[-1], M=512, N=512, K=512, graph_ratio_to_torch=g - 0.2))
    s = best.best_summary(pd.DataFrame(rows)).set_index("M")
    assert s.loc[1024, "graph_ratio_median"] == pytest.approx(0.91) and s.loc[1024, "met"] == "met"
    assert s.loc[1024, "do_bench_ratio_median"] == pytest.approx(0.8)
    assert s.loc[512, "met"] == "gap -0.090" and s.loc[512, "choice"] == "autotuned_small"
