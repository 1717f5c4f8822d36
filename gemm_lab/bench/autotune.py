"""``make bench`` parts for week 7 notebook 03: the autotuner's measured cost and the T4's
64 KiB verdict exercised on a Hopper GPU. Dispatched by ``gemm_lab.bench``::

    python -m gemm_lab.bench --out results/ --only autotune t4limit

``autotune`` (appends two rows to ``autotune_cost.csv``): at 4096³ fp16, the seed's fixed config
(64×32×32, stages=5, warps=2, GROUP_M=8, through ``gemm_lab.kernels.matmul``) timed with
``do_bench_ms`` (median); then the first call of a **fresh** ``@triton.autotune`` over the configs
``gemm_lab.kernels.matmul_autotuned`` uses on this GPU, wrapped around a **fresh** ``JITFunction`` of the
Tutorial-03 kernel (so neither the autotuner's in-memory tuning cache nor the JIT's in-memory kernel cache
holds anything; the autotuner's on-disk result cache is off), timed with the wall clock between two
``torch.cuda.synchronize()``: once with Triton's on-disk compile cache **cold** (a new, empty
``TRITON_CACHE_DIR``: every candidate is compiled, launcher stubs included) and once **warm** (the same
directory, filled by the cold call: compiled kernels are read back, only benchmarking is left); the
config each one chose and its repeat median time through the autotuner.

``t4limit`` (writes ``t4_limit_<gpu>.csv``): under :func:`gemm_lab.device_limits.emulate_device_shared_memory`
(the T4's per-block limit), notebook 03's three candidates and 256×256×64 s4 w8, each launched directly on
a fresh ``JITFunction`` (ran, or the exception and its first line) and all four through one fresh
``@triton.autotune`` at 4096³ fp16 (each candidate's median, ``inf`` for the dropped ones, the chosen
one); beside them the sm_75 cross-compile's ``metadata.shared`` (``gemm_lab.compile``) and the textbook
bytes (``calc.textbook_smem``), with the verdict each would give under the limit.

Column lists: ``gemm_lab.results_autotune`` (the readers); row builders are plain functions
(:func:`autotune_cost_row`, :func:`t4_limit_row`) so the CSV format is tested without a GPU.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import tempfile
import time
from dataclasses import dataclass

from gemm_lab import runtime

# isort: split
import torch
import triton

from gemm_lab import calc
from gemm_lab import kernels as K
from gemm_lab.bench.measure import env_info, random_inputs
from gemm_lab.bench.menu import cfg_name
from gemm_lab.calc._validate import as_int, as_real, as_str
from gemm_lab.kernels import autotuned as _autotuned
from gemm_lab.kernels.matmul import matmul_kernel
from gemm_lab.results_autotune import (
    AUTOTUNE_COST_COLUMNS,
    AUTOTUNE_COST_CSV,
    COMPILE_CACHES,
    ENV_COLUMNS,
    T4_LIMIT_COLUMNS,
    t4_limit_csv_name,
)
from gemm_lab.timing import DEFAULT_REP_MS, DEFAULT_WARMUP_MS, do_bench_ms

PARTS = ("autotune", "t4limit")
SHAPE = (4096, 4096, 4096)
GROUP_M = 8
FIXED = calc.SEED_CONFIGS[0]  # 64x32x32 s5 w2: the seed's fixed config
OVERSIZED = calc.TileConfig(256, 256, 64, num_stages=4, num_warps=8, name="256x256x64 s4 w8")  # notebook 03's BIG
T4_DEVICE = "colab-t4"
_MISSING = object()


def t4_limit_configs() -> tuple:
    """Notebook 03's three candidates and its 256×256×64 s4 w8 config (``TileConfig`` objects)."""
    return tuple(calc.SEED_CONFIGS) + (OVERSIZED,)


# ------------------------------------------------------------------------------ plain helpers (CPU)
def tile_name(cfg: calc.TileConfig) -> str:
    """``BMxBNxBK sS wW G8``, the config names of the other CSVs."""
    return cfg_name(cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K, cfg.num_stages, cfg.num_warps, GROUP_M)


