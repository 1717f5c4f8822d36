"""Autograde every hand-in of one or more assignments: in one pool, each in its own scratch course, sandboxed.

Design (why the gradebook stays consistent and the secrets stay secret):

1. The main gradebook (autograder/gradebook.db, SQLite) is written by this process only. Before grading,
   the assignment is (re)recorded from source/ with ``nbgrader generate_assignment`` (into a scratch
   release folder, so the committed release/ is not touched) and a snapshot of the gradebook is taken
   with SQLite's backup API.
2. Each (student, assignment) — on Dask or with ``unit='notebook'`` each (student, assignment, notebook) —
   is graded by its own ``nbgrader autograde`` process in autograder/work/grade/ASSIGNMENT/STUDENT/
   (per notebook: .../STUDENT/nb-NOTEBOOK/ with ``--notebook``), a scratch course holding a copy of the
   snapshot, the hand-in, and a generated nbgrader_config.py. Up to ``jobs`` of these run at once, over every
   assignment, longest expected first (autograder/grade/schedule.py: the job count from CPUs and memory, the
   order, and how a hand-in's notebooks are put together again); they share nothing that is written.
3. The student's kernel runs under bubblewrap (autograder/sandbox/kernel.py): it sees the installed environment
   read-only and a copy of its own hand-in as its working directory, nothing else — not the scratch
   gradebook (which holds the hidden tests), not the sanitized notebook nbgrader writes before running
   it (it holds them too), not source/, not other hand-ins; no network.
4. Before nbgrader sees a hand-in, its notebooks are repaired against the release
   (autograder/grade/normalize.py): nbgrader 0.9.6 crashes on deleted, duplicated or renamed test cells.
5. When a scratch run ends, this process copies its autograded notebooks into autograder/autograded/
   (scrubbed: autograder/grade/safe_feedback.py) and its scores into the main gradebook (one transaction per
   hand-in, with the 'graded' mark of autograder/grade/resume.py), scans the student's code for tampering
   (gemm_lab.grading.audit.scan) and writes the hand-in's review notes (autograder/grade/merge.py).
6. Crash safety (autograder/course_lock.py): one run per course (a lock whose process is gone is taken over);
   the scratch a killed run left is removed; hand-ins already graded are skipped unless ``regrade``.
   A notebook whose kernel a signal killed (OOM killer, an admin) is graded once more in a fresh kernel;
   only a second kill sends its remaining cells to hand grading (autograder/grade/merge.py).
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
from dataclasses import dataclass, replace
from pathlib import Path

from autograder.course import IGNORE, REPO_ROOT, SCRATCH_COURSE_CONFIG, Course, release, run_nbgrader
from autograder.course_lock import AutogradeLocked, CourseLock, clean_leftovers, runtime_dir_name
from autograder.grade import dispatch, resume, schedule, triton_cache
from autograder.grade.merge import REVIEW_NOTES, HandInResult, merge
from autograder.grade.nbexec import GUARD_MARK
from autograder.grade.normalize import normalize_file
from autograder.grade.schedule import part_dir, part_log
from autograder.sandbox.bwrap import ENV_SPEC, bwrap_path

__all__ = ["AutogradeLocked", "GradeSettings", "HandInResult", "SandboxMissing", "autograde", "autograde_all",
           "sandbox_mode", "submitted_students", "DEFAULT_CELL_TIMEOUT", "DEFAULT_NOTEBOOK_TIMEOUT"]

DEFAULT_CELL_TIMEOUT = 60
DEFAULT_NOTEBOOK_TIMEOUT = 600


@dataclass(frozen=True)
class GradeSettings:
    """How one autograde runs; the CLI builds it once from its options and hands it down.

    ``jobs``: hand-ins (or notebooks) at once (default ``$GRADE_JOBS``, else min(CPUs + 1, available memory /
    ``handin_memory_gb``): autograder/grade/schedule.py). ``unit``: 'notebook' (one task per hand-in × notebook)
    or 'handin' (one nbgrader per hand-in); default ``$GRADE_UNIT``, else 'notebook' on Dask and 'handin' here.
    Limits per hand-in: ``cell_timeout`` seconds per cell, ``notebook_timeout`` per notebook, (in the sandbox,
    CPU only) ``memory_gb`` of address space per process (default 4) and ``handin_memory_gb`` for all its
    processes (default: the sandbox's 6). ``regrade``: grade again what resume would skip."""

    jobs: int | None = None
    cell_timeout: int = DEFAULT_CELL_TIMEOUT
    notebook_timeout: int = DEFAULT_NOTEBOOK_TIMEOUT
    memory_gb: float | None = None
    handin_memory_gb: float | None = None
    unit: str | None = None
    allow_unsandboxed: bool = False
    regrade: bool = False
    keep_scratch: bool = False
    quiet: bool = False

    @property
    def memory_bytes(self) -> int | None:
        return None if self.memory_gb is None else int(self.memory_gb * (1 << 30))

_SCRATCH_CONFIG = SCRATCH_COURSE_CONFIG + """\
c.OverwriteCells.add_missing_cells = True
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (IgnorePattern, LimitOutput, SaveAutoGrades, AssignLatePenalties,
                                    CheckCellMetadata)
from autograder.grade.nbexec import GuardedExecute
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


_NBGRADER_KILLED = "nbgrader autograde killed by signal "  # a part worth one more run (OOM killer, an admin)


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
    if (scratch_release / assignment).exists():  # only this one: the other assignments' stay in use
        shutil.rmtree(scratch_release / assignment)
    release(course, assignment, release_dir=scratch_release)
    snap = course.work / "grade" / assignment / "gradebook.base.db"
    snap.parent.mkdir(parents=True, exist_ok=True)
    snap.unlink(missing_ok=True)
    with sqlite3.connect(course.gradebook) as a, sqlite3.connect(snap) as b:
        a.backup(b)
    return snap


def _grade_one(course: Course, assignment: str, student: str, snapshot: Path, mode: str, settings: GradeSettings,
               shared_cache: Path | None = None, notebook: str | None = None,
               group_memory_bytes: int | None = None) -> HandInResult:
    """Grade one hand-in (``notebook`` None) or one of its notebooks in its own scratch course
    (autograder/grade/schedule.py part_dir) with its own ``nbgrader autograde``; nothing is merged here."""
    t0 = time.monotonic()
    scratch = part_dir(course, assignment, student, notebook)
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
        if notebook is not None and nb_path.stem != notebook:
            continue
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
        cell_timeout=int(settings.cell_timeout), notebook_timeout=int(settings.notebook_timeout)))
    # The kernel's working directory: the student's own files + the assignment's public files.
    kernel_cwd = scratch / "kernel_cwd"
    shutil.copytree(handin, kernel_cwd, symlinks=True)  # a link stays a link (dangling in the sandbox)
    if (course.release / assignment).is_dir():
        _copy_public_files(course.release / assignment, kernel_cwd)
    runtime_dir = Path(tempfile.mkdtemp(prefix=runtime_dir_name(), dir="/tmp"))  # short: ipc socket paths
    env = {"JUPYTER_RUNTIME_DIR": str(runtime_dir),
           # compile results the grader keeps of its workers, shared by hand-ins with the same kernel source
           "GEMM_LAB_COMPILE_CACHE": str(course.work / "worker-compile"),
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env[ENV_SPEC], env["GEMM_LAB_UNSANDBOXED"] = "", "1"
    if mode == "bwrap":
        spec = scratch / "sandbox.json"
        spec.write_text(json.dumps({"kernel_cwd": str(kernel_cwd), "memory_bytes": settings.memory_bytes,
                                    "group_memory_bytes": group_memory_bytes,
                                    **triton_cache.sandbox_spec(shared_cache)}))
        env[ENV_SPEC], env["GEMM_LAB_UNSANDBOXED"] = str(spec), "0"
    n_nb = 1 if notebook is not None else max(1, len(list(handin.glob("*.ipynb"))))
    log = part_log(course, assignment, student, notebook)
    result = HandInResult(student, assignment, ok=False, seconds=0.0, log=str(log), repairs=repairs,
                          handin_sha=handin_sha)
    try:
        only = [] if notebook is None else ["--notebook", notebook]
        proc = run_nbgrader(["autograde", assignment, "--student", student, "--force", *only], cwd=scratch,
                            env=env, timeout=n_nb * (settings.notebook_timeout + 120), log=log, check=False)
        result.ok = proc.returncode == 0
        if not result.ok:
            how = f"{_NBGRADER_KILLED}{-proc.returncode}" if proc.returncode < 0 else \
                f"nbgrader autograde exited with {proc.returncode}"
            result.error = f"{how} (see {log})"
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


def autograde(course: Course, assignment: str, settings: GradeSettings | None = None, *,
              students: list[str] | None = None, **options) -> list[HandInResult]:
    """Grade the hand-ins in autograder/submitted/*/ASSIGNMENT (all, or ``students``) with ``settings``, or
    GradeSettings(**options) when a caller names only a few: see :func:`autograde_all`."""
    settings = replace(settings or GradeSettings(), **options)
    return autograde_all(course, [assignment], settings, students=students)[assignment]


def autograde_all(course: Course, assignments: list[str], settings: GradeSettings = GradeSettings(), *,
                  students: list[str] | None = None, on_part=None) -> dict[str, list[HandInResult]]:
    """Grade the hand-ins of every assignment in ``assignments`` in ONE pool: {assignment: results}.

    ``students``: only these (default: every student with a hand-in); ``settings``: :class:`GradeSettings`.
    Tasks run longest expected first; a notebook whose kernel a signal killed (OOM killer, an admin) is
    graded once more in a fresh kernel before its cells go to hand grading.
    A hand-in already graded (same files, same source/ASSIGNMENT: autograder/grade/resume.py) is skipped
    unless ``settings.regrade``; it is returned with ``skipped=True`` and its recorded review.
    ``on_part(part, result)`` is called for every finished task (benchmarks).
    Raises :class:`AutogradeLocked` at once when another autograde runs on this course.
    """
    unit = schedule.grading_unit(settings.unit)
    per_handin = schedule.handin_memory_bytes(settings.memory_bytes, settings.handin_memory_gb)
    group_bytes = per_handin if settings.handin_memory_gb is not None or os.environ.get(schedule.HANDIN_MEMORY_ENV) \
        else None
    n_jobs, why = schedule.plan_jobs(settings.jobs, per_handin_bytes=per_handin,
                                     available=schedule.available_memory())
    if dispatch.scheduler_address():
        why = f"on the Dask cluster {dispatch.scheduler_address()}"
    mode = sandbox_mode(settings.allow_unsandboxed)
    todo = {a: (list(students) if students is not None else submitted_students(course, a)) for a in assignments}
    out: dict[str, list[HandInResult]] = {a: [] for a in assignments}
    if not any(todo.values()):
        return out
    course.work.mkdir(parents=True, exist_ok=True)
    with CourseLock(course.work, log=lambda m: print(m, file=sys.stderr, flush=True)):
        left = clean_leftovers(course.work)
        if left and not settings.quiet:
            print(f"autograde: removed {len(left)} scratch folder(s) left by an earlier run", file=sys.stderr)
        return _Run(course, mode, settings, n_jobs, why, group_bytes, unit, on_part).grade(todo)


def _skipped_results(course: Course, assignment: str, done: dict[str, dict]) -> list[HandInResult]:
    """The recorded results of the hand-ins resume skips (``done``: student -> its graded row)."""
    return [HandInResult(student, assignment, ok=True, seconds=0.0, log=str(course.root / row["review"]["log"]),
                         error=row["review"].get("error", ""), handin_sha=row["handin_sha"], skipped=True,
                         **{k: row["review"].get(k, {}) for k in REVIEW_NOTES})
            for student, row in sorted(done.items())]


class _Run:
    """One autograde: every hand-in × notebook of every assignment through one pool (course lock held)."""

    def __init__(self, course, mode, settings: GradeSettings, jobs, why, group_bytes, unit, on_part):
        self.course, self.mode, self.settings, self.jobs, self.why = course, mode, settings, jobs, why
        self.group_bytes, self.unit, self.on_part = group_bytes, unit, on_part
        self.snapshots: dict[str, Path] = {}
        self.caches: dict[str, Path | None] = {}
        self.source_sha: dict[str, str] = {}

    def say(self, msg: str) -> None:
        if not self.settings.quiet:
            print(msg, flush=True)

    def grade(self, todo: dict[str, list[str]]) -> dict[str, list[HandInResult]]:
        course = self.course
        if course.gradebook.exists():  # (nbgrader creates it: a file made here first would confuse its migrations)
            resume.ensure_table(course.gradebook)
            resume.write_review_files(course)  # a kill between a commit and its review file left one stale
        out, left = {}, {}
        for a, students in todo.items():
            done = {} if self.settings.regrade else resume.already_graded(course, a, students)
            out[a] = _skipped_results(course, a, done)
            if done:
                self.say(f"autograde: {len(done)} hand-in(s) of {a} already graded (same files, same source): "
                         "skipped; --regrade grades them again")
            if any(s not in done for s in students):
                left[a] = [s for s in students if s not in done]
        if not left:
            return out
        for a in left:  # every assignment is recorded before any task runs: the pool then never waits
            self.snapshots[a] = prepare_gradebook(course, a)
        resume.ensure_table(course.gradebook)
        for a in left:  # the shared read-only Triton cache (autograder/grade/triton_cache.py): sandboxed grading only
            self.caches[a] = triton_cache.warm(course, a, course.work / "release" / a, log=self.say) \
                if self.mode == "bwrap" else None
            self.source_sha[a] = resume.tree_sha256(course.source / a)
        parts = schedule.plan_parts(course, left, self.unit)
        handins = {(a, s) for a, ss in left.items() for s in ss}
        self.say(f"autograde: {len(parts)} notebook(s) of {len(handins)} hand-in(s) ({', '.join(left)}), "
                 f"{self.why}, longest expected first")
        for res in self._pool(parts):
            out[res.assignment].append(res)
        for a in left:
            if not self.settings.keep_scratch:
                self.snapshots[a].unlink(missing_ok=True)
        for results in out.values():
            results.sort(key=lambda r: r.student)
        return out

    def _submit(self, submit, part: schedule.Part):
        a, s, nb = part.assignment, part.student, part.notebook
        key = f"grade-{a}-{s}-{nb or 'all'}-{part.attempt}-{time.time_ns()}"
        return submit(_grade_one, self.course, a, s, self.snapshots[a], self.mode, self.settings,
                           self.caches[a], nb, self.group_bytes, key=key, priority=int(part.expected_s * 10))

    def _pool(self, parts: list[schedule.Part]):
        """Yield each hand-in's merged result as soon as its last part is done."""
        course = self.course
        waiting: dict[tuple[str, str], dict] = {}
        for p in parts:
            waiting.setdefault((p.assignment, p.student), {})[p.notebook] = None
        # $GEMM_LAB_SCHEDULER: one Dask task per part (autograder/grade/dispatch.py)
        with dispatch.pool(self.jobs) as submit:
            done = dispatch.Completion()
            for p in parts:
                done.add(self._submit(submit, p), p)
            while done:
                fut, part = done.next()
                a, s, nb = part.assignment, part.student, part.notebook
                res = dispatch.result(fut, s, a, str(schedule.part_log(course, a, s, nb)))
                killed = schedule.regrade_reasons(course, part, res, _NBGRADER_KILLED)
                if part.attempt == 0 and killed:
                    # killed from outside (OOM killer, an admin): once more in a fresh kernel
                    again = schedule.Part(a, s, nb, part.expected_s, attempt=1, notes=killed)
                    self.say(f"regrading {part.name}: {'; '.join(killed)}; once more in a fresh kernel")
                    done.add(self._submit(submit, again), again)
                    continue
                if self.on_part is not None:
                    self.on_part(part, res)
                waiting[(a, s)][nb] = (part, res)
                if any(v is None for v in waiting[(a, s)].values()):
                    continue
                yield self._finish(a, s, waiting.pop((a, s)))

    def _finish(self, a: str, s: str, finished: dict) -> HandInResult:
        course = self.course
        if list(finished) == [None]:
            res = finished[None][1]
        else:
            res = schedule.combine_parts(course, a, s, {nb: r for nb, (_, r) in finished.items()})
        notes = [n + "; graded again in a fresh kernel" for p, _ in finished.values() for n in p.notes]
        if notes:  # merge keeps this key and records it with the scores
            res.incidents["regraded"] = notes
        res.source_sha = self.source_sha[a]
        merge(course, res, {nb: part_dir(course, a, s, nb) for nb in sorted(finished, key=lambda n: n or '')})
        schedule.record_durations(course, [(p, r.seconds) for p, r in finished.values()])
        if not self.settings.keep_scratch:
            shutil.rmtree(course.work / "grade" / a / s, ignore_errors=True)
        flag = "" if res.ok else f"  !! {res.error}"
        extra = "".join(f"  [{nb}: {', '.join(v)}]" for nb, v in res.incidents.items())
        extra += "".join(f"  [검토 {nb}: {len(v)} 건]" for nb, v in res.findings.items() if v)
        extra += "".join(f"  [repaired {nb}: {len(v)}]" for nb, v in res.repairs.items())
        self.say(f"graded {a}/{s} in {res.seconds:.1f}s{flag}{extra}")
        return res

