"""HTML feedback that is safe to hand out and safe to open (see autograder/grade/safe_feedback.py).

``nbgrader generate_feedback`` runs in a scratch course (``autograder/work/feedback/ASSIGNMENT``) that holds
a copy of the gradebook and *sanitized copies* of the autograded notebooks (the instructor's autograded/
folder is not changed here), with nbgrader's ClearHiddenTests limited to test cells. Each page it writes is
rebuilt without scripts (:func:`safe_feedback.sanitize_html_document`) into
``autograder/feedback/STUDENT/ASSIGNMENT/``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from autograder.course import IGNORE, SCRATCH_COURSE_CONFIG, Course, run_nbgrader
from autograder.grade.safe_feedback import sanitize_html_document, sanitize_notebook, scrub_notebook

_CONFIG = SCRATCH_COURSE_CONFIG + """\
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from autograder.grade.safe_feedback import PendingGetGrades, TestCellsClearHiddenTests
c.GenerateFeedback.preprocessors = [PendingGetGrades, CSSHTMLHeaderPreprocessor, TestCellsClearHiddenTests]
c.TestCellsClearHiddenTests.enforce_metadata = False
"""


def build_feedback(course: Course, assignment: str) -> Path:
    from autograder.course import REPO_ROOT

    scratch = course.work / "feedback" / assignment
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    with sqlite3.connect(course.gradebook) as a, sqlite3.connect(scratch / "gradebook.db") as b:
        a.backup(b)
    students = []
    for nb_dir in sorted(course.autograded.glob(f"*/{assignment}")):
        if not nb_dir.is_dir() or nb_dir.is_symlink():
            continue
        student = nb_dir.parent.name
        dst = scratch / "autograded" / student / assignment
        dst.mkdir(parents=True)
        for nb_path in sorted(nb_dir.glob("*.ipynb")):
            nb = json.loads(nb_path.read_text(encoding="utf-8"))
            nb, _ = scrub_notebook(nb, [str(course.root)])  # idempotent; autograde already did it
            (dst / nb_path.name).write_text(json.dumps(sanitize_notebook(nb), ensure_ascii=False),
                                            encoding="utf-8")
        students.append(student)
    if not students:  # nothing autograded yet: nothing to give back
        shutil.rmtree(scratch, ignore_errors=True)
        return course.feedback
    (scratch / "source" / assignment).mkdir(parents=True)
    (scratch / "nbgrader_config.py").write_text(_CONFIG.format(
        root=str(scratch), db_url=f"sqlite:///{scratch / 'gradebook.db'}", ignore=IGNORE))
    env = {"PYTHONPATH": str(REPO_ROOT)}
    run_nbgrader(["generate_feedback", assignment, "--force"], cwd=scratch, env=env,
                 log=course.logs / f"feedback_{assignment}.log")
    for student in students:
        out_dir = course.feedback / student / assignment
        pages = sorted((scratch / "feedback" / student / assignment).glob("*.html"))
        if out_dir.exists():
            shutil.rmtree(out_dir)
        out_dir.mkdir(parents=True)
        for page in pages:
            (out_dir / page.name).write_text(sanitize_html_document(page.read_text(encoding="utf-8")),
                                             encoding="utf-8")
    shutil.rmtree(scratch, ignore_errors=True)
    return course.feedback
