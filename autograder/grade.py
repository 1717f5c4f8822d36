"""Autograde every hand-in of an assignment: in parallel, each in its own scratch course, sandboxed.

Design (why the gradebook stays consistent and the secrets stay secret):

1. The main gradebook (autograder/gradebook.db, SQLite) is written by this process only. Before grading,
   the assignment is (re)recorded from source/ with ``nbgrader generate_assignment`` (into a scratch
   release folder, so the committed release/ is not touched) and a snapshot of the gradebook is taken
   with SQLite's backup API.
2. Each (student, assignment) is graded by its own ``nbgrader autograde`` process in
   autograder/work/grade/ASSIGNMENT/STUDENT/, a scratch course holding a copy of the snapshot, the
   hand-in, and a generated nbgrader_config.py. Up to ``jobs`` of these run at once; they share nothing
   that is written.
3. The student's kernel runs under bubblewrap (autograder/sandbox.py): it sees the installed environment
   read-only and a copy of its own hand-in as its working directory, nothing else — not the scratch
   gradebook (which holds the hidden tests), not the sanitized notebook nbgrader writes before running
   it (it holds them too), not source/, not other hand-ins; no network.
4. When a scratch run ends, this process copies its autograded notebooks into autograder/autograded/
   and its scores into the main gradebook (one transaction per hand-in), scans the student's code for
   tampering (gemm_lab.grading.integrity) and records what it found in autograder/logs/review.json.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import integrity
from .course import IGNORE, REPO_ROOT, Course, read_notebook, release, run_nbgrader
from .nbexec import GUARD_MARK
from .sandbox import ENV_SPEC, bwrap_path

DEFAULT_CELL_TIMEOUT = 60
DEFAULT_NOTEBOOK_TIMEOUT = 600

_SCRATCH_CONFIG = """\
c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "gemm-lab"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = {db_url!r}
c.CourseDirectory.ignore = {ignore!r}
c.OverwriteCells.add_missing_cells = True
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (IgnorePattern, LimitOutput, SaveAutoGrades, AssignLatePenalties,
                                    CheckCellMetadata)
