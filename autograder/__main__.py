"""The instructor's commands (run from the repository root):

    python -m autograder release  [ASSIGNMENT ...]          nbgrader generate_assignment -> release/
    python -m autograder collect  [ASSIGNMENT] FROM         import hand-ins (zip / folder, see collect/handins.py)
    python -m autograder autograde [ASSIGNMENT ...] [--jobs N] [--cell-timeout S] [--notebook-timeout S]
    python -m autograder feedback [ASSIGNMENT ...] [--lms canvas|moodle]   HTML -> autograder/feedback/ (+ LMS zip)
    python -m autograder grades   [--lms LMS] [--from FILE] [--out CSV] [--export-dir DIR]   grades, LMS file
    python -m autograder report   [ASSIGNMENT ...] [--out DIR]  class report -> autograder/report/ (reporting/class_report.py)
    python -m autograder demo     [ASSIGNMENT ...]          release, collect the samples, autograde, compare

Without ASSIGNMENT: every assignment in source/ (autograde/feedback: those with hand-ins).
Student code runs under bubblewrap; without bwrap, autograde refuses unless --allow-unsandboxed.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import warnings
from dataclasses import fields

from autograder.course import Course, release
from autograder.grade.autograde import (
    DEFAULT_CELL_TIMEOUT,
    DEFAULT_NOTEBOOK_TIMEOUT,
    AutogradeLocked,
    GradeSettings,
    SandboxMissing,
    autograde_all,
    submitted_students,
)


class UnknownAssignment(ValueError):
    """A named assignment that source/ does not hold."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # bad use: one line naming where the options are, no usage dump
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def _settings(args) -> GradeSettings:
    """The one GradeSettings of this command, from the options its verb has."""
    return GradeSettings(**{f.name: getattr(args, f.name) for f in fields(GradeSettings) if hasattr(args, f.name)})


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

    return cli(course, args.where, args.pattern)


def _grade_args(p):
    p.add_argument("--jobs", type=int, default=None,
                   help="notebooks graded at once (default $GRADE_JOBS, else min(CPUs + 1, memory / hand-in limit))")
    p.add_argument("--cell-timeout", type=int, default=DEFAULT_CELL_TIMEOUT)
    p.add_argument("--notebook-timeout", type=int, default=DEFAULT_NOTEBOOK_TIMEOUT)
    p.add_argument("--memory-gb", type=float, default=None,
                   help="address-space limit of each student kernel (default 4; not applied on a GPU)")
    p.add_argument("--allow-unsandboxed", action="store_true",
                   help="grade even without bubblewrap (student code then sees this machine)")


def cmd_autograde(course, args):
    from autograder.grade.autograde import sandbox_mode
    from autograder.grade.precheck import MastersNotFull, check_masters
    from autograder.grade.schedule import check_settings

    settings = _settings(args)
    try:  # a bad setting (--jobs 0, GRADE_JOBS=x, ...) stops before anything runs: one line
        check_settings(settings.jobs, settings.handin_memory_gb, settings.unit)
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    assignments = _assignments(course, args.assignment, with_handins=True)
    t0 = time.monotonic()
    if not assignments:
        print("nothing to grade: no hand-ins collected yet (make collect ASSIGNMENT=<name> FROM=<LMS download>)",
              file=sys.stderr)
        return 1
    if not args.no_master_check:
        try:
            check_masters(course, assignments, settings, mode=sandbox_mode(settings.allow_unsandboxed))
        except MastersNotFull as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    # every assignment in one pool (autograder/grade/schedule.py)
    results = autograde_all(course, assignments, settings, students=args.student or None)
    failed = sum(not r.ok for rs in results.values() for r in rs)
    for a, rs in results.items():
        print(f"{a}: {len(rs)} hand-ins")
    print(f"graded {sum(len(rs) for rs in results.values())} hand-ins of {len(results)} assignment(s) "
          f"in {time.monotonic() - t0:.1f}s")
    return 1 if failed else 0


def cmd_feedback(course, args):
    """feedback [ASSIGNMENT ...] [--lms canvas|moodle] (see autograder/reporting/feedback.py)."""
    from autograder.reporting.feedback import write_feedback

    return write_feedback(course, args.assignment, args.lms)


