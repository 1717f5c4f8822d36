"""How a class is graded at full speed: how many at once, in which order, and one hand-in from its parts.

* **How many at once** (:func:`plan_jobs`): min(CPUs + 1, available memory / memory limit of one hand-in),
  at least 1. A hand-in waits part of its time (kernel start-up, nbgrader's own start), so one more than
  the CPUs keeps the cores busy; each hand-in's sandbox may use its cgroup limit (``Limits.group_memory_bytes``),
  so more at once than memory allows would let the OOM killer pick hand-ins at random. Both are settings
  (``--jobs`` / ``GRADE_JOBS``, ``--handin-memory-gb`` / ``GRADE_HANDIN_MEMORY_GB``).
* **Which order** (:func:`plan_parts`): one task per hand-in (on Dask, or with ``--unit notebook``: per
  hand-in × notebook) over every assignment, longest expected first, so a task that runs to its time limit
  starts early and the other slots keep working meanwhile. Expected seconds come from the last run (``autograder/logs/durations.json``): the same
  student's notebook, else the class median of that notebook, else its number of code cells.
* **One hand-in from its parts** (:func:`combine_parts`): per notebook, every notebook is graded by its own
  ``nbgrader autograde --notebook`` in ``work/grade/ASSIGNMENT/STUDENT/nb-NOTEBOOK/``; when the last one
  ends, their logs and results are put together, and autograder/grade/merge.py takes each notebook's
  autograded notebook, sandbox reports and scores from its own run's folder, in one transaction as before.
"""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from autograder.course import Course, read_notebook, write_atomic
from autograder.grade.nbexec import SIGNAL_RE, STOP_ENAME
from autograder.sandbox.limits import GiB, Limits

JOBS_ENV = "GRADE_JOBS"
HANDIN_MEMORY_ENV = "GRADE_HANDIN_MEMORY_GB"
UNIT_ENV = "GRADE_UNIT"
UNITS = ("notebook", "handin")
DURATIONS = "durations.json"


