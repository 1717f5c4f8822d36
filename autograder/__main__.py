"""The instructor's commands (run from the repository root):

    python -m autograder release  [ASSIGNMENT ...]          nbgrader generate_assignment -> release/
    python -m autograder collect  [ASSIGNMENT] FROM         import hand-ins (zip / folder, see collect/handins.py)
    python -m autograder autograde [ASSIGNMENT ...] [--jobs N] [--cell-timeout S] [--notebook-timeout S]
    python -m autograder feedback [ASSIGNMENT ...] [--lms canvas|moodle]   HTML -> autograder/feedback/ (+ LMS zip)
    python -m autograder grades   [--lms LMS] [--from FILE] [--out CSV] [--export-dir DIR]   grades, LMS file
    python -m autograder report   [ASSIGNMENT ...] [--out DIR]  class report -> autograder/report/ (reporting/class_report.py)
    python -m autograder demo     [ASSIGNMENT]              release, collect the samples, autograde, compare

Without ASSIGNMENT: every assignment in source/ (autograde/feedback: those with hand-ins).
Student code runs under bubblewrap; without bwrap, autograde refuses unless --allow-unsandboxed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

from autograder.course import Course, release
from autograder.grade.autograde import (
    DEFAULT_CELL_TIMEOUT,
    DEFAULT_NOTEBOOK_TIMEOUT,
    AutogradeLocked,
    SandboxMissing,
    autograde,
    autograde_all,
    submitted_students,
)
from autograder.reporting.sample_check import compare_with_expected


class UnknownAssignment(ValueError):
    """A named assignment that source/ does not hold."""


def _assignments(course: Course, given: list[str], with_handins: bool = False) -> list[str]:
    known = course.assignments()
    unknown = [a for a in given if a not in known]
    if unknown:
        raise UnknownAssignment(f"ASSIGNMENT={unknown[0]} is not an assignment of source/ (known: "
                                f"{', '.join(known) or 'none'})")
    names = given or known
    if with_handins and not given:
        names = [a for a in names if submitted_students(course, a)]
    return names


def cmd_release(course, args):
    for a in _assignments(course, args.assignment):
        release(course, a)
        print(f"released {a} -> {course.release / a}")


def cmd_collect(course, args):
    """collect [ASSIGNMENT] FROM (see autograder/collect/handins.py)."""
    from autograder.collect.handins import cli

    return cli(course, args.args)


def _grade_args(p):
    p.add_argument("--jobs", type=int, default=None,
                   help="notebooks graded at once (default $GRADE_JOBS, else min(CPUs + 1, memory / hand-in limit))")
    p.add_argument("--cell-timeout", type=int, default=DEFAULT_CELL_TIMEOUT)
    p.add_argument("--notebook-timeout", type=int, default=DEFAULT_NOTEBOOK_TIMEOUT)
    p.add_argument("--memory-gb", type=float, default=None,
                   help="address-space limit of each student kernel (default 4; not applied on a GPU)")
    p.add_argument("--allow-unsandboxed", action="store_true",
                   help="grade even without bubblewrap (student code then sees this machine)")
    p.add_argument("--no-master-check", action="store_true",
                   help="skip grading the masters first (they must get full marks in this environment)")


def cmd_autograde(course, args):
    from autograder.grade.autograde import sandbox_mode
    from autograder.grade.precheck import MastersNotFull, check_masters
    from autograder.grade.schedule import check_settings

    try:  # a bad setting (--jobs 0, GRADE_JOBS=x, ...) stops before anything runs: one line
        check_settings(args.jobs, args.handin_memory_gb, args.unit)
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    assignments = _assignments(course, args.assignment, with_handins=True)
    t0 = time.monotonic()
    if not assignments:
        print("nothing to grade: no hand-ins collected yet (make collect ASSIGNMENT=<name> FROM=<LMS download>)",
              file=sys.stderr)
        return 1
    if not getattr(args, "no_master_check", False):
        try:
            check_masters(course, assignments, mode=sandbox_mode(args.allow_unsandboxed),
                          cell_timeout=args.cell_timeout, notebook_timeout=args.notebook_timeout, jobs=args.jobs,
                          allow_unsandboxed=args.allow_unsandboxed)
        except MastersNotFull as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    # every assignment in one pool (autograder/grade/schedule.py)
    results = autograde_all(course, assignments, students=args.student or None, jobs=args.jobs,
                            cell_timeout=args.cell_timeout, notebook_timeout=args.notebook_timeout,
                            allow_unsandboxed=args.allow_unsandboxed, memory_gb=args.memory_gb,
                            regrade=args.regrade, handin_memory_gb=args.handin_memory_gb, unit=args.unit)
    failed = sum(not r.ok for rs in results.values() for r in rs)
    for a, rs in results.items():
        print(f"{a}: {len(rs)} hand-ins")
    print(f"graded {sum(len(rs) for rs in results.values())} hand-ins of {len(results)} assignment(s) "
          f"in {time.monotonic() - t0:.1f}s")
    return 1 if failed else 0


def cmd_feedback(course, args):
    """feedback [ASSIGNMENT ...] [--lms canvas|moodle] (see autograder/reporting/feedback.py)."""
    from autograder.reporting.feedback import main as feedback_main

    return feedback_main(course, args.assignment + (["--lms", args.lms] if args.lms is not None else []))


def cmd_grades(course, args):
    """grades [--lms LMS] [--from FILE] [--out CSV] [--export-dir DIR] (see autograder/reporting/grades.py)."""
    from autograder.reporting.grades import main as grades_main

    argv = ["--course-root", str(course.root)]
    for flag, value in (("--lms", args.lms), ("--out", args.out), ("--export-dir", args.export_dir),
                        ("--from", args.source), ("--assignment", args.assignment), ("--column", args.column)):
        if value is not None:
            argv += [flag, value]
    return grades_main(argv + (["--comment"] if args.comment else []))


def cmd_report(course, args):
    from autograder.reporting.class_report import cli

    return cli(course, args.assignment, args.out)


def run_demo(assignment: str, *, repo: Course, jobs=None, cell_timeout=60, notebook_timeout=600,
             allow_unsandboxed=False, samples: Path | None = None, out=sys.stdout,
             keep: bool = False, hooks: dict | None = None) -> list[str]:
    """Grade the bundled samples of ``assignment`` in a scratch course; return the mismatches.

    ``hooks`` (for tests): ``{"before_grading": f(course), "after_grading": f(course) -> list[str]}``.
    """
    from autograder.collect.handins import collect
    from autograder.reporting.report import grade_table

    hooks = hooks or {}

    samples = Path(samples or repo.root / "autograder" / "samples" / assignment)
    repo.work.mkdir(parents=True, exist_ok=True)
    demo_root = Path(tempfile.mkdtemp(prefix=f"demo-{assignment}-", dir=repo.work))
    course = repo.scratch(demo_root, [assignment], released=True)
    report = collect(course, assignment, samples)
    print(report.summary(), file=out)
    if "before_grading" in hooks:
        hooks["before_grading"](course)
    t0 = time.monotonic()
    autograde(course, assignment, jobs=jobs, cell_timeout=cell_timeout, notebook_timeout=notebook_timeout,
              allow_unsandboxed=allow_unsandboxed)
    print(f"graded in {time.monotonic() - t0:.1f}s\n", file=out)
    from autograder.samplekit.make_samples import read_expected

    sampled = {nb for (_, nb, _) in read_expected(samples)[0]}
    print(grade_table(course, [assignment], notebooks=sampled), file=out)
    bad = compare_with_expected(course, assignment, samples)
    if "after_grading" in hooks:
        bad += hooks["after_grading"](course) or []
    if keep:
        print(f"demo course kept in {demo_root}", file=out)
    else:
        shutil.rmtree(demo_root, ignore_errors=True)
    return bad


def cmd_demo(course, args):
    """Same as ``python -m autograder.demo``: every assignment with samples unless one is named."""
    from autograder.demo import main as demo_main

    argv = ([args.assignment] if args.assignment else []) + ["--course-root", str(course.root),
                                                            "--cell-timeout", str(args.cell_timeout),
                                                            "--notebook-timeout", str(args.notebook_timeout)]
    if args.jobs:
        argv += ["--jobs", str(args.jobs)]
    if args.allow_unsandboxed:
        argv.append("--allow-unsandboxed")
    return demo_main(argv)


def _leaderboard():
    from autograder.reporting.leaderboard import main as leaderboard_main

    return leaderboard_main


def _bench_grading():
    from autograder.bench.class_scale import main as class_scale_main

    return class_scale_main


# verbs whose options their own module reads (``python -m autograder VERB --help``)
FORWARDED = {
    "leaderboard": (_leaderboard, "GPU host: time each graded week07 matmul kernel beside torch.matmul (ungraded)"),
    "bench-grading": (_bench_grading, "class-scale grading benchmark: N synthetic students graded by one autograde"),
}


def main(argv=None) -> int:
    warnings.filterwarnings("ignore", module="nbgrader")
    warnings.filterwarnings("ignore", message=".*not in session.*")
    ap = argparse.ArgumentParser(prog="python -m autograder", description=__doc__.split("\n\n")[0])
    ap.add_argument("--course-root", default=os.environ.get("GEMM_LAB_COURSE_ROOT"))
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("release")
    p.add_argument("assignment", nargs="*")
    p.set_defaults(fn=cmd_release)
    p = sub.add_parser("collect")
    p.add_argument("args", nargs="*", metavar="[ASSIGNMENT] FROM")
    p.set_defaults(fn=cmd_collect)
    p = sub.add_parser("autograde")
    p.add_argument("assignment", nargs="*")
    p.add_argument("--student", action="append")
    _grade_args(p)
    p.add_argument("--regrade", action="store_true", help="grade again hand-ins already graded (resume skips them)")
    p.add_argument("--handin-memory-gb", type=float, default=None,
                   help="memory limit of one hand-in, all its processes (default $GRADE_HANDIN_MEMORY_GB, else 6); "
                        "the default job count is min(CPUs + 1, available memory / this)")
    p.add_argument("--unit", choices=("notebook", "handin"), default=None,
                   help="one task per hand-in x notebook or per hand-in (default $GRADE_UNIT, else notebook on "
                        "Dask, handin here)")
    p.set_defaults(fn=cmd_autograde)
    p = sub.add_parser("feedback")
    p.add_argument("assignment", nargs="*")
    p.add_argument("--lms", default=None, help="canvas|moodle: also zip the pages in that LMS's upload layout")
    p.set_defaults(fn=cmd_feedback)
    p = sub.add_parser("grades")
    p.add_argument("--lms", default=None, help="canvas|moodle|blackboard|csv: also write the file that LMS imports")
    p.add_argument("--out", default=None)
    p.add_argument("--export-dir", default=None)
    p.add_argument("--from", dest="source", default=None, help="the LMS's own grade file to fill (see grades.py)")
    p.add_argument("--assignment", default=None)
    p.add_argument("--column", default=None)
    p.add_argument("--comment", action="store_true")
    p.set_defaults(fn=cmd_grades)
    p = sub.add_parser("report")
    p.add_argument("assignment", nargs="*")
    p.add_argument("--out", default=None, help="folder (default autograder/report)")
    p.set_defaults(fn=cmd_report)
    p = sub.add_parser("demo")
    p.add_argument("assignment", nargs="?")
    _grade_args(p)
    p.set_defaults(fn=cmd_demo, cell_timeout=60, notebook_timeout=DEFAULT_NOTEBOOK_TIMEOUT)
    for verb, (_, text) in FORWARDED.items():  # listed in --help; their own options are read by their modules
        sub.add_parser(verb, help=text, add_help=False)
    argv = sys.argv[1:] if argv is None else list(argv)
    i = 2 if argv[:1] == ["--course-root"] else 1 if argv[:1] and argv[0].startswith("--course-root=") else 0
    if argv[i:i + 1] and argv[i] in FORWARDED:
        return FORWARDED[argv[i]][0]()(argv[i + 1:])
    rest = []
    if argv[i:i + 1] == ["collect"]:  # collect reads its own options (--pattern): hand it the rest as given
        argv, rest = argv[:i + 1], argv[i + 1:]
    args = ap.parse_args(argv)
    if args.cmd == "collect":
        args.args = rest
    course = Course.at(args.course_root)
    try:
        return args.fn(course, args) or 0
    except (SandboxMissing, AutogradeLocked, UnknownAssignment) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
