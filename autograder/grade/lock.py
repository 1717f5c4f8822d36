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
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

RUNTIME_PREFIX = "glrt-"
RUNTIME_PARENT = Path("/tmp")


class AutogradeLocked(RuntimeError):
    """Another autograde holds the course's lock."""


def _started_at(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch, from /proc), or None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        with open("/proc/stat", encoding="ascii") as f:
            boot = next(float(line.split()[1]) for line in f if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def owner_gone(pid: int, made: float) -> bool:
    """The process that made a folder (named with its pid) at or before ``made`` is gone: no such process,
    or one that started later under the same pid (pids are reused on a busy machine)."""
    if not pid_alive(pid):
        return True
    start = _started_at(pid)
    return start is not None and start > made + 1.0


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (killed, not yet reaped by its parent) is gone for our purposes
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


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
    return f"{RUNTIME_PREFIX}{os.getpid()}-{int(_started_at(os.getpid()) or 0)}-"


OLD_FORMAT_AGE_S = 24 * 3600


def stale_runtime_dirs(parent: Path = RUNTIME_PARENT) -> list[Path]:
    """``/tmp/glrt-<pid>-*`` folders whose process is gone (other live runs' folders are left alone), and
    folders without an owner PID (``glrt-<random>``, older versions) not touched for a day."""
    out = []
    now = time.time()
    for p in parent.glob(f"{RUNTIME_PREFIX}*"):
        if not p.is_dir() or p.is_symlink():
            continue
        parts = p.name[len(RUNTIME_PREFIX):].split("-")
        pid = parts[0]
        if pid.isdigit() and len(parts) >= 3 and parts[1].isdigit() and int(parts[1]) > 0:
            start = _started_at(int(pid)) if pid_alive(int(pid)) else None
            if start is None or abs(start - int(parts[1])) > 2:
                out.append(p)
        elif pid.isdigit() and len(parts) >= 2:
            if owner_gone(int(pid), p.stat().st_mtime):
                out.append(p)
        elif now - p.stat().st_mtime > OLD_FORMAT_AGE_S:
            out.append(p)
    return sorted(out)


def _mounts_under(path: Path) -> list[str]:
    """Mount points at or below ``path`` in this mount namespace, deepest first (from /proc/self/mountinfo)."""
    root = os.path.realpath(path)
    out = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                fields = line.split()
                if len(fields) < 5:
                    continue
                # mountinfo escapes space, tab, newline and backslash as \ooo (other text is as is)
                point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
                if point == root or point.startswith(root + "/"):
                    out.append(point)
    except OSError:
        return []
    return sorted(set(out), key=lambda m: m.count("/"), reverse=True)


def remove_tree(path: Path) -> None:
    """``rmtree`` that first detaches what is mounted inside: a grader killed by SIGKILL leaves its kernels'
    tmpfs socket folders (root only, :func:`autograder.sandbox.bwrap.socket_dir`) mounted in its runtime
    folder, and a mount point cannot be removed."""
    import ctypes

    mounts = _mounts_under(path) if os.geteuid() == 0 else []
    if mounts:
        libc = ctypes.CDLL(None, use_errno=True)
        for m in mounts:
            libc.umount2(m.encode("utf-8", "surrogateescape"), 2)  # MNT_DETACH
    shutil.rmtree(path, ignore_errors=True)


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
    out = []
    now = time.time()
    for kind in STAGE_KINDS:
        for p in Path(work).glob(f"{kind}-*") if Path(work).is_dir() else []:
            if not p.is_dir() or p.is_symlink():
                continue
            pid = p.name[len(kind) + 1:].split("-", 1)[0]
            if pid.isdigit():
                if owner_gone(int(pid), p.stat().st_mtime):
                    out.append(p)
            elif now - p.stat().st_mtime > OLD_FORMAT_AGE_S:
                out.append(p)
    return sorted(out)


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
