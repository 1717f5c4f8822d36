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
            "persistent_tma"} <= names


def test_tma_name():
    name = bench.tma_name(dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_stages=3, num_warps=8,
                               epilogue_subtile=True, flatten=False, warp_specialize=True))
    assert name == "128x256x64 s3 w8 G8 subtile ws"


def test_plot_sweep_writes_png(tmp_path):
    # synthetic rows only to exercise the plotting code (no number here is a measurement)
    rows = []
    for kernel in ("torch.matmul", "autotuned"):
        for s in (512, 1024):
            rows.append(dict(gpu="TestGPU", compute_capability="0.0", torch="t", triton="x", date="2026-01-01",
                             M=s, N=s, K=s, dtype="fp16", kernel=kernel, config="c", ms=1.0,
                             tflops=bench.tflops(s, s, s, 1.0), ratio_to_torch=1.0))
    path = bench.plot_sweep(pd.DataFrame(rows), str(tmp_path / "m.png"))
    with open(path, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert not math.isnan(rows[0]["tflops"])


def test_plot_sweep_draws_the_graph_panel(tmp_path):
    # synthetic rows (no measurement): with graph_tflops the figure gets a second panel
    rows = []
    for kernel in ("torch.matmul", "autotuned"):
        for s in (512, 1024):
            rows.append(dict(gpu="TestGPU", compute_capability="0.0", torch="t", triton="x", date="2026-01-01",
                             M=s, N=s, K=s, dtype="fp16", kernel=kernel, config="c", ms=1.0,
                             tflops=bench.tflops(s, s, s, 1.0), graph_ms=0.5, graph_tflops=bench.tflops(s, s, s, 0.5)))
    one = bench.plot_sweep(pd.DataFrame(rows).drop(columns=["graph_ms", "graph_tflops"]), str(tmp_path / "one.png"))
    two = bench.plot_sweep(pd.DataFrame(rows), str(tmp_path / "two.png"))
    from matplotlib.image import imread

    assert imread(two).shape[1] > 1.5 * imread(one).shape[1]


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
