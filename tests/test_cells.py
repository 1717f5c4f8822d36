"""autograder.cells reads the cell roles nbgrader itself reads (nbgrader.utils), and survives any metadata."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbgrader import utils as nbg

from autograder import cells as nbcells

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for folder in ("source", "release", "autograder/samples") for p in (ROOT / folder).rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts)


def test_roles_match_nbgrader_on_every_committed_notebook():
    assert len(NOTEBOOKS) > 50
    seen = {"grade": 0, "solution": 0, "locked": 0}  # the course has no task cells: the small notebook below does
    for path in NOTEBOOKS:
        raw = json.loads(path.read_text(encoding="utf-8"))
        node = nbformat.from_dict(raw)
        for plain, cell in zip(raw["cells"], node.cells, strict=True):
            where = f"{path.relative_to(ROOT)}: {nbcells.grade_id(plain)}"
            assert nbcells.is_grade(plain) == bool(nbg.is_grade(cell)), where
            assert nbcells.is_solution(plain) == bool(nbg.is_solution(cell)), where
            assert nbcells.is_locked(plain) == bool(nbg.is_locked(cell)), where
            assert nbcells.is_task(plain) == bool(nbg.is_task(cell)), where
            for k in seen:
                seen[k] += getattr(nbcells, f"is_{k}")(plain)
    assert all(seen.values()), seen  # every role occurs, so each comparison above was exercised


@pytest.mark.parametrize("cell", [
    {}, {"metadata": None}, {"metadata": []}, {"metadata": {"nbgrader": "yes"}}, {"metadata": {"nbgrader": []}},
    {"metadata": {"nbgrader": {"grade_id": 7}}}, {"metadata": {"nbgrader": {"grade_id": ""}}}, "not a cell", None,
    {"cell_type": "code", "source": ["a", 1]},
])
def test_broken_metadata_has_no_role_and_raises_nothing(cell):
    assert nbcells.meta(cell) == {} or nbcells.grade_id(cell) is None
    assert nbcells.role(cell) is None and nbcells.grade_id(cell) is None
    assert not (nbcells.is_grade(cell) or nbcells.is_solution(cell) or nbcells.is_locked(cell) or nbcells.is_task(cell))
    assert not nbcells.is_autograded_test(cell) and not nbcells.is_locked_only(cell)
    assert isinstance(nbcells.source(cell), str)


def test_roles_and_grade_ids_of_a_small_notebook():
    def cell(kind, **nbgrader):
        return {"cell_type": kind, "metadata": {"nbgrader": nbgrader}, "source": ["x = ", "1"]}

    nb = {"cells": [cell("code", grade=False, solution=True, grade_id="ans", locked=False),
                    cell("code", grade=True, solution=False, grade_id="test", points=2, locked=True),
                    cell("code", grade=False, solution=False, grade_id="given", locked=True),
                    cell("markdown", task=True, grade=False, solution=False, grade_id="task", locked=True),
                    {"cell_type": "markdown", "metadata": {}, "source": "prose"}]}
    assert [nbcells.role(c) for c in nb["cells"]] == ["answer", "test", "locked", "task", None]
    assert nbcells.grade_ids(nb) == ["ans", "test", "given", "task"]
    assert [nbcells.is_autograded_test(c) for c in nb["cells"]] == [False, True, False, False, False]
    assert [nbcells.is_locked_only(c) for c in nb["cells"]] == [False, False, True, True, False]
    assert [nbcells.is_student_code(c) for c in nb["cells"]] == [True, False, False, False, False]
    assert nbcells.is_student_code({"cell_type": "code", "metadata": {}, "source": "x = 1"})
    assert nbcells.source(nb["cells"][0]) == "x = 1" and nbcells.grade_ids({"cells": "no"}) == []
    for plain, node in zip(nb["cells"], nbformat.from_dict(nb).cells, strict=True):
        assert (nbcells.is_grade(plain), nbcells.is_solution(plain), nbcells.is_locked(plain), nbcells.is_task(plain)) == \
            (bool(nbg.is_grade(node)), bool(nbg.is_solution(node)), bool(nbg.is_locked(node)), bool(nbg.is_task(node)))
