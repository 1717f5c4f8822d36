"""What the checks of one test cell decided, for the grader's verdict (``replay``) and the class report.

``with recording() as entries:`` collects one dict per check call (``check``, ``name``, ``claimed``,
``expected``, ``ok``, ``message`` and, for kernel checks, ``kernel``). Outside ``recording`` nothing is kept.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools

__all__ = ["recording", "add", "finish", "recorded", "collecting_calls", "dry", "active"]

_ENTRIES: contextvars.ContextVar[list | None] = contextvars.ContextVar("gemm_lab_record", default=None)
_DRY: contextvars.ContextVar[bool] = contextvars.ContextVar("gemm_lab_dry", default=False)


@contextlib.contextmanager
def _set(var: contextvars.ContextVar, value):
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)


def recording():
    """``with recording() as entries:`` (see the module docstring)."""
    return _set(_ENTRIES, [])


def active() -> bool:
    """True inside ``recording()``: the grader keeps what the checks found."""
    return _ENTRIES.get() is not None


def add(entry: dict) -> None:
    entries = _ENTRIES.get()
    if entries is not None:
        entries.append(entry)


def finish(ok: bool, message: str) -> None:
    """Set the outcome of the last entry."""
    entries = _ENTRIES.get()
    if entries:
        entries[-1]["ok"], entries[-1]["message"] = ok, message


def _data(value):
    from .codec import encode

    try:
        return encode(value)
    except Exception:  # noqa: BLE001 - an unreadable value is recorded as unknown
        return None


def recorded(check: str):
    """Decorate an answer check ``f(name, got, expected, ...)`` so each call is recorded."""

    def wrap(f):
        @functools.wraps(f)
        def inner(name, got, expected, *args, **kwargs):
            if _DRY.get():
                return None
            if _ENTRIES.get() is None:
                return f(name, got, expected, *args, **kwargs)
            add({"check": check, "name": str(name), "claimed": _data(got), "expected": _data(expected),
                 "ok": False, "message": ""})
            try:
                out = f(name, got, expected, *args, **kwargs)
            except AssertionError as exc:
                finish(False, str(exc))
                raise
            finish(True, "")
            return out

        return inner

    return wrap


def collecting_calls():
    """The first pass of a test cell that calls a function answer: checks do nothing, calls are collected."""
    return _set(_DRY, True)


def dry() -> bool:
    return _DRY.get()
