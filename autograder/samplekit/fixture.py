"""A tiny two-notebook assignment (masters with solutions and hidden tests) for tests and benchmarks.

``make_course(root)`` writes a course folder (nbgrader_config.py copied from the repository, so the
same layout and ignore rules apply) with source/ASSIGNMENT/*.ipynb and a *.py file beside them that must
never reach release/. The test cells call gemm_lab.grading the way the real notebooks do.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from autograder.course import REPO_ROOT
from autograder.samplekit.model import Notebook, notebook

ASSIGNMENT = "demo01"


def _cell(kind, source, **nbg):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    if nbg:
        meta = {"schema_version": 3, "grade": False, "locked": False, "solution": False, "task": False}
        meta.update(nbg)
        cell["metadata"]["nbgrader"] = meta
    return cell


def _answer(gid, src):
    return _cell("code", f"### BEGIN SOLUTION\n{src}\n### END SOLUTION", grade_id=gid, solution=True)


def _test(gid, points, src):
    return _cell("code", src, grade_id=gid, grade=True, locked=True, points=points)


NOTEBOOKS = {
    "01_counts": notebook([
        _cell("markdown", "# 타일 개수 (demo)"),
        _cell("code", "from gemm_lab.grading import fresh\nfrom gemm_lab.calc.ordering import compare_orders",
              grade_id="setup", locked=True),
        _answer("ans_tiles", "tiles = 54"),
        _test("tiles_54", 2, '"""grouped order loads 54 tiles."""\n'
              "g = fresh()\n"
              "g.check_value('tiles', tiles, compare_orders(9, 9, 9, 3, 9).grouped)\n"
              "### BEGIN HIDDEN TESTS\n"
              "assert int(float(tiles)) == compare_orders(9, 9, 9, 3, 9).grouped, '❌ tiles (hidden)'\n"
              "### END HIDDEN TESTS"),
        _answer("ans_pct", "pct = 40.0"),
        _test("pct_40", 3, '"""reduction is 40 percent."""\n'
              "g = fresh()\n"
              "g.check_value('pct', pct, compare_orders(9, 9, 9, 3, 9).reduction_pct, digits=1)"),
        _answer("ans_double", "def double(x):\n    return 2 * x"),
        _test("double_works", 1, '"""double() doubles."""\n'
              "g = fresh()\n"
              "g.check_value('double(21)', double(21), 42)\n"
              "### BEGIN HIDDEN TESTS\n"
              "g.check_value('double(-3)', double(-3), -6)\n"
              "### END HIDDEN TESTS"),
        _cell("markdown", "### BEGIN SOLUTION\n그룹 순서는 같은 A 행을 재사용합니다.\n### END SOLUTION",
              grade_id="explain_order", grade=True, solution=True, points=1),
    ]),
    "02_vectors": notebook([
        _cell("code", "import numpy as np", grade_id="setup2", locked=True),
        _answer("ans_vec", "vec = np.arange(4) * 2.0"),
        # a locked-only cell right before a test cell: deleting that test cell crashed nbgrader 0.9.6
        _cell("code", "EVEN_STEP = 2", grade_id="given_step", locked=True),
        _test("vec_even", 2, '"""vec holds 0, 2, 4, 6."""\n'
              "from gemm_lab.grading import fresh\ng = fresh()\n"
              "g.check_value('vec', list(vec), [0, 2, 4, 6])"),
    ]),
}


def make_course(root: Path, assignment: str = ASSIGNMENT) -> Path:
    """Write a course folder with one assignment; returns the root."""
    root = Path(root)
    (root / "source" / assignment).mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO_ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    for name, nb in NOTEBOOKS.items():
        (root / "source" / assignment / f"{name}.ipynb").write_text(json.dumps(nb, indent=1, ensure_ascii=False))
        # a jupytext master beside it (holds the solution): must never be released
        (root / "source" / assignment / f"{name}.py").write_text("# master with solutions\ntiles = 54\n")
    (root / "source" / assignment / "data.csv").write_text("a,b\n1,2\n")
    return root


def solved(course_root: Path, name: str, assignment: str = ASSIGNMENT) -> dict:
    """A full-marks hand-in: the released notebook with every answer cell taken from the master."""
    return Notebook.load(course_root, f"{assignment}/{name}").full()


def hand_in(course_root: Path, student: str, notebooks: dict, assignment: str = ASSIGNMENT) -> Path:
    """Write ``{name: notebook}`` as autograder/submitted/STUDENT/ASSIGNMENT/NAME.ipynb (no collect step)."""
    folder = Path(course_root) / "autograder" / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    for name, nb in notebooks.items():
        (folder / f"{name}.ipynb").write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding="utf-8")
    return folder
