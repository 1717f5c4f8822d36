"""GPU benchmarks: the sweeps whose CSVs live in results/, and what the notebooks time with.

Every ratio is ``torch.matmul time / kernel time`` with both measured in the same run, on the same inputs
(fresh random normal data, never zeros); every kernel's output is checked against an fp32 reference once per
shape (``rel_err``). ``python -m gemm_lab.bench --help`` lists the parts and the files each writes; the CSV
schemas are in results/README.md. Modules: ``measure`` (one shape), ``menu`` (the kernels), ``matmul_sweep``,
``persistent``, ``host``, ``softmax``, ``best``, ``random_shapes``, ``small``, ``autotune`` (week 7 notebook
03), ``parts`` (the table the CLI runs), ``cli``.
"""

from gemm_lab.bench.cli import main
from gemm_lab.bench.host import bench_host_overhead
from gemm_lab.bench.matmul_sweep import EXTRA_SHAPES, SQUARE_SIZES, SWEEP_COLUMNS, plot_sweep, sweep
from gemm_lab.bench.measure import DTYPES, bench_shape, env_info, random_inputs
from gemm_lab.bench.menu import TMA_BEST, best_tma_options, cfg_name, config_text, matmul_menu, tma_name
from gemm_lab.bench.parts import PARTS
from gemm_lab.bench.persistent import (
    bench_group_order,
    bench_persistent_programs,
    bench_persistent_variants,
    bench_tma_configs,
    compiled_kernels_table,
)
from gemm_lab.bench.softmax import bench_softmax
from gemm_lab.timing import (
    DEFAULT_REP_MS,
    DEFAULT_WARMUP_MS,
    do_bench_ms,
    gbps,
    graph_bench_ms,
    host_us,
    median,
    require_gpu,
    tflops,
)

__all__ = [
    "DEFAULT_REP_MS", "DEFAULT_WARMUP_MS", "DTYPES", "EXTRA_SHAPES", "PARTS", "SQUARE_SIZES", "SWEEP_COLUMNS",
    "TMA_BEST", "bench_group_order", "bench_host_overhead", "bench_persistent_programs", "bench_persistent_variants",
    "bench_shape", "bench_softmax", "bench_tma_configs", "best_tma_options", "cfg_name", "compiled_kernels_table",
    "config_text", "do_bench_ms", "env_info", "gbps", "graph_bench_ms", "host_us", "main", "matmul_menu", "median",
    "plot_sweep", "random_inputs", "require_gpu", "sweep", "tflops", "tma_name",
]
