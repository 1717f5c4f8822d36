"""scan_source / scan_notebook: rebinding of names the locked cells define (LOCKED_REBIND), reading IPython
history (INPUT_HISTORY), and how the autograder scores each (autograder/grade/integrity.py)."""

import json
from pathlib import Path

import jupytext
import pytest

from autograder.grade import integrity as ag_integrity
from gemm_lab.grading.integrity import FLAG_TEXT, locked_names, scan_notebook, scan_source

ROOT = Path(__file__).resolve().parents[1]
# what a typical imports cell and helper cell of a notebook define
GIVEN = {"rf": "gemm_lab.calc.roofline", "sm": "gemm_lab.calc.smem", "np": "numpy", "torch": "torch",
         "launch": (), "expected_table": (), "CONFIGS": (), "M": (), "ALIASES": ()}


def found(src, protected=GIVEN, code="LOCKED_REBIND"):
    return [f for f in scan_source(src, protected) if f.startswith(code + " ")]


@pytest.mark.parametrize("src", [
    "launch = lambda a, b, c: c.copy_(a @ b)",                          # assignment
    "expected_table, other = (lambda cols: None), 1",                   # tuple target
    "[M, *rest] = [1, 2]",                                              # starred list target
    "M += 1",                                                           # augmented
    "M: int = 2",                                                       # annotated
    "def launch(a, b, c):\n    c.copy_(a @ b)",                          # def
    "async def launch():\n    pass",                                     # async def
    "class expected_table:\n    pass",                                  # class
    "import numpy as rf",                                               # import-as, another module
    "import rf",                                                        # plain import of that name
    "from fake_lib import expected_table",                              # from-import
    "from gemm_lab.calc import smem as rf",                             # a gemm_lab module, but not that one
    "del CONFIGS",                                                      # del
    "def f():\n    global launch\n    launch = print",                  # global
    "for M in (64, 128):\n    pass",                                    # for target
    "for i, (M, N) in enumerate([(1, 2)]):\n    pass",                  # nested for target
    "with open('x.txt') as CONFIGS:\n    pass",                         # with-as
    "if (ALIASES := {}):\n    pass",                                    # walrus
    "print([ALIASES := 1 for _ in range(2)])",                          # walrus in a comprehension binds outside
    "try:\n    pass\nexcept Exception as expected_table:\n    pass",     # except-as (also deletes it)
    "match 3:\n    case M:\n        pass",                              # match capture
    "CONFIGS[0] = None",                                                # item write on a given value
    "ALIASES['memory'].append('x')",                                    # nested item write... via call below
    "ALIASES.update({'memory': []})",                                   # in-place method
    "CONFIGS.sort()",
    "expected_table.__wrapped__ = print",                               # attribute write on a given function
    "setattr(launch, '__call__', print)",
    "import pandas as pd\ndef f():\n    pass\nCONFIGS.drop(0, inplace=True)",
    "calc = None",                                                      # calc modules are always protected
    "tiling = {'cdiv': 1}",
    "from gemm_lab import calc as roofline",
])
def test_rebinding_given_names_is_flagged(src):
    assert found(src), scan_source(src, GIVEN)


def test_item_write_through_a_subscript_chain_is_flagged():
    assert found("ALIASES['memory'][0] = 'wrong'")
    assert "CONFIGS[0]" in found("CONFIGS[0] = 1")[0] and FLAG_TEXT["LOCKED_REBIND"] in found("CONFIGS[0] = 1")[0]


@pytest.mark.parametrize("src", [
    "import numpy as np\nimport torch\nfrom gemm_lab.calc import roofline as rf",  # same module again
    "from gemm_lab import calc\nfrom gemm_lab.calc import tiling\nimport gemm_lab.calc.smem as sm",
    "def f(M, launch):\n    CONFIGS = [1]\n    CONFIGS.append(2)\n    return M",        # locals shadow
    "class K:\n    M = 3\n    launch = None",                                          # class attributes
    "y = [M for M in range(3)]\nz = {launch: 1 for launch in 'ab'}",                  # comprehension locals
    "f = lambda M: M * 2",
    "my_table = expected_table(['grid'])\nn = len(CONFIGS) + M\nrows = list(ALIASES)",  # reading is fine
    "table = {}\ntable['grid'] = 20\ngrid_list = []\ngrid_list.append(1)",            # own values
    "def g():\n    import numpy as M\n    return M",                                  # local import
])
def test_honest_code_is_not_flagged(src):
    assert scan_source(src, GIVEN) == []


def test_protected_argument_forms_and_errors():
    assert found("launch = 1", ["launch"]) and found("launch = 1", {"launch": ()})
    assert not found("launch = 1", None)  # not given here; calc modules are protected by default
    assert found("import numpy as launch", {"launch": "torch"})
    with pytest.raises(TypeError, match="protected"):
        scan_source("x = 1", protected=3)
    with pytest.raises(TypeError, match="protected"):
        scan_source("x = 1", protected="launch")
    with pytest.raises(TypeError, match="protected"):
        scan_source("x = 1", protected=[1])


