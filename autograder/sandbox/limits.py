"""Resource limits of one sandboxed hand-in, and the reasons reported when one is hit.

Sizes are bytes. Every writable place inside the sandbox is a size-capped tmpfs (``/`` and ``/dev`` are
read-only); RAM used by those tmpfs is charged to the hand-in's memory cgroup where there is one.
"""

from __future__ import annotations

import signal
from dataclasses import asdict, dataclass, field

MiB = 1 << 20
GiB = 1 << 30


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 4 * GiB  # RLIMIT_AS per process (0: none; CUDA needs none)
    group_memory_bytes: int = 6 * GiB  # cgroup memory limit of the whole hand-in (all its processes)
    max_processes: int = 256  # cgroup pids limit (tasks: processes and threads) of the whole hand-in
    file_bytes: int = 256 * MiB  # RLIMIT_FSIZE: largest file a process may write
    cwd_bytes: int = 256 * MiB  # the kernel's working directory (tmpfs holding a copy of the hand-in)
    tmp_bytes: int = 512 * MiB  # /tmp
    home_bytes: int = 64 * MiB  # $HOME
    shm_bytes: int = 64 * MiB  # /dev/shm
    run_bytes: int = 4 * MiB  # /run

    def __post_init__(self):
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name}: expected a number, got {type(value).__name__}")
            if value < 0:
                raise ValueError(f"{name}: must be >= 0, got {value}")
        for name in ("max_processes", "cwd_bytes", "tmp_bytes", "home_bytes", "shm_bytes", "run_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name}: must be > 0, got {getattr(self, name)}")

    def mounts(self) -> dict[str, int]:
        """Sized tmpfs mounts, by their path inside the sandbox (the cwd is added by the caller)."""
        return {"/tmp": self.tmp_bytes, "/home": self.home_bytes, "/dev/shm": self.shm_bytes,
                "/run": self.run_bytes}

    @classmethod
    def from_spec(cls, spec: dict) -> Limits:
        """Limits from a sandbox spec (keys as the field names; None or absent: the default)."""
        kw = {k: spec[k] for k in cls.__dataclass_fields__ if spec.get(k) is not None}
        if "group_memory_bytes" not in kw and kw.get("memory_bytes", 0) > cls.group_memory_bytes:
            kw["group_memory_bytes"] = kw["memory_bytes"]  # --memory-gb above the default raises both
        return cls(**kw)


def human(n: float) -> str:
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{int(n)} B"


@dataclass
class LimitHit:
    """One limit a hand-in ran into: a stable English code and an English detail (the review column; the
    student's Korean line is nbexec's, in the cell the kernel died in)."""

    code: str  # MEMORY, PROCESSES, DISK, KILLED_BY_SIGNAL
    detail: str

    def __str__(self) -> str:
        return f"LIMIT_{self.code}: {self.detail}" if self.code != "KILLED_BY_SIGNAL" else \
            f"{self.code}: {self.detail}"


@dataclass
class Outcome:
    """What the sandbox saw of one kernel: exit status, limit hits, cgroup use, notes."""

    returncode: int | None = None
    hits: list[LimitHit] = field(default_factory=list)
    cgroup: str = ""  # "v2", "v1" or "" (no cgroup: see notes)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Outcome:
        return cls(data.get("returncode"), [LimitHit(h["code"], h["detail"]) for h in data.get("hits", [])],
                   data.get("cgroup", ""), list(data.get("notes", [])))


def limit_reason(outcome: Outcome | None) -> str:
    """One line for the review column: every limit hit, '; '-separated ('' when none was hit)."""
    if outcome is None:
        return ""
    return "; ".join(str(h) for h in outcome.hits)


def signal_of(returncode: int | None) -> int | None:
    """The signal that ended the kernel, from the sandbox's exit status (-N, or 128+N through bwrap)."""
    if returncode is None:
        return None
    if returncode < 0:
        return -returncode
    if 128 < returncode < 128 + 65:
        return returncode - 128
    return None


def signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"SIG{sig}"


def signal_hit(returncode: int | None) -> LimitHit | None:
    sig = signal_of(returncode)
    if sig is None:
        return None
    return LimitHit("KILLED_BY_SIGNAL", f"the kernel was killed by signal {sig} ({signal_name(sig)})")


def memory_hit(limit: int, oom_kills: int) -> LimitHit:
    return LimitHit("MEMORY", f"the hand-in's memory limit ({human(limit)}) was reached: the OOM killer "
                              f"ended {oom_kills} process(es)")


def processes_hit(limit: int, refused: int) -> LimitHit:
    return LimitHit("PROCESSES", f"the hand-in reached its process limit ({limit} tasks): {refused} fork(s) "
                                 "refused")


def disk_hit(path: str, size: int) -> LimitHit:
    return LimitHit("DISK", f"{path} is full ({human(size)})")
