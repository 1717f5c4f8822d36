"""nbgrader configuration of the course (the repository is the course root).

source/ (masters) and release/ (student versions, committed) are top level; everything produced by
grading lives under autograder/ and is ignored by git. autograder/course.py mirrors this layout
(tests/test_autograder.py checks that both agree).
"""

import os

c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)

_root = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = _root
c.CourseDirectory.course_id = "gemm-lab"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "autograder/submitted"
c.CourseDirectory.autograded_directory = "autograder/autograded"
c.CourseDirectory.feedback_directory = "autograder/feedback"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(_root, "autograder", "gradebook.db")
# The jupytext masters (*.py) sit beside the .ipynb in source/weekNN/: never copy them into release/
# (or into a student's autograded folder: they hold the solutions).
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py"]

# LMS downloads: `make collect` reads them itself (autograder/collect/handins.py: limits, no links, newest wins).
# For a manual `nbgrader zip_collect`: the student id is everything between the LMS prefix (one word) and
# `_attempt_` (ids may hold `_`); the same rule as autograder/collect/names.py (a test checks both agree).
c.ZipCollectApp.downloaded_directory = os.path.join("autograder", "work", "downloaded")
c.FileNameCollectorPlugin.named_regexp = (
    r"^(?P<prefix>[^_]*)_(?P<student_id>.+?)_attempt_(?P<timestamp>[0-9][0-9\-]*)_(?P<file_id>.+\.ipynb)$"
)

# Feedback: nbgrader's default shows the hidden tests' source (restored at autograding) to students;
# strip them (the failure message of a hidden test still says what went wrong).
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, GetGrades  # noqa: E402

c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, ClearHiddenTests]
c.ClearHiddenTests.enforce_metadata = False

# Time limit per cell when autograding (the per-notebook limit is set by autograder/grade/autograde.py).
c.Execute.timeout = 60
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
