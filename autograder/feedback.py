"""`make feedback`: same as `python -m autograder feedback ARGS` (see autograder/__main__.py), except that
with nothing autograded yet it says what to run (exit 1) instead of printing nothing."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder.__main__ import main  # noqa: E402
from autograder.course import Course  # noqa: E402

if __name__ == "__main__":
    course = Course.at(os.environ.get("GEMM_LAB_COURSE_ROOT"))
    if not any(p.is_dir() for p in course.autograded.glob("*/*")) if course.autograded.is_dir() else True:
        print("nothing autograded yet: run make collect FROM=<LMS download> and make autograde first "
              "(then grade the written answers in formgrader)", file=sys.stderr)
        raise SystemExit(1)
    raise SystemExit(main(["feedback", *sys.argv[1:]]))
