"""What an upload holds, as a flat list of entries: a folder walked without following any link.

An ``Entry`` is one regular file of the upload: its path inside the upload (``parts``), a label for the
report (``where``), its time (``when``: local date-time tuple, LMS timestamp or mtime) and a ``read()``
that returns its bytes (capped) or a reason. Links, FIFOs, sockets and devices are entries with a
``problem`` and are never opened (a link to a folder is not walked); hidden and checkpoint folders go
straight to the report as (where, reason) lines.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from autograder.collect.check import file_kind, read_regular

MAX_DEPTH = 6  # FROM/student/sub/sub/...: deeper folders are reported, not walked


@dataclass
class Entry:
    parts: tuple[str, ...]
    where: str
    when: tuple
    read: Callable[[], tuple[bytes | None, str | None]]
    problem: str | None = None  # set for links and special files: never read
    origin: str = ""  # the folder or zip the entry was found in (formats read each upload on its own)
    # a notebook taken from a student's own zip: the zip's path in the upload, its ".zip" read as ".ipynb"
    # (the LMS named the zip, so the zip's name says who handed it in)
    container: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        return self.parts[-1]


def local_time(seconds: float) -> tuple:
    """(y, m, d, H, M, S, fraction) of an mtime (the fraction orders copies saved within one second)."""
    return tuple(time.localtime(seconds)[:6]) + (round(seconds % 1, 6),)


def walk_folder(root: Path, skipped: list) -> Iterator[Entry]:
    """Entries of every regular file under ``root`` (sorted, depth-first); links are never followed."""
    def unreadable(exc: OSError) -> None:
        skipped.append((exc.filename, f"folder cannot be read ({exc.strerror or type(exc).__name__})"))

    for folder, dirs, files in os.walk(root, onerror=unreadable):  # (a link to a folder is listed, not walked)
        parts, walk_into = Path(folder).relative_to(root).parts, []
        for name in sorted(dirs + files):
            where = os.path.join(folder, name)
            try:
                st = os.lstat(where)
            except OSError as exc:
                skipped.append((where, f"cannot be read ({exc.strerror or type(exc).__name__})"))
                continue
            if stat.S_ISLNK(st.st_mode) or not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                why = ("symbolic link: not followed" if stat.S_ISLNK(st.st_mode)
                       else f"{file_kind(st.st_mode)}, not a regular file: not opened")
                yield Entry(parts + (name,), where, (), lambda why=why: (None, why), problem=why, origin=str(root))
            elif stat.S_ISDIR(st.st_mode):
                if name == ".ipynb_checkpoints":
                    skipped.append((where, "Jupyter checkpoint folder: ignored"))
                elif name.startswith("."):
                    skipped.append((where, "hidden folder: not collected"))
                elif len(parts) + 1 >= MAX_DEPTH:
                    skipped.append((where, f"folder nested deeper than {MAX_DEPTH}: not collected"))
                else:
                    walk_into.append(name)
            else:
                yield Entry(parts + (name,), where, local_time(st.st_mtime), partial(read_regular, where),
                            origin=str(root))
        dirs[:] = walk_into
