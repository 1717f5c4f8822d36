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
4. Before nbgrader sees a hand-in, its notebooks are repaired against the release
   (autograder/normalize.py): nbgrader 0.9.6 crashes on deleted, duplicated or renamed test cells.
5. When a scratch run ends, this process copies its autograded notebooks into autograder/autograded/
   (scrubbed: autograder/safe_feedback.py) and its scores into the main gradebook (one transaction per
   hand-in, with the 'graded' mark of autograder/resume.py), scans the student's code for tampering
   (gemm_lab.grading.integrity) and writes the hand-in's review notes (autograder/merge.py).
6. Crash safety (autograder/lock.py): one run per course (a lock whose process is gone is taken over);
   the scratch a killed run left is removed; hand-ins already graded are skipped unless ``regrade``.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import warnings
from dataclasses import asdict
from pathlib import Path

from . import dispatch, resume, triton_cache
from .course import IGNORE, REPO_ROOT, SCRATCH_COURSE_CONFIG, Course, release, run_nbgrader
from .lock import AutogradeLocked, CourseLock, clean_leftovers, runtime_dir_name
from .merge import HandInResult, merge
from .nbexec import GUARD_MARK
from .normalize import normalize_file
from .sandbox import ENV_SPEC, bwrap_path

__all__ = ["AutogradeLocked", "HandInResult", "SandboxMissing", "autograde", "sandbox_mode",
           "submitted_students", "DEFAULT_CELL_TIMEOUT", "DEFAULT_NOTEBOOK_TIMEOUT"]

DEFAULT_CELL_TIMEOUT = 60
DEFAULT_NOTEBOOK_TIMEOUT = 600

