"""`make grades [LMS=canvas|moodle|blackboard|csv]`: the grade table, autograder/grades.csv and, with LMS,
the file(s) that LMS imports (autograder/reporting/gradebook_export.py).

    python -m autograder grades [--lms canvas|moodle|blackboard|csv] [--out CSV] [--export-dir DIR]

Exit 0 when written, 1 when nothing is graded yet (one line saying what to run), 2 on bad use.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from autograder.course import Course
from autograder.reporting.gradebook_export import LMS_CHOICES, export, pending_summary, read_gradebook


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
    ap.add_argument("--course-root", default=os.environ.get("GEMM_LAB_COURSE_ROOT"))
    args = ap.parse_args(argv)
    if args.lms is not None and args.lms not in LMS_CHOICES:
        print(f"error: LMS={args.lms}: expected one of {', '.join(LMS_CHOICES)} (make grades LMS=canvas)",
              file=sys.stderr)
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
    if args.lms:
        paths, msgs = export(course, args.lms, args.export_dir, review_flags(course))
        for p in paths:
            print(f"wrote {p} ({args.lms})")
        for m in msgs:
            print(f"warning: {m}", file=sys.stderr)
    pending = pending_summary(grades)
    if pending:
        print(pending, file=sys.stderr)
    return 0


def _unreadable_rows(course: Course) -> bool:
    from autograder.collect.report import review_notes

    return any(review_notes(course)[1].values())
