"""Every autograded test cell of every master follows the test-cell rule (gemm_lab.grading.audit.cell_audit).

The rule: the student's answer names are the only notebook names a test cell reads (the checker and every
expected value come from the cell itself, ``g = fresh()``), and it checks something. The audit is proven on synthetic cells
first (good and bad examples), then applied to the masters (``source/*/*.py``, jupytext percent files
whose ``# %%`` lines carry the nbgrader metadata).
"""

from pathlib import Path

import jupytext
import pytest

from gemm_lab.grading.audit.cell_audit import answer_names, audit_notebook, audit_test_cell, module_bindings

ROOT = Path(__file__).resolve().parents[1]
MASTERS = sorted(ROOT.glob("source/*/*.py"))

GOOD = '''"""Checks grid."""
from gemm_lab.grading import fresh
g = fresh()
_t = g.calc.tile_grid(500, 600, 300, 128, 128, 64)
g.check_value("grid", grid, _t.grid, reveal=True)
### BEGIN HIDDEN TESTS
def _fitting(limit):
    return {i + 1 for i, c in enumerate(g.calc.SEED_CONFIGS) if g.calc.fits(c, limit)}
g.check_choice("fits", fits, _fitting(64 * 1024))
g.check_table("table", table, g.calc.roofline_table(4096, 4096, 4096, g.calc.SEED_CONFIGS)[["grid"]])
### END HIDDEN TESTS
'''


def _problems(src, answers=("grid", "fits", "table")):
    return audit_test_cell(src, frozenset(answers))


def test_a_cell_that_follows_the_rule_passes():
    assert _problems(GOOD) == []
    # the other ways to reach fresh: an alias, the integrity module, the package path
    assert _problems("from gemm_lab.grading import fresh as f\nchk = f()\nchk.check_value('a', grid, 1)") == []
    assert _problems("import gemm_lab.grading\ng = gemm_lab.grading.fresh()\ng.check_value('a', grid, 1)") == []
    assert _problems("from gemm_lab.grading import fresh\nfresh().check_value('a', grid, 1)") == []
    # gemm_lab modules without a trusted copy in g may be imported in the cell
    assert _problems("from gemm_lab.compile import compile_artifacts\nfrom gemm_lab.grading import fresh\n"
                     "g = fresh()\ng.check_value('a', grid, compile_artifacts('matmul').metadata['shared'])") == []
    # a kernel check on the grader's own module, builtins, comprehension and lambda locals
    ok = ("from gemm_lab.grading import fresh\ng = fresh()\nk = g.kernels\n"
          "k.check_matmul(table, hidden=True)\n"
          "g.check_value('n', len([x for x in grid if x]), max(map(lambda v: v * 2, range(3))))")
    assert _problems(ok) == []


@pytest.mark.parametrize("src, names", [
    # expected value through the notebook's calc / a locked helper / a locked constant
    ("from gemm_lab.grading import fresh\ng = fresh()\ng.check_value('grid', grid, calc.tile_grid(1, 2, 3).grid)",
     ["calc"]),
    ("from gemm_lab.grading import fresh\ng = fresh()\ng.check_table('t', table, expected_table(['grid']))",
     ["expected_table"]),
    ("from gemm_lab.grading import fresh\ng = fresh()\ng.check_value('g', grid, g.calc.cdiv(M, 128) * N)",
     ["M", "N"]),
    # reads inside a helper function, a class body, a default argument, a comprehension
    ("from gemm_lab.grading import fresh\ng = fresh()\ndef _e():\n    return rf.roofline_table(CONFIGS)\n"
     "g.check_value('x', grid, _e())", ["CONFIGS", "rf"]),
    ("from gemm_lab.grading import fresh\ng = fresh()\nclass _K:\n    v = LIMIT\ng.check_value('x', grid, _K.v)",
     ["LIMIT"]),
    ("from gemm_lab.grading import fresh\ng = fresh()\ndef _e(x=tiling):\n    return x\ng.check_value('x', grid, _e())",
     ["tiling"]),
    ("from gemm_lab.grading import fresh\ng = fresh()\ng.check_value('x', grid, [s for s in SHAPES][0])",
     ["SHAPES"]),
    # read before the cell binds it, augmented assignment of a notebook name
    ("from gemm_lab.grading import fresh\ng = fresh()\n_e = K * 2\nK = 4\ng.check_value('x', grid, _e)", ["K"]),
    ("from gemm_lab.grading import fresh\ng = fresh()\nTOTAL += 1\ng.check_value('x', grid, TOTAL)", ["TOTAL"]),
    ("from gemm_lab.grading import fresh\ng = fresh()\nlimit = limit + 1\ng.check_value('x', grid, limit)", ["limit"]),
    # the launcher a locked cell defined
    ("from gemm_lab.grading import fresh\ng = fresh()\ng.check_matmul(launch, hidden=True)", ["launch"]),
])
def test_reads_of_notebook_names_are_reported_by_name(src, names):
    problems = _problems(src)
    assert len(problems) == 1 and problems[0].startswith("reads notebook names " + ", ".join(names) + " ")