_SCRATCH_CONFIG = SCRATCH_COURSE_CONFIG + """\
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
               cell_timeout: int, notebook_timeout: int, memory_bytes: int | None = None,
               shared_cache: str | None = None) -> HandInResult:
    t0 = time.monotonic()
    scratch = course.work / "grade" / assignment / student
    if scratch.exists():
        shutil.rmtree(scratch)
    (scratch / "source" / assignment).mkdir(parents=True)
    _copy_public_files(course.source / assignment, scratch / "source" / assignment)
    shutil.copy(snapshot, scratch / "gradebook.db")
    handin = course.submitted / student / assignment
    handin_sha = resume.tree_sha256(handin)
    shutil.copytree(handin, scratch / "submitted" / student / assignment, symlinks=True)
    repairs = {}
    for nb_path in sorted((scratch / "submitted" / student / assignment).glob("*.ipynb")):
        rel_nb = course.work / "release" / assignment / nb_path.name
        if rel_nb.is_file() and nb_path.is_file() and not nb_path.is_symlink():
            try:
                fixed = normalize_file(nb_path, rel_nb)
            except Exception as exc:  # a bug here must not stop the run: nbgrader gets the hand-in as is
                fixed = [f"normalisation failed ({type(exc).__name__}: {exc}); graded as handed in"]
            if fixed:
                repairs[nb_path.stem] = fixed
    (scratch / "nbgrader_config.py").write_text(_SCRATCH_CONFIG.format(
        root=str(scratch), db_url=f"sqlite:///{scratch / 'gradebook.db'}", ignore=IGNORE,
        cell_timeout=int(cell_timeout), notebook_timeout=int(notebook_timeout)))
    # The kernel's working directory: the student's own files + the assignment's public files.
    kernel_cwd = scratch / "kernel_cwd"
    shutil.copytree(handin, kernel_cwd, symlinks=True)  # a link stays a link (dangling in the sandbox)
    if (course.release / assignment).is_dir():
        _copy_public_files(course.release / assignment, kernel_cwd)
    runtime_dir = Path(tempfile.mkdtemp(prefix=runtime_dir_name(), dir="/tmp"))  # short: ipc socket paths
    env = {"JUPYTER_RUNTIME_DIR": str(runtime_dir),
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env.pop(ENV_SPEC, None)
    if mode == "bwrap":
        spec = scratch / "sandbox.json"
        spec.write_text(json.dumps({"kernel_cwd": str(kernel_cwd), "memory_bytes": memory_bytes,
                                    **triton_cache.sandbox_spec(Path(shared_cache) if shared_cache else None)}))
        env[ENV_SPEC] = str(spec)
        env["GEMM_LAB_UNSANDBOXED"] = "0"
    else:
        env[ENV_SPEC] = ""
        env["GEMM_LAB_UNSANDBOXED"] = "1"
    n_nb = max(1, len(list(handin.glob("*.ipynb"))))
    log = course.logs / assignment / f"{student}.log"
    result = HandInResult(student, assignment, ok=False, seconds=0.0, log=str(log), repairs=repairs,
                          handin_sha=handin_sha)
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


def default_jobs() -> int:
    """Hand-ins graded at once by default: one more than the CPUs. A hand-in waits part of its time
    (kernel start-up, nbgrader's own start, file I/O), so CPU count alone leaves cores idle: 50 week-7
    hand-ins on 2 cores took 1,022 s at 2 at a time (CPU 83 % busy) and 885 s at 3 (98 %)."""
    return (os.cpu_count() or 1) + 1


def autograde(course: Course, assignment: str, *, students: list[str] | None = None, jobs: int | None = None,
              cell_timeout: int = DEFAULT_CELL_TIMEOUT, notebook_timeout: int = DEFAULT_NOTEBOOK_TIMEOUT,
              allow_unsandboxed: bool = False, keep_scratch: bool = False, quiet: bool = False,
              memory_gb: float | None = None, regrade: bool = False) -> list[HandInResult]:
    """Grade the hand-ins in autograder/submitted/*/ASSIGNMENT (all, or ``students``).

    Limits per hand-in: ``cell_timeout`` seconds per cell, ``notebook_timeout`` per notebook, and
    (in the sandbox, CPU only) ``memory_gb`` of address space for the kernel (default 4).
    A hand-in already graded (same files, same source/ASSIGNMENT: autograder/resume.py) is skipped
    unless ``regrade``; it is returned with ``skipped=True`` and its recorded review.
    Raises :class:`AutogradeLocked` at once when another autograde runs on this course.
    """
    mode = sandbox_mode(allow_unsandboxed)
    todo = students if students is not None else submitted_students(course, assignment)
    if not todo:
        return []
    course.work.mkdir(parents=True, exist_ok=True)
    say = (lambda m: None) if quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    with CourseLock(course.work, log=lambda m: print(m, file=sys.stderr, flush=True)):
        left = clean_leftovers(course.work)
        if left:
            say(f"autograde: removed {len(left)} scratch folder(s) left by an earlier run")
        memory_bytes = None if memory_gb is None else int(memory_gb * (1 << 30))
        return _autograde_locked(course, assignment, todo, mode, jobs, cell_timeout, notebook_timeout,
                                 keep_scratch, quiet, memory_bytes, regrade)


def _skipped_results(course: Course, assignment: str, done: dict[str, str]) -> list[HandInResult]:
    rows = resume.graded_rows(course.gradebook, assignment)
    out = []
    for student, sha in sorted(done.items()):
        rev = rows[(assignment, student)]["review"]
        out.append(HandInResult(student, assignment, ok=True, seconds=0.0, log=str(course.root / rev["log"]),
                                error=rev.get("error", ""), incidents=rev.get("incidents", {}),
                                findings=rev.get("findings", {}), zeroed=rev.get("zeroed", {}),
                                withheld=rev.get("withheld_points", {}), repairs=rev.get("repairs", {}),
                                redacted=rev.get("redacted", {}), manual=rev.get("manual", {}),
                                handin_sha=sha, skipped=True))
    return out


def _autograde_locked(course, assignment, todo, mode, jobs, cell_timeout, notebook_timeout, keep_scratch,
                      quiet, memory_bytes, regrade=False):
    if course.gradebook.exists():  # (nbgrader creates it: a file made here first would confuse its migrations)
        resume.ensure_table(course.gradebook)
        resume.write_review_files(course)  # a kill between a commit and its review file left one stale
    done = {} if regrade else resume.already_graded(course, assignment, todo)
    results = _skipped_results(course, assignment, done)
    if done and not quiet:
        print(f"autograde: {len(done)} hand-in(s) of {assignment} already graded (same files, same source): "
              "skipped; --regrade grades them again", flush=True)
    if all(s in done for s in todo):
        return results
    snapshot = prepare_gradebook(course, assignment)
    resume.ensure_table(course.gradebook)
    shared = None  # the shared read-only Triton cache (autograder/triton_cache.py): sandboxed grading only
    if mode == "bwrap":
        shared = triton_cache.warm(course, assignment, course.work / "release" / assignment,
                                   log=(lambda m: None) if quiet else (lambda m: print(m, flush=True)))
    shared_cache = None if shared is None else str(shared)
    source_sha = resume.tree_sha256(course.source / assignment)
    jobs = jobs or default_jobs()
    with dispatch.pool(jobs) as pool:  # $GEMM_LAB_SCHEDULER: one Dask task per hand-in (autograder/dispatch.py)
        futs = {pool.submit(_grade_one, course, assignment, s, snapshot, mode, cell_timeout, notebook_timeout,
                            memory_bytes, shared_cache, key=f"grade-{assignment}-{s}-{time.time_ns()}"): s
                for s in todo if s not in done}
        for fut in pool.as_completed(futs):
            res = dispatch.result(fut, futs[fut], assignment, str(course.logs / assignment / f"{futs[fut]}.log"))
            res.source_sha = source_sha
            merge(course, res)
            if not keep_scratch:
                shutil.rmtree(course.work / "grade" / assignment / res.student, ignore_errors=True)
            results.append(res)
            if not quiet:
                flag = "" if res.ok else f"  !! {res.error}"
                extra = "".join(f"  [{nb}: {', '.join(v)}]" for nb, v in res.incidents.items())
                extra += "".join(f"  [검토 {nb}: {len(v)} 건]" for nb, v in res.findings.items() if v)
                extra += "".join(f"  [repaired {nb}: {len(v)}]" for nb, v in res.repairs.items())
                print(f"graded {assignment}/{res.student} in {res.seconds:.1f}s{flag}{extra}", flush=True)
    if not keep_scratch:
        snapshot.unlink(missing_ok=True)
    results.sort(key=lambda r: r.student)
    return results


def results_as_dicts(results: list[HandInResult]) -> list[dict]:
    return [asdict(r) for r in results]
