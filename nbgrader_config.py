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
# `_attempt_` (ids may hold `_`); the same rule as autograder/collect/lms.py (a test checks both agree).
c.ZipCollectApp.downloaded_directory = os.path.join("autograder", "work", "downloaded")
c.FileNameCollectorPlugin.named_regexp = (
    r"^(?P<prefix>[^_]*)_(?P<student_id>.+?)_attempt_(?P<timestamp>[0-9][0-9\-]*)_(?P<file_id>.+\.ipynb)$"
)

# formgrader's per-student "Autograde" and its "Generate Feedback" buttons (and `nbgrader autograde` /
# `nbgrader generate_feedback` run here) would run a hand-in outside the kit's sandbox, as this user, and
# replace the kit's graded notebook and its cleaned feedback page. They are turned off here: the converter
# refuses when it builds its exporter, before it removes or writes anything. `make autograde` and
# `make feedback` use their own configuration (a scratch course each), so they are not affected.
from nbconvert.exporters import HTMLExporter, NotebookExporter  # noqa: E402

_KIT_ONLY = ("formgrader's {action} is turned off in this course: it would {why}. Run `make {target}` "
             "from the repository root instead, then reload this page")


class KitOnlyAutograde(NotebookExporter):
    def __init__(self, *args, **kwargs):
        raise RuntimeError(_KIT_ONLY.format(
            action="Autograde", target="autograde",
            why="run the hand-in outside the sandbox on this machine and overwrite the kit's graded notebook "
                "(make autograde grades a changed hand-in again)"))


class KitOnlyFeedback(HTMLExporter):
    def __init__(self, *args, **kwargs):
        raise RuntimeError(_KIT_ONLY.format(
            action="Generate Feedback", target="feedback",
            why="replace the kit's cleaned feedback pages with unsanitized ones"))


c.Autograde.exporter_class = KitOnlyAutograde
c.GenerateFeedback.exporter_class = KitOnlyFeedback

# Time limit per cell when autograding (the per-notebook limit is set by autograder/grade/autograde.py).
c.Execute.timeout = 60
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
