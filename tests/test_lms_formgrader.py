"""formgrader cannot bypass the kit: its Autograde and Generate Feedback actions are refused by the course's
nbgrader_config.py (with a message naming the make target) before they remove or write anything.

The API is built the way formgrader's request handlers build it (nbgrader/server_extensions/formgrader/
base.py: ``NbGraderAPI(coursedir, authenticator, parent=...)`` over the config loaded from the course root),
and called for a hostile hand-in that writes outside its folder when run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autograder.samplekit.fixture import ASSIGNMENT

STUDENT = "mallory"


def _formgrader_api(root: Path):
    """formgrader's NbGraderAPI over the config nbgrader loads from the course root."""
    from nbgrader.apps import NbGrader
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    cwd = os.getcwd()
    os.chdir(root)
    try:
        app = NbGrader()
        app.load_config_file()
    finally:
        os.chdir(cwd)
    coursedir = CourseDirectory(parent=app)
    assert Path(coursedir.root).resolve() == root.resolve()
    return NbGraderAPI(coursedir, Authenticator(parent=app), parent=app)


def _hostile_hand_in(course, marker: Path) -> Path:
    """A hand-in whose answer cell writes ``marker`` (outside every course folder) when executed."""
    src = json.loads((course.source / ASSIGNMENT / "01_counts.ipynb").read_text(encoding="utf-8"))
    for cell in src["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ans_tiles":
            cell["source"] = f"open({str(marker)!r}, 'w').write('ran outside the sandbox')\ntiles = 54"
    dest = course.submitted / STUDENT / ASSIGNMENT / "01_counts.ipynb"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(src), encoding="utf-8")
    return dest


def _kit_outputs(course) -> dict[Path, bytes]:
    """What the kit's grader and feedback left for the student (kept byte for byte)."""
    files = {course.autograded / STUDENT / ASSIGNMENT / "01_counts.ipynb": b'{"graded": "by the kit"}',
             course.feedback / STUDENT / ASSIGNMENT / "01_counts.html": "<p>정리된 피드백</p>".encode()}
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def _assert_refused(result: dict, target: str) -> None:
    assert result["success"] is False, result
    text = result.get("error", "") + result.get("log", "")
    assert f"Run `make {target}`" in text and "turned off in this course" in text, text


def test_formgrader_autograde_and_feedback_are_refused_before_touching_anything(course, tmp_path):
    marker = tmp_path / "outside" / "pwned.txt"
    marker.parent.mkdir()
    _hostile_hand_in(course, marker)
    kept = _kit_outputs(course)
    api = _formgrader_api(course.root)
    _assert_refused(api.autograde(ASSIGNMENT, STUDENT), "autograde")
    _assert_refused(api.generate_feedback(ASSIGNMENT, STUDENT), "feedback")
    _assert_refused(api.generate_feedback(ASSIGNMENT), "feedback")  # "Generate all feedback"
    assert not marker.exists()
    for path, data in kept.items():
        assert path.read_bytes() == data, f"{path} was changed"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::Warning")
def test_without_the_guard_formgrader_would_run_the_hand_in(make_scratch_course, tmp_path):
    """The control: on a released course, the same API call with the guard removed from the config runs the
    hostile cell on this machine (so the refusal above is what stops it), and with the guard it does not."""
    course = make_scratch_course(tmp_path / "course", released=True)
    marker = tmp_path / "outside" / "pwned.txt"
    marker.parent.mkdir()
    _hostile_hand_in(course, marker)
    _assert_refused(_formgrader_api(course.root).autograde(ASSIGNMENT, STUDENT), "autograde")
    assert not marker.exists()
    cfg = course.root / "nbgrader_config.py"
    text = cfg.read_text(encoding="utf-8")
    cfg.write_text(text.replace("c.Autograde.exporter_class = KitOnlyAutograde", ""), encoding="utf-8")
    result = _formgrader_api(course.root).autograde(ASSIGNMENT, STUDENT)
    assert result["success"] is True, result
    assert marker.read_text() == "ran outside the sandbox"
