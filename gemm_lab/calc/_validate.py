"""Argument checks shared by the calculators.

Policy (the same everywhere in ``gemm_lab.calc``):

* Sizes, counts and indices must be integers: ``int`` or anything with ``__index__`` (numpy integers).
  ``bool`` is rejected with ``TypeError`` (``True`` is not a size). A ``float`` is rejected with
  ``ValueError`` even when it is whole (``4.0``): sizes are counts of elements, and silently accepting
  ``4.0`` would hide a ``/`` that should have been ``//`` in the caller's code.
  Strings, ``None`` and other objects raise ``TypeError``.
* Times, rates and byte counts that may be fractional are real numbers (``int`` or ``float``, not
  ``bool``), finite; positivity is checked where the formula needs it.
"""

from __future__ import annotations

import math
import numbers


def as_int(name: str, value: object, *, minimum: int | None = 1) -> int:
    """Return ``value`` as an ``int`` or raise a clear error (see the module policy)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got a bool ({value!r})")
    if isinstance(value, float):
        raise ValueError(f"{name} must be an integer, got the float {value!r} (pass int({value!r}) if meant)")
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    try:
        result = value.__index__()  # type: ignore[attr-defined]
    except AttributeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} ({value!r})") from None
    if minimum is not None and result < minimum:
        if minimum == 1:
            raise ValueError(f"{name} must be a positive integer (>= 1), got {result}")
        raise ValueError(f"{name} must be an integer >= {minimum}, got {result}")
    return int(result)


def as_real(name: str, value: object, *, positive: bool = False, nonnegative: bool = False) -> float:
    """Return ``value`` as a finite ``float`` or raise ``TypeError``/``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} ({value!r})")
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {result!r}")
    if positive and result <= 0:
        raise ValueError(f"{name} must be > 0, got {result!r}")
    if nonnegative and result < 0:
        raise ValueError(f"{name} must be >= 0, got {result!r}")
    return result


def as_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} ({value!r})")
    return value


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0