@pytest.mark.parametrize("src", [
    "print(In[-3])",
    "x = Out[12]",
    "src = _ih[5]",
    "print(_oh)",
    "print(_i, _ii, _iii)",
    "print(_i14)",
    "print(_7)",
    "code = globals()['_ih']",
    "code = vars().get('In')",
    "h = getattr(__import__('__main__'), 'In')",
    "import sys\nh = sys.modules['__main__']._ih",
    "ip = get_ipython()\nfor s, l, text in ip.history_manager.get_range():\n    print(text)",
    "%history -n 1-20",
    "  %hist -g",
    "%recall 5",
    "%save leak.py 1-30",
    "get_ipython().run_line_magic('history', '-f out.py')",
    "from IPython.core.history import HistoryAccessor\nHistoryAccessor().search('*')",
    "import sqlite3\nsqlite3.connect('/root/.ipython/profile_default/history.sqlite')",
    "import linecache\nprint([v for k, v in linecache.cache.items()])",
    "from linecache import getlines",
])
def test_reading_input_history_is_flagged(src):
    assert found(src, None, "INPUT_HISTORY"), scan_source(src)


@pytest.mark.parametrize("src", [
    "for _ in range(3):\n    pass",
    "In = 5\nprint(In)",                         # the cell's own variable
    "def f(_i):\n    return _i",
    "print('In', 'Out')",
    "x = {'In': 1}\nprint(x['Out'] if 0 else 0)",  # a dict key named like history... is still read by subscript
    "%matplotlib inline",
    "%time x = 1",
])
def test_ordinary_names_and_magics_are_not_history(src):
    hits = found(src, None, "INPUT_HISTORY")
    if "x['Out']" in src:
        assert hits  # reading ['Out'] is flagged by design: a literal history key is suspicious anywhere
    else:
        assert hits == [], hits


def _cell(src, **nbgrader):
    meta = {"nbgrader": {"schema_version": 3, **nbgrader}} if nbgrader else {}
    return {"cell_type": "code", "metadata": meta, "source": src, "outputs": [], "execution_count": None}


def _notebook():
    return {"cells": [
        _cell("from gemm_lab import calc\nfrom gemm_lab.calc import roofline as rf\nM = 4096\n"
              "for name in 'ab':\n    pass\n", grade=False, grade_id="imports", locked=True, solution=False),
        _cell("table = rf.roofline_table(M, M, M, calc.SEED_CONFIGS)\n", grade=False, grade_id="ans",
              locked=False, solution=True),
        _cell("from gemm_lab.grading import fresh\ng = fresh()\ng.check_value('t', table, 1)", grade=True,
              grade_id="t1", locked=True, solution=False, points=1),
        _cell("rf = None\nname = 'mine'\nprint(In[2])\n"),                                      # added by the student
        _cell("def launch(a, b, c):\n    pass\n", grade=False, grade_id="given_launch", locked=True, solution=False),
        _cell("launch = lambda *a: None\n"),                                                   # after the given launcher
        _cell("y = 2", solution=True, grade_id="ans2", locked=False, grade=False),
        _cell("from gemm_lab.grading import fresh\ng = fresh()\ng.check_value('y', y, 2)", grade=True,
              grade_id="t2", locked=True, solution=False, points=1),
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_scan_notebook_protects_what_the_locked_cells_above_define():
    nb = _notebook()
    assert set(locked_names(nb["cells"], before=3)) == {"calc", "rf", "M"}  # loop temporaries are not given
    assert "launch" in locked_names(nb["cells"])
    out = scan_notebook(nb)
    assert [f.split(":")[0] for f in out] == ["셀 3", "셀 3", "셀 5"]
    assert "LOCKED_REBIND" in out[0] and "rf = ..." in out[0]
    assert "INPUT_HISTORY" in out[1] and "In" in out[1]
    assert "LOCKED_REBIND" in out[2] and "launch = ..." in out[2]
    # a launcher defined *before* the given cell is overwritten by it: not a rebinding
    nb["cells"][3]["source"] = "def launch(*a):\n    pass\n"
    assert scan_notebook(nb) == [out[2]]


def test_autograder_lists_rebinding_and_history_for_review_and_zeroes_nothing():
    """The scan is a review aid: rebinding `rf`/`launch` and reading history are listed, no score changes
    (test cells are judged in the grader's process, where the notebook's names are not)."""
    nb = _notebook()
    findings, zero = ag_integrity.review_notebook(nb)
    assert zero == [] and len(findings) == 3
    assert sum("LOCKED_REBIND" in f for f in findings) == 2 and sum("INPUT_HISTORY" in f for f in findings) == 1
    nb["cells"][7]["source"] = ("from gemm_lab.grading import fresh\ng = fresh()\n"
                                "g.check_value('y', y, rf.roofline_table(M, M, M, []).shape[0])")
    findings, zero = ag_integrity.review_notebook(nb)
    assert zero == [] and any("LOCKED_REBIND" in f and "rf = ..." in f for f in findings)


@pytest.mark.parametrize("path", sorted(ROOT.glob("source/*/*.py")), ids=lambda p: p.name)
def test_masters_own_cells_trigger_no_finding(path):
    """The given, unlocked and solution cells of every master scan clean: an honest hand-in that keeps
    them is never flagged (and never zeroed) for them."""
    nb = json.loads(jupytext.writes(jupytext.read(path, fmt="py:percent"), fmt="ipynb"))
    assert scan_notebook(nb) == []
