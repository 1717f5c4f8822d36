"""Answer checks, part 1: turning a student's value into plain Python values (see ``answers``).

numpy/torch/pandas scalars and small arrays become ``int``/``float``/``str``/``bool``/lists through their
``item``/``tolist`` methods; ``_Bad`` carries the Korean reason a value cannot be read.
"""

from __future__ import annotations

import sys
from decimal import Decimal
from fractions import Fraction

from ..messages import describe_type, fmt

__all__ = ["normalize_text"]

_MAX_ITEMS = 100_000


class _Bad(Exception):
    """Internal: a student's value that cannot be read as the expected kind (Korean text)."""


# --------------------------------------------------------------------------- conversion


def _plain(x):
    """Turn numpy/torch/pandas scalars and small arrays into plain Python values (no coercion of kind)."""
    t = type(x)
    if t in (int, float, bool, str, type(None), tuple, list, dict, set):
        return x
    np, torch = sys.modules.get("numpy"), sys.modules.get("torch")  # loaded when the value is theirs
    if np is not None and isinstance(x, np.generic):
        return x.item()
    if np is not None and isinstance(x, np.ndarray):
        return _unwrap_one(x.tolist())
    if torch is not None and isinstance(x, torch.Tensor):
        return _unwrap_one(x.detach().cpu().tolist())
    if isinstance(x, (Fraction, Decimal)):
        return float(x)
    if t.__name__ == "ndarray" or t.__name__ == "Tensor":
        return x
    for base in (bool, int, float, str):  # a subclass (numpy.str_, an IntEnum) counts as its plain value
        if isinstance(x, base):
            return base(x)
    return _container(x)


def _container(x):
    """Any mapping as a dict, a set-like as a set, a tuple subclass as a tuple, any other iterable (range, a
    generator, dict values, a list subclass) as a list: what a set/list/dict answer is asked for; else ``x``."""
    import collections.abc as abc
    import itertools

    if isinstance(x, (bytes, bytearray)) or type(x).__name__ == "DataFrame":  # a table is check_table's
        return x
    try:
        if isinstance(x, abc.Mapping):
            return dict(itertools.islice(x.items(), _MAX_ITEMS + 1))
        if isinstance(x, abc.Iterable):
            items = list(itertools.islice(x, _MAX_ITEMS + 1))
            if len(items) > _MAX_ITEMS:
                return x
            return set(items) if isinstance(x, abc.Set) else tuple(items) if isinstance(x, tuple) else items
    except Exception:  # a student's container that fails while read is a wrong answer, not a crash
        return x
    return x


def _unwrap_one(v):
    """A one-element list (from a size-1 array/tensor) counts as its element."""
    while type(v) is list and len(v) == 1:
        v = v[0]
    return v


def _as_number(x):
    """A Python int or float from a student's value, or _Bad with a Korean reason."""
    v = _plain(x)
    t = type(v)
    if t is bool:
        raise _Bad(f"참/거짓 값 {v}을(를) 받았습니다. 숫자로 답하세요.")
    if t is int:
        return v
    if t is float:
        if v != v:
            raise _Bad("NaN(숫자가 아님)을 받았습니다. 계산 과정에 0/0이나 정의되지 않은 값이 없는지 확인하세요.")
        if v in (float("inf"), float("-inf")):
            raise _Bad("무한대(inf)를 받았습니다. 0으로 나누지 않았는지 확인하세요.")
        return v
    if v is None:
        raise _Bad("None을 받았습니다. 값을 변수에 대입했는지(return을 빠뜨리지 않았는지) 확인하세요.")
    if t is str:
        try:
            float(v)
        except ValueError:
            raise _Bad(f"문자열 {fmt(v)}을(를) 받았습니다. 숫자를 기대합니다.") from None
        raise _Bad(f"문자열 {fmt(v)}을(를) 받았습니다. 따옴표 없이 숫자로 적으세요.")
    if t in (list, tuple):
        raise _Bad(f"{describe_type(v)} {fmt(v)}을(를) 받았습니다. 숫자 하나를 기대합니다.")
    if t is type or callable(v):
        raise _Bad("함수나 클래스를 받았습니다. 함수 자체가 아니라 계산한 숫자를 대입하세요 (호출했나요?).")
    raise _Bad(f"{describe_type(v)} 값을 받았습니다. 숫자(int 또는 float)를 기대합니다.")


def _as_bool(x):
    v = _plain(x)
    if type(v) is bool:
        return v
    if v is None:
        raise _Bad("None을 받았습니다. True 또는 False를 대입하세요.")
    if type(v) is str:
        raise _Bad(f"문자열 {fmt(v)}을(를) 받았습니다. 따옴표 없이 True 또는 False로 적으세요.")
    raise _Bad(f"{describe_type(v)} {fmt(v)}을(를) 받았습니다. True 또는 False로 답하세요.")


_IGNORED = str.maketrans({**dict.fromkeys(" \t\r\n_-·"), **{o: o - 0xFEE0 for o in range(0xFF01, 0xFF5F)}})


def normalize_text(s: str) -> str:
    """Case-, width-, space-, '_' and '-'-insensitive form of a string (used for answers and labels)."""
    return str(s).casefold().translate(_IGNORED)
