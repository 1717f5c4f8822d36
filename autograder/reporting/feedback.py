"""`make feedback [LMS=canvas|moodle]`: same as `python -m autograder feedback ARGS` (see
autograder/__main__.py), except that with nothing autograded yet it says what to run (exit 1) instead of
printing nothing, and that ``--lms canvas|moodle`` then zips each assignment's pages in that LMS's upload
layout (autograder/feedback_zip.py) into ``autograder/feedback_<lms>_<ASSIGNMENT>.zip``."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder.__main__ import main  # noqa: E402
from autograder.course import Course  # noqa: E402
from autograder.feedback_zip import ZIP_LMS, build_zip, feedback_assignments  # noqa: E402


def zip_feedback(course: Course, lms: str, assignments: list[str]) -> int:
    status = 0
    for a in assignments or feedback_assignments(course):
        result = build_zip(course, a, lms)
        if result.missing_id:
            print(f"warning: {a}: {len(result.missing_id)} student(s) have no {lms} id (collected from another "
                  f"download), left out of the zip: {', '.join(result.missing_id[:10])}", file=sys.stderr)
        if result.path is None:
            print(f"{a}: no feedback page has a {lms} id: run make collect FROM=<the {lms} download> "
                  f"ASSIGNMENT={a} first", file=sys.stderr)
            status = 1
            continue
        print(f"{a}: {result.students} student(s), {len(result.members)} page(s) -> "
              f"{result.path.relative_to(course.root)} (upload it as the assignment's feedback zip)")
    return status


if __name__ == "__main__":
    argv = sys.argv[1:]
    lms = ""
    if "--lms" in argv:
        i = argv.index("--lms")
        lms = (argv[i + 1] if i + 1 < len(argv) else "").strip().lower()
        del argv[i:i + 2]
        if lms and lms not in ZIP_LMS:
            print(f"error: LMS must be one of {', '.join(ZIP_LMS)} (make feedback LMS=canvas); got {lms!r}",
                  file=sys.stderr)
            raise SystemExit(2)
    course = Course.at(os.environ.get("GEMM_LAB_COURSE_ROOT"))
    if not any(p.is_dir() for p in course.autograded.glob("*/*")) if course.autograded.is_dir() else True:
        print("nothing autograded yet: run make collect FROM=<LMS download> and make autograde first "
              "(then grade the written answers in make formgrader)", file=sys.stderr)
        raise SystemExit(1)
    rc = main(["feedback", *argv])
    if rc or not lms:
        raise SystemExit(rc)
    raise SystemExit(zip_feedback(course, lms, [a for a in argv if not a.startswith("-")]))
