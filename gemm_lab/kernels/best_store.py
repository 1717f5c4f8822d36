"""Tuned ``best_matmul`` plans kept on disk, so that a second process does not time the candidates again.

One JSON file (``GEMM_LAB_PLAN_DIR``, default ``~/.cache/gemm_lab``, file ``best_plans.json``) maps a
section per GPU and software (device name, SM count, torch and triton versions: a plan tuned for one of
them says nothing about another) to entries per plan key (shapes, strides, dtypes, 16-byte alignment,
activation, output layout, ``tune_for``: what the kernels are specialized on) holding the pinned
candidate ``[kernel, config, shape]`` (``shape``: M, N, K and a coarse class, so that a new shape of the
same class can start from the pick of the nearest tuned one, ``nearest``). Only what a later run can check
is stored: the loader accepts an entry only if that candidate is still in the current candidate list. A missing, unreadable or foreign file is
treated as empty; writes go to a temporary file renamed over the old one (no half-written file), and
merge with what another process wrote meanwhile. ``GEMM_LAB_PLAN_DIR=off`` disables the store (it is off
in the CPU interpreter unless the variable names a folder).
"""

from __future__ import annotations

import json
import os
import tempfile

FILE = "best_plans.json"
VERSION = 1


def store_dir() -> str | None:
    """The folder of the store, or None when it is off (``GEMM_LAB_PLAN_DIR=off``; and, unless the variable
    names a folder, in the CPU interpreter, where nothing is timed for real)."""
    from gemm_lab import runtime

    d = os.environ.get("GEMM_LAB_PLAN_DIR")
    if d is not None and d.strip().lower() in ("off", "0", "none", ""):
        return None
    if d is None and not runtime.on_gpu():
        return None
    return d or os.path.join(os.path.expanduser("~"), ".cache", "gemm_lab")


def section() -> str:
    """The section of the file this process reads and writes: GPU, SM count, torch, triton."""
    from gemm_lab import runtime

    info = runtime.describe()
    return f"{info['device_name']}|sms={info['sms']}|torch={info['torch']}|triton={info['triton']}"


def key_text(key: tuple) -> str:
    """A plan key (best._key) as a stable string (devices and dtypes by name)."""
    return repr(tuple(str(x) if not isinstance(x, (int, bool, tuple, type(None))) else x for x in key))


def _read(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("plans"), dict):
        return {}
    return data["plans"]


def _valid(entry) -> bool:
    return (isinstance(entry, list) and len(entry) in (2, 3) and isinstance(entry[0], str)
            and isinstance(entry[1], dict))


def load(key: tuple) -> tuple[str, dict] | None:
    """The stored (kernel, config) for a plan key on this GPU and software, or None."""
    d = store_dir()
    if d is None:
        return None
    entry = _read(os.path.join(d, FILE)).get(section(), {}).get(key_text(key))
    if not _valid(entry):
        return None
    return entry[0], entry[1]


def nearest(cls: str, M: int, N: int, K: int, max_distance: float = 1.5) -> tuple[tuple[str, dict], tuple] | None:
    """((kernel, config), (M', N', K')) of the stored pick of class ``cls`` whose shape is nearest to
    (M, N, K) in log space (sum of |log(x / x')| over the three sizes, at most ``max_distance``: about a
    factor 4.5 in all), or None. A starting point for a shape never tuned, not a substitute for tuning."""
    import math

    d = store_dir()
    if d is None:
        return None
    best, best_d = None, max_distance
    for entry in _read(os.path.join(d, FILE)).get(section(), {}).values():
        if not (_valid(entry) and len(entry) == 3 and isinstance(entry[2], dict) and entry[2].get("cls") == cls):
            continue
        try:
            dims = tuple(int(entry[2][k]) for k in ("M", "N", "K"))
            dist = sum(abs(math.log(x / y)) for x, y in zip((M, N, K), dims, strict=True))
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            continue
        if dist <= best_d:
            best, best_d = ((entry[0], entry[1]), dims), dist
    return best


def save(key: tuple, kernel: str, cfg: dict, shape: dict | None = None) -> bool:
    """Store the pinned candidate for a plan key (``shape``: {"M", "N", "K", "cls"} for ``nearest``);
    False (and nothing raised) when the folder can't be written."""
    d = store_dir()
    if d is None:
        return False
    try:
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, FILE)
        plans = _read(path)
        plans.setdefault(section(), {})[key_text(key)] = [kernel, cfg] + ([shape] if shape else [])
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".best_plans.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"version": VERSION, "plans": plans}, f, indent=0, sort_keys=True)
        os.replace(tmp, path)
        return True
    except OSError:
        return False
