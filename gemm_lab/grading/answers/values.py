"""Answer checks, part 2: comparing one answer with its expected value, and ``check_value`` (see ``answers``)."""

from __future__ import annotations

import math
from typing import NamedTuple

from ..messages import describe_type, fail, fmt, ok, tolerance_text
from .convert import _as_bool, _as_number, _Bad, _plain, normalize_text

__all__ = ["check_value"]


# --------------------------------------------------------------------------- number comparison


def _exponent10(v: float) -> int:
    """floor(log10(|v|)) for v != 0."""
    return math.floor(math.log10(abs(v)))


def _within(got, exp, spec) -> bool:
    digits, rel, abs_tol, sig = spec[:4]
    diff = abs(got - exp)
    mag = abs(exp)
    if spec[:4] == (None,) * 4:
        if type(exp) is int or (type(exp) is float and exp == int(exp) and mag < 1e15):
            return diff <= 1e-9
        return diff <= 1e-6 * mag + 1e-12
    slack = 1e-12 * mag + 1e-300
    if digits is not None and diff <= 0.5 * 10.0 ** (-digits) * (1.0 + 1e-9) + slack:
        return True
    if sig is not None:
        unit = 10.0 ** (_exponent10(exp) - sig + 1) if exp != 0 else 0.0
        if diff <= 0.5 * unit * (1.0 + 1e-9) + slack:
            return True
    if rel is not None and diff <= rel * mag + slack:
        return True
    if abs_tol is not None and diff <= abs_tol + slack:
        return True
    return False


def _times(ratio: float) -> str:
    """A ratio to two significant digits, written plainly (3.1, 20, 1,000)."""
    e = _exponent10(ratio)
    unit = 10.0 ** (e - 1)
    r = int(ratio / unit + 0.5) * unit
    if r >= 10:
        return format(int(r + 0.5), ",")
    return format(r, ".2g")


def _number_feedback(got, exp, spec) -> str:
    text, tolerance = f"{fmt(got)}을(를) 받았습니다.", f" 허용 오차: {tolerance_text(*spec[:4])}."
    if spec.reveal:
        pct = f", {format(abs(got - exp) / abs(exp) * 100.0, '.3g')}% 차이" if exp != 0 else ""
        return text + f" 기대값: {fmt(exp)}{pct}." + tolerance
    if exp != 0 and got != 0 and (got > 0) != (exp > 0):
        text += " 부호가 반대입니다."
    elif exp != 0 and got != 0 and (abs(got) >= 3 * abs(exp) or 3 * abs(got) <= abs(exp)):
        ratio = abs(got) / abs(exp)
        text += (f" 기대값보다 약 {_times(max(ratio, 1 / ratio))}배 {'큽니다' if ratio >= 1 else '작습니다'} — "
                 "단위나 자릿수를 확인하세요.")
    else:
        text += " 기대값보다 큽니다." if got > exp else " 기대값보다 작습니다."
    return text + tolerance


# --------------------------------------------------------------------------- generic element check


class _Spec(NamedTuple):
    """How an answer is compared: the tolerances first (``tolerance_text``'s order), string aliases, reveal."""

    digits: int | None = None
    rel: float | None = None
    abs_tol: float | None = None
    sig: int | None = None
    accept: object = None
    reveal: bool = False


def _aliases(expected: str, accept) -> set:
    if type(accept) is dict:
        accept = accept.get(expected, [])
    if type(accept) is str:
        accept = [accept]
    return {normalize_text(expected), *(normalize_text(a) for a in accept or ())}


def _wrong(path, got_text, exp_text, spec, otherwise):
    """(path, reason) of a wrong bool or string: the expected value with ``reveal``, else ``otherwise``."""
    return path, f"{got_text}을(를) 받았습니다. " + (f"기대값: {exp_text}." if spec.reveal else otherwise)


def _compare(got, exp, spec: _Spec, path: str = ""):
    """None when ``got`` matches ``exp``, else (path, Korean reason)."""
    exp = _plain(exp)
    te = type(exp)
    try:
        if te is bool:
            g = _as_bool(got)
            return None if g is exp else _wrong(path, g, exp, spec, "반대로 생각해 보세요.")
        if te is int or te is float:
            g = _as_number(got)
            if _within(g, exp, spec):
                return None
            return path, _number_feedback(g, exp, spec)
        if te is str:
            g = _plain(got)
            if g is None:
                return path, "None을 받았습니다. 문자열로 답하세요."
            if type(g) is not str:
                return path, f"{describe_type(g)} {fmt(g)}을(를) 받았습니다. 문자열(따옴표로 감싼 답)을 기대합니다."
            if normalize_text(g) in _aliases(exp, spec.accept):
                return None
            return _wrong(path, fmt(g), fmt(exp), spec, "맞는 답이 아닙니다.")
        if te in (tuple, list):
            g = _plain(got)
            if type(g) is set:
                return path, "집합(set)을 받았습니다. 순서가 있는 리스트나 튜플로 답하세요."
            if type(g) not in (tuple, list):
                return path, (f"{describe_type(g)} {fmt(g)}을(를) 받았습니다. "
                              f"원소 {len(exp)}개짜리 리스트나 튜플을 기대합니다.")
            if len(g) != len(exp):
                return path, f"원소 {len(g)}개를 받았습니다. 원소 {len(exp)}개를 기대합니다."
            for i, (gi, ei) in enumerate(zip(g, exp, strict=False)):
                r = _compare(gi, ei, spec, f"{path}[{i}]")
                if r is not None:
                    return r
            return None
        if te is dict:
            g = _plain(got)
            if type(g) is not dict:
                return path, f"{describe_type(g)}을(를) 받았습니다. 딕셔너리(dict)를 기대합니다."
            gk = {normalize_text(str(k)) if type(k) is str else k: k for k in g}
            for k, ev in exp.items():
                nk = normalize_text(k) if type(k) is str else k
                if nk not in gk:
                    return f"{path}[{fmt(k)}]", "이 키가 없습니다."
                r = _compare(g[gk[nk]], ev, spec, f"{path}[{fmt(k)}]")
                if r is not None:
                    return r
            return None
        if exp is None:
            g = _plain(got)
            return None if g is None else (path, f"{fmt(g)}을(를) 받았습니다. None을 기대합니다.")
    except _Bad as bad:
        return path, bad.args[0]
    raise TypeError(f"check: unsupported expected value of type {te.__name__}")


def _match_mistake(got, mistakes, spec):
    if not mistakes:
        return None
    items = mistakes.items() if type(mistakes) is dict else mistakes
    for wrong, message in items:
        if _compare(got, wrong, spec._replace(reveal=False)) is None:
            return message
    return None


def check_value(name, got, expected, *, rel=None, abs=None, digits=None, sig=None, accept=None,
                hint=None, mistakes=None, reveal=False):
    """Check one answer (number, string, bool, tuple/list/dict of those) with Korean feedback.

    ``accept``: aliases for a string answer (list, or dict expected→aliases). ``mistakes``: dict (or
    list of pairs) ``wrong answer → Korean explanation`` shown when the student gave that wrong answer.
    ``reveal``: show the expected value in the message (visible tests only).
    """
    spec = _Spec(digits, rel, abs, sig, accept, reveal)
    result = _compare(got, expected, spec)
    if result is None:
        ok(name, _plain(got))
        return None
    path, reason = result
    known = _match_mistake(got, mistakes, spec)
    fail(f"{name}{path}", f"{reason} {known}" if known else reason, hint)
