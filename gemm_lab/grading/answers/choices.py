"""Answer checks, part 4: ``check_choice`` (a set of chosen items) and ``check_pairs`` (ordered
coordinates), see ``answers``."""

from __future__ import annotations

import re
import sys

from ..messages import describe_type, fail, fmt, ok
from .convert import _Bad, _plain, normalize_text
from .values import _compare, _Spec

__all__ = ["check_choice", "check_pairs"]

_DIGITS = re.compile("[0-9]+")  # ASCII digits only, as a choice's number is written


# --------------------------------------------------------------------------- choices and pairs


def _choice_items(got):
    g = _plain(got)
    t = type(g)
    if t is str:
        parts = g.replace("，", ",").split(",")
        return [p for p in parts if p.strip()] if len(parts) > 1 else [g]
    if t in (list, tuple, set):
        return [_plain(v) for v in g]
    if t is dict:
        return [k for k, v in g.items() if v is not False and v is not None and v != 0]
    return [g]


def _choice_key(item, int_mode, aliases):
    item = _plain(item)
    t = type(item)
    if t is bool:
        raise _Bad(f"항목으로 {item}을(를) 받았습니다.")
    if int_mode:
        if t is int:
            return item
        if t is float and item == int(item):
            return int(item)
        if t is str:
            digits = _DIGITS.findall(item)
            if len(digits) == 1:
                return int(digits[0])
        raise _Bad(f"항목 {fmt(item)}을(를) 번호로 읽을 수 없습니다. 번호(예: 1, 2) 또는 '후보 1'처럼 적으세요.")
    if t is str:
        n = normalize_text(item)
        return aliases.get(n, n)
    return item


def _numbered(label: str):
    """("후보", 1) for "후보 1": the label's text without its one number, and the number; else None."""
    found = _DIGITS.findall(label)
    return (normalize_text(_DIGITS.sub("", label)), int(found[0])) if len(found) == 1 else None


def check_choice(name, got, expected_set, *, accept=None, hint=None, reveal=False):
    """Check a set of chosen items (order and duplicates ignored).

    Integer choices accept ``{1, 2}``, ``[1, 2]``, ``["후보 1", "후보 2"]``, ``"1, 2"``; string choices are
    compared like ``check_value`` strings, ``accept={"memory": ["메모리", ...]}`` adds aliases.
    A single expected item (not a set/list) accepts a bare answer too.
    """
    exp = _plain(expected_set)
    exp_items = _choice_items(exp)
    int_mode = all(type(_plain(e)) is int for e in exp_items) and bool(exp_items)
    if not int_mode and exp_items and all(type(_plain(e)) is str for e in exp_items):
        # {"후보 1", "후보 2"}: labels that differ only by their number are compared as numbers
        shapes = {_numbered(e) for e in exp_items}
        if None not in shapes and len({t for t, _ in shapes}) == 1:
            int_mode = True
            exp_items = [n for _, n in shapes]
    aliases = {normalize_text(a): normalize_text(canon) for canon, names in (accept or {}).items()
               for a in ([names] if type(names) is str else names)}
    if got is None:
        fail(name, "None을 받았습니다. 고른 항목들을 집합이나 리스트로 적으세요.", hint)
    try:
        exp_keys = {_choice_key(e, int_mode, aliases) for e in exp_items}
        got_keys = {_choice_key(g, int_mode, aliases) for g in _choice_items(got)}
    except _Bad as bad:
        fail(name, bad.args[0], hint)
    if got_keys == exp_keys:
        ok(name, _plain(got))
        return None
    extra = got_keys - exp_keys
    missing = exp_keys - got_keys
    shown = fmt(sorted(got_keys, key=str) if not int_mode else sorted(got_keys))
    parts = []  # the items themselves only with reveal (a visible test), else how many
    if extra:
        parts.append(f"정답이 아닌 항목: {fmt(sorted(extra, key=str))}" if reveal
                     else f"정답이 아닌 항목이 {len(extra)}개 섞여 있습니다")
    if missing:
        parts.append(f"빠진 항목: {fmt(sorted(missing, key=str))}" if reveal else f"빠진 정답이 {len(missing)}개 있습니다")
    fail(name, f"{shown}을(를) 받았습니다. " + ", ".join(parts) + ".", hint)


def _pair_list(got, width):
    g = got
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(g, pd.DataFrame):
        cols = [normalize_text(str(c)) for c in g.columns]
        if width == 2 and "pidm" in cols and "pidn" in cols:
            g = [(a, b) for a, b in zip(g.iloc[:, cols.index("pidm")].tolist(),
                                         g.iloc[:, cols.index("pidn")].tolist(), strict=False)]
        else:
            g = [tuple(r) for r in g.itertuples(index=False)]
    g = _plain(g)
    if type(g) is dict:
        raise _Bad("딕셔너리를 받았습니다. 순서대로 좌표를 담은 리스트로 답하세요 (예: [(0, 0), (0, 1), ...]).")
    if type(g) is set:
        raise _Bad("집합(set)을 받았습니다. 순서가 중요하므로 리스트로 답하세요.")
    if type(g) not in (list, tuple):
        raise _Bad(f"{describe_type(g)}을(를) 받았습니다. 좌표 리스트를 기대합니다 (예: [(0, 0), (0, 1), ...]).")
    return [_plain(p) for p in g]


def check_pairs(name, got, expected_list, *, hint=None, reveal=False, item_name="pid"):
    """Check an ordered list of coordinates, e.g. ``[(0, 0), (1, 0), ...]`` (tuples or lists; an
    (n, 2) array; a DataFrame with pid_m/pid_n columns). The message names the first wrong position
    as ``{item_name}={position}``.
    """
    exp = [tuple(p) for p in _pair_list(expected_list, 2)]
    width = len(exp[0]) if exp else 2
    if got is None:
        fail(name, "None을 받았습니다. 좌표 리스트를 대입하세요.", hint)
    try:
        pairs = _pair_list(got, width)
    except _Bad as bad:
        fail(name, bad.args[0], hint)
    if len(pairs) != len(exp):
        fail(name, f"좌표 {len(pairs)}개를 받았습니다. 좌표 {len(exp)}개를 기대합니다.", hint)
    spec = _Spec(reveal=reveal)
    for i, (p, e) in enumerate(zip(pairs, exp, strict=False)):
        if type(p) not in (list, tuple) or len(p) != width:
            fail(name, f"{item_name}={i}: {fmt(p)}을(를) 받았습니다. 원소 {width}개짜리 튜플을 기대합니다.", hint)
        if _compare(tuple(p), e, spec) is not None:
            text = f"{item_name}={i}의 좌표가 틀렸습니다: {fmt(tuple(p))}을(를) 받았습니다."
            if reveal:
                text += f" 기대값: {fmt(e)}."
            if i == 1:
                text += f" ({item_name}=0은 맞습니다.)"
            elif i > 1:
                text += f" ({item_name}=0 ~ {i - 1}은 맞습니다.)"
            fail(name, text, hint)
    print(f"✅ {name}: 좌표 {len(exp)}개 모두 맞습니다")
    return None
