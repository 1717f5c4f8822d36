"""Korean feedback lines for students, and the one way a check fails.

Everything a check prints or raises goes through here: ``ok(name, value)`` prints the
"✅ name: value" line and ``fail(name, text)`` raises ``AssertionError`` with the Korean text.
"""

from __future__ import annotations

import math

__all__ = ["fail", "ok", "fmt", "describe_type", "tolerance_text"]


def fmt(value, max_len: int = 80) -> str:
    """Short, readable text of a student's value (floats to 10 significant digits)."""
    t = type(value)
    if t is float:  # an integral float as Python writes it (54.0); nan and inf as format writes them
        integral = math.isfinite(value) and value == int(value) and abs(value) < 1e15
        return repr(value) if integral else format(value, ".10g")
    if t is str:
        text = repr(value)
    elif t in (tuple, list):
        inner = ", ".join(fmt(v, max_len) for v in value)
        text = "(" + inner + ")" if t is tuple else "[" + inner + "]"
    else:
        try:
            text = repr(value)
        except Exception:  # noqa: BLE001 - a hostile __repr__ must not crash the checker
            text = "<" + t.__name__ + ">"
    if len(text) > max_len:
        text = text[: max_len - 3] + "..."
    return text


def describe_type(value) -> str:
    """Korean name of a value's type, for 'wrong type' messages."""
    t = type(value)
    names = {
        str: "문자열(str)",
        bool: "참/거짓(bool)",
        int: "정수(int)",
        float: "실수(float)",
        list: "리스트(list)",
        tuple: "튜플(tuple)",
        dict: "딕셔너리(dict)",
        set: "집합(set)",
        type(None): "None",
    }
    if t in names:
        return names[t]
    if t.__name__ in ("function", "builtin_function_or_method", "method"):
        return "함수"
    if t.__name__ in ("type", "ABCMeta"):
        return "클래스"
    return f"{t.__module__}.{t.__qualname__}"


def tolerance_text(digits=None, rel=None, abs_tol=None, sig=None) -> str:
    """How close an answer must be, in Korean (never the answer itself)."""
    parts = []
    if digits is not None:
        half = 0.5 * 10.0 ** (-digits)
        parts.append(f"소수점 아래 {digits}자리까지 (±{format(half, 'g')})")
    if sig is not None:
        parts.append(f"유효숫자 {sig}자리")
    if rel is not None:
        parts.append(f"상대 오차 {format(rel * 100, 'g')}% 이내")
    if abs_tol is not None:
        parts.append(f"절대 오차 ±{format(abs_tol, 'g')} 이내")
    return " 또는 ".join(parts) or "정확히 일치"


def ok(name: str, value) -> None:
    """Print the success line."""
    print(f"✅ {name}: {fmt(value)}")


def fail(name: str, text: str, hint: str | None = None):
    """Raise AssertionError with a Korean message naming the entry."""
    msg = f"❌ {name}: {text}"
    if hint:
        msg += f" (힌트: {hint})"
    raise AssertionError(msg)  # nbgrader scores a test cell 0 when it raises
