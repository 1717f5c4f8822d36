"""A Triton cache in two layers: a private, writable one over a shared, read-only one.

The autograder compiles the same library kernels (the given kernels, the compile explorer's examples,
``gemm_lab.kernels``) in every hand-in's sandbox, each with its own empty ``TRITON_CACHE_DIR``. With

    TRITON_CACHE_MANAGER=gemm_lab.triton_cache:LayeredCacheManager
    GEMM_LAB_TRITON_SHARED_CACHE=/path/to/a/cache/filled/by/trusted/code

Triton first looks in its own ``TRITON_CACHE_DIR`` and then in the shared folder; everything it writes
goes to its own folder only. The shared folder is filled once per grading run from the release
notebooks (no solutions in them; see ``autograder/grade/triton_cache.py``) and bound read-only into each
sandbox **at the same path**: a cached group's JSON names its files by absolute path.

Importing this module imports triton (Triton loads the class lazily, after ``gemm_lab.runtime``).
"""

from __future__ import annotations

import json
import os

from triton.runtime.cache import FileCacheManager

__all__ = ["ENV_SHARED", "MANAGER", "LayeredCacheManager", "env_for"]

ENV_SHARED = "GEMM_LAB_TRITON_SHARED_CACHE"
MANAGER = "gemm_lab.triton_cache:LayeredCacheManager"


def env_for(shared_dir: str) -> dict[str, str]:
    """The environment variables that make Triton read ``shared_dir`` beneath its own cache."""
    if not isinstance(shared_dir, str) or not os.path.isabs(shared_dir):
        raise ValueError(f"shared_dir must be an absolute path, got {shared_dir!r}")
    return {"TRITON_CACHE_MANAGER": MANAGER, ENV_SHARED: shared_dir}


class LayeredCacheManager(FileCacheManager):
    """Triton's :class:`FileCacheManager` (private, writable) with a read-only fallback layer."""

    def __init__(self, key, override=False, dump=False):
        super().__init__(key, override, dump)
        shared = os.environ.get(ENV_SHARED, "")
        self.shared_dir = None
        if shared and not (override or dump):
            d = os.path.join(shared, key)
            if os.path.isdir(d):
                self.shared_dir = d

    def _shared_path(self, filename: str) -> str | None:
        if self.shared_dir is None:
            return None
        p = os.path.join(self.shared_dir, filename)
        return p if os.path.isfile(p) else None

    def get_file(self, filename):
        return super().get_file(filename) or self._shared_path(filename)

    def get_group(self, filename: str):
        own = super().get_group(filename)
        if own is not None:
            return own
        p = self._shared_path(f"__grp__{filename}")
        if p is None:
            return None
        try:
            with open(p) as f:
                child_paths = json.load(f).get("child_paths")
        except (OSError, ValueError, AttributeError):
            return None
        if not isinstance(child_paths, dict):
            return None
        return {c: q for c, q in child_paths.items() if isinstance(q, str) and os.path.isfile(q)}
