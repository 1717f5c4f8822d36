"""Student data is private by default: every file the kit writes that holds student names, LMS ids, hand-ins,
grades or feedback is ignored by git (the course repository is meant to be public), and ``make clean`` removes
it all but the gradebook, which ``make clean-all`` removes only after asking.

The kit's own writers run in a git repository holding this repository's .gitignore and Makefile: collect from a
Canvas download, the gradebook, every LMS export, the filled Canvas export (downloaded into the repository
root), feedback pages and the Canvas feedback zip.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course import Course
from autograder.samplekit.fixture import ASSIGNMENT, make_course

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")


def _git(repo: Path, *args: str) -> str:
    r = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
                                GIT_COMMITTER_EMAIL="t@x"))
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    root = make_course(tmp_path / "repo")
    for name in (".gitignore", "Makefile"):
        shutil.copy(ROOT / name, root / name)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "course")
    return root


def _run_the_kit(root: Path, tmp_path: Path) -> Course:
    import test_lms_feedback_zip as fz
    import test_lms_import as li

    from autograder.collect.handins import collect
    from autograder.reporting.feedback_zip import build_zip
    from autograder.reporting.grade_table import write_grades_csv
    from autograder.reporting.gradebook_export import export
    from autograder.reporting.gradebook_fill import fill

    course = Course.at(root)
    up = {f"{n.lower().replace(' ', '')}_{uid}_{aid}_{nb}.ipynb": fz._handin(course, nb, n)
          for n, uid, aid, _, _ in li.CLASS for nb in (li.NB1, li.NB2)}
    report = collect(course, ASSIGNMENT, fz._zip(tmp_path / "submissions.zip", up))
    li._gradebook(course, sorted(report.collected))
    write_grades_csv(course)
    for lms in ("canvas", "moodle", "blackboard", "csv"):
        export(course, lms)
    download = root / "2026-12-05T1030_Grades-GEMM_Lab.csv"  # saved where a browser might put it
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(li.CANVAS_EXPORT)
    download.write_text(buf.getvalue(), encoding="utf-8")
    fill(course, "canvas", download)
    for sid in report.collected:
        page = course.feedback / sid / ASSIGNMENT / f"{li.NB1}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("<p>피드백</p>", encoding="utf-8")
    assert build_zip(course, ASSIGNMENT, "canvas").path is not None
    return course


def test_no_student_file_shows_in_git_status_and_make_clean_removes_them(repo, tmp_path):
    course = _run_the_kit(repo, tmp_path)
    written = sorted(str(p.relative_to(repo)) for p in repo.rglob("*")
                     if p.is_file() and ".git" not in p.relative_to(repo).parts)
    assert any(w.startswith("autograder/grades_canvas_filled_") for w in written)
    assert "autograder/feedback_canvas_demo01.zip" in written and "autograder/logs/roster.json" in written
    # and the make target itself, as an instructor runs it (its command line, without the set-up steps)
    dry = subprocess.run(["make", "-n", "-s", "--no-print-directory", "grades", "LMS=canvas"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    (line,) = [x for x in dry.stdout.splitlines() if "-m autograder grades" in x]
    r = subprocess.run(["bash", "-c", line.replace(".venv/bin/python", sys.executable, 1)], cwd=ROOT,
                       env=dict(os.environ, GEMM_LAB_COURSE_ROOT=str(repo)), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert (repo / "autograder" / "grades_canvas.csv").exists() and (repo / "autograder" / "grades.csv").exists()
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert course.gradebook.exists()

    make = ["make", "-s", "--no-print-directory", "-C", str(repo)]
    r = subprocess.run([*make, "clean"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "kept autograder/gradebook.db" in r.stdout
    left = sorted(str(p.relative_to(repo / "autograder")) for p in (repo / "autograder").rglob("*") if p.is_file())
    assert left == ["gradebook.db"]
    r = subprocess.run([*make, "clean-all"], input="no\n", capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and course.gradebook.exists() and "kept autograder/gradebook.db" in r.stderr
    r = subprocess.run([*make, "clean-all", "CONFIRM=yes"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and not course.gradebook.exists(), r.stderr
    # what the instructor downloaded stays theirs to delete (ignored by git, not removed by make clean)
    assert (repo / "2026-12-05T1030_Grades-GEMM_Lab.csv").exists()
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""