def cmd_grades(course, args):
    """grades [--lms LMS] [--from FILE] [--out CSV] [--export-dir DIR] (see autograder/reporting/grades.py)."""
    from autograder.reporting.grades import write_grades

    return write_grades(course, lms=args.lms, out=args.out, export_dir=args.export_dir, source=args.source,
                        assignment=args.assignment, column=args.column, comment=args.comment)


def cmd_report(course, args):
    from autograder.reporting.class_report import cli

    return cli(course, args.assignment, args.out)


def cmd_demo(course, args):
    """Every assignment with samples unless one is named (autograder/demo.py)."""
    from autograder.demo import main as demo_main

    return demo_main(course, args.assignment, _settings(args), keep=args.keep)


# verbs whose options their own module reads (``python -m autograder VERB --help``): the module's main(argv)
FORWARDED = {
    "leaderboard": ("autograder.reporting.leaderboard",
                    "GPU host: time each graded week07 matmul kernel beside torch.matmul (ungraded)"),
    "bench-grading": ("autograder.bench.grading",
                      "class-scale grading benchmark: N synthetic students graded by one autograde"),
}


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m autograder", description=__doc__.split("\n\n")[0])
    ap.add_argument("--course-root", default=os.environ.get("GEMM_LAB_COURSE_ROOT"))
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("release")
    p.add_argument("assignment", nargs="*")
    p.set_defaults(fn=cmd_release)
    p = sub.add_parser("collect", help="[ASSIGNMENT] FROM [--pattern REGEX] (see autograder/collect/handins.py)")
    p.add_argument("where", nargs="*", metavar="[ASSIGNMENT] FROM")
    p.add_argument("--pattern", default=os.environ.get("PATTERN") or None,
                   help="regular expression naming the student in each file name (default $PATTERN)")
    p.set_defaults(fn=cmd_collect)
    p = sub.add_parser("autograde")
    p.add_argument("assignment", nargs="*")
    p.add_argument("--student", action="append")
    _grade_args(p)
    p.add_argument("--no-master-check", action="store_true",
                   help="skip grading the masters first (they must get full marks in this environment)")
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
    p = sub.add_parser("grades", help="grade table, autograder/grades.csv, LMS files (see reporting/grades.py)")
    p.add_argument("--lms", default=os.environ.get("LMS") or None,
                   help="canvas|moodle|blackboard|csv: also write the file that LMS imports")
    p.add_argument("--out", default=None, help="the plain grades CSV (default autograder/grades.csv)")
    p.add_argument("--export-dir", default=None, help="where the LMS files go (default autograder/)")
    p.add_argument("--from", dest="source", default=None,
                   help="the LMS's own grade file to fill (Canvas export, Moodle grading worksheet, Grade Center)")
    p.add_argument("--assignment", default=None, help="with --from: the assignment the file (or COLUMN) is for")
    p.add_argument("--column", default=None, help="with --from: the header of the column to fill")
    p.add_argument("--comment", action="store_true",
                   help="with --from, Moodle: write '수동 채점 전 N점 제외' into Feedback comments of pending students")
    p.set_defaults(fn=cmd_grades)
    p = sub.add_parser("report")
    p.add_argument("assignment", nargs="*")
    p.add_argument("--out", default=None, help="folder (default autograder/report)")
    p.set_defaults(fn=cmd_report)
    p = sub.add_parser("demo")
    p.add_argument("assignment", nargs="*", help="default: every assignment with samples")
    _grade_args(p)
    p.add_argument("--keep", action="store_true", help="keep the scratch course (autograder/work/demo-*)")
    p.set_defaults(fn=cmd_demo)
    for verb, (_, text) in FORWARDED.items():  # listed in --help; their own options are read by their modules
        sub.add_parser(verb, help=text, add_help=False)
    return ap


def main(argv=None) -> int:
    warnings.filterwarnings("ignore", module="nbgrader")
    warnings.filterwarnings("ignore", message=".*not in session.*")
    argv = sys.argv[1:] if argv is None else list(argv)
    i = 2 if argv[:1] == ["--course-root"] else 1 if argv[:1] and argv[0].startswith("--course-root=") else 0
    if argv[i:i + 1] and argv[i] in FORWARDED:
        return importlib.import_module(FORWARDED[argv[i]][0]).main(argv[i + 1:])
    args = _parser().parse_args(argv)
    course = Course.at(args.course_root)
    try:
        return args.fn(course, args) or 0
    except (SandboxMissing, AutogradeLocked, UnknownAssignment) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