def config_name(config) -> str:
    """The same name for a ``triton.Config`` of the Tutorial-03 kernel (its BLOCK_SIZE_* kwargs)."""
    kw = config.kwargs
    return cfg_name(kw["BLOCK_SIZE_M"], kw["BLOCK_SIZE_N"], kw["BLOCK_SIZE_K"], config.num_stages,
                           config.num_warps, kw.get("GROUP_SIZE_M"))


def tile_dict(cfg: calc.TileConfig) -> dict:
    """A ``TileConfig`` in the candidate format of ``gemm_lab.kernels.autotuned`` (GROUP_SIZE_M = 8)."""
    return dict(BLOCK_SIZE_M=cfg.BLOCK_M, BLOCK_SIZE_N=cfg.BLOCK_N, BLOCK_SIZE_K=cfg.BLOCK_K, GROUP_SIZE_M=GROUP_M,
                num_stages=cfg.num_stages, num_warps=cfg.num_warps)


def triton_configs(candidates) -> list:
    """``triton.Config`` objects for candidate dicts (the format of ``autotuned.configs_for``)."""
    keys = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M")
    return [triton.Config({k: c[k] for k in keys}, num_stages=c["num_stages"], num_warps=c["num_warps"])
            for c in candidates]


def first_line(exc: BaseException, limit: int = 200) -> str:
    """``ClassName: first non-empty line of the message`` (at most ``limit`` characters of it)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {(lines[0] if lines else '')[:limit]}"


def _env_part(env: dict) -> dict:
    if not isinstance(env, dict):
        raise TypeError(f"env must be a dict (env_info()), got {type(env).__name__}")
    missing = [c for c in ENV_COLUMNS if c not in env]
    if missing:
        raise ValueError(f"env lacks {', '.join(missing)} (use env_info())")
    return {c: env[c] for c in ENV_COLUMNS}


@dataclass(frozen=True)
class AutotuneRun:
    """One measurement of the ``autotune`` part (times in ms)."""

    compile_cache: str  # "cold" | "warm": Triton's on-disk compile cache at the first call
    n_configs: int  # candidates the autotuner benchmarked
    fixed_config: str
    fixed_ms: float  # median of the fixed config
    tuned_config: str  # the autotuner's choice
    tuned_ms: float  # median of the autotuned kernel (through the autotuner)
    tuning_ms: float  # wall time of the first call: compile + benchmark every candidate + one run
    rel_err: float  # of the first call's output against the fp32 reference


def autotune_cost_row(env: dict, M: int, N: int, K: int, run: AutotuneRun, dtype: str = "fp16") -> dict:
    """One row of ``autotune_cost.csv`` (columns ``AUTOTUNE_COST_COLUMNS``, in order)."""
    if not isinstance(run, AutotuneRun):
        raise TypeError(f"run must be an AutotuneRun, got {type(run).__name__}")
    if run.compile_cache not in COMPILE_CACHES:
        raise ValueError(f"run.compile_cache must be one of {COMPILE_CACHES}, got {run.compile_cache!r}")
    row = dict(_env_part(env), M=as_int("M", M), N=as_int("N", N), K=as_int("K", K), dtype=as_str("dtype", dtype),
               compile_cache=run.compile_cache, n_configs=as_int("n_configs", run.n_configs),
               fixed_config=as_str("fixed_config", run.fixed_config),
               fixed_ms=as_real("fixed_ms", run.fixed_ms, positive=True),
               tuned_config=as_str("tuned_config", run.tuned_config),
               tuned_ms=as_real("tuned_ms", run.tuned_ms, positive=True),
               tuning_ms=as_real("tuning_ms", run.tuning_ms, positive=True),
               rel_err=as_real("rel_err", run.rel_err, nonnegative=True))
    return {c: row[c] for c in AUTOTUNE_COST_COLUMNS}


@dataclass(frozen=True)
class LimitOutcome:
    """What one config did on the GPU under the emulated limit."""

    config: calc.TileConfig
    launched_shared: int | None  # metadata.shared of the kernel built for this GPU (None: unknown)
    direct: str  # "ran", or the exception's class name (e.g. "OutOfResources")
    direct_error: str  # "" when it ran, else first_line(exception)
    rel_err: float  # of the direct run's output (NaN when it did not run)
    autotune_ms: float  # the autotuner's median for this candidate; inf when it was dropped
    chosen: bool  # the autotuner's choice


def t4_limit_row(env: dict, M: int, N: int, K: int, outcome: LimitOutcome, *, emulated_device: str,
                 emulated_limit: int, real_limit: int, launched_arch: str, sm75_shared: int,
                 dtype: str = "fp16") -> dict:
    """One row of ``t4_limit_<gpu>.csv`` (columns ``T4_LIMIT_COLUMNS``, in order). Verdicts are
    ``"fits"`` / ``"OutOfResources"`` by Triton's rule (``shared > limit`` fails, ``calc.fits``)."""
    if not isinstance(outcome, LimitOutcome):
        raise TypeError(f"outcome must be a LimitOutcome, got {type(outcome).__name__}")
    cfg = outcome.config
    limit = as_int("emulated_limit", emulated_limit)
    textbook = calc.textbook_smem(cfg)
    sm75 = as_int("sm75_shared", sm75_shared, minimum=0)

    def verdict(shared):
        return "fits" if calc.fits(shared, limit) else "OutOfResources"

    row = dict(_env_part(env), M=as_int("M", M), N=as_int("N", N), K=as_int("K", K), dtype=as_str("dtype", dtype),
               config=tile_name(cfg), BLOCK_M=cfg.BLOCK_M, BLOCK_N=cfg.BLOCK_N, BLOCK_K=cfg.BLOCK_K,
               num_stages=cfg.num_stages, num_warps=cfg.num_warps,
               emulated_device=as_str("emulated_device", emulated_device), emulated_limit=limit,
               real_limit=as_int("real_limit", real_limit), textbook_shared=textbook,
               textbook_verdict=verdict(textbook), sm75_shared=sm75, sm75_verdict=verdict(sm75),
               launched_arch=as_str("launched_arch", launched_arch),
               launched_shared=(None if outcome.launched_shared is None
                                else as_int("launched_shared", outcome.launched_shared, minimum=0)),
               direct=as_str("direct", outcome.direct), direct_error=as_str("direct_error", outcome.direct_error),
               rel_err=float(outcome.rel_err), autotune_ms=float(outcome.autotune_ms),
               autotune_chosen=bool(outcome.chosen))
    return {c: row[c] for c in T4_LIMIT_COLUMNS}


