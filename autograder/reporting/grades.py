"""`make grades [LMS=canvas|moodle|blackboard|csv] [FROM=<the LMS's own grade file>]`: the grade table,
autograder/grades.csv and, with LMS, the file that LMS imports: its own download filled in (FROM=,
reporting/gradebook_fill.py), else a file made here (reporting/gradebook_export.py) and one line saying what to
map in the LMS's import preview. Points awaiting manual grading go to autograder/grades_<LMS>_pending.csv.

    python -m autograder grades [--lms LMS] [--from FILE [--assignment A] [--column HEADER] [--comment]]
                                [--out CSV] [--export-dir DIR]

Exit 0 when written, 1 when nothing is graded yet (one line saying what to run), 2 on bad use.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from autograder.course import Course
from autograder.reporting.gradebook_export import (
    LMS_CHOICES,
    export,
    pending_summary,
    read_gradebook,
    write_pending,
)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line naming the make variable, no usage dump
        self.exit(2, f"error: {message} (make grades LMS=<{'|'.join(LMS_CHOICES)}>)\n")


def main(argv: list[str] | None = None) -> int:
    warnings.filterwarnings("ignore", module="nbgrader")
    warnings.filterwarnings("ignore", message=".*not in session.*")
    ap = _Parser(prog="make grades", description=__doc__.split("\n\n")[0])
    ap.add_argument("--lms", default=os.environ.get("LMS") or None, type=lambda s: s.strip().lower() or None)
    ap.add_argument("--out", default=None, help="the plain grades CSV (default autograder/grades.csv)")
    ap.add_argument("--export-dir", default=None, help="where the LMS files go (default autograder/)")
    ap.add_argument("--from", dest="source", default=None,
                    help="the LMS's own grade file to fill (Canvas export, Moodle grading worksheet, Grade Center)")
    ap.add_argument("--assignment", default=None, help="with --from: the assignment the file (or COLUMN) is for")
    ap.add_argument("--column", default=None, help="with --from: the header of the column to fill")
    ap.add_argument("--comment", action="store_true",
                    help="with --from, Moodle: write '수동 채점 전 N점 제외' into Feedback comments of pending students")
    ap.add_argument("--course-root", default=os.environ.get("GEMM_LAB_COURSE_ROOT"))
    args = ap.parse_args(argv)
    if args.lms is not None and args.lms not in LMS_CHOICES:
        print(f"error: LMS={args.lms}: expected one of {', '.join(LMS_CHOICES)} (make grades LMS=canvas)",
              file=sys.stderr)
        return 2
    from autograder.reporting.gradebook_fill import FILL_LMS

    if args.source and args.lms not in FILL_LMS:
        print(f"error: FROM={args.source} needs LMS=<{'|'.join(FILL_LMS)}> (the LMS that wrote it)", file=sys.stderr)
        return 2
    if (args.assignment or args.column or args.comment) and not args.source:
        print("error: ASSIGNMENT=, COLUMN= and COMMENT= of make grades go with FROM=<the LMS's own grade file>",
              file=sys.stderr)
        return 2
    if args.source and not os.path.isfile(args.source):
        print(f"error: FROM={args.source}: no such file (the grade file downloaded from the LMS)", file=sys.stderr)
        return 2
    course = Course.at(args.course_root)
    from autograder.collect.roster import sync_gradebook
    from autograder.reporting.report import grade_table, review_flags, write_grades_csv

    grades = read_gradebook(course)
    if not any(ag.score for ag in grades) and not _unreadable_rows(course):
        print("nothing graded yet: run make collect FROM=<LMS download> and make autograde first",
              file=sys.stderr)
        return 1
    try:
        sync_gradebook(course)  # names for formgrader, for students collected before the gradebook existed
    except Exception as exc:  # noqa: BLE001 (a convenience; the grades do not depend on it)
        print(f"warning: student names not written to the gradebook ({type(exc).__name__})", file=sys.stderr)
    path = write_grades_csv(course, args.out)
    print(grade_table(course))
    print(f"wrote {path}")
    if args.source:
        status = _fill(course, args)
        if status:
            return status
    elif args.lms:
        paths, msgs = export(course, args.lms, args.export_dir, review_flags(course))
        for p in paths:
            print(f"wrote {p} ({args.lms})")
        for m in msgs:
            print(f"warning: {m}", file=sys.stderr)
    pending = pending_summary(grades)
    if pending:
        print(pending, file=sys.stderr)
    return 0


def _fill(course: Course, args) -> int:
    """FROM=: fill the LMS's own file (one line and exit 2 when it cannot be filled as it is)."""
    from pathlib import Path

    from autograder.reporting.gradebook_fill import fill

    try:
        done = fill(course, args.lms, args.source, args.export_dir, assignment=args.assignment,
                    column=args.column, comment=args.comment)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cols = ", ".join(f"{a} -> {h!r}" for a, h in done.columns.items())
    print(f"wrote {done.path} ({args.lms}: {len(done.written)} scores in {cols}; every other cell as downloaded)")
    pending = write_pending(course, [ag for ag in read_gradebook(course) if ag.name in done.columns],
                            Path(args.export_dir or course.root / "autograder"), args.lms)
    if pending:
        print(f"wrote {pending} (points awaiting manual grading, not in the upload)")
    for a, students in done.not_in_file.items():
        print(f"warning: {a}: {len(students)} graded student(s) have no row in {Path(args.source).name} (not "
              f"collected from this {args.lms} course?): {', '.join(students[:8])}", file=sys.stderr)
    if done.unmatched:
        print(f"warning: no column for {', '.join(done.unmatched)} in {Path(args.source).name}: not filled "
              f"(name one: ASSIGNMENT=<name> COLUMN='<header>')", file=sys.stderr)
    for note in done.notes:
        print(f"warning: {note}", file=sys.stderr)
    return 0


def _unreadable_rows(course: Course) -> bool:
    from autograder.collect.report import review_notes

    return any(review_notes(course)[1].values())
