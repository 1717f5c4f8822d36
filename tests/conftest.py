"""Fixtures shared by the tests: the scratch course and the bubblewrap check.

The scratch course is ``autograder/samplekit/fixture.py``'s two-notebook assignment (``demo01``) written into a
temporary folder with the repository's nbgrader_config.py. The repository root, ``tools/`` and ``tests/``
are on ``sys.path`` through ``pythonpath`` in pyproject.toml's pytest settings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def scratch_course(root: Path, *, released: bool = False,
                   hand_ins: dict[str, Callable[[dict], None] | None] | None = None):
    """The scratch course at ``root``: written only, or (``released``) released by nbgrader.

    ``hand_ins`` (implies ``released``): ``{student: edit}``; each student hands in full-marks copies of
    every notebook, ``{name: notebook}``, after ``edit`` (when not None) changed them in place.
    """
    from autograder.course import Course, release
    from autograder.samplekit.fixture import ASSIGNMENT, NOTEBOOKS, hand_in, make_course, solved

    course = Course.at(make_course(root))
    if released or hand_ins:
        release(course, ASSIGNMENT)
    if hand_ins:
        full = {name: solved(course.root, name) for name in NOTEBOOKS}
        for student, edit in hand_ins.items():
            notebooks = json.loads(json.dumps(full))
            if edit:
                edit(notebooks)
            hand_in(course.root, student, notebooks)
    return course


@pytest.fixture(scope="session")
def make_scratch_course():
    """``scratch_course`` itself, for tests and fixtures of any scope that choose the folder."""
    return scratch_course


@pytest.fixture
def course(tmp_path):
    """A scratch course at ``tmp_path / "course"``, not released (no nbgrader run)."""
    return scratch_course(tmp_path / "course")


@pytest.fixture(scope="session")
def bwrap() -> None:
    """Skips the test when bubblewrap (the autograder's sandbox) is not installed."""
    from autograder.sandbox import bwrap as sandbox

    if sandbox.bwrap_path() is None:
        pytest.skip("bubblewrap not installed (apt-get install -y bubblewrap)")
