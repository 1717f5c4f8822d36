"""What the host says about processes and mounts (psutil): whether a pid is alive, when it started, and
what is mounted under a folder. Used by the sandbox (its cgroups and socket tmpfs) and by the grader's
cleanup of what a killed run left."""

from __future__ import annotations

import ctypes
import os

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
    """(mount point, file system type, options) of every mount in this mount namespace (psutil reads
    /proc/self/mounts, whose options hold the super options too: a cgroup v1 mount's controllers)."""
    import psutil

    return [(p.mountpoint, p.fstype, set(p.opts.split(","))) for p in psutil.disk_partitions(all=True)]


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
