"""Plain data across a process boundary: what a student's value becomes as JSON, and back, nothing executed.

``encode(value)`` (in the process that holds the value: the student's kernel, a worker) gives JSON-able data
of bounded size and depth: numbers (``nan``/``inf`` tagged), strings, lists, and tagged tuples, sets, dicts,
numpy arrays and tensors, pandas tables and series; a ``@triton.jit`` kernel or a Python function becomes a
reference by name (``{"__kernel__": name}``), anything else ``{"__unsupported__": type name}``. Any mapping
is encoded as a dict, any other iterable as a list (a set when it is set-like). ``decode(data)`` (the
grader) gives plain Python values back; what it cannot read is an :class:`Unsupported`, a wrong answer,
never a crash. The hand-out of a test cell (``judge.handout``), the check record (``record``) and the
workers' answers (``judge.remote``, ``judge.worker``) all use it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

__all__ = ["encode", "decode", "Unsupported", "TooBig", "MAX_ITEMS", "MAX_DEPTH"]

MAX_ITEMS = 20_000  # elements of one array, table or list
MAX_DEPTH = 8


@dataclass(repr=False)
class Unsupported:
    """A claimed value the hand-out could not carry as data (its type name and a short text)."""

    type_name: str
    text: str = ""

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.text}>" if self.text else f"<{self.type_name}>"


class TooBig(ValueError):
    """A value past ``MAX_ITEMS``: too large to carry."""


def _float(x: float):
    if math.isnan(x):
        return {"__float__": "nan"}
    if math.isinf(x):
        return {"__float__": "inf" if x > 0 else "-inf"}
    return x


def _kind(value) -> str | None:
    t = type(value)
    mod, name = t.__module__ or "", t.__name__
    if mod.startswith("triton") and name in ("JITFunction", "InterpretedFunction", "Autotuner", "Heuristics"):
        return "__kernel__"
    if name in ("function", "builtin_function_or_method", "method") or (callable(value) and name != "type"
                                                                        and mod == "__main__"):
        return "__function__"
    return None


def encode(value, depth: int = 0, name: str = ""):
    """JSON-able form of a student's value (see the module docstring); never raises for odd objects."""
    if depth > MAX_DEPTH:
        return {"__unsupported__": "nested too deeply", "text": ""}
    if value is None or type(value) in (bool, str, int):
        return value
    if type(value) is float:
        return _float(value)
    kind = _kind(value)
    if kind is not None:
        return {kind: name or getattr(value, "__name__", "")}
    mod = type(value).__module__ or ""
    tname = type(value).__name__
    if mod == "fractions" or mod in ("decimal", "_decimal"):
        return _float(float(value))
    if mod.startswith("numpy") or mod.startswith("torch"):
        if tname in ("Tensor", "Parameter", "ndarray") or hasattr(value, "tolist") and hasattr(value, "shape"):
            n = math.prod(int(s) for s in tuple(value.shape))
            if n > MAX_ITEMS:
                raise TooBig(f"array of {n} elements")
            data = value.detach().cpu().tolist() if tname in ("Tensor", "Parameter") else value.tolist()
            if not tuple(value.shape):  # a scalar array/tensor or a numpy scalar: its number
                return encode(data, depth + 1)
            return {"__array__": encode(data, depth + 1), "dtype": str(value.dtype)}
    if mod.startswith("pandas"):
        if tname == "DataFrame":
            if value.size > MAX_ITEMS:
                raise TooBig(f"table of {value.size} cells")
            split = value.to_dict(orient="split")
            return {"__dataframe__": {k: encode(split[k], depth + 1) for k in ("index", "columns", "data")}}
        if tname == "Series":
            if value.size > MAX_ITEMS:
                raise TooBig(f"series of {value.size} items")
            return {"__series__": {"index": encode(list(value.index), depth + 1),
                                   "data": encode(list(value.tolist()), depth + 1),
                                   "name": encode(value.name, depth + 1)}}
    if isinstance(value, Mapping):  # dict, OrderedDict, defaultdict, MappingProxyType, ...: a dict answer
        return {"__dict__": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in _bounded(value.items())]}
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes, bytearray)):
        # list, range, a generator, a pandas Index, dict keys, ...: a list (a tuple or set when it is one)
        enc = [encode(v, depth + 1) for v in _bounded(value)]
        kind = "__tuple__" if isinstance(value, tuple) else "__set__" if isinstance(value, AbstractSet) else ""
        return {kind: enc} if kind else enc
    try:
        text = str(value)[:200]
    except Exception:  # noqa: BLE001 - a student's object whose str() fails is still reported
        text = ""
    return {"__unsupported__": tname, "text": text}


def _bounded(iterable) -> list:
    items = list(itertools.islice(iterable, MAX_ITEMS + 1))
    if len(items) > MAX_ITEMS:
        raise TooBig(f"more than {MAX_ITEMS} items")
    return items


def decode(obj, depth: int = 0):
    """Python value of an encoded claim (plain data only: lists, tuples, dicts, numpy arrays, tables)."""
    if depth > MAX_DEPTH + 2:
        return Unsupported("nested too deeply")
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, list):
        return [decode(v, depth + 1) for v in obj]
    if not isinstance(obj, dict) or len(obj) == 0:
        return Unsupported(type(obj).__name__)
    if "__float__" in obj:
        return float(obj["__float__"]) if obj["__float__"] in ("nan", "inf", "-inf") else Unsupported("float")
    if "__tuple__" in obj:
        return tuple(decode(v, depth + 1) for v in _list(obj["__tuple__"]))
    if "__set__" in obj:
        items = [decode(v, depth + 1) for v in _list(obj["__set__"])]
        try:
            return set(items)
        except TypeError:
            return Unsupported("set", repr(items)[:200])
    if "__dict__" in obj:
        pairs = [p for p in _list(obj["__dict__"]) if isinstance(p, list) and len(p) == 2]
        try:
            return {decode(k, depth + 1): decode(v, depth + 1) for k, v in pairs}
        except TypeError:
            return Unsupported("dict", "unhashable key")
    if "__array__" in obj:
        import numpy as np

        data = decode(obj["__array__"], depth + 1)
        dtype = str(obj.get("dtype", ""))
        np_dtype = dtype.replace("torch.", "")
        try:
            return np.array(data, dtype=np_dtype if np_dtype in _NUMPY_DTYPES else None)
        except (TypeError, ValueError):
            return Unsupported("array", dtype)
    for tag, kind, label in (("__dataframe__", "DataFrame", "columns"), ("__series__", "Series", "name")):
        if tag in obj:
            import pandas as pd

            d = obj[tag] if isinstance(obj[tag], dict) else {}
            parts = {k: decode(d.get(k, [] if k == "data" else None), depth + 1) for k in ("data", "index", label)}
            try:
                return getattr(pd, kind)(parts.pop("data"), **parts)
            except (TypeError, ValueError):
                return Unsupported(kind)
    if "__unsupported__" in obj:
        return Unsupported(str(obj["__unsupported__"])[:80], str(obj.get("text", ""))[:200])
    return Unsupported("object")


_NUMPY_DTYPES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"}


def _list(x) -> list:
    return x if isinstance(x, list) else []
