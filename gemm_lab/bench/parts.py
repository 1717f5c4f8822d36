"""The parts of ``python -m gemm_lab.bench``, as data: name, the files it writes, whether a plain run
includes it, and the function that runs it. :func:`run_parts` is the one loop over them."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Run:
    """What every part is given: the output folder, the timing settings of this run, and ``save``."""

    out: str
    warmup: int
    rep: int
    quick: bool = False
    seed: int | None = None
    time_limit: float = float("inf")
    t0: float = field(default_factory=time.time)

    def path(self, name: str) -> str:
        return os.path.join(self.out, name)

    def say(self, what: str) -> None:
        print(f"[bench] {what} ({time.time() - self.t0:.0f} s)", flush=True)

    def save(self, df, name: str):
        df.to_csv(self.path(name), index=False)
        self.say(name)
        return df


@dataclass(frozen=True)
class Part:
    name: str
    files: str  # what it writes, for --help and the docs
    run: Callable[[Run], None]
    default: bool = True  # in a run without --only (the config searches are asked for by name)


def _compiled(r: Run) -> None:
    from gemm_lab.bench.persistent import compiled_kernels_table

    r.save(compiled_kernels_table(), "compiled_kernels.csv")


def _tma_configs(r: Run) -> None:
    from gemm_lab.bench.persistent import bench_tma_configs

    df = r.save(bench_tma_configs(warmup=min(r.warmup, 25), rep=min(r.rep, 150)), "tma_configs.csv")
    print(df[["M", "config", "ms", "tflops", "ratio_to_torch", "error"]].to_string(), flush=True)


def _small_configs(r: Run) -> None:
    import pandas as pd

    from gemm_lab.bench.small import small_config_rows

    r.save(pd.DataFrame(small_config_rows(rep=min(r.rep, 50))), "small_configs.csv")


def _persistent(r: Run) -> None:
    from gemm_lab.bench.persistent import bench_persistent_programs, bench_persistent_variants

    r.save(bench_persistent_programs(warmup=r.warmup, rep=r.rep), "persistent_programs.csv")
    r.save(bench_persistent_variants(warmup=r.warmup, rep=r.rep), "persistent_variants.csv")


def _group(r: Run) -> None:
    from gemm_lab.bench.persistent import bench_group_order

    r.save(bench_group_order(warmup=r.warmup, rep=r.rep), "group_order.csv")


def _sweep(r: Run) -> None:
    from gemm_lab.bench.matmul_sweep import EXTRA_SHAPES, sweep

    # the shapes the targets are about first, so that a run cut short still has them
    sizes = (4096, 1024) if r.quick else (4096, 8192, 2048, 1024, 512)
    shapes = [(s, s, s) for s in sizes[:1]] + [EXTRA_SHAPES[0]] + [(s, s, s) for s in sizes[1:]]
    shapes += list(EXTRA_SHAPES[1:])
    jobs = [(shape, "fp16") for shape in shapes] + ([] if r.quick else [((4096, 4096, 4096), "bf16")])
    sweep(jobs=jobs, warmup=r.warmup, rep=r.rep, csv_path=r.path("matmul.csv"), png_path=r.path("matmul.png"))
    r.say("matmul.csv + matmul.png")


def _softmax(r: Run) -> None:
    from gemm_lab.bench.softmax import bench_softmax

    r.save(bench_softmax(warmup=r.warmup, rep=r.rep), "softmax.csv")


def _host(r: Run) -> None:
    import pandas as pd

    from gemm_lab.bench.best import host_breakdown_rows
    from gemm_lab.bench.host import bench_host_overhead

    r.save(bench_host_overhead(), "host_overhead.csv")
    r.save(pd.DataFrame(host_breakdown_rows()), "host_overhead_breakdown.csv")


def _best(r: Run) -> None:
    from gemm_lab.bench.best import best_rounds, best_summary

    df = r.save(best_rounds(warmup=min(r.warmup, 25), rep=min(r.rep, 100), csv_path=r.path("best_matmul.csv")),
                "best_matmul.csv")
    print(r.save(best_summary(df), "best_matmul_summary.csv").to_string(), flush=True)


def _best_eager(r: Run) -> None:
    from gemm_lab.bench.best import EAGER_SHAPES, best_name, best_rounds, best_summary

    df = r.save(best_rounds(EAGER_SHAPES, warmup=min(r.warmup, 25), rep=min(r.rep, 100), tune_for="eager",
                            csv_path=r.path("best_matmul_eager.csv")), "best_matmul_eager.csv")
    print(r.save(best_summary(df, best_name("eager")), "best_matmul_eager_summary.csv").to_string(), flush=True)


def _fp8(r: Run) -> None:
    import pandas as pd

    from gemm_lab import runtime
    from gemm_lab.bench.best import fp8_rows

    if runtime.capability() < (9, 0):
        r.say("fp8: skipped, needs Hopper (compute capability 9.0)")
        return
    r.save(pd.DataFrame(fp8_rows(warmup=min(r.warmup, 25), rep=min(r.rep, 100))), "fp8_matmul.csv")


def _random(r: Run) -> None:
    from gemm_lab.bench import random_shapes as R

    seed = R.DEFAULT_SEED if r.seed is None else r.seed
    df = R.run(r.path("best_matmul_random.csv"), seed=seed, time_limit_s=r.time_limit,
               log=lambda m: print(m, flush=True))
    if len(df) == len(R.jobs_for(seed)):  # complete: summary (with the 1024^3 launch cost) and picture
        summ = r.save(R.summary(df, R.host_rows()), "best_matmul_random_summary.csv")
        R.plot(df, r.path("best_matmul_random.png"))
        print(summ[summ.shape_class.isin(["all", "1024^3"])].to_string(), flush=True)


def _autotune_part(name: str) -> Callable[[Run], None]:
    def run(r: Run) -> None:
        from gemm_lab.bench.autotune import run_part

        r.say(os.path.basename(run_part(name, r.out, r.warmup, r.rep)))

    return run


TABLE: tuple[Part, ...] = (
    Part("compiled", "compiled_kernels.csv", _compiled),
    Part("tma_configs", "tma_configs.csv (a search over the TMA kernel's options)", _tma_configs, default=False),
    Part("small_configs", "small_configs.csv (tile configs at small shapes, TMA options at large ones)",
         _small_configs, default=False),
    Part("persistent", "persistent_programs.csv, persistent_variants.csv", _persistent),
    Part("group", "group_order.csv", _group),
    Part("sweep", "matmul.csv + matmul.png", _sweep),
    Part("softmax", "softmax.csv", _softmax),
    Part("host", "host_overhead.csv, host_overhead_breakdown.csv", _host),
    Part("best", "best_matmul.csv, best_matmul_summary.csv", _best),
    Part("best_eager", "best_matmul_eager.csv, best_matmul_eager_summary.csv", _best_eager),
    Part("fp8", "fp8_matmul.csv (Hopper only)", _fp8),
    Part("random", "best_matmul_random*.csv + .png (about 15 minutes; --time-limit splits it over runs)",
         _random),
    Part("autotune", "autotune_cost.csv (rows appended)", _autotune_part("autotune")),
    Part("t4limit", "t4_limit_<gpu>.csv", _autotune_part("t4limit")),
)
PARTS = tuple(p.name for p in TABLE)


def run_parts(names, run: Run) -> None:
    """Run the parts ``names`` (in the table's order; ``None``: every default part)."""
    unknown = sorted(set(names or ()) - set(PARTS))
    if unknown:
        raise ValueError(f"unknown part(s) {', '.join(unknown)}: expected some of {', '.join(PARTS)}")
    for part in TABLE:
        if (part.name in names) if names else part.default:
            part.run(run)
