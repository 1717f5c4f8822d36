"""Is a file a readable Jupyter notebook? Read it without ever blocking or following a link.

``read_regular(path)`` opens only regular files (``O_NOFOLLOW | O_NONBLOCK``, then ``fstat``: a FIFO,
device or socket named ``*.ipynb`` is never read) and caps the size; ``parse_notebook(data)`` returns the
parsed notebook, or a reason (in English, for the instructor's collect report) why it is not one.
"""

from __future__ import annotations

import json
import os
import stat

MAX_NOTEBOOK_BYTES = 64 * 2**20  # a notebook with plots is a few MiB; a hand-in past this is refused


def file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path) -> tuple[object | None, str | None]:
    """(binary file object, None) for a regular file (never a link, FIFO, socket or device: opened with
    O_NOFOLLOW | O_NONBLOCK and checked with fstat, so it cannot block), else (None, reason)."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or type(exc).__name__})"
    if not stat.S_ISREG(st.st_mode):
        return None, f"{file_kind(st.st_mode)}, not a regular file: not opened"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return None, f"cannot be opened ({exc.strerror or type(exc).__name__})"
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):  # swapped between lstat and open
        os.close(fd)
        return None, f"{file_kind(st.st_mode)}, not a regular file: not opened"
    return os.fdopen(fd, "rb"), None


def read_regular(path, limit: int = MAX_NOTEBOOK_BYTES) -> tuple[bytes | None, str | None]:
    """(bytes, None) for a regular file of at most ``limit`` bytes, else (None, reason)."""
    f, why = open_regular(path)
    if why:
        return None, why
    with f:
        try:
            st = os.fstat(f.fileno())
            if st.st_size > limit:
                return None, f"too large ({st.st_size} bytes > {limit})"
            data = f.read(limit + 1)
        except OSError as exc:
            return None, f"cannot be read ({exc.strerror or type(exc).__name__})"
    if len(data) > limit:
        return None, f"too large (more than {limit} bytes)"
    return data, None


def parse_notebook(data: bytes) -> tuple[dict | None, str | None]:
    """(notebook, None) when ``data`` is a version-4 notebook whose structure collect relies on, else
    (None, reason)."""
    if not data.strip():
        return None, "empty file"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "not a notebook (binary, not UTF-8 text)"
    try:
        nb = json.loads(text)
    except RecursionError:
        return None, "not a notebook (JSON nested too deeply)"
    except ValueError as exc:
        where = f" at line {exc.lineno}" if hasattr(exc, "lineno") else ""
        return None, f"not a notebook (invalid JSON{where})"
    return nb, structure_problem(nb)


def structure_problem(nb) -> str | None:
    """Why a parsed JSON value is not a usable version-4 notebook (None when it is)."""
    if not isinstance(nb, dict):
        return f"not a notebook (JSON {type(nb).__name__}, not an object)"
    version = nb.get("nbformat")
    if "worksheets" in nb or (isinstance(version, int) and not isinstance(version, bool) and version < 4):
        return f"nbformat {version} notebook (too old: open it in Jupyter and save it again as version 4)"
    if version != 4 or isinstance(version, bool):
        return f"not a notebook (nbformat is {version!r}, expected 4)"
    if not isinstance(nb.get("metadata", {}), dict):
        return "not a notebook (metadata is not an object)"
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return f"not a notebook (cells is {type(cells).__name__}, not a list)"
    for i, cell in enumerate(cells):
        bad = _cell_problem(cell)
        if bad:
            return f"not a notebook (cell {i}: {bad})"
    return None


def _cell_problem(cell) -> str | None:
    if not isinstance(cell, dict):
        return f"a {type(cell).__name__}, not an object"
    if cell.get("cell_type") not in ("code", "markdown", "raw"):
        return f"cell_type {cell.get('cell_type')!r}"
    src = cell.get("source", "")
    if not (isinstance(src, str) or (isinstance(src, list) and all(isinstance(s, str) for s in src))):
        return "source is not text"
    meta = cell.get("metadata", {})
    if not isinstance(meta, dict):
        return "metadata is not an object"
    nbg = meta.get("nbgrader", {})
    if not isinstance(nbg, dict):
        return "nbgrader metadata is not an object"
    if "grade_id" in nbg and not isinstance(nbg["grade_id"], str):
        return "grade_id is not text"
    if cell.get("cell_type") == "code" and not isinstance(cell.get("outputs", []), list):
        return "outputs is not a list"
    return None
