"""`make grades [LMS=canvas|moodle|blackboard|csv] [FROM=<the LMS's own grade file>]`: the grade table,
autograder/grades.csv and, with LMS, the file that LMS imports: its own download filled in (FROM=,
reporting/gradebook_fill.py), else a file made here (reporting/gradebook_export.py) and one line saying what to
map in the LMS's import preview. Points awaiting manual grading go to autograder/grades_<LMS>_pending.csv.

    python -m autograder grades [--lms LMS] [--from FILE [--assignment A] [--column HEADER] [--comment]]
                                [--out CSV] [--export-dir DIR]

Exit 0 when written, 1 when nothing is graded yet (one line saying what to run), 2 on bad use.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from autograder.collect.summary import review_notes
from autograder.course import Course
from autograder.reporting.gradebook_export import (
    LMS_CHOICES,
    export,
    pending_summary,
    read_gradebook,
    write_pending,
)


def write_grades(course: Course, *, lms: str | None = None, out: str | None = None, export_dir: str | None = None,
                 source: str | None = None, assignment: str | None = None, column: str | None = None,
                 comment: bool = False) -> int:
    """The grade table and the files (see the module doc); bad use: one line on stderr and 2."""
    from autograder.reporting.gradebook_fill import FILL_LMS

    lms = (lms or "").strip().lower() or None
    bad_use = next((why for bad, why in (  # the first that applies
        (lms is not None and lms not in LMS_CHOICES,
         f"LMS={lms}: expected one of {', '.join(LMS_CHOICES)} (make grades LMS=canvas)"),
        (source and lms not in FILL_LMS, f"FROM={source} needs LMS=<{'|'.join(FILL_LMS)}> (the LMS that wrote it)"),
        ((assignment or column or comment) and not source,
         "ASSIGNMENT=, COLUMN= and COMMENT= of make grades go with FROM=<the LMS's own grade file>"),
        (source and not os.path.isfile(source), f"FROM={source}: no such file (the grade file downloaded from the LMS)"),
    ) if bad), None)
    if bad_use:
        print(f"error: {bad_use}", file=sys.stderr)
        return 2
    from autograder.collect.roster import sync_gradebook
    from autograder.reporting.grade_table import grade_table, review_flags, write_grades_csv

    grades = read_gradebook(course)  # read once, handed to every writer
    if not any(ag.score for ag in grades) and not any(review_notes(course)[1].values()):
        print("nothing graded yet: run make collect FROM=<LMS download> and make autograde first",
              file=sys.stderr)
        return 1
    try:
        sync_gradebook(course)  # names for formgrader, for students collected before the gradebook existed
    except Exception as exc:  # noqa: BLE001 (a convenience; the grades do not depend on it)
        print(f"warning: student names not written to the gradebook ({type(exc).__name__})", file=sys.stderr)
    path = write_grades_csv(course, out, grades)
    print(grade_table(course, grades=grades))
    print(f"wrote {path}")
    if source:
        if _fill(course, grades, lms, source, export_dir, assignment, column, comment):
            return 2
    elif lms:
        paths, msgs = export(course, lms, export_dir, review_flags(course, grades), grades)
        for p in paths:
            print(f"wrote {p} ({lms})")
        for m in msgs:
            print(f"warning: {m}", file=sys.stderr)
    pending = pending_summary(grades)
    if pending:
        print(pending, file=sys.stderr)
    return 0


def _fill(course: Course, grades, lms, source, export_dir, assignment, column, comment) -> int:
    """FROM=: fill the LMS's own file (one line and exit 2 when it cannot be filled as it is)."""
    from autograder.reporting.gradebook_fill import fill

    try:
        done = fill(course, lms, source, export_dir, assignment=assignment, column=column, comment=comment,
                    grades=grades)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cols = ", ".join(f"{a} -> {h!r}" for a, h in done.columns.items())
    print(f"wrote {done.path} ({lms}: {len(done.written)} scores in {cols}; every other cell as downloaded)")
    pending = write_pending(course, [ag for ag in grades if ag.name in done.columns],
                            Path(export_dir or course.root / "autograder"), lms)
    if pending:
        print(f"wrote {pending} (points awaiting manual grading, not in the upload)")
    for a, students in done.not_in_file.items():
        print(f"warning: {a}: {len(students)} graded student(s) have no row in {Path(source).name} (not "
              f"collected from this {lms} course?): {', '.join(students[:8])}", file=sys.stderr)
    if done.unmatched:
        print(f"warning: no column for {', '.join(done.unmatched)} in {Path(source).name}: not filled "
              f"(name one: ASSIGNMENT=<name> COLUMN='<header>')", file=sys.stderr)
    for note in done.notes:
        print(f"warning: {note}", file=sys.stderr)
    return 0
