"""The attacks on the grader's kernel workers and what hand-ins share (autograder/samplekit/attacks_worker.py): each
builds where its kernel is and expects what the work deserves; graded for real (nbgrader + bubblewrap), a hand-in that
tries to poison what hand-ins share changes no classmate's score, in the same run or a later one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.course import Course
from autograder.samplekit import attacks_worker
from autograder.samplekit.expected import write_cases
from autograder.samplekit.model import Notebook
from autograder.samplekit.plan import PLANS

ROOT = Path(__file__).resolve().parent.parent


def _masters(assignment: str) -> list[Notebook]:
    return [Notebook.load(ROOT, f"{assignment}/{p.stem}", release="source")
            for p in sorted((ROOT / "source" / assignment).glob("*.ipynb"))]


@pytest.mark.parametrize("assignment", ["week06", "week07"])
def test_each_attack_builds_where_planned_and_loses_only_its_kernel_cells(assignment):
    nbs = {nb.name: nb for nb in _masters(assignment)}
    for case, make in attacks_worker.CASES.items():
        where = PLANS[assignment].get(case, [])
        assert where == PLANS[f"{assignment}-all"].get(case, []), case
        for name in where:
            desc, handin, exp = make(nbs[name])
            kernel_tests = set(nbs[name].kernel_tests())
            lost = {g for g, v in exp.items() if v == 0 and nbs[name].full_points()[g] > 0}
            assert desc and lost and lost <= kernel_tests, (case, name, lost)
            if case == "self_reported_ownership":
                assert lost == {"every_tile_once_by_its_program"}


@pytest.mark.slow
def test_a_hand_in_poisoning_shared_caches_changes_no_classmate(tmp_path, bwrap):
    """The attacker and an honest classmate in one run, then another classmate in a later run of the same
    course (the caches the first run left): every score is the expected one both times."""
    from autograder.collect.handins import collect
    from autograder.grade.autograde import autograde
    from autograder.samplekit.compare import compare_with_expected

    nbs = _masters("week06")
    plan = {"poison_classmates": PLANS["week06-all"]["poison_classmates"],
            "full_marks": ["01_block_model", "02_fusion_softmax"]}
    samples = write_cases(nbs, tmp_path / "samples", plan)
    course = Course.at(ROOT).scratch(tmp_path / "course", ["week06"], released=True)
    collect(course, "week06", samples)
    autograde(course, "week06", jobs=2, quiet=True)
    assert compare_with_expected(course, "week06", samples) == []
    later = tmp_path / "later"
    shutil.copytree(samples / "full_marks", later / "classmate")
    (later / "expected.csv").write_text("\n".join(
        line.replace("full_marks,", "classmate,", 1) for line in (samples / "expected.csv").read_text().splitlines()
        if line.startswith(("student,", "full_marks,"))) + "\n")
    (later / "cases.csv").write_text("student,case,review_expected,review_contains\nclassmate,honest,no,\n")
    collect(course, "week06", later)
    autograde(course, "week06", students=["classmate"], jobs=1, quiet=True)  # a later run, same caches
    assert compare_with_expected(course, "week06", later) == []
