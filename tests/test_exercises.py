"""Every kernel exercise record (gemm_lab/grading/kernels/exercises.py) agrees with its master notebook: the
solution cell and the kernel's arguments it names are there, and the test cells that call its check (their
grade ids and points read from the master) exist with points; a master that disagrees fails naming the record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gemm_lab.grading.kernels.exercises import EXERCISES, for_notebook

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_the_record_agrees_with_its_master(name):
    ex = EXERCISES[name]
    assert ex.problems() == []
    assert ex.tests() and for_notebook(ex.notebook) is ex


def test_every_master_test_cell_that_checks_a_kernel_is_in_the_record_of_its_notebook():
    for path in sorted((ROOT / "source").glob("week*/*.ipynb")):
        key = f"{path.parent.name}/{path.stem}"
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            for ex in EXERCISES.values():
                if meta.get("grade") and f".{ex.check}(" in "".join(cell["source"]):
                    assert ex.notebook == key, (f"EXERCISES[{ex.name!r}] names {ex.notebook}, but test cell "
                                                f"{meta.get('grade_id')!r} of {key} calls g.{ex.check}")


def _doctored(tmp_path: Path, ex, edit) -> Path:
    nb = json.loads(ex.master().read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        edit(cell.get("metadata", {}).get("nbgrader", {}), cell)
    out = tmp_path / "source" / f"{ex.notebook}.ipynb"
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(nb), encoding="utf-8")
    return tmp_path


def test_the_grade_ids_and_points_are_read_from_the_master(tmp_path):
    ex = EXERCISES["persistent"]
    first = next(iter(ex.tests()))

    def edit(meta, cell):
        if meta.get("grade_id") == first:
            meta["grade_id"], meta["points"] = "renamed_in_the_master", 7

    tests = ex.tests(_doctored(tmp_path, ex, edit))
    assert tests["renamed_in_the_master"] == 7 and first not in tests
    assert len(tests) == len(ex.tests())


@pytest.mark.parametrize("change", ["solution_cell", "points", "params", "constexpr", "no_test"])
def test_a_master_that_disagrees_fails_naming_the_record(tmp_path, change):
    ex = EXERCISES["matmul"]
    tests = ex.tests()

    def edit(meta, cell):
        src = "".join(cell["source"])
        if change == "solution_cell" and meta.get("grade_id") == ex.solution_cell:
            meta["grade_id"] = "kernel_cell_renamed"
        elif change == "points" and meta.get("grade_id") in tests:
            meta["points"] = 0
        elif change == "params" and meta.get("grade_id") == ex.solution_cell:
            cell["source"] = src.replace("stride_am", "stride_a_m")
        elif change == "constexpr" and meta.get("grade_id") == ex.solution_cell:
            cell["source"] = src.replace("BLOCK_SIZE_K: tl.constexpr", "BLOCK_SIZE_K")
        elif change == "no_test" and meta.get("grade_id") in tests:
            cell["source"] = src.replace(ex.check, "check_value")

    problems = ex.problems(_doctored(tmp_path, ex, edit))
    assert problems and all(p.startswith("EXERCISES['matmul'] (gemm_lab/grading/kernels/exercises.py)")
                            for p in problems)
    word = {"solution_cell": "kernel_cell_renamed", "points": "points 0", "params": "params=",
            "constexpr": "constexpr_params=", "no_test": "no test cell"}[change]
    assert any(word in p or (change == "solution_cell" and ex.solution_cell in p) for p in problems), problems
