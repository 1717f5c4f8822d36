"""Every assignment in source/ round-trips through nbgrader: the master autogrades to full marks and
the untouched release to zero on every auto-graded cell (tools/roundtrip.py, sandboxed, real nbgrader)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.course import Course
from autograder.sandbox import bwrap as sandbox

ROOT = Path(__file__).resolve().parent.parent

ASSIGNMENTS = Course.at(ROOT).assignments()


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_master_full_marks_release_zero(assignment):
    if sandbox.bwrap_path() is None:
        pytest.skip("bubblewrap not installed (apt-get install -y bubblewrap)")
    import roundtrip

    results = roundtrip.roundtrip(assignment, repo=Course.at(ROOT), cell_timeout=180, notebook_timeout=900)
    auto = [r for r in results if r.auto]
    assert auto, f"{assignment} has no auto-graded cells"
    bad = [r for r in results if not r.ok]
    assert not bad, "\n" + roundtrip.format_results(bad)
