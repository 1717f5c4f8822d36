"""The real pipeline end to end (nbgrader + bubblewrap, no mocks) on generated sample hand-ins.

A tiny two-notebook assignment (autograder/samplekit/fixture.py) is released, the sample hand-ins are generated
from it by autograder/samplekit/make_samples.py (the same generator as the committed samples), collected,
graded in parallel and compared cell by cell with expected.csv; then what the hostile samples could
reach is checked: checksums of source/, release/ and every hand-in before/after, and the evidence the
snoop sample printed from inside its sandbox.
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.course import Course, read_notebook
from autograder.demo import run_all
from autograder.grade import autograde as grade_mod
from autograder.grade.autograde import GradeSettings
from autograder.reporting.feedback_build import build_feedback
from autograder.reporting.grade_table import write_grades_csv
from autograder.samplekit.attacks_sandbox import SNOOP
from autograder.samplekit.compare import compare_with_expected
from autograder.samplekit.fixture import ASSIGNMENT, make_course
from autograder.samplekit.make_samples import make_samples

ROOT = Path(__file__).resolve().parent.parent


def _tree_digest(*dirs: Path) -> dict[str, str]:
    out = {}
    for d in dirs:
        for p in sorted(Path(d).rglob("*")):
            if p.is_file():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _evidence(nb: dict) -> dict:
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            text = "".join(o.get("text", ""))
            for line in text.splitlines():
                if line.startswith("EVIDENCE "):
                    return json.loads(line[len("EVIDENCE "):])
    raise AssertionError("the snoop sample printed no evidence")


def test_refuses_without_bwrap(monkeypatch):
    monkeypatch.setattr(grade_mod, "bwrap_path", lambda: None)
    with pytest.raises(grade_mod.SandboxMissing):
        grade_mod.sandbox_mode(False)
    with pytest.warns(UserWarning, match="UNSANDBOXED"):
        assert grade_mod.sandbox_mode(True) == "none"


@pytest.mark.slow
def test_samples_graded_as_expected_and_contained(tmp_path, make_scratch_course, bwrap):
    course = make_scratch_course(tmp_path / "course", released=True)
    samples = make_samples(course, ASSIGNMENT, tmp_path / "samples")
    state = {}

    def before(demo: Course):
        state["digest"] = _tree_digest(demo.source, demo.release, demo.submitted)
        state["students"] = sorted(p.name for p in demo.submitted.iterdir())

    def after(demo: Course):
        problems = []
        if _tree_digest(demo.source, demo.release, demo.submitted) != state["digest"]:
            problems.append("source/, release/ or a hand-in changed during grading")
        ev = _evidence(read_notebook(demo.autograded / "snoop" / ASSIGNMENT / "01_counts.ipynb"))
        # the public gemm_lab package is readable by design (students install it); its sources may
        # name the nbgrader markers (gemm_lab/grading/audit parses them): not a leak
        ev["hidden_tests_seen"] = [p for p in ev["hidden_tests_seen"]
                                   if not ("/gemm_lab/" in p and p.endswith(".py"))]
        for key in ("read", "wrote", "net", "hidden_tests_seen"):
            if ev[key]:
                problems.append(f"snoop reached {key}: {ev[key]}")
        others = [s for s in state["students"] if s != "snoop"]
        for entry in ev["listed"]:
            listing = entry.split(": ", 1)[1]
            if any(f"'{w}'" in listing for w in ("source", "submitted", "gradebook.db", "release", *others)):
                problems.append(f"snoop listed {entry}")
        if any("nbgrader" in p or "pytest" in p for p in ev["procs"]):
            problems.append(f"snoop saw grader processes: {ev['procs']}")
        review = json.loads(demo.review_json.read_text())[ASSIGNMENT]
        if not any("CellTimeout" in i for i in review["infinite_loop"]["incidents"].get("01_counts", [])):
            problems.append("infinite_loop: no cell time-out recorded")
        for s in ("os_exit", "kernel_crash"):
            if not any("커널" in i for i in review[s]["incidents"].get("01_counts", [])):
                problems.append(f"{s}: kernel death not recorded")
        for s in ("tamper_checker", "tamper_compare"):
            # the grade is the grader's (the tampering earns nothing: compare_with_expected), and the attempt is
            # listed for the instructor
            if not review[s]["findings"].get("01_counts"):
                problems.append(f"{s}: the tampering was not listed for review")
        big = demo.autograded / "big_output" / ASSIGNMENT / "01_counts.ipynb"
        if big.stat().st_size > 4_000_000:
            problems.append(f"big_output: autograded notebook is {big.stat().st_size} bytes")
        # grades CSV: one row per student + max; a column per notebook, total, review
        rows = list(csv.reader(write_grades_csv(demo).open(encoding="utf-8")))
        if rows[0] != ["student_id", f"{ASSIGNMENT}/01_counts", f"{ASSIGNMENT}/02_vectors", "total", "review"]:
            problems.append(f"grades.csv header {rows[0]}")
        by_student = {r[0]: r for r in rows[1:]}
        if set(by_student) != set(state["students"]) | {"max"} or by_student["max"][3] != "9":
            problems.append(f"grades.csv rows {sorted(by_student)}")
        if by_student["full_marks"][3] != "8" or "findings (" not in by_student["tamper_compare"][4]:
            problems.append(f"grades.csv content {by_student['full_marks']} {by_student['tamper_compare']}")
        build_feedback(demo, ASSIGNMENT)
        html = demo.feedback / "full_marks" / ASSIGNMENT / "01_counts.html"
        if not html.exists() or "tiles" not in html.read_text(encoding="utf-8"):
            problems.append("no HTML feedback for full_marks")
        elif "HIDDEN TESTS" in html.read_text(encoding="utf-8") or "tiles (hidden)" in html.read_text(encoding="utf-8"):
            problems.append("the feedback shows the hidden tests")
        problems += _feedback_leaks(demo)
        # merging twice (a re-run) must not change the result
        problems += compare_with_expected(demo, ASSIGNMENT, samples)
        return problems

    t0 = time.monotonic()
    bad = run_all([ASSIGNMENT], repo=course, samples={ASSIGNMENT: samples}, hooks={"before_grading": before,
                  "after_grading": after}, settings=GradeSettings(cell_timeout=30, notebook_timeout=180, jobs=2))
    print(f"end-to-end: {time.monotonic() - t0:.0f}s")
    assert bad == {ASSIGNMENT: []}


def _feedback_leaks(demo: Course) -> list[str]:
    """Every feedback page of every sample: no hidden-test source line, no instructor path, nothing active."""
    from test_feedback_safety import active

    from autograder.grade.safe_feedback import hidden_lines

    secret = set()
    for master in (demo.source / ASSIGNMENT).glob("*.ipynb"):
        secret |= hidden_lines(read_notebook(master))
    assert secret, "the fixture has hidden tests"
    paths = [str(ROOT), str(demo.root), sys.prefix, "/tmp/glrt-"]
    pages = sorted(demo.feedback.glob(f"*/{ASSIGNMENT}/*.html"))
    problems = [] if len(pages) >= len(list(demo.submitted.iterdir())) else [f"only {len(pages)} feedback pages"]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        found = [s for s in secret if s in text] + [p for p in paths if p in text] + active(text)
        if found:
            problems.append(f"feedback {page.relative_to(demo.feedback)} shows {found[:3]}")
    return problems


@pytest.mark.slow
def test_snoop_probe_does_find_things_when_not_sandboxed(tmp_path):
    """The containment test above is not vacuous: unsandboxed, the same probe reaches the course."""
    course = Course.at(make_course(tmp_path / "course"))
    (course.root / "autograder").mkdir()
    (course.gradebook).write_bytes(b"SQLite format 3\0")
    cwd = course.root / "autograder" / "autograded" / "x" / ASSIGNMENT
    cwd.mkdir(parents=True)
    out = subprocess.run([sys.executable, "-c", SNOOP], cwd=cwd, capture_output=True, text=True, timeout=300)
    line = next(x for x in out.stdout.splitlines() if x.startswith("EVIDENCE "))
    ev = json.loads(line[len("EVIDENCE "):])
    assert str(course.gradebook) in ev["read"] and str(course.gradebook) in ev["wrote"]
    assert any(entry.startswith(str(course.source)) for entry in ev["listed"])


COMMITTED = sorted(p.parent.name for p in (ROOT / "autograder" / "samples").glob("*/expected.csv"))


def test_every_assignment_has_committed_samples_and_the_demo_grades_them():
    """The sample hand-ins include week 6; `make demo` (no arguments) grades every sampled assignment."""
    from autograder.demo import sampled_assignments

    assert {"week06", "week07"} <= set(COMMITTED)
    assert sampled_assignments(Course.at(ROOT)) == [a for a in COMMITTED if (ROOT / "source" / a).is_dir()]


def _committed_options(folder: Path) -> dict:
    """The make_samples options the committed folder was written with."""
    return json.loads((folder / "options.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("assignment", COMMITTED)
def test_committed_samples_are_current(assignment, tmp_path):
    """The committed expected.csv (points per graded cell, derived from the master) and review flags are what
    the generator writes from today's source/: a notebook change that moves points or grade ids without
    regenerating the samples fails here in a second (the slow test below then checks the actual grading).
    The expected scores depend only on the cells' nbgrader metadata and order, which a release keeps, so the
    masters stand in for the release here (no nbgrader run)."""
    from autograder.samplekit.expected import read_expected
    from autograder.samplekit.make_samples import write_samples
    from autograder.samplekit.model import Notebook

    if not (ROOT / "source" / assignment).is_dir():
        pytest.skip(f"no source/{assignment}")
    folder = ROOT / "autograder" / "samples" / assignment
    opts = _committed_options(folder)
    masters = sorted((ROOT / "source" / assignment).glob("*.ipynb"))
    nbs = [Notebook.load(ROOT, f"{assignment}/{p.stem}", release="source") for p in masters]
    fresh = write_samples(nbs, tmp_path / "s", **opts)
    want_exp, want_review = read_expected(fresh)
    got_exp, got_review = read_expected(folder)
    assert got_exp == want_exp, (
        f"autograder/samples/{assignment} is stale: python -m autograder.samplekit.make_samples {assignment} --from-source")
    assert got_review == want_review
    with (fresh / "expected.csv").open(encoding="utf-8") as f:
        max_points = {(r["student"], r["notebook"], r["grade_id"]): r["max_points"] for r in csv.DictReader(f)}
    with (folder / "expected.csv").open(encoding="utf-8") as f:
        assert {(r["student"], r["notebook"], r["grade_id"]): r["max_points"] for r in csv.DictReader(f)} == max_points
    # every hand-in the expected scores speak of is there, and nothing else
    handed_in = {(p.parent.name, p.stem) for p in folder.glob("*/*.ipynb")}
    assert handed_in == {(s, nb) for (s, nb, _) in got_exp}


@pytest.mark.slow
@pytest.mark.parametrize("assignment", COMMITTED)
def test_committed_samples_score_as_expected(assignment, tmp_path, bwrap):
    """`make demo`: the committed samples, graded from the current source/, score what expected.csv says.

    Fails when the notebooks changed and the samples were not regenerated
    (the command test_committed_samples_are_current prints).
    """
    if not (ROOT / "source" / assignment).is_dir():
        pytest.skip(f"no source/{assignment}")
    import io

    from autograder.samplekit.expected import read_expected

    printed = io.StringIO()
    bad = run_all([assignment], repo=Course.at(ROOT), settings=GradeSettings(cell_timeout=60, notebook_timeout=600,
                                                                             jobs=2), out=printed)
    assert bad == {assignment: []}, printed.getvalue()
    table = printed.getvalue().split("\n\n", 1)[1]
    rows = {line.split()[0]: line.split() for line in table.splitlines()[3:]}
    assert set(rows) == {s for (s, _, _) in read_expected(ROOT / "autograder" / "samples" / assignment)[0]} | {"max"}


@pytest.mark.slow
def test_notebook_time_limit_stops_the_rest(tmp_path, make_scratch_course, bwrap):
    """With a notebook limit shorter than the cell limit, the looping cell is cut at the notebook limit
    and every later cell is not run (its tests score zero), while the other notebook is still graded."""
    from autograder.collect.handins import collect
    from autograder.grade.autograde import autograde

    course = make_scratch_course(tmp_path / "course", released=True)
    samples = make_samples(course, ASSIGNMENT, tmp_path / "samples")
    drop = tmp_path / "drop"
    drop.mkdir()
    for student in ("infinite_loop", "full_marks"):
        shutil.copytree(samples / student, drop / student)  # collect never follows a folder link
    collect(course, ASSIGNMENT, drop)
    t0 = time.monotonic()
    results = {r.student: r for r in autograde(course, ASSIGNMENT, cell_timeout=120, notebook_timeout=15)}
    assert time.monotonic() - t0 < 110
    assert results["infinite_loop"].ok
    assert any("노트북 전체" in i for i in results["infinite_loop"].incidents["01_counts"])
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:
        loop = gb.find_submission(ASSIGNMENT, "infinite_loop")
        full = gb.find_submission(ASSIGNMENT, "full_marks")
        assert [n.score for n in sorted(loop.notebooks, key=lambda n: n.name)] == [0.0, 0.0]
        assert [n.score for n in sorted(full.notebooks, key=lambda n: n.name)] == [6.0, 2.0]
