"""One truth about pending answers: a written answer a person graded keeps its grade while its text is the one
they read; rewritten in a re-submission, it is pending again everywhere (the gradebook as formgrader shows it,
make grades and the LMS files, the feedback's rule, the class report) until a person grades it again.

Runs the kit's own autograde twice on a scratch course (sandboxed when bubblewrap is installed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NB, CELL = "01_counts", "explain_order"


def _autograde(course) -> None:
    from autograder.sandbox import bwrap as sandbox

    extra = [] if sandbox.bwrap_path() else ["--allow-unsandboxed"]
    r = subprocess.run([sys.executable, "-m", "autograder", "--course-root", str(course.root), "autograde",
                        "demo01", "--no-master-check", "--cell-timeout", "60", *extra], cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def _edit(course, student: str, grade_id: str, text: str) -> None:
    path = course.submitted / student / "demo01" / f"{NB}.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            cell["source"] = text
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")


def _grade(course):
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url, "gemm-lab") as gb:
        return {s: (g.manual_score, g.needs_manual_grade) for s in ("ann", "bob")
                for g in [gb.find_grade(CELL, NB, "demo01", s)]}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::Warning")
def test_a_rewritten_graded_answer_is_pending_everywhere(make_scratch_course, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    course = make_scratch_course(tmp_path / "course", hand_ins={"ann": None, "bob": None})
    _autograde(course)
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url, "gemm-lab") as gb:  # what formgrader does when a person grades it
        for s in ("ann", "bob"):
            g = gb.find_grade(CELL, NB, "demo01", s)
            g.manual_score, g.needs_manual_grade = 1.0, False
        gb.db.commit()
    # re-submissions: ann rewrote her written answer, bob changed only a code answer
    _edit(course, "ann", CELL, "완전히 새로 쓴 답입니다: 타일 순서를 바꾸면 L2 재사용이 늘어납니다.")
    _edit(course, "bob", "ans_tiles", "tiles = 54  # checked again")
    _autograde(course)
    assert _grade(course) == {"ann": (None, True), "bob": (1.0, False)}

    from autograder.reporting.class_report import analyze
    from autograder.reporting.gradebook_export import read_gradebook, write_pending

    (ag,) = read_gradebook(course)
    assert ag.pending_cells == {"ann": [f"{NB}/{CELL}"]} and ag.pending["ann"] == 1.0
    assert ag.score["bob"] == ag.max_score and ag.score["ann"] == ag.max_score - 1.0
    rows = write_pending(course, [ag], tmp_path, "canvas").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 2 and rows[1].startswith("ann,")
    cell = next(c for c in analyze(course, "demo01").cells if c.info.grade_id == CELL)
    assert cell.pending == ["ann"] and cell.graded == 1
