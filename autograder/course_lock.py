"""One ``autograde`` per course at a time, and what a killed run leaves behind is cleaned up.

The lock is ``autograder/work/autograde.lock``: an ``flock`` held for the whole run (the kernel drops it
when the process dies, even by SIGKILL) plus the holder's PID written inside. A second run while the first
is alive fails at once with :class:`AutogradeLocked`. A run that finds a lock file whose PID is gone takes it
over and says so in one line. Scratch left by a killed run (``work/grade/…``, ``work/warm-*`` and this course's
``/tmp/glrt-*`` runtime folders whose owner is gone) is removed once the lock is held.

Staging folders of other commands (``collect``, the grading benchmark) are named ``work/KIND-<pid>-…``
(:func:`stage_dir`): the next ``collect`` or ``autograde`` removes those whose process is gone
(:func:`clean_stale_stages`), so a killed command leaves nothing a rerun does not clean.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from autograder.sandbox.host import pid_alive, remove_tree, started_at

RUNTIME_PREFIX = "glrt-"
RUNTIME_PARENT = Path("/tmp")


class AutogradeLocked(RuntimeError):
    """Another autograde holds the course's lock."""


def owner_gone(pid: int, made: float) -> bool:
    """The process that made a folder (named with its pid) at or before ``made`` is gone: no such process,
    or one that started later under the same pid (pids are reused on a busy machine)."""
    if not pid_alive(pid):
        return True
    start = started_at(pid)
    return start is not None and start > made + 1.0


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


class CourseLock:
    """Context manager: ``with CourseLock(course.work, log=print): ...``."""

    def __init__(self, work: Path, log=None):
        self.path = Path(work) / "autograde.lock"
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.taken_over: int | None = None
        self._fd: int | None = None

    def __enter__(self) -> CourseLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = _read_pid(self.path)
            who = f"process {holder}" if holder else "another process"
            raise AutogradeLocked(f"another autograde is running on this course ({who}, lock {self.path}); "
                                  "wait for it to finish") from None
        old = _read_pid(self.path)
        if old is not None and old != os.getpid() and not pid_alive(old):
            self.taken_over = old
            self.log(f"autograde: taking over the lock of process {old}, which is gone ({self.path})")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        os.fsync(fd)
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)  # a clean exit leaves no PID behind
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def runtime_dir_name() -> str:
    """Prefix of a grading runtime folder: ``glrt-<pid>-<start>-`` (the owner, and when it started, are known
    after a crash: a later process under the same pid is not its owner)."""
    return f"{RUNTIME_PREFIX}{os.getpid()}-{int(started_at(os.getpid()) or 0)}-"


OLD_FORMAT_AGE_S = 24 * 3600


def _owner_gone(tail: str, made: float, now: float, *, start_in_name: bool) -> bool:
    """Whether the process that named a folder ``<pid>-[<start>-]...`` (``tail``) is gone; a name without a
    pid (older versions) counts as gone once untouched for a day. ``start_in_name``: the name's second part,
    when a number, is its owner's start time (a later process under that pid is not its owner)."""
    parts = tail.split("-")
    if not (parts[0].isdigit() and len(parts) >= 2):
        return now - made > OLD_FORMAT_AGE_S
    pid = int(parts[0])
    if start_in_name and len(parts) >= 3 and parts[1].isdigit() and int(parts[1]) > 0:
        start = started_at(pid) if pid_alive(pid) else None
        return start is None or abs(start - int(parts[1])) > 2
    return owner_gone(pid, made)


def stale_runtime_dirs(parent: Path = RUNTIME_PARENT) -> list[Path]:
    """``/tmp/glrt-<pid>-<start>-*`` folders whose process is gone (other live runs' folders are left alone),
    and folders without an owner PID (``glrt-<random>``, older versions) not touched for a day."""
    now = time.time()
    return sorted(p for p in parent.glob(f"{RUNTIME_PREFIX}*") if p.is_dir() and not p.is_symlink()
                  and _owner_gone(p.name[len(RUNTIME_PREFIX):], p.stat().st_mtime, now, start_in_name=True))


STAGE_KINDS = ("collect", "bench")  # work/KIND-<pid>-*: made by stage_dir, removed once their process is gone


def stage_dir(work: Path, kind: str, label: str = "") -> Path:
    """A new staging folder ``work/KIND-<pid>-LABEL-xxxx`` (the owner is known after a crash)."""
    if kind not in STAGE_KINDS:
        raise ValueError(f"kind: expected one of {', '.join(STAGE_KINDS)}, got {kind!r}")
    Path(work).mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{kind}-{os.getpid()}-{label + '-' if label else ''}", dir=work))


def stale_stage_dirs(work: Path) -> list[Path]:
    """``work/KIND-<pid>-*`` folders whose process is gone, and older ``work/KIND-*`` folders without an
    owner PID not touched for a day."""
    now = time.time()
    if not Path(work).is_dir():
        return []
    return sorted(p for kind in STAGE_KINDS for p in Path(work).glob(f"{kind}-*") if p.is_dir() and not p.is_symlink()
                  and _owner_gone(p.name[len(kind) + 1:], p.stat().st_mtime, now, start_in_name=False))


def clean_stale_stages(work: Path) -> list[Path]:
    """Remove the staging folders of dead ``collect``/benchmark runs; returns what was removed."""
    removed = stale_stage_dirs(work)
    for p in removed:
        shutil.rmtree(p, ignore_errors=True)
    return removed


def clean_leftovers(work: Path, runtime_parent: Path = RUNTIME_PARENT) -> list[Path]:
    """Remove the scratch a killed run left (call with the course lock held); returns what was removed."""
    removed = []
    grade_dir = Path(work) / "grade"
    for p in sorted(grade_dir.glob("*/*")) if grade_dir.is_dir() else []:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        removed.append(p)
    # the Triton cache is warmed only under the lock (autograder/grade/triton_cache.py): any warm-* is a dead run's
    for p in sorted(Path(work).glob("warm-*")) if Path(work).is_dir() else []:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    removed += clean_stale_stages(work)
    for p in stale_runtime_dirs(runtime_parent):
        remove_tree(p)
        removed.append(p)
    return removed