@pytest.mark.parametrize("src, fragment", [
    ("from gemm_lab.grading import fresh\ng = fresh()\nassert grid == 20", "calls no check_*"),
    ("g = fresh()\ng.check_value('a', grid, 1)", "reads notebook names fresh"),
    ("from gemm_lab.grading import fresh\ng = fresh(\n", "cannot be parsed"),
    ("from gemm_lab.grading import fresh\ng = fresh()\ng.check_value('a', grid, globals()['M'])", "uses globals()"),
    ("from gemm_lab.grading import fresh\ng = fresh()\ng.check_value('a', grid, eval('M * 2'))", "uses eval()"),
    ("import sys\nfrom gemm_lab.grading import fresh\ng = fresh()\n"
     "g.check_value('a', grid, sys.modules['__main__'].M)", "names the '__main__' module"),
])
def test_what_the_hand_out_cannot_carry_is_reported(src, fragment):
    assert any(fragment in p for p in _problems(src)), _problems(src)


@pytest.mark.parametrize("src", [
    "from gemm_lab.grading import check_value\ncheck_value('a', grid, 1)",
    "from gemm_lab.grading import fresh\nfrom gemm_lab import calc\ng = fresh()\ng.check_value('a', grid, calc.cdiv(3, 2))",
    "import gemm_lab.grading\ngemm_lab.grading.check_value('a', grid, gemm_lab.calc.cdiv(3, 2))",
])
def test_a_checker_the_cell_imports_itself_is_the_graders(src):
    """The cell runs in the grader's process on the handed-out answers: what it imports is the grader's own."""
    assert _problems(src) == []


def test_answer_names_come_from_solution_cells_and_markers_only():
    cells = [
        {"cell_type": "code", "metadata": {"nbgrader": {"locked": True, "grade_id": "imports"}},
         "source": "from gemm_lab import calc\nM = 4096\ndef launch(x):\n    return x\n"},
        {"cell_type": "code", "metadata": {"nbgrader": {"solution": True, "grade_id": "a"}},
         "source": "import numpy as np\n### BEGIN SOLUTION\ntable = {}\ndef my_kernel():\n    local = 1\n"
                   "### END SOLUTION\nfor i, v in enumerate([1]):\n    pass\n"},
        {"cell_type": "code", "metadata": {},
         "source": "def outer():\n    ### BEGIN SOLUTION\n    global speedup\n    speedup = 2.0\n"
                   "    ### END SOLUTION\n"},
        {"cell_type": "markdown", "metadata": {}, "source": "### BEGIN SOLUTION\nanswer = 1\n### END SOLUTION"},
    ]
    assert answer_names(cells) == {"table", "my_kernel", "i", "v", "speedup"}
    assert module_bindings("import numpy as np\nx = 1\nclass C: pass") == {"np", "x", "C"}
    assert module_bindings("import numpy as np\nx = 1", include_imports=False) == {"x"}


def test_audit_notebook_names_grade_id_and_uses_the_notebooks_answers():
    nb = {"cells": [
        {"cell_type": "code", "metadata": {"nbgrader": {"solution": True, "grade_id": "ans"}},
         "source": "grid = 20\n"},
        {"cell_type": "code", "metadata": {"nbgrader": {"grade": True, "grade_id": "t_ok", "locked": True}},
         "source": "from gemm_lab.grading import fresh\ng = fresh()\ng.check_value('grid', grid, 20)"},
        {"cell_type": "code", "metadata": {"nbgrader": {"grade": True, "grade_id": "t_bad", "locked": True}},
         "source": "from gemm_lab.grading import fresh\ng = fresh()\ng.check_value('grid', grid, M * 2)"},
        {"cell_type": "code", "metadata": {"nbgrader": {"grade": True, "solution": True, "grade_id": "manual"}},
         "source": "# an autograded answer cell is the student's code, not a test cell\nprint(M)"},
    ]}
    assert audit_notebook(nb) == [("t_bad", [audit_test_cell(nb["cells"][2]["source"], {"grid"})[0]])]
    assert "M" in audit_notebook(nb)[0][1][0]
    # a name a locked cell defines stays given even when an answer cell binds it too
    nb["cells"].insert(0, {"cell_type": "code", "metadata": {"nbgrader": {"locked": True, "grade_id": "setup"}},
                           "source": "grid = 0\n"})
    assert [gid for gid, _ in audit_notebook(nb)] == ["t_ok", "t_bad"]


def test_the_masters_are_found_and_have_test_cells():
    assert len(MASTERS) >= 9, MASTERS
    for path in MASTERS:
        nb = jupytext.read(path, fmt="py:percent")
        assert any(c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"].get("solution")
                   for c in nb.cells), f"{path.relative_to(ROOT)} has no autograded test cell"


@pytest.mark.parametrize("path", MASTERS, ids=[str(p.relative_to(ROOT / "source")) for p in MASTERS])
def test_master_test_cells_read_only_fresh_and_answer_names(path):
    nb = jupytext.read(path, fmt="py:percent")
    bad = audit_notebook(nb)
    report = "\n".join(f"  {path.relative_to(ROOT)} [{gid}]: " + "; ".join(problems) for gid, problems in bad)
    assert not bad, "test cells that break the test-cell rule (see gemm_lab.grading.audit.cell_audit):\n" + report
