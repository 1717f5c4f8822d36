"""Compile results kept by the process that judges them: in its memory and as one JSON file per key.

A key is the sha256 of everything a result depends on (``key_of``), the code that made it included
(``code_version``). Only a process that decides verdicts keeps results (``kernels.compiler.cached``: the
grader, or a student's own notebook for its own checks); a worker that compiles a hand-in's kernel hands its
results back and keeps nothing, so what one hand-in's worker produced is read back only for the same kernel
source. The folder is ``$GEMM_LAB_COMPILE_CACHE`` (default ``~/.cache/gemm_lab/compile_checks``; the
autograder gives the grader one of the course's; ``off`` keeps results in memory only, as the grader's
sandboxes do). A folder that cannot be read or written is fine: the cache is then only read, or not used.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os

__all__ = ["key_of", "code_version", "folder", "read", "keep"]

_MEMORY: dict[str, object] = {}


def key_of(*parts) -> str:
    """A cache key: the sha256 of ``parts`` (plain data) as JSON."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=True).encode()).hexdigest()


@functools.cache
def code_version(*modules: str) -> str:
    """A hash of Triton's version and of the files of ``modules`` (found by name, not imported), read once per
    process: a fix in the code that makes a result never meets a result kept before it."""
    from importlib.metadata import version
    from importlib.util import find_spec

    h = hashlib.sha256(version("triton").encode())
    for m in modules:
        with open(find_spec(m).origin, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def folder(default: bool = True) -> str | None:
    """The on-disk folder: ``$GEMM_LAB_COMPILE_CACHE``, else the user's (only when ``default``); None when it
    is ``off``, or unset and not ``default``."""
    env = os.environ.get("GEMM_LAB_COMPILE_CACHE", "")
    if env.lower() in ("off", "0", "none", "false"):
        return None
    if env:
        return env
    if not default:
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gemm_lab", "compile_checks")


def read(key: str, default: bool = True):
    """The value kept under ``key`` (in this process, else in ``folder(default)``), or None (not kept,
    unreadable)."""
    if key not in _MEMORY:
        where = folder(default)
        if where is None:
            return None
        try:
            with open(os.path.join(where, f"{key}.json"), encoding="utf-8") as f:
                _MEMORY[key] = json.load(f)
        except (OSError, ValueError):
            return None
    return _MEMORY[key]


def keep(key: str, value, default: bool = True) -> None:
    """Keep ``value`` under ``key``: in this process, and in ``folder(default)`` (made if missing), written
    whole or not at all."""
    _MEMORY[key] = value
    where = folder(default)
    if not where:
        return
    path = os.path.join(where, f"{key}.json")
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(where, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(value, f)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
