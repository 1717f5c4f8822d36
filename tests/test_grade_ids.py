"""Grade ids carry no answers (autograder/grade/ids.py): the check, its use in ``make check-release``,
the masters, and old hand-ins whose ids were renamed since (normalize maps them; they keep their points).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import random
import types
from pathlib import Path

import jupytext
import pytest

from autograder.grade import ids as grade_ids
from autograder.grade.ids import (
    OLD_GRADE_IDS,
    expected_values,
    id_leaks,
    notebook_leaks,
    renames,
)
from autograder.grade.normalize import normalize, normalize_file

ROOT = Path(__file__).resolve().parent.parent

MASTERS = sorted(ROOT.glob("source/*/*.py"))


def _release_module():
    spec = importlib.util.spec_from_file_location("release_tool", ROOT / "tools" / "release.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _cell(kind, src, **nbg):
    cell = {"cell_type": kind, "metadata": {}, "source": src}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    if nbg:
        cell["metadata"]["nbgrader"] = {"schema_version": 3, "grade": False, "solution": False, "locked": False,
                                        **nbg}
    return cell


def _test_cell(gid, body, points=1):
    return _cell("code", "from gemm_lab.grading import fresh\ng = fresh()\n" + body, grade_id=gid, grade=True,
                 locked=True, points=points)


def _master(grid_id="ex1_grid", words_id="ex2_bound"):
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        _cell("code", "### BEGIN SOLUTION\ngrid = 3\nbound = 'memory'\n### END SOLUTION", grade_id="ex1_answer",
              solution=True),
        _test_cell(grid_id, "g.check_value('grid', grid, g.calc.cdiv(10, 4))"),
        _test_cell(words_id, "### BEGIN HIDDEN TESTS\ng.check_choice('bound', bound, {'memory'})\n"
                             "### END HIDDEN TESTS"),
    ]}


# ------------------------------------------------------------------------------------- the id rule
@pytest.mark.parametrize("gid, expected, shown", [
    ("ex3_2_break_even_986", [986], ["'986'"]),
    ("ex3_1_speedups_2_33_and_1_02", [2.3283, 1.0186], ["'2_33'", "'1_02'"]),
    ("ex2_row_bytes_4kib", [4096], ["'4kib'"]),
    ("ex2_2_fits_64_and_164_kib", [164 * 1024], ["'164_kib'"]),
    ("ex2_3_best_fitting_candidate_2", [{"best": 2}], ["'2'"]),
    ("ex4_edge_tiles_500x600", [[20, 600]], ["'600'"]),
    ("ex2_other_zero_effect", [0.0], ["'zero'"]),
    ("t_ideal_bound_memory", [("compute", "Memory")], ["'memory'"]),
    ("ex1_2_valid_10208", [[[10208.0]]], ["'10208'"]),
])
def test_an_id_that_writes_an_expected_value_leaks(gid, expected, shown):
    why = id_leaks(gid, expected)
    assert why and all(any(s in w for w in why) for s in shown), why


@pytest.mark.parametrize("gid, expected", [
    ("ex3_2_break_even", [986]),
    ("ex3_2_total_times", [3, 2]),  # the exercise label is not a value
    ("ex2_1_grouped_pairs_g2", [2]),  # digits inside a name: g2, fp16, sm90, 2mn
    ("ex4_fp16_check_visible", [16]),
    ("ex2_why_2mn", [2]),
    ("ex4_edge_tiles_500x600", [20, 73.24]),  # the inputs of the question, no answer among them
    ("ex3_1_speedups", [2.3283, 1.0186]),
    ("ex2_bound", [True, False, None]),
])
def test_an_id_that_names_the_quantity_or_the_inputs_passes(gid, expected):
    assert id_leaks(gid, expected) == []


def test_expected_values_are_what_the_test_cell_compares_with():
    src = ('"""doc"""\nfrom gemm_lab.grading import fresh\ng = fresh()\n'
           "def _twice(v):\n    return 2 * g.calc.cdiv(v, 4)\n"
           "g.check_value('grid', grid, g.calc.cdiv(10, 4), mistakes={2: 'x'}, hint='cdiv')\n"
           "g.check_value('rows', len(mask), _twice(10))\n"
           "g.check_pairs('pairs', pairs, [(0, 1)], item_name='pid')\n"
           "g.kernels.check_matmul(student_kernel, hidden=True)\n"
           "g.check_choice(name='s', got=s, expected_set={1, 3})\n")
    assert expected_values(src) == [3, 6, [(0, 1)], {1, 3}]
    # the other ways a cell reaches the grader
    assert expected_values("import gemm_lab.grading\ngemm_lab.grading.fresh().check_value('a', a, 7)") == [7]
    assert expected_values("from gemm_lab.grading import fresh as f\nf().check_value('a', a, 8)") == [8]


def test_a_test_cell_that_cannot_run_is_a_problem_not_a_pass():
    nb = _master()
    nb["cells"][1]["source"] += "\nraise RuntimeError('broken key')"
    problems = notebook_leaks(nb)
    assert len(problems) == 1 and "ex1_grid: its expected answers could not be computed" in problems[0]
    assert "broken key" in problems[0]


def test_an_id_is_checked_against_every_answer_of_its_notebook():
    assert notebook_leaks(_master()) == []
    problems = notebook_leaks(_master(words_id="ex2_bound_3"), "wk/nb.ipynb: ")  # ex1's answer in ex2's id
    assert problems == ["wk/nb.ipynb: grade id ex2_bound_3 carries an answer: '3' is the expected value 3"]
    assert notebook_leaks(_master(words_id="ex2_memory_bound"))  # an expected word


# ----------------------------------------------------------------------------------- check-release
@pytest.fixture()
def fake_repo(tmp_path, monkeypatch):
    """A repository with one assignment whose release is its master (no nbgrader)."""
    rel = _release_module()
    repo = tmp_path / "repo"
    (repo / "source" / "wk").mkdir(parents=True)

    def write(master):
        (repo / "source" / "wk" / "nb.ipynb").write_text(json.dumps(master))
        (repo / "release" / "wk").mkdir(parents=True, exist_ok=True)
        (repo / "release" / "wk" / "nb.ipynb").write_text(json.dumps(master))

    class FakeCourse:
        """``Course.at(root).scratch(tmp, assignments, released=True)`` with each master copied as its own
        release (no nbgrader)."""

        def __init__(self, root):
            self.root = Path(root)

        at = classmethod(lambda cls, root: cls(root))

        def scratch(self, tmp, assignments, released=False):
            course = types.SimpleNamespace(source=Path(tmp) / "source", release=Path(tmp) / "release")
            for a in assignments:
                for folder in (course.source / a, course.release / a):
                    folder.mkdir(parents=True, exist_ok=True)
                    for nb in (self.root / "source" / a).glob("*.ipynb"):
                        (folder / nb.name).write_text(nb.read_text())
            return course

    monkeypatch.setattr(rel, "ROOT", repo)
    monkeypatch.setattr(rel, "Course", FakeCourse)
    monkeypatch.setattr(rel, "leaks", lambda folder: [])  # the fake release keeps its solution markers
    monkeypatch.setattr(rel, "with_outputs", lambda root=None: [])
    return rel, repo, write


def test_check_release_fails_on_an_answer_carrying_id(fake_repo, capsys):
    rel, repo, write = fake_repo
    write(_master(grid_id="ex1_grid_3"))
    assert rel.main(["--check", "wk"]) == 1
    out = capsys.readouterr().out
    assert "wk/nb.ipynb: grade id ex1_grid_3 carries an answer: '3' is the expected value 3" in out
    write(_master())
    assert rel.main(["--check", "wk"]) == 0
    assert "release: OK" in capsys.readouterr().out


def test_check_release_also_reads_the_ids_of_the_committed_release(fake_repo, capsys):
    rel, repo, write = fake_repo
    write(_master())
    (repo / "release" / "wk" / "nb.ipynb").write_text(json.dumps(_master(grid_id="ex1_grid_3")))
    assert rel.main(["--check", "wk"]) == 1
    out = capsys.readouterr().out
    assert "stale" in out and "grade id ex1_grid_3 carries an answer" in out


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_master_grade_id_carries_an_answer(master):
    assert notebook_leaks(jupytext.read(master), f"{master.parent.name}/{master.name}: ") == []


def test_the_rename_table_matches_the_masters():
    """Every new id is a cell of its master, no old id is; no id is renamed twice or into another old id."""
    ids = {f"{p.parent.name}/{p.stem}": {c.metadata.get("nbgrader", {}).get("grade_id")
                                         for c in jupytext.read(p).cells} for p in MASTERS}
    for notebook, table in OLD_GRADE_IDS.items():
        assert notebook in ids, notebook
        assert set(table.values()) <= ids[notebook], notebook
        assert not set(table) & ids[notebook], notebook
        assert len(set(table.values())) == len(table) and not set(table) & set(table.values())


# --------------------------------------------------------------------------------- old hand-ins
def _release_nb(notebook: str) -> dict:
    """The notebook as the current release ships it: its master's cells, ids as the master has them."""
    week, stem = notebook.split("/")
    return json.loads(jupytext.writes(jupytext.read(ROOT / "source" / week / f"{stem}.py"), fmt="ipynb"))


