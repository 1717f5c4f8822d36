"""Tuned ``best_matmul`` plans kept on disk, so that a second process does not time the candidates again.

One JSON file (``GEMM_LAB_PLAN_DIR``, default ``~/.cache/gemm_lab``, file ``best_plans.json``) maps a
section per GPU and software (device name, SM count, torch and triton versions: a plan tuned for one of
them says nothing about another) to entries per plan key (shapes, strides, dtypes, 16-byte alignment,
activation, output layout, ``tune_for``: what the kernels are specialized on) holding the pinned
candidate ``[kernel, config]``. Only what a later run can check is stored: the loader accepts an entry
only if that candidate is still in the current candidate list. A missing, unreadable or foreign file is
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


def load(key: tuple) -> tuple[str, dict] | None:
    """The stored (kernel, config) for a plan key on this GPU and software, or None."""
    d = store_dir()
    if d is None:
        return None
    entry = _read(os.path.join(d, FILE)).get(section(), {}).get(key_text(key))
    if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], dict)):
        return None
    return entry[0], entry[1]


def save(key: tuple, kernel: str, cfg: dict) -> bool:
    """Store the pinned candidate for a plan key; False (and nothing raised) when the folder can't be written."""
    d = store_dir()
    if d is None:
        return False
    try:
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, FILE)
        plans = _read(path)
        plans.setdefault(section(), {})[key_text(key)] = [kernel, cfg]
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".best_plans.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"version": VERSION, "plans": plans}, f, indent=0, sort_keys=True)
        os.replace(tmp, path)
        return True
    except OSError:
        return False
