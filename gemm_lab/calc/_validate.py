"""Argument checks shared by the calculators.

Policy (the same everywhere in ``gemm_lab.calc``):

* Sizes, counts and indices must be integers: ``int`` or anything with ``__index__`` (numpy integers).
  ``bool`` is rejected with ``TypeError`` (``True`` is not a size). A ``float`` is rejected with
  ``ValueError`` even when it is whole (``4.0``): sizes are counts of elements, and silently accepting
  ``4.0`` would hide a ``/`` that should have been ``//`` in the caller's code.
  Strings, ``None`` and other objects raise ``TypeError``.
* Times, rates and byte counts that may be fractional are real numbers (``int`` or ``float``, not
  ``bool``), finite; positivity is checked where the formula needs it.
* Every integer is at most :data:`MAX_INT` (2**48) and every real at most :data:`MAX_REAL` in magnitude
  (a positive real at least :data:`MIN_POSITIVE`), so ``10**400`` is a ``ValueError`` naming the
  argument, never an ``OverflowError`` or an ``inf`` result.
* Functions that build a table or a list refuse more than :data:`MAX_TABLE_CELLS` cells
  (:func:`check_table`), so a typo such as ``block_offsets(10, 10**9)`` fails at once instead of hanging.
"""

from __future__ import annotations

import math
import numbers

MAX_INT = 2**48
MAX_REAL = 1e15
MIN_POSITIVE = 1e-12
MAX_TABLE_CELLS = 2**18


def as_int(name: str, value: object, *, minimum: int | None = 1, maximum: int = MAX_INT) -> int:
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
    if result > maximum:
        shown = result if result < 10**30 else f"an integer of {result.bit_length()} bits"
        raise ValueError(f"{name} must be <= {maximum:,}, got {shown}")
    return int(result)


def as_real(name: str, value: object, *, positive: bool = False, nonnegative: bool = False) -> float:
    """Return ``value`` as a finite ``float`` or raise ``TypeError``/``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} ({value!r})")
    try:
        result = float(value)
    except OverflowError:
        raise ValueError(f"{name} must be at most {MAX_REAL:g} in magnitude, got an integer that large") from None
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {result!r}")
    if abs(result) > MAX_REAL:
        raise ValueError(f"{name} must be at most {MAX_REAL:g} in magnitude, got {result!r}")
    if positive and result <= 0:
        raise ValueError(f"{name} must be > 0, got {result!r}")
    if positive and result < MIN_POSITIVE:
        raise ValueError(f"{name} must be >= {MIN_POSITIVE:g}, got {result!r}")
    if nonnegative and result < 0:
        raise ValueError(f"{name} must be >= 0, got {result!r}")
    return result


def check_table(names: str, cells: int, limit: int = MAX_TABLE_CELLS) -> None:
    """Refuse a table/list of more than ``limit`` cells; ``names`` are the arguments that set its size."""
    if cells > limit:
        raise ValueError(f"{names} would build {cells:,} cells, more than the limit of {limit:,}: "
                         "these calculators draw small teaching examples")


MAX_CONFIGS = 4096


def as_configs(configs: object, kind: type, limit: int = MAX_CONFIGS) -> tuple:
    """A non-empty, bounded tuple from an iterable of configs (``TypeError``/``ValueError`` naming ``configs``)."""
    import itertools

    if isinstance(configs, (str, bytes)):
        raise TypeError(f"configs must be an iterable of TileConfig, got {type(configs).__name__}")
    try:
        it = iter(configs)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(f"configs must be an iterable of TileConfig, got {type(configs).__name__}") from None
    result = tuple(itertools.islice(it, limit + 1))
    if not result:
        raise ValueError("configs is empty")
    if len(result) > limit:
        raise ValueError(f"configs holds more than {limit:,} configs")
    for i, c in enumerate(result):
        if not isinstance(c, kind):
            raise TypeError(f"configs[{i}] must be a {kind.__name__}, got {type(c).__name__}")
    return result


def as_opt_int(name: str, value: object, *, minimum: int = 1) -> int | None:
    """``None`` stays ``None``; anything else goes through :func:`as_int`."""
    return None if value is None else as_int(name, value, minimum=minimum)


def as_opt_real(name: str, value: object, *, positive: bool = False) -> float | None:
    return None if value is None else as_real(name, value, positive=positive)


def as_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} ({value!r})")
    return value


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0
