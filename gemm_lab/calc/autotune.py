"""Autotuning economics (seed week 7, exercise 3): throughput, speed-ups, and when tuning pays back.

* ``tflops = 2·M·N·K × 1e-12 / (ms × 1e-3)`` — Tutorial 03's benchmark formula (TFLOP/s from ms)
* ``speedup = slow_ms / fast_ms`` (×)
* ``total_time_ms = tuning_ms + n_calls × kernel_ms`` (ms; the one-off tuning cost is paid once)
* break-even: the smallest ``n`` with ``tuning_ms + n × tuned_ms <= n × fixed_ms``, i.e.
  ``n = ⌈tuning_ms / (fixed_ms − tuned_ms)⌉`` — computed on the decimal values given (exact fractions),
  so a ratio that is a whole number is not pushed up by binary rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ._validate import as_int, as_real, as_str

__all__ = ["tflops", "speedup", "total_time_ms", "break_even_calls", "TimedPath", "AutotuneCase",
           "SEED_EXERCISE3", "Exercise3Answers", "exercise3_answers", "exercise3_table", "OOR_STATEMENTS",
           "oor_true_statements"]

#: Seed week 7, exercise 2.3 (first half): what ``@triton.autotune`` does with a config whose shared memory
#: exceeds the device's per-block limit (candidate 3, 144 KiB, on a 64 KiB device). ``(statement shown to
#: the student, true?)``, numbered from 1. The truth values follow the installed Triton's own code, which the
#: notebook prints and tests/test_calc_autotune.py reads: ``CompiledKernel._init_handles`` raises
#: ``OutOfResources`` when ``metadata.shared`` exceeds the device's limit (at the first launch, after
#: compiling), and ``Autotuner._bench`` catches it and times the config as ``inf``; nothing shrinks
#: ``num_stages``, and a key already tuned is not benchmarked again.
OOR_STATEMENTS: tuple[tuple[str, bool], ...] = (
    ("후보 3은 컴파일 단계(TTIR → … → CUBIN)에서 오류가 나고, 예외가 사용자 코드까지 올라와 프로그램이 멈춘다.", False),
    ("후보 3도 컴파일은 끝난다. 커널을 GPU에 올리는 첫 실행 직전(`CompiledKernel._init_handles`)에 "
     "`metadata.shared > 장치의 max_shared`를 확인해 `OutOfResources` 예외를 낸다.", True),
    ("`Autotuner._bench`는 `OutOfResources`를 잡아 그 후보의 측정 시간을 `inf`로 기록하므로, 후보 3은 최적 Config로 "
     "뽑히지 않고 탐색은 계속된다.", True),
    ("오토튜너는 후보 3의 `num_stages`를 스스로 줄여 한계 안에 들어올 때까지 다시 시도한다.", False),
    ("같은 key로 다시 호출하면 오토튜너는 후보 3을 다시 벤치마크한다.", False),
)


def oor_true_statements() -> frozenset[int]:
    """Numbers (from 1) of the true :data:`OOR_STATEMENTS`: ``{2, 3}``."""
    return frozenset(i for i, (_, true) in enumerate(OOR_STATEMENTS, 1) if true)


def tflops(M: int, N: int, K: int, ms: float) -> float:
    """Achieved TFLOP/s of a ``2·M·N·K``-FLOP matmul that took ``ms`` milliseconds.

    Exercise 3: ``tflops(4096, 4096, 4096, 1.6)`` = 85.8993.
    """
    M, N, K = as_int("M", M), as_int("N", N), as_int("K", K)
    ms = as_real("ms", ms, positive=True)
    return 2 * M * N * K * 1e-12 / (ms * 1e-3)


def speedup(slow_ms: float, fast_ms: float) -> float:
    """How many times faster ``fast`` is than ``slow``: ``slow_ms / fast_ms`` (1.6 / 0.6872 = 2.3283)."""
    return as_real("slow_ms", slow_ms, positive=True) / as_real("fast_ms", fast_ms, positive=True)


def total_time_ms(n_calls: int, kernel_ms: float, tuning_ms: float = 0.0) -> float:
    """``tuning_ms + n_calls × kernel_ms`` (ms). ``n_calls >= 0``; ``tuning_ms >= 0``.

    Exercise 3: one call of the tuned path = 900 + 0.6872 = 900.6872 ms; 1,000 calls = 1,587.2 ms.
    """
    n = as_int("n_calls", n_calls, minimum=0)
    kernel_ms = as_real("kernel_ms", kernel_ms, positive=True)
    tuning_ms = as_real("tuning_ms", tuning_ms, nonnegative=True)
    return tuning_ms + n * kernel_ms


def _exact(x: float) -> Fraction:
    return Fraction(repr(x))


def break_even_calls(fixed_ms: float, tuned_ms: float, tuning_ms: float) -> int:
    """Smallest number of calls (>= 1) at which the tuned path (``tuning_ms`` once, then ``tuned_ms``
    per call) is not slower than the fixed path (``fixed_ms`` per call).

    Exercise 3: 900 / (1.6 − 0.6872) = 985.98 → 986. Free tuning (``tuning_ms = 0``) with an equal kernel
    breaks even at once (1). Raises ``ValueError`` when there is no such ``n``: the tuned kernel is
    slower (``tuned_ms > fixed_ms``, whatever the tuning cost), or equal and the tuning costs anything.
    """
    fixed = _exact(as_real("fixed_ms", fixed_ms, positive=True))
    tuned = _exact(as_real("tuned_ms", tuned_ms, positive=True))
    tuning = _exact(as_real("tuning_ms", tuning_ms, nonnegative=True))
    if tuned > fixed or (tuned == fixed and tuning > 0):
        raise ValueError(f"tuned_ms ({tuned_ms} ms) is not below fixed_ms ({fixed_ms} ms): the tuned path is "
                         "slower at every number of calls, so the tuning time never pays back")
    if tuning == 0:
        return 1
    return max(1, math.ceil(tuning / (fixed - tuned)))


@dataclass(frozen=True)
class TimedPath:
    """One way of running the matmul: a label, a one-off tuning cost and a per-call kernel time (ms)."""

    label: str
    tuning_ms: float
    kernel_ms: float

    def __post_init__(self) -> None:
        as_str("label", self.label)
        as_real("tuning_ms", self.tuning_ms, nonnegative=True)
        as_real("kernel_ms", self.kernel_ms, positive=True)


@dataclass(frozen=True)
class AutotuneCase:
    """Problem size plus the fixed, tuned and cuBLAS paths (``cublas`` may be ``None``)."""

    M: int
    N: int
    K: int
    fixed: TimedPath
    tuned: TimedPath
    cublas: TimedPath | None
    source: str

    def __post_init__(self) -> None:
        for dim in ("M", "N", "K"):
            as_int(dim, getattr(self, dim))
        for key in ("fixed", "tuned", "cublas"):
            p = getattr(self, key)
            if not (isinstance(p, TimedPath) or (key == "cublas" and p is None)):
                raise TypeError(f"{key} must be a TimedPath, got {type(p).__name__}")
        as_str("source", self.source)


SEED_EXERCISE3 = AutotuneCase(
    4096, 4096, 4096,
    fixed=TimedPath("고정 설정 (64×32×32, stages=5, warps=2)", 0.0, 1.6),
    tuned=TimedPath("오토튜닝 최적 설정 (128×256×64, stages=3, warps=8)", 900.0, 0.6872),
    cublas=TimedPath("torch.matmul (cuBLAS)", 0.0, 0.7),
    source="seed week07 §8 exercise 3 (virtual measurements)",
)

@dataclass(frozen=True)
class Exercise3Answers:
    """Every number exercise 3 asks for (TFLOP/s, ×, ms, calls)."""

    tflops_fixed: float
    tflops_tuned: float
    tflops_cublas: float | None
    speedup_vs_fixed: float
    speedup_vs_cublas: float | None
    one_call_fixed_ms: float
    one_call_tuned_ms: float
    n_calls: int
    many_calls_fixed_ms: float
    many_calls_tuned_ms: float
    break_even: int


def exercise3_answers(case: AutotuneCase = SEED_EXERCISE3, n_calls: int = 1000) -> Exercise3Answers:
    """Exercise 3's answers for ``case``: 85.8993 / 199.9985 / 196.3414 TFLOP/s, 2.3283× and 1.0186×,
    1.6 vs 900.6872 ms for one call, 1,600.0 vs 1,587.2 ms for 1,000 calls, break-even 986."""
    if not isinstance(case, AutotuneCase):
        raise TypeError(f"case must be an AutotuneCase, got {type(case).__name__}")
    M, N, K = case.M, case.N, case.K
    cub = case.cublas
    return Exercise3Answers(
        tflops_fixed=tflops(M, N, K, case.fixed.kernel_ms),
        tflops_tuned=tflops(M, N, K, case.tuned.kernel_ms),
        tflops_cublas=None if cub is None else tflops(M, N, K, cub.kernel_ms),
        speedup_vs_fixed=speedup(case.fixed.kernel_ms, case.tuned.kernel_ms),
        speedup_vs_cublas=None if cub is None else speedup(cub.kernel_ms, case.tuned.kernel_ms),
        one_call_fixed_ms=total_time_ms(1, case.fixed.kernel_ms, case.fixed.tuning_ms),
        one_call_tuned_ms=total_time_ms(1, case.tuned.kernel_ms, case.tuned.tuning_ms),
        n_calls=as_int("n_calls", n_calls),
        many_calls_fixed_ms=total_time_ms(n_calls, case.fixed.kernel_ms, case.fixed.tuning_ms),
        many_calls_tuned_ms=total_time_ms(n_calls, case.tuned.kernel_ms, case.tuned.tuning_ms),
        break_even=break_even_calls(case.fixed.kernel_ms, case.tuned.kernel_ms, case.tuned.tuning_ms),
    )


def exercise3_table(case: AutotuneCase = SEED_EXERCISE3, n_calls: int = 1000):
    """DataFrame, one row per path (index ``fixed``/``tuned``/``cublas``): ``label, tuning_ms, kernel_ms,
    tflops, tuned_speedup`` (how many times faster the tuned path is per call), ``one_call_ms``,
    ``n_calls_ms`` (total for ``n_calls`` calls, tuning included)."""
    import pandas as pd

    if not isinstance(case, AutotuneCase):
        raise TypeError(f"case must be an AutotuneCase, got {type(case).__name__}")
    n = as_int("n_calls", n_calls)
    rows, index = [], []
    for key in ("fixed", "tuned", "cublas"):
        p = getattr(case, key)
        if p is None:
            continue
        index.append(key)
        rows.append({
            "label": p.label, "tuning_ms": p.tuning_ms, "kernel_ms": p.kernel_ms,
            "tflops": tflops(case.M, case.N, case.K, p.kernel_ms),
            "tuned_speedup": speedup(p.kernel_ms, case.tuned.kernel_ms),
            "one_call_ms": total_time_ms(1, p.kernel_ms, p.tuning_ms),
            "n_calls_ms": total_time_ms(n, p.kernel_ms, p.tuning_ms),
        })
    df = pd.DataFrame(rows, index=index)
    df.index.name = "path"
    return df
