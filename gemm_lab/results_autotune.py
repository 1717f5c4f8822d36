"""Week 7 notebook 03 on measured numbers: the autotuner's cost (exercise 3) and the T4's
shared-memory verdict exercised on a Hopper GPU, read from ``results/``.

Both files are written by ``make bench`` (``python -m gemm_lab.bench --only autotune t4limit``,
:mod:`gemm_lab.bench.autotune`); the column lists below are the writer's. Nothing here is typed in: when
a file (or the row asked for) is missing, the readers return ``None`` and the caller says so.

* ``results/autotune_cost.csv`` (rows appended, one per measurement; :func:`measured_autotune_case`):
  the fixed config's kernel time, a fresh autotuner's first call (every candidate compiled and
  benchmarked) with Triton's on-disk compile cache ``cold`` (an empty ``TRITON_CACHE_DIR``) or ``warm``
  (the same directory, filled by the cold call), and the tuned kernel's time, all in ms.
* ``results/t4_limit_<gpu>.csv`` (rewritten; :func:`measured_t4_limit`): one row per config, run on the
  GPU at hand under the T4's per-block limit (:mod:`gemm_lab.device_limits`).
"""

from __future__ import annotations

import re

from gemm_lab import results
from gemm_lab.calc._validate import as_int, as_str
from gemm_lab.calc.autotune import AutotuneCase, TimedPath

__all__ = ["AUTOTUNE_COST_CSV", "AUTOTUNE_COST_COLUMNS", "COMPILE_CACHES", "ENV_COLUMNS", "T4_LIMIT_COLUMNS",
           "T4_LIMIT_CSV", "measured_autotune_case", "measured_t4_limit", "t4_limit_csv_name"]

ENV_COLUMNS = ("gpu", "compute_capability", "torch", "triton", "date")
AUTOTUNE_COST_CSV = "autotune_cost.csv"
COMPILE_CACHES = ("cold", "warm")
AUTOTUNE_COST_COLUMNS = ENV_COLUMNS + (
    "M", "N", "K", "dtype", "compile_cache", "n_configs", "fixed_config", "fixed_ms", "tuned_config", "tuned_ms",
    "tuning_ms", "rel_err")
# what the reader needs (a file may hold more)
_COLUMNS = ("gpu", "triton", "date", "M", "N", "K", "compile_cache", "fixed_config", "fixed_ms", "tuned_config",
            "tuned_ms", "tuning_ms")

T4_LIMIT_CSV = "t4_limit_h200.csv"
T4_LIMIT_COLUMNS = ENV_COLUMNS + (
    "M", "N", "K", "dtype", "config", "BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages", "num_warps",
    "emulated_device", "emulated_limit", "real_limit", "textbook_shared", "textbook_verdict", "sm75_shared",
    "sm75_verdict", "launched_arch", "launched_shared", "direct", "direct_error", "rel_err", "autotune_ms",
    "autotune_chosen")


def _require(df, name: str, columns) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"name: results/{name} lacks the column(s) {', '.join(missing)}")


def measured_autotune_case(M: int = 4096, N: int = 4096, K: int = 4096, name: str = AUTOTUNE_COST_CSV,
                           compile_cache: str | None = "cold") -> AutotuneCase | None:
    """The latest row of ``results/<name>`` for ``M × N × K`` (and ``compile_cache``: ``"cold"``,
    ``"warm"``, or ``None`` for either) as an :class:`AutotuneCase` (``cublas=None``; the tuned path's
    ``tuning_ms`` is the first call's wall time, which includes that call's one kernel run), or ``None``
    when no results folder holds that file or that row. A file that lacks a column raises ``ValueError``
    naming it."""
    M, N, K = as_int("M", M), as_int("N", N), as_int("K", K)
    as_str("name", name)
    if compile_cache is not None and compile_cache not in COMPILE_CACHES:
        raise ValueError(f"compile_cache must be one of {COMPILE_CACHES} or None, got {compile_cache!r}")
    df = results.load_csv(name)
    if df is None:
        return None
    _require(df, name, _COLUMNS)
    rows = df[(df["M"] == M) & (df["N"] == N) & (df["K"] == K)]
    if compile_cache is not None:
        rows = rows[rows["compile_cache"] == compile_cache]
    if rows.empty:
        return None
    r = rows.iloc[-1]
    n = f"{int(r['n_configs'])} configs, " if "n_configs" in r and r["n_configs"] == r["n_configs"] else ""
    source = (f"results/{name} ({r['gpu']}, triton {r['triton']}, {r['date']}; first call of a fresh autotuner, "
              f"Triton's on-disk compile cache {r['compile_cache']}: compile + benchmark)")
    return AutotuneCase(
        M, N, K,
        fixed=TimedPath(f"fixed {r['fixed_config']}", 0.0, float(r["fixed_ms"])),
        tuned=TimedPath(f"autotuned ({n}best {r['tuned_config']})", float(r["tuning_ms"]), float(r["tuned_ms"])),
        cublas=None,
        source=source,
    )


def t4_limit_csv_name(gpu: str) -> str:
    """The file the ``t4limit`` bench part writes on the GPU named ``gpu``: ``t4_limit_<model>.csv`` with
    the model token in lower case (``"NVIDIA H200"`` → ``t4_limit_h200.csv``), else the whole name."""
    as_str("gpu", gpu)
    m = re.search(r"(?<![A-Za-z0-9])([A-Za-z]{1,3}\d{1,4}[A-Za-z]?)(?![A-Za-z0-9])", gpu)
    slug = m.group(1).lower() if m else re.sub(r"[^a-z0-9]+", "_", gpu.lower()).strip("_")
    return f"t4_limit_{slug or 'gpu'}.csv"


def measured_t4_limit(name: str = T4_LIMIT_CSV):
    """``results/<name>`` (default: the H200's) as a DataFrame, one row per config, or ``None`` when no
    results folder holds it; ``autotune_chosen`` as bool. A file that lacks a column of
    ``T4_LIMIT_COLUMNS`` raises ``ValueError`` naming it."""
    as_str("name", name)
    df = results.load_csv(name)
    if df is None:
        return None
    _require(df, name, T4_LIMIT_COLUMNS)
    df = df.copy()
    df["autotune_chosen"] = df["autotune_chosen"].astype(str).str.lower().isin(("true", "1"))
    df["direct_error"] = df["direct_error"].fillna("")
    return df
