"""Find the committed GPU measurements under ``results/``.

Notebooks never type a measured number: they read it from the CSVs that ``make bench`` wrote on a
real GPU and that were committed under ``results/``. In a clone, that folder sits beside the
package; on Colab/Kaggle (``pip install`` from GitHub) the files are fetched from the repository.
Set ``GEMM_LAB_RESULTS`` to use another folder.
"""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path

from gemm_lab import REPO_URL

_RAW = REPO_URL.replace("https://github.com/", "https://raw.githubusercontent.com/") + "/main/results/"


def results_dir() -> Path | None:
    """The local results folder, or None when there is none (installed from a wheel)."""
    env = os.environ.get("GEMM_LAB_RESULTS")
    candidates = [Path(env)] if env else []
    candidates += [Path(__file__).resolve().parents[1] / "results", Path.cwd() / "results"]
    for path in candidates:
        if path.is_dir():
            return path
    return None


def path(name: str, download: bool = True) -> Path | None:
    """Path of ``results/<name>``; downloads it to a cache when only GitHub has it.

    Returns None when the file exists nowhere (the caller says so and carries on).
    """
    if not isinstance(name, str) or not name or name.startswith("/") or ".." in Path(name).parts:
        raise ValueError(f"bad results file name: {name!r}")
    local = results_dir()
    if local is not None and (local / name).is_file():
        return local / name
    if not download:
        return None
    cache = Path.home() / ".cache" / "gemm_lab" / "results"
    target = cache / name
    if target.is_file():
        return target
    try:
        cache.mkdir(parents=True, exist_ok=True)
        urllib.request.urlretrieve(_RAW + name, target)  # noqa: S310 - fixed https URL
    except OSError:
        return None
    return target


def load_csv(name: str, download: bool = True):
    """``results/<name>`` as a pandas DataFrame, or None when it is not available."""
    import pandas as pd

    found = path(name, download=download)
    return None if found is None else pd.read_csv(found)
