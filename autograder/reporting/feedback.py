"""`python -m autograder feedback [ASSIGNMENT ...] [--lms canvas|moodle]` (`make feedback`): HTML feedback per
student under autograder/feedback/. With nothing autograded yet it says what to run (exit 1) instead of
printing nothing; ``--lms canvas|moodle`` then zips each assignment's pages in that LMS's upload layout
(autograder/reporting/feedback_zip.py) into ``autograder/feedback_<lms>_<ASSIGNMENT>.zip``."""

import sys

from autograder.course import Course
from autograder.reporting.feedback_zip import ZIP_LMS, build_zip, feedback_assignments

_WHAT_ID = {"canvas": "Canvas user id and attachment id", "moodle": "Moodle participant id"}
_UPLOAD = {
    "canvas": "upload it in the Canvas assignment's Submissions page: Re-upload Submissions",
    "moodle": "upload it with the assignment's 'Upload multiple feedback files in a zip' (the assignment must "
              "have the 'Feedback files' feedback type enabled)",
}


def zip_feedback(course: Course, lms: str, assignments: list[str]) -> int:
    status = 0
    for a in assignments or feedback_assignments(course):
        result = build_zip(course, a, lms)
        if result.missing_id:
            print(f"warning: {a}: {len(result.missing_id)} student(s) have no {_WHAT_ID[lms]} (collected from "
                  f"another download{', an anonymous one, or before attachment ids were kept: collect it again' if lms == 'canvas' else ''}), left out of the zip: "
                  f"{', '.join(result.missing_id[:10])}", file=sys.stderr)
        if result.path is None:
            print(f"{a}: no feedback page has a {_WHAT_ID[lms]}: run make collect FROM=<the {lms} download> "
                  f"ASSIGNMENT={a} first", file=sys.stderr)
            status = 1
            continue
        print(f"{a}: {result.students} student(s), {len(result.members)} page(s) -> "
              f"{result.path.relative_to(course.root)} ({_UPLOAD[lms]})")
    return status


def write_feedback(course: Course, assignments: list[str], lms: str | None = None) -> int:
    """HTML pages of ``assignments`` (default: every one with hand-ins), zipped for ``lms`` when given."""
    lms = (lms or "").strip().lower()
    if lms and lms not in ZIP_LMS:
        print(f"error: LMS must be one of {', '.join(ZIP_LMS)} (make feedback LMS=canvas); got {lms!r}",
              file=sys.stderr)
        return 2
    if not any(p.is_dir() for p in course.autograded.glob("*/*")):
        print("nothing autograded yet: run make collect FROM=<LMS download> and make autograde first "
              "(then grade the written answers in make formgrader)", file=sys.stderr)
        return 1
    from autograder.grade.autograde import submitted_students
    from autograder.reporting.feedback_build import build_feedback

    for a in assignments or [a for a in course.assignments() if submitted_students(course, a)]:
        print(f"feedback {a} -> {build_feedback(course, a)}")
    return zip_feedback(course, lms, assignments) if lms else 0
