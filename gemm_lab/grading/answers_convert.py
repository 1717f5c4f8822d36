"""Answer checks, part 1: turning a student's value into plain Python values (see ``answers``).

numpy/torch/pandas scalars and small arrays become ``int``/``float``/``str``/``bool``/lists through the
C-level ``item``/``tolist`` methods; ``_Bad`` carries the Korean reason a value cannot be read.
"""

from __future__ import annotations

import sys

from .feedback import describe_type, fmt

__all__ = ["normalize_text"]

_INT = (0).__class__
_FLOAT = (0.0).__class__
_BOOL = (0 == 0).__class__
_STR = "".__class__
_TUPLE = ().__class__
_LIST = [].__class__
_DICT = {}.__class__
_SET = {0}.__class__
_NONE = None.__class__
_TYPE = (0).__class__.__class__
_BASE_EXC = Exception
_INF = 1e308 * 10.0
_MAX_ITEMS = 100_000


class _Bad(Exception):
    """Internal: a student's value that cannot be read as the expected kind (Korean text)."""


# --------------------------------------------------------------------------- conversion


def _plain(x):
    """Turn numpy/torch/pandas scalars and small arrays into plain Python values (no coercion of kind)."""
    t = _TYPE(x)
    if t in (_INT, _FLOAT, _BOOL, _STR, _NONE, _TUPLE, _LIST, _DICT, _SET):
        return x
    mod = t.__module__ or ""
    if mod == "numpy" or mod.startswith("numpy."):
        np = sys.modules.get("numpy")
        if np is not None and isinstance(x, np.generic):
            return np.generic.item(x)
        if np is not None and isinstance(x, np.ndarray):
            v = np.ndarray.tolist(x)
            return _unwrap_one(v)
    if mod.startswith("torch"):
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(x, torch._C.TensorBase):
            base = torch._C.TensorBase
            v = base.tolist(base.cpu(base.detach(x)))
            return _unwrap_one(v)
    if t.__name__ in ("Fraction", "Decimal") and mod in ("fractions", "decimal"):
        if t.__name__ == "Decimal" and not x.is_finite():
            return _FLOAT(_STR(x).lower().replace("infinity", "inf"))
        return _FLOAT(x)
    if t.__name__ == "ndarray" or t.__name__ == "Tensor":
        return x
    # str subclasses / int subclasses: take the genuine base value, never the subclass's overrides.
    if isinstance(x, _BOOL):
        return _BOOL(_INT.__index__(x))
    if isinstance(x, _STR):
        return _STR.__str__(x)
    if isinstance(x, _INT):
        return _INT.__index__(x)
    if isinstance(x, _FLOAT):
        return _FLOAT.__float__(x)
    return _container(x)


def _container(x):
    """Any mapping as a dict, a set-like as a set, a tuple subclass as a tuple, any other iterable (range, a
    generator, dict values, a list subclass) as a list: what a set/list/dict answer is asked for; else ``x``."""
    import collections.abc as abc
    import itertools

    if isinstance(x, (bytes, bytearray)) or _TYPE(x).__name__ == "DataFrame":  # a table is check_table's
        return x
    try:
        if isinstance(x, abc.Mapping):
            return _DICT(itertools.islice(x.items(), _MAX_ITEMS + 1))
        if isinstance(x, abc.Iterable):
            items = _LIST(itertools.islice(x, _MAX_ITEMS + 1))
            if len(items) > _MAX_ITEMS:
                return x
            return _SET(items) if isinstance(x, abc.Set) else _TUPLE(items) if isinstance(x, _TUPLE) else items
    except _BASE_EXC:  # a student's container that fails while read is a wrong answer, not a crash
        return x
    return x


def _unwrap_one(v):
    """A one-element list (from a size-1 array/tensor) counts as its element."""
    while _TYPE(v) is _LIST and len(v) == 1:
        v = v[0]
    return v


def _as_number(x, name: str):
    """A Python int or float from a student's value, or _Bad with a Korean reason."""
    v = _plain(x)
    t = _TYPE(v)
    if t is _BOOL:
        raise _Bad(f"참/거짓 값 {v}을(를) 받았습니다. 숫자로 답하세요.")
    if t is _INT:
        return v
    if t is _FLOAT:
        if v != v:
            raise _Bad("NaN(숫자가 아님)을 받았습니다. 계산 과정에 0/0이나 정의되지 않은 값이 없는지 확인하세요.")
        if v == _INF or v == -_INF:
            raise _Bad("무한대(inf)를 받았습니다. 0으로 나누지 않았는지 확인하세요.")
        return v
    if v is None:
        raise _Bad("None을 받았습니다. 값을 변수에 대입했는지(return을 빠뜨리지 않았는지) 확인하세요.")
    if t is _STR:
        try:
            _FLOAT(v)
            raise _Bad(f"문자열 {fmt(v)}을(를) 받았습니다. 따옴표 없이 숫자로 적으세요.")
        except _Bad:
            raise
        except _BASE_EXC:
            raise _Bad(f"문자열 {fmt(v)}을(를) 받았습니다. 숫자를 기대합니다.") from None
    if t in (_LIST, _TUPLE):
        raise _Bad(f"{describe_type(v)} {fmt(v)}을(를) 받았습니다. 숫자 하나를 기대합니다.")
    if t is _FLOAT.__class__ or callable(v):
        raise _Bad("함수나 클래스를 받았습니다. 함수 자체가 아니라 계산한 숫자를 대입하세요 (호출했나요?).")
    raise _Bad(f"{describe_type(v)} 값을 받았습니다. 숫자(int 또는 float)를 기대합니다.")


def _as_bool(x):
    v = _plain(x)
    if _TYPE(v) is _BOOL:
        return v
    if v is None:
        raise _Bad("None을 받았습니다. True 또는 False를 대입하세요.")
    if _TYPE(v) is _STR:
        raise _Bad(f"문자열 {fmt(v)}을(를) 받았습니다. 따옴표 없이 True 또는 False로 적으세요.")
    raise _Bad(f"{describe_type(v)} {fmt(v)}을(를) 받았습니다. True 또는 False로 답하세요.")


def normalize_text(s: str) -> str:
    """Case-, width-, space-, '_' and '-'-insensitive form of a string (used for answers and labels)."""
    s = _STR.casefold(_STR.__str__(s))
    out = []
    for ch in s:
        if ch in " \t\r\n_-·":
            continue
        o = ord(ch)
        if 0xFF01 <= o <= 0xFF5E:  # full-width ASCII
            ch = chr(o - 0xFEE0)
        out.append(ch)
    return "".join(out)