def write_rows(path: str, rows: list[dict], columns, append: bool = False):
    """Write ``rows`` to the CSV ``path`` (``append``: after the rows already there; columns of
    ``columns`` first, any others after). Returns the DataFrame written."""
    import pandas as pd

    new = pd.DataFrame(rows)
    if append and os.path.isfile(path):
        new = pd.concat([pd.read_csv(path), new], ignore_index=True)
    ordered = [c for c in columns if c in new.columns] + [c for c in new.columns if c not in columns]
    new = new[ordered]
    new.to_csv(path, index=False)
    return new


# ------------------------------------------------------------------------------ fresh Triton state (GPU)
@contextlib.contextmanager
def _instance_setting(obj, name: str, value):
    """Set ``obj.__dict__[name]`` (a triton.knobs setting, which wins over its environment variable)
    inside the block; the previous state (set or not) comes back on exit."""
    if obj is None:
        yield
        return
    old = vars(obj).get(name, _MISSING)
    vars(obj)[name] = value
    try:
        yield
    finally:
        if old is _MISSING:
            vars(obj).pop(name, None)
        else:
            vars(obj)[name] = old


@contextlib.contextmanager
def triton_cache_dir(path: str):
    """Triton's on-disk cache is ``path`` inside the block: ``TRITON_CACHE_DIR`` and, where this Triton
    has it (3.4+), ``triton.knobs.cache.dir``; both are restored on exit."""
    old = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = path
    try:
        with _instance_setting(getattr(getattr(triton, "knobs", None), "cache", None), "dir", path):
            yield path
    finally:
        if old is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = old


def fresh_kernel():
    """A new ``JITFunction`` of the Tutorial-03 kernel: empty in-memory kernel cache, so every launch
    compiles (or reads the on-disk cache) and loads anew, and ``CompiledKernel._init_handles`` runs again."""
    return triton.jit(matmul_kernel.fn)


