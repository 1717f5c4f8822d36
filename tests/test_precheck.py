"""No silent zeros: the masters are graded through the sandbox before any hand-in, and a broken grading
environment stops autograde with one line naming the likely cause."""

import json
import shutil

import pytest

from autograder.__main__ import main
from autograder.course import Course, release
from autograder.grade import precheck
from autograder.grade.autograde import GradeSettings
from autograder.samplekit import fixture

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def _course(tmp_path, break_setup: bool):
    root = fixture.make_course(tmp_path / "course")
    nb_path = root / "source" / fixture.ASSIGNMENT / "01_counts.ipynb"
    nb = json.loads(nb_path.read_text())
    if break_setup:  # an environment without a package the notebooks import: the answers are never made
        answer = next(c for c in nb["cells"] if (c.get("metadata", {}).get("nbgrader") or {}).get("solution"))
        answer["source"] = "import gemm_lab_not_installed\n" + answer["source"]
    nb_path.write_text(json.dumps(nb))
    (root / "source" / fixture.ASSIGNMENT / "02_vectors.ipynb").unlink()
    release(Course.at(root), fixture.ASSIGNMENT)
    fixture.hand_in(root, "alice", {"01_counts": fixture.solved(root, "01_counts")})
    return root


@pytest.mark.slow
@needs_bwrap
def test_broken_environment_stops_autograde_before_any_student(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GEMM_LAB_PRECHECK_CACHE", str(tmp_path / "cache"))
    root = _course(tmp_path, break_setup=True)
    rc = main(["--course-root", str(root), "autograde", "--jobs", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: demo01: the masters lose points")
    assert "likely cause" in err[0] and "No hand-in was graded" in err[0]
    assert not (root / "autograder" / "autograded" / "alice").exists()
    assert not list((tmp_path / "cache").glob("*.json"))


@pytest.mark.slow
@needs_bwrap
def test_full_marks_masters_pass_once_then_the_check_is_remembered(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_LAB_PRECHECK_CACHE", str(tmp_path / "cache"))
    root = _course(tmp_path, break_setup=False)
    course = Course.at(root)
    lines = []
    settings = GradeSettings(jobs=2, cell_timeout=60, notebook_timeout=300)
    precheck.check_masters(course, [fixture.ASSIGNMENT], settings, mode="bwrap", log=lines.append)
    assert any("full marks" in ln for ln in lines)
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1

    def never(*a, **k):
        raise AssertionError("graded the masters again")

    monkeypatch.setattr("autograder.grade.autograde.autograde", never)
    precheck.check_masters(course, [fixture.ASSIGNMENT], settings, mode="bwrap")


def test_autograde_with_nothing_collected_says_what_to_run(tmp_path, capsys):
    root = fixture.make_course(tmp_path / "course")
    assert main(["--course-root", str(root), "autograde"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "make collect" in err[0]
