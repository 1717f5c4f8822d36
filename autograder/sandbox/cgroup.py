"""One cgroup per sandboxed kernel: memory and process limits for all of a hand-in's processes.

Created by the grader itself (no systemd needed) where it may write cgroups, i.e. as root:

* cgroup v2 (a ``cgroup2`` mount whose root offers ``memory`` and ``pids``): ``<mount>/gemm-lab/<name>``
  with ``memory.max``, ``memory.swap.max = 0`` and ``pids.max``;
* cgroup v1 (hybrid hosts): ``<memory mount>/<own cgroup>/gemm-lab/<name>`` and the same under the ``pids``
  mount, with ``memory.limit_in_bytes`` (+ ``memsw``) and ``pids.max``.

``<name>`` is ``<owner pid>-<random>``; a group whose owner process is gone (a grader killed with -9) is
stale and removed (its processes killed first) the next time any group is created. Without a writable
cgroup hierarchy :func:`create` returns ``None`` and says why; the sandbox then falls back to
per-process limits (see autograder/README.md).
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

from autograder.sandbox import host
from autograder.sandbox.host import pid_alive

PARENT = "gemm-lab"


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(fstype, mount point, super options) of every cgroup mount of this mount namespace."""
    return [(fstype, point, opts) for point, fstype, opts in host.mounts() if fstype in ("cgroup", "cgroup2")]


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under key '' its v2 path."""
    out = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            out[c] = path
    return out


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _kv(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def _kill_and_remove(d: Path, timeout: float = 5.0) -> bool:
    """SIGKILL every process in cgroup directory ``d`` (and its children), then remove them all."""
    if not d.is_dir():
        return True
    for child in [p for p in d.iterdir() if p.is_dir()]:
        _kill_and_remove(child, timeout)
    if (d / "cgroup.kill").exists():
        try:
            _write(d / "cgroup.kill", "1")
        except OSError:
            pass
    deadline = time.monotonic() + timeout
    while True:
        pids = [int(p) for p in _read(d / "cgroup.procs").split()]
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            d.rmdir()
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)


class Cgroup:
    """The cgroup directories (one for v2, one per controller for v1) of one sandboxed kernel."""

    def __init__(self, version: str, dirs: dict[str, Path], memory_bytes: int, max_processes: int):
        self.version = version
        self.dirs = dirs  # controller ('memory', 'pids'; v2: both the same path) -> directory
        self.memory_bytes = memory_bytes
        self.max_processes = max_processes

    def to_json(self) -> dict:
        return {"version": self.version, "dirs": {k: str(v) for k, v in self.dirs.items()},
                "memory_bytes": self.memory_bytes, "max_processes": self.max_processes}

    @classmethod
    def from_json(cls, data: dict) -> Cgroup:
        return cls(data["version"], {k: Path(v) for k, v in data["dirs"].items()}, data["memory_bytes"],
                   data["max_processes"])

    def attach(self, pid: int = 0) -> None:
        """Move process ``pid`` (0: the caller) into the group: its children are born inside."""
        for d in set(self.dirs.values()):
            _write(d / "cgroup.procs", str(pid or os.getpid()))

    def events(self) -> dict[str, int]:
        """{'oom_kill': processes the OOM killer ended, 'pids_max': forks refused} since the group was made."""
        mem, pids = self.dirs.get("memory"), self.dirs.get("pids")
        out = {"oom_kill": 0, "pids_max": 0}
        if mem is not None:
            events = "memory.events" if self.version == "v2" else "memory.oom_control"
            out["oom_kill"] = _kv(_read(mem / events)).get("oom_kill", 0)
        if pids is not None:
            out["pids_max"] = _kv(_read(pids / "pids.events")).get("max", 0)
        return out

    def destroy(self) -> bool:
        """Kill every process still in the group and remove its directories; True when all are gone."""
        return all([_kill_and_remove(d) for d in set(self.dirs.values())])


def _parents() -> tuple[str, dict[str, Path]] | tuple[None, str]:
    """('v2'|'v1', {controller: parent dir}) where this process may make groups, or (None, why)."""
    mounts = _mounts()
    own = _own_paths()
    why = []
    for fstype, mnt, _ in mounts:
        if fstype != "cgroup2":
            continue
        root = Path(mnt)
        ctrls = set(_read(root / "cgroup.controllers").split())
        if not {"memory", "pids"} <= ctrls:
            why.append(f"cgroup2 at {mnt} offers no memory/pids controllers")
            continue
        return "v2", {"memory": root / PARENT, "pids": root / PARENT}
    v1 = {}
    for fstype, mnt, opts in mounts:
        if fstype != "cgroup":
            continue
        for c in ("memory", "pids"):
            if c in opts and c not in v1:
                v1[c] = Path(mnt) / own.get(c, "/").lstrip("/") / PARENT
    if v1:
        return "v1", v1
    why.append("no cgroup v1 memory/pids hierarchy is mounted")
    return None, "; ".join(why) or "no cgroup filesystem is mounted"


def remove_stale(parents: dict[str, Path] | None = None) -> list[str]:
    """Remove groups whose owner process is gone (left by a killed grader); their names."""
    if parents is None:
        version, parents = _parents()
        if version is None:
            return []
    removed = []
    for parent in set(parents.values()):
        if not parent.is_dir():
            continue
        for d in parent.iterdir():
            owner = d.name.split("-", 1)[0]
            if d.is_dir() and owner.isdigit() and not pid_alive(int(owner)) and _kill_and_remove(d):
                removed.append(d.name)
    return sorted(set(removed))


def create(memory_bytes: int, max_processes: int, owner_pid: int | None = None) -> tuple[Cgroup | None, str]:
    """A new group with these limits, owned by ``owner_pid`` (default: this process), or (None, why)."""
    if memory_bytes <= 0 or max_processes <= 0:
        raise ValueError(f"memory_bytes and max_processes must be > 0, got {memory_bytes}, {max_processes}")
    version, parents = _parents()
    if version is None:
        return None, parents
    name = f"{owner_pid or os.getpid()}-{uuid.uuid4().hex[:8]}"
    made: dict[str, Path] = {}
    try:
        remove_stale(parents)
        for c, parent in parents.items():
            if version == "v2":
                for p in (parent.parent, parent):
                    p.mkdir(exist_ok=True)
                    ctl = set(_read(p / "cgroup.subtree_control").split())
                    if not {"memory", "pids"} <= ctl:
                        _write(p / "cgroup.subtree_control", "+memory +pids")
            else:
                parent.mkdir(exist_ok=True)
            d = parent / name
            d.mkdir(exist_ok=True)
            made[c] = d
        cg = Cgroup(version, made, memory_bytes, max_processes)
        mem, pids = made["memory"] if "memory" in made else None, made.get("pids")
        if version == "v2":
            _write(mem / "memory.max", str(memory_bytes))
            if (mem / "memory.swap.max").exists():
                _write(mem / "memory.swap.max", "0")
            _write(pids / "pids.max", str(max_processes))
        else:
            if mem is not None:
                _write(mem / "memory.limit_in_bytes", str(memory_bytes))
                if (mem / "memory.memsw.limit_in_bytes").exists():
                    _write(mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
            if pids is not None:
                _write(pids / "pids.max", str(max_processes))
        return cg, ""
    except OSError as exc:
        for d in made.values():
            _kill_and_remove(d)
        return None, f"cannot create a {version} cgroup ({exc.strerror or exc}: {exc.filename})"