def _with_ids(nb: dict, mapping: dict) -> dict:
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        m = cell.get("metadata", {}).get("nbgrader")
        if m and m.get("grade_id") in mapping:
            m["grade_id"] = mapping[m["grade_id"]]
    return nb


def _ids(nb):
    return [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb["cells"]]


@pytest.mark.parametrize("notebook", sorted(OLD_GRADE_IDS))
def test_a_hand_in_of_the_old_release_gets_the_new_ids(notebook):
    release = _release_nb(notebook)
    table = OLD_GRADE_IDS[notebook]
    old = _with_ids(release, {new: o for o, new in table.items()})
    # the student moved the renamed test cells around: only the table, not the position, can name them
    cells = old["cells"]
    moved = [i for i, c in enumerate(cells) if _ids({"cells": [c]})[0] in table]
    picked = [cells[i] for i in moved]
    random.Random(0).shuffle(picked)
    for i, c in zip(moved, picked, strict=True):
        cells[i] = c
    fixed, repairs = normalize(old, release, notebook=notebook)
    assert sorted(repairs) == sorted(f"renamed old grade id {o} -> {n}" for o, n in table.items())

    def sources(nb):
        return {g: "".join(c["source"]) for g, c in zip(_ids(nb), nb["cells"], strict=True) if g}

    for n in table.values():  # each renamed cell is the one that was under the old id
        assert sources(fixed)[n] == sources(release)[n]
    assert sorted(g for g in _ids(fixed) if g) == sorted(g for g in _ids(release) if g)
    assert normalize(fixed, release, notebook=notebook)[1] == []  # idempotent