# ------------------------------------------------------------------------------------------- job count
def _cgroup_room(proc_cgroup: Path, cgroup_root: Path) -> int | None:
    """Bytes this process's own cgroup v2 may still use (memory.max - memory.current), None if unlimited."""
    try:
        rel = next(ln.split("::", 1)[1] for ln in Path(proc_cgroup).read_text().splitlines() if ln.startswith("0::"))
        d = Path(cgroup_root) / rel.strip().lstrip("/")
        limit = (d / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(0, int(limit) - int((d / "memory.current").read_text().strip()))
    except (OSError, ValueError, StopIteration):
        return None


def available_memory(proc_cgroup: Path = Path("/proc/self/cgroup"), cgroup_root: Path = Path("/sys/fs/cgroup")) -> int:
    """Bytes of memory grading may take: MemAvailable (psutil), or less when this process's cgroup caps it."""
    room = _cgroup_room(proc_cgroup, cgroup_root)
    return min(x for x in (psutil.virtual_memory().available, room) if x is not None)


def handin_memory_bytes(memory_bytes: int | None = None, handin_memory_gb: float | None = None) -> int:
    """The memory limit of one hand-in: ``handin_memory_gb`` (or ``$GRADE_HANDIN_MEMORY_GB``), else the
    sandbox's cgroup limit (raised to the per-process limit when that is larger, as the sandbox does)."""
    if handin_memory_gb is None and os.environ.get(HANDIN_MEMORY_ENV, "").strip():
        raw = os.environ[HANDIN_MEMORY_ENV].strip()
        try:
            handin_memory_gb = float(raw)
        except ValueError:
            raise ValueError(f"{HANDIN_MEMORY_ENV}: expected a number of GiB, got {raw!r}") from None
    if handin_memory_gb is not None:
        if isinstance(handin_memory_gb, bool) or not isinstance(handin_memory_gb, (int, float)):
            raise TypeError(f"handin_memory_gb: expected a number, got {type(handin_memory_gb).__name__}")
        if not handin_memory_gb > 0:
            raise ValueError(f"handin_memory_gb: expected a number of GiB > 0, got {handin_memory_gb!r}")
        return int(handin_memory_gb * GiB)
    return max(Limits.group_memory_bytes, memory_bytes or 0)


def plan_jobs(jobs: int | None = None, *, per_handin_bytes: int, cpus: int | None = None,
              available: int | None = None) -> tuple[int, str]:
    """(hand-ins graded at once, the reason in words). ``jobs`` (or ``$GRADE_JOBS``) wins when given;
    otherwise min(CPUs + 1, available // per_handin_bytes), at least 1 (``available`` None: unknown).
    One more than the CPUs, because a hand-in waits part of its time (kernel start-up, nbgrader's own
    start): 50 week-7 hand-ins on 2 cores took 1,022 s at 2 at a time (CPU 83 % busy) and 885 s at 3 (98 %)."""
    if jobs is None and os.environ.get(JOBS_ENV, "").strip():
        raw = os.environ[JOBS_ENV].strip()
        if not raw.isdigit():
            raise ValueError(f"{JOBS_ENV}: expected a whole number >= 1, got {raw!r}")
        jobs = int(raw)
    if jobs is not None:
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"jobs: expected an int >= 1, got {jobs!r}")
        return jobs, f"{jobs} at a time (set)"
    cpus = cpus or os.cpu_count() or 1
    by_cpu = cpus + 1
    if available is None:
        return by_cpu, f"{by_cpu} at a time (CPUs {cpus} + 1; available memory unknown)"
    by_mem = max(1, available // per_handin_bytes)
    n = min(by_cpu, by_mem)
    return n, (f"{n} at a time (CPUs {cpus} + 1 = {by_cpu}; {available / GiB:.1f} GiB available / "
               f"{per_handin_bytes / GiB:g} GiB per hand-in = {by_mem})")


def check_settings(jobs: int | None = None, handin_memory_gb: float | None = None, unit: str | None = None) -> None:
    """Raise ValueError/TypeError (one line) on a bad job count, hand-in memory limit or unit, arguments or
    environment, before anything runs."""
    plan_jobs(jobs, per_handin_bytes=handin_memory_bytes(None, handin_memory_gb), available=None)
    grading_unit(unit)


# ------------------------------------------------------------------------------------------ the parts
def grading_unit(unit: str | None = None) -> str:
    """``unit``, else ``$GRADE_UNIT``, else 'notebook' on a Dask cluster and 'handin' on this machine; checked.

    Each task is one ``nbgrader autograde`` process, whose start costs CPU: on 2 cores, 2 week-6 hand-ins
    (3 notebooks each) one at a time took 12-15 CPU-s as 2 tasks and 29-37 CPU-s as 6, so on one machine
    a task per hand-in grades a class sooner; a cluster has the cores to spare for the shorter tail."""
    from autograder.grade.dispatch import scheduler_address

    unit = unit or os.environ.get(UNIT_ENV, "").strip() or ("notebook" if scheduler_address() else "handin")
    if unit not in UNITS:
        raise ValueError(f"unit ({UNIT_ENV}): expected one of {', '.join(UNITS)}, got {unit!r}")
    return unit


@dataclass
class Part:
    """One task: a hand-in's notebook (``notebook`` None: the whole hand-in in one nbgrader)."""

    assignment: str
    student: str
    notebook: str | None
    expected_s: float = 0.0
    attempt: int = 0
    notes: list = field(default_factory=list)  # why this is a second attempt

    @property
    def name(self) -> str:
        return f"{self.assignment}/{self.student}" + (f"/{self.notebook}" if self.notebook else "")


def part_dir(course: Course, assignment: str, student: str, notebook: str | None) -> Path:
    base = course.work / "grade" / assignment / student
    return base if notebook is None else base / f"nb-{notebook}"


def part_log(course: Course, assignment: str, student: str, notebook: str | None) -> Path:
    return course.logs / assignment / (f"{student}.log" if notebook is None else f"{student}.{notebook}.log")


def read_durations(course: Course) -> dict:
    try:
        data = json.loads((course.logs / DURATIONS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_durations(course: Course, parts: list[tuple[Part, float]]) -> None:
    """Remember how long each part took (the next run's order); replaced atomically."""
    data = read_durations(course)
    for part, seconds in parts:
        data.setdefault(part.assignment, {}).setdefault(part.notebook or "*", {})[part.student] = round(seconds, 1)
    write_atomic(course.logs / DURATIONS, json.dumps(data, sort_keys=True, indent=0))


def _code_cells(path: Path) -> int:
    try:
        return sum(c.get("cell_type") == "code" for c in read_notebook(path).get("cells", []))
    except (OSError, ValueError, AttributeError):
        return 0


def expected_seconds(history: dict, part: Part, proxy: float) -> float:
    """The student's own last time, else the class median for that notebook, else ``proxy``."""
    seen = history.get(part.assignment, {}).get(part.notebook or "*", {})
    if not isinstance(seen, dict):
        return proxy
    own = seen.get(part.student)
    if isinstance(own, (int, float)):
        return float(own)
    peers = [float(v) for v in seen.values() if isinstance(v, (int, float))]
    return statistics.median(peers) if peers else proxy


def handin_notebooks(course: Course, assignment: str, student: str) -> list[str]:
    """The hand-in's notebooks that the assignment has (others nbgrader skips anyway)."""
    rel = course.work / "release" / assignment
    return sorted(p.stem for p in (course.submitted / student / assignment).glob("*.ipynb")
                  if (rel / p.name).is_file())


def plan_parts(course: Course, todo: dict[str, list[str]], unit: str | None = None) -> list[Part]:
    """Every task of ``todo`` ({assignment: students}), longest expected first (ties: by name)."""
    unit = grading_unit(unit)
    history = read_durations(course)
    parts = []
    for a, students in todo.items():
        for s in students:
            nbs = handin_notebooks(course, a, s)
            handin = course.submitted / s / a
            for nb in [None] if unit == "handin" or not nbs else nbs:
                p = Part(a, s, nb)
                files = handin.glob("*.ipynb") if nb is None else [handin / f"{nb}.ipynb"]
                p.expected_s = expected_seconds(history, p, float(sum(map(_code_cells, files))))
                parts.append(p)
    parts.sort(key=lambda p: (-p.expected_s, p.assignment, p.student, p.notebook or ""))
    return parts


def killed_by_signal(course: Course, part: Part) -> list[str]:
    """"notebook: killed by signal N (NAME)" for each notebook of ``part`` whose kernel a signal ended
    (the OOM killer, an admin's kill): worth one more run in a fresh kernel before hand grading."""
    scratch = part_dir(course, part.assignment, part.student, part.notebook)
    out = []
    for nb_path in sorted((scratch / "autograded" / part.student / part.assignment).glob("*.ipynb")):
        try:
            nb = read_notebook(nb_path)
        except (OSError, ValueError):
            continue
        for cell in nb.get("cells", []):
            for o in cell.get("outputs", []) or []:
                if o.get("output_type") == "error" and o.get("ename") == STOP_ENAME:
                    m = SIGNAL_RE.search(str(o.get("evalue", "")))
                    if m:
                        out.append(f"{nb_path.stem}: {m.group(0)}")
    return out


def regrade_reasons(course: Course, part: Part, res, nbgrader_killed: str) -> list[str]:
    """Why ``part`` deserves one more run: its kernel (:func:`killed_by_signal`) or its nbgrader (an error
    starting with ``nbgrader_killed``) was killed by a signal; [] when nothing was."""
    if res.ok:
        return killed_by_signal(course, part)
    if res.error.startswith(nbgrader_killed):
        return [f"{part.notebook or 'nbgrader'}: {res.error.split(' (see ')[0]}"]
    return []


# ----------------------------------------------------------------------------- one hand-in from parts
def combine_parts(course: Course, assignment: str, student: str, results: dict[str, object]):
    """The hand-in's HandInResult from its per-notebook runs ``results`` ({notebook: HandInResult}): ok only
    when every notebook's nbgrader ended well, their logs in one (merge reads each notebook's autograded
    notebook, sandbox reports and scores from its own run's folder, work/grade/ASSIGNMENT/STUDENT/nb-NOTEBOOK/)."""
    from autograder.grade.merge import HandInResult

    names = sorted(results)
    log = part_log(course, assignment, student, None)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as out:
        for nb in names:
            p = Path(results[nb].log)
            out.write(f"===== {nb} =====\n")
            try:
                out.write(p.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                out.write(f"(no log: {results[nb].error})\n")
            out.write("\n")
            if p != log:
                p.unlink(missing_ok=True)
    first = results[names[0]]
    res = HandInResult(student, assignment, ok=all(results[nb].ok for nb in names),
                       seconds=sum(results[nb].seconds for nb in names), log=str(log),
                       handin_sha=first.handin_sha)
    res.error = "; ".join(f"{nb}: {results[nb].error}" for nb in names if results[nb].error)
    for nb in names:
        res.repairs.update(results[nb].repairs)
    return res
