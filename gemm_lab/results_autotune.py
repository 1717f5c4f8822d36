"""Exercise 3's economics (``gemm_lab.calc.autotune``) on measured numbers: an :class:`~.autotune.AutotuneCase` read from ``results/``.

The case needs three measurements of one ``M × N × K`` fp16 problem on one GPU, all written by
``make bench`` into ``results/autotune_cost.csv`` (columns ``gpu, triton, date, M, N, K, fixed_config,
fixed_ms, tuned_config, tuned_ms, tuning_ms``): the fixed config's kernel time, the autotuned kernel's
time, and the autotuner's first call (every candidate compiled and benchmarked), all in ms.
Nothing here is typed in: when the CSV (or the row) is missing, :func:`measured_autotune_case` returns
``None`` and the caller says so.
"""

from __future__ import annotations

from gemm_lab import results
from gemm_lab.calc._validate import as_int, as_str
from gemm_lab.calc.autotune import AutotuneCase, TimedPath

__all__ = ["AUTOTUNE_COST_CSV", "measured_autotune_case"]

AUTOTUNE_COST_CSV = "autotune_cost.csv"
_COLUMNS = ("gpu", "triton", "date", "M", "N", "K", "fixed_config", "fixed_ms", "tuned_config", "tuned_ms",
            "tuning_ms")


def measured_autotune_case(M: int = 4096, N: int = 4096, K: int = 4096,
                           name: str = AUTOTUNE_COST_CSV) -> AutotuneCase | None:
    """The latest row of ``results/<name>`` for ``M × N × K`` as an :class:`AutotuneCase`
    (``cublas=None``), or ``None`` when no results folder holds that file or that shape.
    A file that lacks a column raises ``ValueError`` naming it."""
    M, N, K = as_int("M", M), as_int("N", N), as_int("K", K)
    as_str("name", name)
    df = results.load_csv(name)
    if df is None:
        return None
    missing = [c for c in _COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"name: results/{name} lacks the column(s) {', '.join(missing)}")
    rows = df[(df["M"] == M) & (df["N"] == N) & (df["K"] == K)]
    if rows.empty:
        return None
    r = rows.iloc[-1]
    source = f"results/{name} ({r['gpu']}, triton {r['triton']}, {r['date']}; first call incl. compile + benchmark)"
    return AutotuneCase(
        M, N, K,
        fixed=TimedPath(f"fixed {r['fixed_config']}", 0.0, float(r["fixed_ms"])),
        tuned=TimedPath(f"autotuned (best {r['tuned_config']})", float(r["tuning_ms"]), float(r["tuned_ms"])),
        cublas=None,
        source=source,
    )
