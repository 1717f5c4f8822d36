"""Bad input for every public calculator of gemm_lab.calc.

The functions are enumerated from the package (every submodule's ``__all__``: functions, plus the
dataclasses that validate themselves in ``__post_init__``), so a new calculator is covered at once: its
parameters must appear in :data:`VALID` (valid-argument strategies keyed by parameter name, with
per-function overrides in :data:`OVERRIDES`), or ``test_every_parameter_has_a_strategy`` fails.

Each call either raises ``ValueError``/``TypeError`` whose message names the argument, or returns a sane
value (every float in it finite); none may run longer than :data:`CALL_LIMIT_S` (SIGALRM).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
import signal
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gemm_lab.calc as calc
from gemm_lab.calc.autotune import SEED_EXERCISE3, TimedPath
from gemm_lab.calc.devices import DEVICES
from gemm_lab.calc.roofline import SEED_CONFIGS, TileConfig

CALL_LIMIT_S = 3.0
EXAMPLES = 60


def _public_callables() -> dict[str, object]:
    found = {}
    for info in pkgutil.iter_modules(calc.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"gemm_lab.calc.{info.name}")
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if inspect.isfunction(obj) or (inspect.isclass(obj) and hasattr(obj, "__post_init__")):
                found[f"{info.name}.{name}"] = obj
    return found


CALLABLES = _public_callables()

small = st.integers(1, 64)
size = st.integers(1, 4096)
pow2 = st.sampled_from([16, 32, 64, 128, 256])
real_ms = st.floats(0.001, 1000.0)
config = st.sampled_from(SEED_CONFIGS)
arch = st.sampled_from(["sm_75", "sm_80", "sm_90", "sm_120"])

# Valid-argument strategies by parameter name (the same name means the same thing across calc).
VALID: dict[str, st.SearchStrategy] = {
    "M": size, "N": size, "K": size, "a": st.integers(0, 10**6), "b": small,
    "BLOCK_M": pow2, "BLOCK_N": pow2, "BLOCK_K": pow2, "BLOCK_SIZE": pow2, "pid_m": st.just(0),
    "pid_n": st.just(0), "pid": st.just(0), "ms": real_ms, "slow_ms": real_ms, "fast_ms": real_ms,
    "kernel_ms": real_ms, "tuning_ms": st.floats(0.0, 1000.0), "fixed_ms": st.just(2.0), "tuned_ms": st.just(1.0),
    "n_calls": st.integers(0, 10**6), "label": st.text(max_size=8), "source": st.text(max_size=8),
    "fixed": st.just(SEED_EXERCISE3.fixed), "tuned": st.just(SEED_EXERCISE3.tuned),
    "cublas": st.sampled_from([None, SEED_EXERCISE3.cublas]), "case": st.just(SEED_EXERCISE3),
    "name": st.sampled_from(sorted(DEVICES)), "arch": arch, "sms": small,
    "smem_per_block_optin": st.integers(1024, 2**18), "regs_per_sm": st.just(65536), "l2_bytes": size,
    "fp16_tflops": st.floats(1.0, 1000.0), "bandwidth_gbs": st.floats(1.0, 5000.0),
    "fp32_tflops": st.floats(1.0, 100.0), "notes": st.text(max_size=8),
    "regs_per_thread": st.integers(1, 255), "num_warps": st.sampled_from([1, 2, 4, 8]),
    "smem_per_block": st.integers(0, 2**16), "sm": arch, "num_programs": size, "num_sms": small,
    "blocks_per_sm": small, "num_tiles": size, "programs_per_sm": small,
    "num_pid_m": small, "num_pid_n": small, "GROUP_M": small, "n_programs": st.just(None),
    "rows": st.sampled_from([None, 1, 3]), "k_blocks": small, "window": st.just(1), "start": st.just(0),
    "num_stages": st.integers(1, 6), "config": config, "configs": st.just(SEED_CONFIGS),
    "device": st.sampled_from([d for d in DEVICES.values() if d.fp16_tflops is not None]),
    "in_bytes": st.sampled_from([1, 2, 4]), "out_bytes": st.sampled_from([1, 2, 4]),
    "acc_bytes": st.sampled_from([2, 4]), "dtype": st.sampled_from(["fp16", "bf16", "fp32"]),
    "out_dtype": st.sampled_from(["fp16", "fp32"]), "aligned": st.booleans(),
    "shared_bytes": st.integers(0, 2**18), "limit_bytes": st.integers(1, 2**18),
    "rule": st.just("textbook"), "dtype_bytes": st.sampled_from([1, 2, 4]), "other": st.floats(-10.0, 10.0),
}
# Where a parameter name means something narrower in one function.
OVERRIDES: dict[str, dict[str, st.SearchStrategy]] = {
    "devices.get_device": {"name": st.sampled_from(sorted(DEVICES))},
    "devices.Device": {"name": st.text(max_size=8), "arch": st.sampled_from([None, "sm_90"])},
    "roofline.TileConfig": {"name": st.text(max_size=8)},
    "smem.compiler_smem": {"dtype": st.sampled_from(["fp16", "bf16"])},
    "smem.best_fitting": {"limit_bytes": st.just(2**20), "arch": st.just(None)},
    "smem.smem_verdicts": {"arch": st.just(None)},
}

# Wrong values fed to one parameter at a time.
BAD = [True, False, None, "4", b"4", 4.5, 4.0, -1, 0, -1.0, 0.0, math.nan, math.inf, -math.inf, 10**400,
       10**12, 2**64, 1e308, 1e-300, object(), [1, 2], (9, 0), "sm_x", ""]


def _strategy(key: str, param: str) -> st.SearchStrategy:
    special = OVERRIDES.get(key, {})
    return special[param] if param in special else VALID[param]


def _floats_in(value, depth: int = 0):
    """Every float reachable in a result (dataclass fields, tuples, lists, dicts, DataFrame cells)."""
    if depth > 4:
        return
    if isinstance(value, float):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _floats_in(getattr(value, f.name), depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value[:2000]:
            yield from _floats_in(v, depth + 1)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _floats_in(v, depth + 1)
    elif type(value).__name__ == "DataFrame":  # NaN there is pandas' "missing" (a None field): skip it
        for col in value.select_dtypes("number").columns:
            yield from (float(x) for x in value[col].tolist() if x == x)


class _Timeout(BaseException):  # not an Exception: library code must not swallow it
    pass


def _on_alarm(signum, frame):
    raise _Timeout


def _call(fn, kwargs):
    """Call with a wall-clock bound; return ("ok", value) or ("error", exception)."""
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, CALL_LIMIT_S)
    t0 = time.perf_counter()
    try:
        return "ok", fn(**kwargs)
    except _Timeout:
        pytest.fail(f"{fn.__qualname__}({kwargs!r}) ran longer than {CALL_LIMIT_S} s")
    except (ValueError, TypeError) as exc:
        return "error", exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        assert time.perf_counter() - t0 < CALL_LIMIT_S + 0.5


def _assert_sane(key: str, kwargs: dict, value) -> None:
    for x in _floats_in(value):
        assert math.isfinite(x), f"{key}({kwargs!r}) returned a non-finite number {x!r}"


def _fixed_args(key: str, fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def test_every_parameter_has_a_strategy():
    assert len(CALLABLES) >= 40, sorted(CALLABLES)
    for key, fn in CALLABLES.items():
        for p in _fixed_args(key, fn):
            assert p in VALID or p in OVERRIDES.get(key, {}), f"{key}: add a strategy for parameter {p!r}"


KEYS = sorted(CALLABLES)


@pytest.mark.parametrize("key", KEYS)
def test_valid_input_is_sane(key):
    fn = CALLABLES[key]
    params = _fixed_args(key, fn)

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.fixed_dictionaries({p: _strategy(key, p) for p in params}))
    def run(kwargs):
        outcome, value = _call(fn, kwargs)
        if outcome == "ok":
            _assert_sane(key, kwargs, value)
        else:  # valid-looking combinations may still be refused (a window past the grid): name an argument
            assert any(p in str(value) for p in params), f"{key}({kwargs!r}): {value!r} names no argument"

    run()


@pytest.mark.parametrize("key", [k for k in KEYS if inspect.signature(CALLABLES[k]).parameters])
def test_bad_input_raises_naming_the_argument(key):
    fn = CALLABLES[key]
    params = _fixed_args(key, fn)

    @settings(max_examples=EXAMPLES * 2, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.fixed_dictionaries({p: _strategy(key, p) for p in params}), st.sampled_from(params),
           st.sampled_from(BAD))
    def run(kwargs, target, bad):
        kwargs = {**kwargs, target: bad}
        outcome, value = _call(fn, kwargs)
        if outcome == "ok":
            _assert_sane(key, kwargs, value)
        else:
            assert target in str(value) or (target == "sm" and "arch" in str(value)), (
                f"{key}: {target}={bad!r} raised {type(value).__name__} not naming {target!r}: {value}")

    run()


# The cases the issue names, each failed before this change.
@pytest.mark.parametrize("call, arg, exc", [
    (lambda: calc.break_even_calls(1.0, 2.0, 0.0), "tuned_ms", ValueError),
    (lambda: calc.block_offsets(10, 10**9), "BLOCK_SIZE", ValueError),
    (lambda: calc.block_offsets(10**7, 4), "N", ValueError),
    (lambda: calc.block_offsets(10, 3), "BLOCK_SIZE", ValueError),
    (lambda: calc.order_grid(10**7, 9, 3), "num_pid_m", ValueError),
    (lambda: calc.ordering.format_order_grid(9, 10**12, 3), "num_pid_n", ValueError),
    (lambda: calc.tflops(10**400, 1, 1, 1.0), "M", ValueError),
    (lambda: calc.speedup(10**400, 1.0), "slow_ms", ValueError),
    (lambda: calc.tile_grid(10**400, 1, 1, 16, 16, 16), "M", ValueError),
    (lambda: calc.roofline(10**400, 1, 1, SEED_CONFIGS[0]), "M", ValueError),
    (lambda: calc.order_table(True, 2, 1), "num_pid_m", TypeError),
    (lambda: TimedPath("x", 0.0, math.nan), "kernel_ms", ValueError),
])
def test_issue_cases(call, arg, exc):
    t0 = time.perf_counter()
    outcome, value = _call(call, {})
    assert outcome == "error" and type(value) is exc, (outcome, value)
    assert arg in str(value)
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize("field", ["bandwidth_gbs", "fp16_tflops", "fp32_tflops", "sms", "smem_per_block_optin"])
@pytest.mark.parametrize("bad", [-1.0, 0, math.nan, math.inf])
def test_device_fields_validated(field, bad):
    base = dataclasses.asdict(DEVICES["h200"])
    with pytest.raises(ValueError, match=field):  # a float count is a ValueError too (the policy)
        calc.Device(**{**base, field: bad})


def test_device_fields_types():
    base = dataclasses.asdict(DEVICES["h200"])
    with pytest.raises(TypeError, match="bandwidth_gbs"):
        calc.Device(**{**base, "bandwidth_gbs": "4800"})
    with pytest.raises(TypeError, match="sms"):
        calc.Device(**{**base, "sms": True})
    assert TileConfig(16, 16, 16, 1, 1).label == "16×16×16 s1 w1"
