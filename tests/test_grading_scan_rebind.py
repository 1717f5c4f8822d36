"""scan_source / the review on what a notebook's given names and IPython's history: reusing a given name
(``M``, ``launch``, ``CONFIGS``) or reading ``In``/``%history`` is not a finding, because the grader launches its
own copies of the given code and hidden tests never run in the student's kernel; the masters scan clean."""

import json
from pathlib import Path

import jupytext
import pytest

from autograder.grade import review
from gemm_lab.grading.audit.scan import scan_source

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("src", [
    "M = 4096\nCONFIGS = [(64, 64, 32)]",  # a student's own exploration with the notebook's names
    "launch = lambda *a: None",
    "CONFIGS[0] = 1\nALIASES.update(a=1)",
    "print(In[-1], _ih[0])\n%history -n 1-3",
    "from gemm_lab.calc import roofline as rf\nrf = None",
])
def test_given_names_and_history_are_the_students_own_business(src):
    assert scan_source(src) == []


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


def test_autograder_review_of_a_notebook_with_rebinding_and_history_lists_nothing():
    assert review.review_notebook(_notebook()) == []


@pytest.mark.parametrize("path", sorted(ROOT.glob("source/*/*.py")), ids=lambda p: p.name)
def test_masters_own_cells_trigger_no_finding(path):
    """The given, unlocked and solution cells of every master scan clean: an honest hand-in that keeps
    them is never flagged for them."""
    nb = json.loads(jupytext.writes(jupytext.read(path, fmt="py:percent"), fmt="ipynb"))
    assert review.review_notebook(nb) == []
