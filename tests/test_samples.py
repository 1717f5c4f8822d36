"""The sample generator (autograder/samplekit): every planned case builds from today's masters, the expected
scores are the masters' points (0 exactly where the case loses them), and the committed samples are current.

Fast: no nbgrader and no kernel runs (`make demo` and tests/test_samples_kernels.py grade them).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from autograder import cells as nbcells
from autograder.cells import is_autograded_test
from autograder.samplekit import attacks_sandbox, kernels
from autograder.samplekit.bad_kernels import BAD_KERNELS
from autograder.samplekit.expected import build_cases, read_expected, read_review_contains
from autograder.samplekit.make_samples import write_samples
from autograder.samplekit.model import HIDDEN_MARK, Notebook
from autograder.samplekit.plan import ALL, CASES, PLANS, case_function

ROOT = Path(__file__).resolve().parent.parent


def masters(assignment: str) -> list[Notebook]:
    paths = sorted((ROOT / "source" / assignment).glob("*.ipynb"))
    if not paths:
        pytest.skip(f"no source/{assignment}")
    return [Notebook.load(ROOT, f"{assignment}/{p.stem}", release="source") for p in paths]


@pytest.fixture(scope="module", params=sorted(PLANS))
def built(request):
    nbs = masters(request.param.removesuffix("-all"))
    cases = {c[0]: c for c in build_cases(nbs, PLANS[request.param])}
    return request.param, nbs, cases


def test_every_planned_case_builds_and_the_basics_cover_every_notebook(built):
    assignment, nbs, cases = built
    assert set(cases) == set(PLANS[assignment]), f"planned cases that apply nowhere: {set(PLANS[assignment]) - set(cases)}"
    for case in ("full_marks", "blank", "all_wrong"):
        assert set(cases[case][4]) == {nb.name for nb in nbs}
    for case, where in PLANS[assignment].items():
        if where != ALL:
            assert set(cases[case][4]) == set(where), case


def test_expected_points_come_from_the_masters(built):
    _, nbs, cases = built
    by_name = {nb.name: nb for nb in nbs}
    for case, (*_, expected) in cases.items():
        for name, exp in expected.items():
            points = {g: p for g, p, _ in by_name[name].graded_cells()}
            auto = {g for g, _, a in by_name[name].graded_cells() if a}
            assert set(exp) == set(points), (case, name)
            for gid, value in exp.items():
                assert value in (0.0, points[gid]) and (gid in auto or value == 0.0), (case, name, gid)
    full = cases["full_marks"][5]
    assert all(sum(full[nb.name].values()) == sum(p for _, p, a in nb.graded_cells() if a) > 0 for nb in nbs)
    assert all(sum(v.values()) == 0 for v in cases["blank"][5].values())


def test_kernel_cases_lose_exactly_the_kernel_tests(built):
    assignment, nbs, cases = built
    by_name = {nb.name: nb for nb in nbs}
    mistakes = [c for c in cases if c in kernels.MISTAKE_NAMES]
    assert mistakes, "no kernel mistake planned"
    for case in mistakes:
        (name, exp), = cases[case][5].items()
        nb = by_name[name]
        lost = {g for g, v in exp.items() if v == 0 and nb.full_points()[g] > 0}
        assert lost == set(nb.kernel_tests()) != set(), case
        kernel_cell = next(m[1] for m in kernels.MISTAKES if m[0] == case)
        handed = next(c for c in cases[case][4][name]["cells"] if nbcells.meta(c).get("grade_id") == kernel_cell)
        assert nbcells.source(handed) != nb.solutions[kernel_cell]
    for case in [c for c in cases if c.startswith("bad_")]:
        entry = next(e for e in BAD_KERNELS if e["name"] == case[4:])
        (name, exp), = cases[case][5].items()
        assert {g for g, v in exp.items() if v == 0 and by_name[name].full_points()[g] > 0} == set(entry["tests_lost"])


def test_issue_17_cases_are_what_they_say():
    nbs = {nb.name: nb for nb in masters("week07")}
    nb = nbs["04_compile_pipeline"]
    _, dup, _ = attacks_sandbox.CASES["duplicated_test"](nb)
    ids = [nbcells.meta(c)["grade_id"] for c in dup["cells"] if is_autograded_test(c)]
    assert len(ids) == len(set(ids)) + 1
    _, renamed, _ = attacks_sandbox.CASES["changed_grade_id"](nb)
    assert {g for g, _, _ in nb.graded_cells()} - {nbcells.meta(c).get("grade_id") for c in renamed["cells"]}
    _, lit, exp = attacks_sandbox.CASES["hidden_literal"](nb)
    assert any(HIDDEN_MARK in nbcells.source(c) and not nbcells.meta(c) for c in lit["cells"]) and exp == nb.full_points()
    _, snoop, _ = attacks_sandbox.CASES["history_snoop"](nb)
    assert "_ih" in nbcells.source(snoop["cells"][-1])
    desc, deleted, _ = attacks_sandbox.deleted_test_after_locked(nbs["06_persistent_loop"])
    assert len(deleted["cells"]) == len(nbs["06_persistent_loop"].release["cells"]) - 1, desc
    assert attacks_sandbox.redefined_launcher(nbs["02_program_order_l2"]) is None  # no launcher there


def test_unknown_case_and_plan_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown sample case"):
        case_function("no_such_case")
    assert "bad_matmul_block_k_8" in CASES
    with pytest.raises(ValueError, match="plan"):
        write_samples(masters("week06"), tmp_path / "s", plan="week99")


@pytest.mark.parametrize("assignment", sorted(a for a in PLANS if not a.endswith("-all")))
def test_committed_samples_match_the_plan(assignment, tmp_path):
    """The committed folder is what `python -m autograder.samplekit.make_samples ASSIGNMENT --from-source` writes today
    (points, review flags, review texts, the hand-ins present)."""
    folder = ROOT / "autograder" / "samples" / assignment
    opts = json.loads((folder / "options.json").read_text(encoding="utf-8"))
    assert opts["plan"] == assignment
    fresh = write_samples(masters(assignment), tmp_path / "s", **opts)
    assert read_expected(folder) == read_expected(fresh), (
        f"autograder/samples/{assignment} is stale: python -m autograder.samplekit.make_samples {assignment} --from-source")
    assert read_review_contains(folder) == read_review_contains(fresh)
    assert {(p.parent.name, p.stem) for p in folder.glob("*/*.ipynb")} == \
        {(p.parent.name, p.stem) for p in fresh.glob("*/*.ipynb")}
    with (folder / "cases.csv").open(encoding="utf-8") as f:
        assert {r["review_contains"] for r in csv.DictReader(f)} >= (
            {"LIMIT_PROCESSES", "repaired before grading"} if assignment == "week07" else set())
    assert set(PLANS[assignment]) <= set(PLANS[f"{assignment}-all"])  # the committed set: part of the longer one