from autograder.nbexec import GuardedExecute
c.Autograde.autograde_preprocessors = [GuardedExecute, IgnorePattern, ClearMetadataPreprocessor,
                                       LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
c.GuardedExecute.timeout = {cell_timeout}
c.GuardedExecute.notebook_timeout = {notebook_timeout}
c.GuardedExecute.startup_timeout = 120
c.GuardedExecute.iopub_timeout = 10
c.GuardedExecute.raise_on_iopub_timeout = False
c.LimitOutput.max_lines = 200
c.Application.log_format = "%(asctime)s [%(name)s | %(levelname)s] %(message)s"
c.Application.log_datefmt = "%H:%M:%S"
"""


class SandboxMissing(RuntimeError):
    pass


@dataclass
class HandInResult:
    student: str
    assignment: str
    ok: bool
    seconds: float
    log: str
    error: str = ""
    incidents: dict = field(default_factory=dict)  # notebook -> list of strings (timeouts, kernel death)
    findings: dict = field(default_factory=dict)  # notebook -> list of integrity findings
    zeroed: dict = field(default_factory=dict)  # notebook -> grade_ids zeroed for review
    withheld: dict = field(default_factory=dict)  # notebook -> points those cells had scored


def sandbox_mode(allow_unsandboxed: bool = False) -> str:
    """'bwrap' when bubblewrap is installed; otherwise refuse unless explicitly overridden."""
    if bwrap_path():
        return "bwrap"
    msg = ("bubblewrap (bwrap) is not installed: student code would run with full access to this machine "
           "(source/ masters, the gradebook, other hand-ins, the network). Install it with "
           "`apt-get install -y bubblewrap`.")
    if not allow_unsandboxed:
        raise SandboxMissing(msg + " To grade anyway, pass --allow-unsandboxed.")
    warnings.warn("!!! UNSANDBOXED GRADING !!! " + msg, stacklevel=2)
    print("!" * 78 + "\n!!! WARNING: " + msg + "\n" + "!" * 78, file=sys.stderr)
    return "none"


def submitted_students(course: Course, assignment: str) -> list[str]:
    if not course.submitted.is_dir():
        return []
    return sorted(p.name for p in course.submitted.iterdir()
                  if (p / assignment).is_dir() and any((p / assignment).glob("*.ipynb")))


def _snapshot(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        dst.unlink()
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)


def _copy_public_files(src_dir: Path, dst_dir: Path) -> None:
    """Copy the non-notebook, non-ignored files of an assignment folder (nbgrader's own rule)."""
    from nbgrader.utils import find_all_files

    for f in find_all_files(str(src_dir), IGNORE + ["*.ipynb"]):
        dest = dst_dir / os.path.relpath(f, src_dir)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(f, dest)


def prepare_gradebook(course: Course, assignment: str) -> Path:
    """Record the assignment (from source/) in the main gradebook; return a snapshot of it."""
    scratch_release = course.work / "release"
    if scratch_release.exists():
        shutil.rmtree(scratch_release)
    release(course, assignment, release_dir=scratch_release)
    snap = course.work / "grade" / assignment / "gradebook.base.db"
    _snapshot(course.gradebook, snap)
    return snap


def _grade_one(course: Course, assignment: str, student: str, snapshot: Path, mode: str,
               cell_timeout: int, notebook_timeout: int, memory_bytes: int | None = None) -> HandInResult:
    t0 = time.monotonic()
    scratch = course.work / "grade" / assignment / student
    if scratch.exists():
        shutil.rmtree(scratch)
    (scratch / "source" / assignment).mkdir(parents=True)
    _copy_public_files(course.source / assignment, scratch / "source" / assignment)
    shutil.copy(snapshot, scratch / "gradebook.db")
    handin = course.submitted / student / assignment
    shutil.copytree(handin, scratch / "submitted" / student / assignment, symlinks=True)
    (scratch / "nbgrader_config.py").write_text(_SCRATCH_CONFIG.format(
        root=str(scratch), db_url=f"sqlite:///{scratch / 'gradebook.db'}", ignore=IGNORE,
        cell_timeout=int(cell_timeout), notebook_timeout=int(notebook_timeout)))
    # The kernel's working directory: the student's own files + the assignment's public files.
    kernel_cwd = scratch / "kernel_cwd"
    shutil.copytree(handin, kernel_cwd, symlinks=True)  # a link stays a link (dangling in the sandbox)
    if (course.release / assignment).is_dir():
        _copy_public_files(course.release / assignment, kernel_cwd)
    runtime_dir = Path(tempfile.mkdtemp(prefix="glrt-", dir="/tmp"))  # short: ipc socket paths
    env = {"JUPYTER_RUNTIME_DIR": str(runtime_dir),
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env.pop(ENV_SPEC, None)
    if mode == "bwrap":
        spec = scratch / "sandbox.json"
        spec.write_text(json.dumps({"kernel_cwd": str(kernel_cwd), "memory_bytes": memory_bytes}))
        env[ENV_SPEC] = str(spec)
        env["GEMM_LAB_UNSANDBOXED"] = "0"
    else:
        env[ENV_SPEC] = ""
        env["GEMM_LAB_UNSANDBOXED"] = "1"
    n_nb = max(1, len(list(handin.glob("*.ipynb"))))
    log = course.logs / assignment / f"{student}.log"
    result = HandInResult(student, assignment, ok=False, seconds=0.0, log=str(log))
    try:
        proc = run_nbgrader(["autograde", assignment, "--student", student, "--force"], cwd=scratch,
                            env=env, timeout=n_nb * (notebook_timeout + 120), log=log, check=False)
        result.ok = proc.returncode == 0
        if not result.ok:
            result.error = f"nbgrader autograde exited with {proc.returncode} (see {log})"
        elif "Exception while loading config file" in proc.stderr or GUARD_MARK not in proc.stderr:
            # nbgrader only logs a broken config and then runs its own, unsandboxed Execute: never accept
            result.ok = False
            result.error = f"the scratch nbgrader config did not load: refusing the result (see {log})"
    except Exception as exc:  # the backstop timeout, or nbgrader could not start
        result.error = f"{type(exc).__name__}: {exc}"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(result.error)
    finally:
        shutil.rmtree(runtime_dir, ignore_errors=True)
    result.seconds = time.monotonic() - t0
    return result


def _merge(course: Course, res: HandInResult) -> None:
    """Copy one scratch run's notebooks and scores into autograder/ (called from one thread only)."""
    from sqlalchemy.exc import SAWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's own ORM use in update_or_create_submission
        _merge_unwarned(course, res)


def _merge_unwarned(course: Course, res: HandInResult) -> None:
    from nbgrader.api import Gradebook, MissingEntry

    scratch = course.work / "grade" / res.assignment / res.student
    src_nb_dir = scratch / "autograded" / res.student / res.assignment
    dst_nb_dir = course.autograded / res.student / res.assignment
    if dst_nb_dir.exists():
        shutil.rmtree(dst_nb_dir)
    if src_nb_dir.is_dir():
        shutil.copytree(src_nb_dir, dst_nb_dir)

    notebooks = {}
    for nb_path in sorted(dst_nb_dir.glob("*.ipynb")) if dst_nb_dir.is_dir() else []:
        nb = read_notebook(nb_path)
        notebooks[nb_path.stem] = nb
        stops = set()
        for cell in nb["cells"]:
            for out in cell.get("outputs", []):
                if out.get("output_type") == "error":
                    if out.get("ename") == "GraderStop":
                        stops.add(out.get("evalue", ""))
                    elif out.get("ename") == "CellTimeoutError":
                        stops.add("셀 시간 제한 초과(CellTimeoutError)")
        if stops:
            res.incidents[nb_path.stem] = sorted(stops)
        res.findings[nb_path.stem], zero_ids = integrity.review_notebook(nb)
        if zero_ids:
            res.zeroed[nb_path.stem] = zero_ids

    with Gradebook(f"sqlite:///{scratch / 'gradebook.db'}", "gemm-lab") as sgb, \
            Gradebook(course.db_url, "gemm-lab") as gb:
        gb.update_or_create_student(res.student)
        try:
            ssub = sgb.find_submission(res.assignment, res.student)
        except MissingEntry:
            ssub = None
        kw = {"timestamp": ssub.timestamp} if ssub is not None and ssub.timestamp is not None else {}
        sub = gb.update_or_create_submission(res.assignment, res.student, **kw)
        for nb in sub.notebooks:
            snb = None
            if ssub is not None and res.ok:
                snb = next((x for x in ssub.notebooks if x.name == nb.name), None)
            sgrades = {g.name: g for g in snb.grades} if snb is not None else {}
            zero = set(res.zeroed.get(nb.name, []))
            for grade in nb.grades:
                sg = sgrades.get(grade.name)
                if sg is None:  # nothing graded (grader failure): zero, and flagged for review
                    grade.auto_score = 0
                    grade.needs_manual_grade = grade.cell.cell_type == "markdown" or not res.ok
                elif grade.name in zero:
                    res.withheld[nb.name] = res.withheld.get(nb.name, 0.0) + float(sg.auto_score or 0.0)
                    grade.auto_score = 0
                    grade.needs_manual_grade = True
                else:
                    grade.auto_score = sg.auto_score
                    grade.needs_manual_grade = sg.needs_manual_grade
                # manual scores (formgrader) are kept across re-grading, as nbgrader itself does
            scomments = {c.name: c for c in snb.comments} if snb is not None else {}
            for comment in nb.comments:
                sc = scomments.get(comment.name)
                comment.auto_comment = sc.auto_comment if sc is not None else None
            nb.flagged = bool(zero) or not res.ok
            if snb is not None:
                nb.late_submission_penalty = snb.late_submission_penalty
        gb.db.commit()


def _write_review(course: Course, results: list[HandInResult]) -> None:
    data = {}
    if course.review_json.exists():
        data = json.loads(course.review_json.read_text())
    for r in results:
        entry = {"ok": r.ok, "error": r.error, "log": os.path.relpath(r.log, course.root),
                 "seconds": round(r.seconds, 1), "incidents": r.incidents, "findings": r.findings,
                 "zeroed": r.zeroed, "withheld_points": r.withheld}
        data.setdefault(r.assignment, {})[r.student] = entry
    course.review_json.parent.mkdir(parents=True, exist_ok=True)
    course.review_json.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True))


def autograde(course: Course, assignment: str, *, students: list[str] | None = None, jobs: int | None = None,
              cell_timeout: int = DEFAULT_CELL_TIMEOUT, notebook_timeout: int = DEFAULT_NOTEBOOK_TIMEOUT,
              allow_unsandboxed: bool = False, keep_scratch: bool = False, quiet: bool = False,
              memory_gb: float | None = None) -> list[HandInResult]:
    """Grade the hand-ins in autograder/submitted/*/ASSIGNMENT (all, or ``students``).

    Limits per hand-in: ``cell_timeout`` seconds per cell, ``notebook_timeout`` per notebook, and
    (in the sandbox, CPU only) ``memory_gb`` of address space for the kernel (default 4).
    """
    mode = sandbox_mode(allow_unsandboxed)
    todo = students if students is not None else submitted_students(course, assignment)
    if not todo:
        return []
    course.work.mkdir(parents=True, exist_ok=True)
    with open(course.work / "autograde.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError(f"another autograde is running on {course.root} (lock {lock.name})") from None
        memory_bytes = None if memory_gb is None else int(memory_gb * (1 << 30))
        return _autograde_locked(course, assignment, todo, mode, jobs, cell_timeout, notebook_timeout,
                                 keep_scratch, quiet, memory_bytes)


def _autograde_locked(course, assignment, todo, mode, jobs, cell_timeout, notebook_timeout, keep_scratch,
                      quiet, memory_bytes):
    snapshot = prepare_gradebook(course, assignment)
    jobs = jobs or max(1, os.cpu_count() or 1)
    results = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = {pool.submit(_grade_one, course, assignment, s, snapshot, mode, cell_timeout,
                            notebook_timeout, memory_bytes): s for s in todo}
        for fut in as_completed(futs):
            res = fut.result()
            _merge(course, res)
            if not keep_scratch:
                shutil.rmtree(course.work / "grade" / assignment / res.student, ignore_errors=True)
            results.append(res)
            if not quiet:
                flag = "" if res.ok else f"  !! {res.error}"
                extra = "".join(f"  [{nb}: {', '.join(v)}]" for nb, v in res.incidents.items())
                extra += "".join(f"  [검토 {nb}: {len(v)} 건]" for nb, v in res.findings.items() if v)
                print(f"graded {assignment}/{res.student} in {res.seconds:.1f}s{flag}{extra}", flush=True)
    results.sort(key=lambda r: r.student)
    _write_review(course, results)
    return results


def results_as_dicts(results: list[HandInResult]) -> list[dict]:
    return [asdict(r) for r in results]
