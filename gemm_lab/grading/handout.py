"""Answers leave the student's kernel as plain data: the hand-out of a test cell in grading mode.

While the autograder runs a notebook, a test cell does not run its checks in the student's kernel. The
grader sends :func:`handout_source` instead: it encodes the values of the notebook names the test cell
reads (:func:`read_names`) as JSON and displays them with the mime type :data:`MIME`. What comes out is
a *claim*: the grader decodes it (:func:`decode`, plain JSON, nothing executed) and runs the test cell's
own source in its own process (``gemm_lab.grading.replay``). Forging the hand-out only claims an
answer, which is what answering is. Any mapping is handed out as a dict, any other iterable as a list (a set
when it is set-like), so ``range(1, 3)``, a pandas ``Index`` or an ``OrderedDict`` reach the grader as the
notebook's own check reads them (``answers.convert._plain``).

A ``@triton.jit`` kernel or a Python function is handed out as a reference by name (``{"__kernel__":
name}``); the grader takes its source from the notebook file, never from the kernel process.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import json
import math
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet

__all__ = ["MIME", "read_names", "encode", "decode", "emit", "handout_source", "claims_from_outputs",
           "Unsupported", "MAX_BYTES"]

MIME = "application/vnd.gemm-lab.claims+json"
MAX_BYTES = 512 * 1024  # per test cell: answers are numbers, short lists and small tables
MAX_ITEMS = 20_000  # elements of one array, table or list
MAX_DEPTH = 8
_BUILTIN_NAMES = frozenset(dir(builtins))


class Unsupported:
    """A claimed value the hand-out could not carry as data (its type name and a short text)."""

    def __init__(self, type_name: str, text: str = ""):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.text}>" if self.text else f"<{self.type_name}>"

    def __eq__(self, other) -> bool:
        return isinstance(other, Unsupported) and (self.type_name, self.text) == (other.type_name, other.text)

    __hash__ = None


# --------------------------------------------------------------------------- which names a test cell reads


def _bound(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
    return out


def read_names(source: str) -> list[str]:
    """Notebook names a test cell reads: loaded somewhere in it, bound nowhere in it, not builtins."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return sorted(loaded - _bound(tree) - _BUILTIN_NAMES)


# --------------------------------------------------------------------------- encoding (in the student's kernel)


class _TooBig(ValueError):
    pass


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
    if value is None or isinstance(value, (bool, str)) and type(value) in (bool, str):
        return value
    if type(value) is int:
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
            n = 1
            for s in tuple(value.shape):
                n *= int(s)
            if n > MAX_ITEMS:
                raise _TooBig(f"array of {n} elements")
            data = value.detach().cpu().tolist() if tname in ("Tensor", "Parameter") else value.tolist()
            if not tuple(value.shape):  # a scalar array/tensor or a numpy scalar: its number
                return encode(data, depth + 1)
            return {"__array__": encode(data, depth + 1), "dtype": str(value.dtype)}
    if mod.startswith("pandas"):
        if tname == "DataFrame":
            if value.size > MAX_ITEMS:
                raise _TooBig(f"table of {value.size} cells")
            split = value.to_dict(orient="split")
            return {"__dataframe__": {k: encode(split[k], depth + 1) for k in ("index", "columns", "data")}}
        if tname == "Series":
            if value.size > MAX_ITEMS:
                raise _TooBig(f"series of {value.size} items")
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
        raise _TooBig(f"more than {MAX_ITEMS} items")
    return items


def emit(namespace: dict, names) -> None:
    """Display the claims: ``{name: encoded value}`` (a name not defined is left out)."""
    claims, missing, notes = {}, [], {}
    for n in names:
        if n not in namespace:
            missing.append(n)
            continue
        try:
            claims[n] = encode(namespace[n], name=n)
        except _TooBig as exc:
            notes[n] = f"too large to grade ({exc})"
        except Exception as exc:  # noqa: BLE001 - the student's object broke its own hand-out
            notes[n] = f"could not be read ({type(exc).__name__})"
    payload = {"claims": claims, "missing": missing, "notes": notes}
    text = json.dumps(payload, ensure_ascii=False)
    if len(text.encode()) > MAX_BYTES:
        payload = {"claims": {}, "missing": [], "notes": {n: "answers too large to grade" for n in names}}
    from IPython.display import display

    display({MIME: payload, "text/plain": "(채점기에 답을 넘겼습니다)"}, raw=True)


def handout_source(names) -> str:
    """The code sent to the kernel in place of a test cell."""
    return ("from gemm_lab.grading.handout import emit as _gemm_lab_emit\n"
            f"_gemm_lab_emit(globals(), {list(names)!r})\n"
            "del _gemm_lab_emit\n")


# --------------------------------------------------------------------------- decoding (in the grader)


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
        out = {}
        for pair in _list(obj["__dict__"]):
            if isinstance(pair, list) and len(pair) == 2:
                k = decode(pair[0], depth + 1)
                try:
                    out[k] = decode(pair[1], depth + 1)
                except TypeError:
                    return Unsupported("dict", "unhashable key")
        return out
    if "__array__" in obj:
        import numpy as np

        data = decode(obj["__array__"], depth + 1)
        dtype = str(obj.get("dtype", ""))
        np_dtype = dtype.replace("torch.", "")
        try:
            return np.array(data, dtype=np_dtype if np_dtype in _NUMPY_DTYPES else None)
        except (TypeError, ValueError):
            return Unsupported("array", dtype)
    if "__dataframe__" in obj:
        import pandas as pd

        d = obj["__dataframe__"] if isinstance(obj["__dataframe__"], dict) else {}
        try:
            return pd.DataFrame(decode(d.get("data", []), depth + 1), index=decode(d.get("index"), depth + 1),
                                columns=decode(d.get("columns"), depth + 1))
        except (TypeError, ValueError):
            return Unsupported("DataFrame")
    if "__series__" in obj:
        import pandas as pd

        d = obj["__series__"] if isinstance(obj["__series__"], dict) else {}
        try:
            return pd.Series(decode(d.get("data", []), depth + 1), index=decode(d.get("index"), depth + 1),
                             name=decode(d.get("name"), depth + 1))
        except (TypeError, ValueError):
            return Unsupported("Series")
    if "__unsupported__" in obj:
        return Unsupported(str(obj["__unsupported__"])[:80], str(obj.get("text", ""))[:200])
    return Unsupported("object")


_NUMPY_DTYPES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
                 "bfloat16"} - {"bfloat16"}


def _list(x) -> list:
    return x if isinstance(x, list) else []


def claims_from_outputs(outputs) -> dict | None:
    """The last hand-out payload among a cell's outputs, or None when the cell handed nothing out."""
    found = None
    for out in outputs or []:
        data = out.get("data") if isinstance(out, dict) else None
        if isinstance(data, dict) and MIME in data:
            payload = data[MIME]
            if isinstance(payload, str):
                try:
                    payload = json.loads(payload)
                except ValueError:
                    continue
            if isinstance(payload, dict) and isinstance(payload.get("claims"), dict):
                found = payload
    return found