def fresh_autotuner(candidates):
    """A new ``@triton.autotune(key=["M", "N", "K"])`` over :func:`fresh_kernel` with ``candidates``
    (dicts as in ``autotuned.configs_for``, or ``triton.Config`` objects); its on-disk result cache is off
    (``cache_results=False`` where this Triton has it, ``knobs.autotuning.cache`` off while it is built)."""
    configs = [c if isinstance(c, triton.Config) else triton_configs([c])[0] for c in candidates]
    kwargs = {"cache_results": False} if "cache_results" in inspect.signature(triton.autotune).parameters else {}
    with _instance_setting(getattr(getattr(triton, "knobs", None), "autotuning", None), "cache", False):
        return triton.autotune(configs=configs, key=["M", "N", "K"], **kwargs)(fresh_kernel())


def _launch(kernel, a, b, c, **meta):
    """``kernel[grid](...)`` for the Tutorial-03 signature; returns what Triton returns."""
    M, Kd = a.shape
    N = b.shape[1]

    def grid(m):
        return (triton.cdiv(M, m["BLOCK_SIZE_M"]) * triton.cdiv(N, m["BLOCK_SIZE_N"]),)

    return kernel[grid](a, b, c, M, N, Kd, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), ACTIVATION="", **meta)


def _require_gpu(part: str) -> None:
    if not runtime.on_gpu():
        raise RuntimeError(f"the {part!r} bench part needs a CUDA GPU (found none: {runtime.describe()['reason']}); "
                           "on a CPU the Triton interpreter neither autotunes nor loads kernels")


# ------------------------------------------------------------------------------ the two measurements (GPU)
def measure_autotune_cost(M: int = SHAPE[0], N: int = SHAPE[1], Kd: int = SHAPE[2],
                          warmup: int = DEFAULT_WARMUP_MS, rep: int = DEFAULT_REP_MS) -> list[AutotuneRun]:
    """The ``autotune`` part's measurements: ``[cold, warm]`` (see the module docstring)."""
    _require_gpu("autotune")
    a, b = random_inputs(M, N, Kd, "fp16")
    ref = K.reference_matmul(a, b)
    out = torch.empty((M, N), device=a.device, dtype=a.dtype)
    fixed = dict(BLOCK_M=FIXED.BLOCK_M, BLOCK_N=FIXED.BLOCK_N, BLOCK_K=FIXED.BLOCK_K, GROUP_M=GROUP_M,
                 num_stages=FIXED.num_stages, num_warps=FIXED.num_warps)

    def run_fixed():
        return K.matmul(a, b, out=out, **fixed)

    run_fixed()
    torch.cuda.synchronize()
    fixed_err = K.relative_error(out, ref)
    if not fixed_err < 1e-2:
        raise RuntimeError(f"the fixed config's output is wrong (relative error {fixed_err})")
    fixed_ms = do_bench_ms(run_fixed, warmup, rep)
    candidates = _autotuned.configs_for(_autotuned.current_arch())
    runs = []
    with tempfile.TemporaryDirectory(prefix="gemm_lab_triton_cache_") as tmp, triton_cache_dir(tmp):
        for cache in COMPILE_CACHES:  # cold: the directory is empty; warm: the cold call filled it
            tuner = fresh_autotuner(candidates)
            out.fill_(float("nan"))
            torch.cuda.synchronize()
            start = time.perf_counter()
            _launch(tuner, a, b, out)
            torch.cuda.synchronize()
            tuning_ms = (time.perf_counter() - start) * 1e3
            err = K.relative_error(out, ref)
            tuned_ms = do_bench_ms(lambda tuner=tuner: _launch(tuner, a, b, out), warmup, rep)
            runs.append(AutotuneRun(cache, len(candidates), tile_name(FIXED), fixed_ms, config_name(tuner.best_config),
                                    tuned_ms, tuning_ms, err))
            print(f"[bench] autotune first call, compile cache {cache}: {tuning_ms:,.0f} ms for {len(candidates)} "
                  f"configs -> {runs[-1].tuned_config} {tuned_ms:.4f} ms (fixed {fixed_ms:.4f} ms)", flush=True)
    return runs


