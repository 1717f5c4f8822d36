"""Find the committed GPU measurements (``results/*.csv``).

Notebooks never type a measured number: they read it from the CSVs that ``make bench`` wrote on a
real GPU and that were committed under ``results/``. Where they are read from, in order:

1. ``$GEMM_LAB_RESULTS`` when it is set (another folder of CSVs);
2. the package data: the wheel carries every committed CSV under ``gemm_lab/data/results/``, so a
   student who installed gemm_lab (pip, Colab) reads them offline;
3. ``results/`` of the clone the package is imported from (a maintainer's checkout).

The network is used only when asked: ``refresh=True`` downloads the file again from the published
course (``COURSE_URL`` at ``COURSE_REF``), and ``download=True`` downloads a file that none of the
folders above holds (a results file newer than the installed package).
"""

from __future__ import annotations

import os
import urllib.request
import warnings
from pathlib import Path

import gemm_lab

ENV = "GEMM_LAB_RESULTS"
PACKAGED = Path(gemm_lab.__file__).resolve().parent / "data" / "results"
CLONE = Path(gemm_lab.__file__).resolve().parents[1] / "results"


def refresh_url(name: str = "") -> str:
    """Raw-file URL of ``results/<name>`` in the published course (pinned to ``COURSE_REF``)."""
    base = gemm_lab.COURSE_URL.rstrip("/").replace("https://github.com/", "https://raw.githubusercontent.com/")
    return f"{base}/{gemm_lab.COURSE_REF}/results/{name}"


def results_dirs() -> list[Path]:
    """The local folders searched, in order (only those that exist)."""
    env = os.environ.get(ENV)
    candidates = ([Path(env)] if env else []) + [PACKAGED, CLONE]
    return [p for p in candidates if p.is_dir()]


def results_dir() -> Path | None:
    """The first local results folder, or None when there is none."""
    found = results_dirs()
    return found[0] if found else None


def _check_name(name) -> None:
    if not isinstance(name, str) or not name or name.startswith("/") or ".." in Path(name).parts:
        raise ValueError(f"name: bad results file name {name!r} (a file name such as 'matmul.csv')")


def _cache() -> Path:
    return Path.home() / ".cache" / "gemm_lab" / "results" / gemm_lab.COURSE_REF


def _fetch(name: str) -> Path | None:
    target = _cache() / name
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(target.suffix + ".part")
        urllib.request.urlretrieve(refresh_url(name), tmp)  # noqa: S310 - https URL of the course
        tmp.replace(target)
    except OSError as exc:
        warnings.warn(f"could not download {refresh_url(name)}: {exc}", RuntimeWarning, stacklevel=3)
        return None
    return target


def path(name: str, download: bool = False, refresh: bool = False) -> Path | None:
    """Path of ``results/<name>``, or None when it exists nowhere (the caller says so and carries on).

    ``refresh=True`` downloads the published copy first (falling back to the local one when the
    download fails); ``download=True`` downloads only when no local folder holds the file.
    """
    _check_name(name)
    if refresh:
        fetched = _fetch(name)
        if fetched is not None:
            return fetched
    for folder in results_dirs():
        if (folder / name).is_file():
            return folder / name
    cached = _cache() / name
    if cached.is_file():
        return cached
    if download and not refresh:
        return _fetch(name)
    return None


def load_csv(name: str, download: bool = False, refresh: bool = False):
    """``results/<name>`` as a pandas DataFrame, or None when it is not available (see :func:`path`)."""
    import pandas as pd

    found = path(name, download=download, refresh=refresh)
    return None if found is None else pd.read_csv(found)
