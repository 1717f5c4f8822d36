"""Fast tests of the autograder's pieces (no grading run): layout, sandbox, integrity, CSV (collect:
tests/test_collect.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course import IGNORE, Course
from autograder.grade import review
from autograder.samplekit.fixture import ASSIGNMENT
from autograder.sandbox import bwrap as sandbox

ROOT = Path(__file__).resolve().parent.parent


def _load_config(root: Path):
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()


def test_nbgrader_config_matches_course_layout():
    cfg = _load_config(ROOT)
    course = Course.at(ROOT)
    cd = cfg.CourseDirectory
    assert Path(cd.root) == course.root
    assert course.root / cd.source_directory == course.source
    assert course.root / cd.release_directory == course.release
    assert course.root / cd.submitted_directory == course.submitted
    assert course.root / cd.autograded_directory == course.autograded
    assert course.root / cd.feedback_directory == course.feedback
    assert cd.db_url == course.db_url
    assert list(cd.ignore) == IGNORE and "*.py" in cd.ignore


def test_grading_outputs_are_ignored_by_git():
    for rel in ("autograder/submitted/x/a.ipynb", "autograder/autograded/x", "autograder/feedback/x",
                "autograder/gradebook.db", "autograder/work/x", "autograder/grades.csv", "autograder/logs/x"):
        r = subprocess.run(["git", "check-ignore", "-q", rel], cwd=ROOT)
        assert r.returncode == 0, f"{rel} is not ignored by git"


@pytest.fixture(scope="module")
def released(tmp_path_factory, make_scratch_course):
    return make_scratch_course(tmp_path_factory.mktemp("course"), released=True)


@pytest.mark.slow
def test_release_leaves_out_py_masters_and_solutions(released):
    files = sorted(p.name for p in (released.release / ASSIGNMENT).iterdir())
    assert files == ["01_counts.ipynb", "02_vectors.ipynb", "data.csv"]  # no *.py master
    text = (released.release / ASSIGNMENT / "01_counts.ipynb").read_text()
    assert "tiles = 54" not in text and "BEGIN HIDDEN TESTS" not in text and "raise NotImplementedError" in text


def test_bwrap_argv_exposes_only_the_environment(tmp_path, bwrap):
    argv = sandbox.bwrap_options(str(tmp_path / "rt"))  # the hand-in is copied in, never bound
    assert "--unshare-all" in argv and "--die-with-parent" in argv and "--clearenv" in argv
    binds = [argv[i + 1] for i, a in enumerate(argv) if a in ("--bind", "--ro-bind")]
    assert str(ROOT) not in binds  # never the repository root (source/, gradebook)
    assert not any(b.startswith(str(ROOT / "source")) or b.startswith(str(ROOT / "autograder")) for b in binds)
    assert str(ROOT / "gemm_lab") in binds
    rw = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert rw == [str(tmp_path / "rt")]


def test_bwrap_sandbox_hides_the_repository(tmp_path, bwrap):
    handin = tmp_path / "handin"
    handin.mkdir()
    (handin / "mine.txt").write_text("mine")
    rt = tmp_path / "rt"
    rt.mkdir()
    probe = ("import os, socket, sys\n"
             f"print(os.path.exists({str(ROOT / 'source')!r}), os.path.exists({str(ROOT / 'nbgrader_config.py')!r}),"
             " sorted(os.listdir('.')))\n"
             "import gemm_lab.calc\n"
             "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2); print('net')\n"
             "except OSError:\n    print('nonet')\n")
    out, _ = sandbox.run_sandboxed([sys.executable, "-c", probe], str(handin), str(rt), use_cgroup=False, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["False False ['mine.txt']", "nonet"]


def _nb(cells):
    return {"cells": cells}


def _cell(src, **meta):
    c = {"cell_type": "code", "source": src, "metadata": {}}
    if meta:
        c["metadata"]["nbgrader"] = meta
    return c


def test_review_scans_the_students_cells_only():
    nb = _nb([
        _cell("x = 1", solution=True, grade_id="a1"),
        _cell("check(x)", grade=True, locked=True, grade_id="t1", points=1),
        _cell("import numpy as np\nnp.allclose = lambda *a, **k: True"),  # student-added cell
        _cell("y = 2", solution=True, grade_id="a2"),
        _cell("check(y)", grade=True, locked=True, grade_id="t2", points=1),
        _cell("import gemm_lab.grading as g\ng.check_value = None", grade=True, locked=True, grade_id="t3"),
    ])
    findings = review.review_notebook(nb)  # a review aid: the grade is the grader's, computed outside the kernel
    assert len(findings) == 1 and "MODULE_ATTR" in findings[0]  # locked/test cells are not scanned


def test_review_lists_exit_and_builtins_not_shell_lines():
    nb = _nb([
        _cell("import sys\nsys.exit()\n!pip install x", solution=True, grade_id="a1"),
        _cell("check(x)", grade=True, locked=True, grade_id="t1", points=1),
    ])
    findings = review.review_notebook(nb)
    # the exit is listed; a shell line is the student's own business (it runs in the sandbox like any code)
    assert {f.split(": ", 1)[1].split(" ")[0] for f in findings} == {"EXIT"}
    nb["cells"][0]["source"] = "import builtins\nbuiltins.print = None"
    assert review.review_notebook(nb)
