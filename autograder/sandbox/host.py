"""What the host says about processes (psutil) and mounts (/proc/self/mountinfo): whether a pid is alive,
when it started, and what is mounted under a folder. Used by the sandbox (its cgroups and socket tmpfs)
and by the grader's cleanup of what a killed run left."""

from __future__ import annotations

import ctypes
import os
import re

_MNT_DETACH = 2


def pid_alive(pid: int) -> bool:
    """A process ``pid`` exists and is not a zombie (killed, not yet reaped: gone for our purposes)."""
    import psutil  # here, not at the top: the supervisor imports cgroup.py (and so this) without site-packages

    try:
        return pid > 0 and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True


def started_at(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), or None where unknown."""
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, file system type, super options) of every mount in this mount namespace
    (/proc/self/mountinfo, whose ``\\ooo`` escapes of space, tab, newline and backslash are decoded)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) >= 5 and len(rfields) >= 3:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            out.append((point, rfields[0], set(rfields[2].split(","))))
    return out


def mounts_under(path: str | os.PathLike) -> list[str]:
    """Mount points at or below ``path``, deepest first."""
    root = os.path.realpath(path)
    found = {m for m, _, _ in mounts() if m == root or m.startswith(root + "/")}
    return sorted(found, key=lambda m: m.count("/"), reverse=True)


def detach(mount_point: str) -> None:
    """``umount2(MNT_DETACH)``: the mount goes at once, its files when the last user lets go."""
    ctypes.CDLL(None, use_errno=True).umount2(mount_point.encode("utf-8", "surrogateescape"), _MNT_DETACH)


def remove_tree(path: str | os.PathLike) -> None:
    """``rmtree`` that first detaches what is mounted inside (as root: a mount point cannot be removed, and a
    killed grader leaves its kernels' socket tmpfs mounted in its runtime folder)."""
    import shutil

    for m in mounts_under(path) if os.geteuid() == 0 else []:
        detach(m)
    shutil.rmtree(path, ignore_errors=True)