def _direct(cfg, a, b, out, ref):
    """Launch ``cfg`` once on a fresh JITFunction: (direct, direct_error, launched_shared, rel_err)."""
    out.fill_(float("nan"))
    try:
        compiled = _launch(fresh_kernel(), a, b, out, **tile_dict(cfg))
        torch.cuda.synchronize()
    except Exception as exc:  # OutOfResources is the expected one; anything else is recorded too
        torch.cuda.synchronize()
        required = getattr(exc, "required", None) if getattr(exc, "name", None) == "shared memory" else None
        return type(exc).__name__, first_line(exc), required, math.nan
    metadata = getattr(compiled, "metadata", None)
    shared = getattr(metadata, "shared", None)
    return "ran", "", None if shared is None else int(shared), K.relative_error(out, ref)


def measure_t4_limit(M: int = SHAPE[0], N: int = SHAPE[1], Kd: int = SHAPE[2], device: str = T4_DEVICE,
                     configs=None) -> list[dict]:
    """The ``t4limit`` part's rows (see the module docstring)."""
    from gemm_lab import compile as gl_compile
    from gemm_lab.device_limits import emulate_device_shared_memory

    _require_gpu("t4limit")
    configs = tuple(configs or t4_limit_configs())
    env = env_info()
    sm75 = {cfg: int(gl_compile.compile_artifacts("matmul", config=cfg, target="sm_75").metadata["shared"])
            for cfg in configs}
    a, b = random_inputs(M, N, Kd, "fp16")
    ref = K.reference_matmul(a, b)
    out = torch.empty((M, N), device=a.device, dtype=a.dtype)
    tcfgs = triton_configs([tile_dict(cfg) for cfg in configs])
    with emulate_device_shared_memory(device) as emu:
        direct = {cfg: _direct(cfg, a, b, out, ref) for cfg in configs}
        tuner = fresh_autotuner(tcfgs)
        _launch(tuner, a, b, out)
        torch.cuda.synchronize()
    if emu.queries == 0 or emu.real_limit is None:
        raise RuntimeError(f"Triton never asked for the shared-memory limit under {emu.patched}: "
                           "the emulation was not exercised")
    timings = getattr(tuner, "configs_timings", None) or {}
    rows = []
    for cfg, tc in zip(configs, tcfgs, strict=True):
        t = timings.get(tc, math.nan)
        ms = float(t[0] if isinstance(t, (list, tuple)) else t)
        status, err, shared, rel = direct[cfg]
        outcome = LimitOutcome(cfg, shared, status, err, rel, ms, tuner.best_config is tc)
        rows.append(t4_limit_row(env, M, N, Kd, outcome, emulated_device=device, emulated_limit=emu.limit,
                                 real_limit=emu.real_limit, launched_arch=_autotuned.current_arch(),
                                 sm75_shared=sm75[cfg]))
        print(f"[bench] t4limit {rows[-1]['config']}: {status} {err}; autotune {ms} ms"
              + (" (chosen)" if outcome.chosen else ""), flush=True)
    return rows


def run_part(part: str, out_dir: str, warmup: int = DEFAULT_WARMUP_MS, rep: int = DEFAULT_REP_MS) -> str:
    """Run one part (``PARTS``) and write its CSV into ``out_dir``; returns the file's path.
    Without a GPU: ``RuntimeError`` naming the part. An unknown part: ``ValueError``."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}")
    as_str("out_dir", out_dir)
    _require_gpu(part)
    os.makedirs(out_dir, exist_ok=True)
    if part == "autotune":
        env = env_info()
        rows = [autotune_cost_row(env, *SHAPE, run) for run in measure_autotune_cost(*SHAPE, warmup, rep)]
        path = os.path.join(out_dir, AUTOTUNE_COST_CSV)
        write_rows(path, rows, AUTOTUNE_COST_COLUMNS, append=True)
        return path
    rows = measure_t4_limit(*SHAPE)
    path = os.path.join(out_dir, t4_limit_csv_name(rows[0]["gpu"]))
    write_rows(path, rows, T4_LIMIT_COLUMNS)
    return path