def test_renames_apply_only_where_the_release_has_the_new_id_and_not_the_old(tmp_path, monkeypatch):
    monkeypatch.setattr(grade_ids, "OLD_GRADE_IDS", {"wk/nb": {"a_1": "a"}, "wk/other": {"b_2": "b"}})
    assert renames("wk/nb", {"a", "b"}) == {"a_1": "a"}
    assert renames(None, {"a", "b"}) == {"a_1": "a", "b_2": "b"}  # no notebook named: every table
    assert renames("wk/nb", {"a", "a_1"}) == {}  # the release still (or again) has the old id
    assert renames("wk/nb", {"b"}) == {}
    # normalize_file names the notebook from the release path: <assignment>/<stem>
    rel = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [_test_cell("a", "pass")]}
    (tmp_path / "wk").mkdir()
    (tmp_path / "wk" / "nb.ipynb").write_text(json.dumps(rel))
    handin = tmp_path / "handin.ipynb"
    handin.write_text(json.dumps(_with_ids(rel, {"a": "a_1"})))
    assert normalize_file(handin, tmp_path / "wk" / "nb.ipynb") == ["renamed old grade id a_1 -> a"]
    assert _ids(json.loads(handin.read_text())) == ["a"]


@pytest.mark.slow
def test_an_old_id_hand_in_gets_its_points(tmp_path, monkeypatch, bwrap):
    """End to end (nbgrader + bubblewrap): a full-marks hand-in made from the release before its ids were
    renamed scores what the same hand-in with the new ids scores, and the review says what was renamed."""
    from nbgrader.api import Gradebook

    from autograder.course import Course, release
    from autograder.grade.autograde import autograde
    from autograder.samplekit.fixture import ASSIGNMENT, hand_in, make_course, solved

    course = Course.at(make_course(tmp_path / "course"))
    renamed = {"vec_even": "vec_values"}  # "even" would name the answer's property
    master = course.source / ASSIGNMENT / "02_vectors.ipynb"
    master.write_text(json.dumps(_with_ids(json.loads(master.read_text()), renamed), ensure_ascii=False))
    monkeypatch.setattr(grade_ids, "OLD_GRADE_IDS", {f"{ASSIGNMENT}/02_vectors": renamed})
    release(course, ASSIGNMENT)
    new = solved(course.root, "02_vectors")
    hand_in(course.root, "new_ids", {"02_vectors": new})
    hand_in(course.root, "old_ids", {"02_vectors": _with_ids(new, {n: o for o, n in renamed.items()})})
    results = {r.student: r for r in autograde(course, ASSIGNMENT, students=["new_ids", "old_ids"], jobs=1,
                                               quiet=True)}
    assert results["old_ids"].ok, results["old_ids"].error
    assert results["old_ids"].repairs["02_vectors"] == ["renamed old grade id vec_even -> vec_values"]
    with Gradebook(course.db_url) as gb:
        scores = {s: gb.find_grade("vec_values", "02_vectors", ASSIGNMENT, s).score for s in ("new_ids", "old_ids")}
    assert scores == {"new_ids": 2.0, "old_ids": 2.0}
