"""The instructor's LMS round trip: downloads in the naming of each LMS collect into the right students,
and the gradebook exports parse back into the LMS identifiers they came from.

No nbgrader run: the fixture course is not released (collect matches against source/), and the gradebook
is filled through nbgrader's API the way autograde leaves it.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path

import pytest

from autograder.collect import handins as col
from autograder.collect.names import sanitize_student_id
from autograder.collect.roster import load_roster
from autograder.course import Course
from autograder.reporting.gradebook_export import export, read_gradebook
from autograder.samplekit.fixture import ASSIGNMENT, make_course

ROOT = Path(__file__).resolve().parent.parent

NB1, NB2 = "01_counts", "02_vectors"  # the `course` fixture (scratch course, not released): conftest.py
KIM, LEE, PARK = "김민수", "Dave Lee", "박 지우"


def _text(course: Course, name: str, marker: str) -> str:
    nb = json.loads((course.source / ASSIGNMENT / f"{name}.ipynb").read_text())
    nb["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": marker})
    return json.dumps(nb)


def _zip(path: Path, members: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(zipfile.ZipInfo(name, (2026, 12, 1, 10, 0, 0)), text)
    return path


def _marker(course: Course, student: str, nb: str) -> str:
    data = json.loads((course.submitted / student / ASSIGNMENT / f"{nb}.ipynb").read_text(encoding="utf-8"))
    return data["cells"][0]["source"]


def _by_name(course: Course) -> dict[str, str]:
    """raw name -> student id, from the roster collect wrote."""
    return {e["name"]: sid for sid, e in load_roster(course).items()}


def _check_three(course, report, names=(KIM, LEE, PARK), ids=None):
    ids = ids or _by_name(course)
    assert set(report.collected) == {ids[n] for n in names}, report.summary()
    for n in names:
        assert sorted(report.collected[ids[n]]) == [NB1, NB2]
        assert _marker(course, ids[n], NB1) == f"{n} 1" and _marker(course, ids[n], NB2) == f"{n} 2"
    return ids


# ---------------------------------------------------------------------------------------- Canvas

def test_canvas_download(course, tmp_path):
    up = {}
    for n, uid in ((KIM, 10234), (LEE, 10235), (PARK, 10236)):
        canvas = n.lower().replace(" ", "")  # Canvas: the sortable name, lower case, no spaces
        up[f"{canvas}_{uid}_{uid}01_{NB1}.ipynb"] = _text(course, NB1, f"{n} 1")
        up[f"{canvas}_{uid}_{uid}02_Copy of {NB2}.ipynb"] = _text(course, NB2, f"{n} 2")
    up[f"davelee_late_10235_1023503_{NB1}-1.ipynb"] = _text(course, NB1, f"{LEE} 1")  # re-upload, late
    up[f"davelee_10235_1023500_{NB1}.ipynb"] = _text(course, NB1, "older")  # same time, lower submission id
    report = col.collect(course, ASSIGNMENT, _zip(tmp_path / "submissions.zip", up))
    roster = load_roster(course)
    by_uid = {e["ids"]["canvas"]: sid for sid, e in roster.items()}
    ids = _check_three(course, report, ids={KIM: by_uid["10234"], LEE: by_uid["10235"], PARK: by_uid["10236"]})
    assert "Canvas: 8" in report.summary()
    assert roster[ids[LEE]]["ids"] == {"canvas": "10235"}
    assert any("late" in n for n in report.notes[ids[LEE]])
    assert len(report.dropped) == 2 and not report.skipped


# ---------------------------------------------------------------------------------------- Moodle

def test_moodle_folders_flat_onlinetext_and_nfd(course, tmp_path):
    up = {}
    for n, pid in ((KIM, 501), (LEE, 502)):
        up[f"{n}_{pid}_assignsubmission_file_/{NB1}.ipynb"] = _text(course, NB1, f"{n} 1")
        up[f"{n}_{pid}_assignsubmission_file_/sub/Copy of {NB2}.ipynb"] = _text(course, NB2, f"{n} 2")
    up[f"{LEE}_502_assignsubmission_onlinetext_onlinetext.html"] = "<p>text</p>"
    # the flat layout ("Download submissions in folders" off), from a macOS zip: NFD Hangul
    nfd = unicodedata.normalize("NFD", PARK)
    up[f"{nfd}_503_assignsubmission_file_{NB1}.ipynb"] = _text(course, NB1, f"{PARK} 1")
    up[f"{PARK}_503_assignsubmission_file_{NB2}.ipynb"] = _text(course, NB2, f"{PARK} 2")
    up[f"{PARK}_503_assignsubmission_onlinetext_onlinetext.ipynb"] = _text(course, NB1, "online text")
    report = col.collect(course, ASSIGNMENT, _zip(tmp_path / "moodle.zip", up))
    ids = _check_three(course, report)
    assert load_roster(course)[ids[PARK]]["moodle"] == {ASSIGNMENT: "503"}
    assert ids[KIM] == sanitize_student_id(KIM)  # the Hangul name is the id's source, not dropped
    reasons = dict(report.skipped)
    assert any("onlinetext submission" in r for r in reasons.values())


def test_moodle_namesakes_stay_two_students(course, tmp_path):
    up = {f"{KIM}_501_assignsubmission_file_{NB1}.ipynb": _text(course, NB1, "a"),
          f"{KIM}_777_assignsubmission_file_{NB1}.ipynb": _text(course, NB1, "b")}
    report = col.collect(course, ASSIGNMENT, _zip(tmp_path / "m.zip", up))
    assert len(report.collected) == 2 and not report.dropped
    assert sorted(_marker(course, s, NB1) for s in report.collected) == ["a", "b"]


# ------------------------------------------------------------------------------ Google Classroom / Drive

def test_drive_zip_with_spaces_in_its_name(course, tmp_path):
    up = {}
    for n in (KIM, LEE, PARK):
        up[f"Week 7/{n} - {NB1}.ipynb"] = _text(course, NB1, f"{n} 1")
        up[f"Week 7/{n} - {NB2} (1).ipynb"] = _text(course, NB2, f"{n} 2")
    z = _zip(tmp_path / "Week 7-20261201T010203Z-001.zip", up)
    r = _make_collect(course, f"FROM={z}", f"ASSIGNMENT={ASSIGNMENT}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "collected 6 notebooks of 3 students" in r.stdout and "Google Classroom/Drive: 6" in r.stdout
    assert "dropped" not in r.stdout


def test_drive_per_student_folders_and_a_zipped_folder_of_student_notebooks(course, tmp_path):
    up = {f"Week 7/{n}/{nb}.ipynb": _text(course, nb, f"{n} {i}") for n in (KIM, LEE, PARK)
          for i, nb in ((1, NB1), (2, NB2))}
    _check_three(course, col.collect(course, ASSIGNMENT, _zip(tmp_path / "folders.zip", up)))
    # one-notebook assignment: a zipped folder of <student>.ipynb (the README's own format)
    root = make_course(tmp_path / "one")
    (root / "source" / ASSIGNMENT / f"{NB2}.ipynb").unlink()
    one = Course.at(root)
    up = {f"hand-ins/{n}.ipynb": _text(one, NB1, n) for n in (KIM, LEE, PARK)}
    report = col.collect(one, ASSIGNMENT, _zip(tmp_path / "one.zip", up))
    assert sorted(report.collected) == sorted(sanitize_student_id(n) for n in (KIM, LEE, PARK))
    assert not report.dropped


class _LegacyName(zipfile.ZipInfo):
    """A member name stored as Windows Explorer (CP949) or Drive (UTF-8) store it: without the UTF-8 flag."""

    codec = "cp949"

    def _encodeFilenameFlags(self):  # noqa: N802 (zipfile's own hook)
        return self.filename.encode(self.codec), self.flag_bits & ~0x800


def test_cp949_and_unflagged_utf8_member_names(course, tmp_path):
    z = tmp_path / "windows.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for n, codec in ((KIM, "cp949"), (PARK, "utf-8")):
            for i, nb in ((1, NB1), (2, NB2)):
                info = _LegacyName(f"{n}__{nb}.ipynb", (2026, 12, 1, 10, 0, 0))
                info.codec = codec
                zf.writestr(info, _text(course, nb, f"{n} {i}"))
    with zipfile.ZipFile(z) as zf:
        assert not any(i.flag_bits & 0x800 for i in zf.infolist())
        assert f"{KIM}__{NB1}.ipynb" not in zf.namelist()  # Python alone reads them as CP437
    report = col.collect(course, ASSIGNMENT, z)
    _check_three(course, report, names=(KIM, PARK))


# ---------------------------------------------------------------------------------------- Blackboard

def test_blackboard_title_with_underscores_receipts_and_malformed_time(course, tmp_path):
    t = "2026-12-01-10-00-00"
    up = {f"Week_7_kim_cs_attempt_{t}.txt": f"Name: {KIM} (kim_cs)\nAssignment: Week_7\n",
          f"Week_7_kim_cs_attempt_{t}_{NB1}.ipynb": _text(course, NB1, f"{KIM} 1"),
          f"Week_7_kim_cs_attempt_{t}_{NB2}.ipynb": _text(course, NB2, f"{KIM} 2"),
          f"Week_7_lee_attempt_{t}_{NB1}.ipynb": _text(course, NB1, f"{LEE} 1"),
          f"Week_7_lee_attempt_{t}_{NB2}.ipynb": _text(course, NB2, f"{LEE} 2"),
          f"Week_7_park_attempt_2026-13-99_{NB1}.ipynb": _text(course, NB1, "bad time")}
    report = col.collect(course, ASSIGNMENT, _zip(tmp_path / "gradebook_Week_7.zip", up))
    assert sorted(report.collected) == ["kim_cs", "lee"]
    assert _marker(course, "kim_cs", NB2) == f"{KIM} 2"
    roster = load_roster(course)
    assert roster["kim_cs"] == {"name": KIM, "ids": {"blackboard": "kim_cs"}, "moodle": {}}
    why = {w.rsplit(":", 1)[-1]: r for w, r in report.skipped}
    assert "malformed time" in why[f"Week_7_park_attempt_2026-13-99_{NB1}.ipynb"]
    assert not any(s.startswith("park") for s in report.collected)


# ---------------------------------------------------------------------------------------- Gradescope, nbgrader, PATTERN

def test_gradescope_export(course, tmp_path):
    meta = ""
    up = {}
    for k, (n, sid) in enumerate(((KIM, "2024001"), (LEE, "2024002"), (PARK, "2024003"))):
        meta += f"submission_{900 + k}:\n  :submitters:\n  - :name: {n}\n    :sid: '{sid}'\n    :email: s{k}@x.kr\n"
        up[f"assignment_77_export/submission_{900 + k}/{NB1}.ipynb"] = _text(course, NB1, f"{n} 1")
        up[f"assignment_77_export/submission_{900 + k}/{NB2}.ipynb"] = _text(course, NB2, f"{n} 2")
    up["assignment_77_export/submission_metadata.yml"] = meta
    ids = _check_three(course, col.collect(course, ASSIGNMENT, _zip(tmp_path / "gs.zip", up)))
    assert load_roster(course)[ids[LEE]]["ids"] == {"gradescope": "2024002"}


def test_nbgrader_submitted_and_exchange_layouts(course, tmp_path):
    up = {f"submitted/{n}/{ASSIGNMENT}/{nb}.ipynb": _text(course, nb, f"{n} {i}") for n in (KIM, LEE, PARK)
          for i, nb in ((1, NB1), (2, NB2))}
    _check_three(course, col.collect(course, ASSIGNMENT, _zip(tmp_path / "submitted.zip", up)))
    ex = {f"inbound/{n}+{ASSIGNMENT}+2026-12-01 10:00:00.000000 UTC+abc/{nb}.ipynb": _text(course, nb, f"{n} {i}")
          for n in ("alice", "bob") for i, nb in ((1, NB1), (2, NB2))}
    ex[f"inbound/eve+week99+2026-12-01 10:00:00.000000 UTC/{NB1}.ipynb"] = _text(course, NB1, "other")
    report = col.collect(course, ASSIGNMENT, _zip(tmp_path / "exchange.zip", ex))
    assert sorted(report.collected) == ["alice", "bob"]
    assert any("exchange hand-in of week99" in r for _, r in report.skipped)


def test_pattern_for_anything_else(course, tmp_path):
    up = {f"hw1/2024001-{n}/nb{i}.ipynb": _text(course, nb, f"{n} {i}") for n in (KIM, LEE, PARK)
          for i, nb in ((1, NB1), (2, NB2))}
    z = _zip(tmp_path / "custom.zip", up)
    report = col.collect(course, ASSIGNMENT, z, pattern=r"\d+-(?P<student>[^/]+)/")
    _check_three(course, report)
    with pytest.raises(ValueError, match="PATTERN: needs a named group"):
        col.collect(course, ASSIGNMENT, z, pattern=r"(\w+)/")
    with pytest.raises(ValueError, match="PATTERN: not a regular expression"):
        col.collect(course, ASSIGNMENT, z, pattern=r"(?P<student>[")


def test_different_people_under_one_student_is_an_error(course, tmp_path):
    drop = tmp_path / "drop" / "course"
    for name in (NB1, "alice_final", "bob_v2"):  # a notebook name beside student names: ambiguous
        (drop / f"{name}.ipynb").parent.mkdir(parents=True, exist_ok=True)
        (drop / f"{name}.ipynb").write_text(_text(course, NB1, name))
    with pytest.raises(col.CollectError, match="different people"):
        col.collect(course, ASSIGNMENT, tmp_path / "drop")
    assert not course.submitted.exists()


# ---------------------------------------------------------------------------------------- bad use

def _make_collect(course, *variables):
    """The Makefile's own collect line (make -n: no set-up run), executed by the shell as make would."""
    dry = subprocess.run(["make", "-n", "-s", "--no-print-directory", "collect", *variables], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    (line,) = [x for x in dry.stdout.splitlines() if "-m autograder collect" in x]
    env = dict(os.environ, GEMM_LAB_COURSE_ROOT=str(course.root))
    return subprocess.run(["bash", "-c", line.replace(".venv/bin/python", sys.executable, 1)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def _cli(course, *args, env=None):
    e = dict(os.environ, GEMM_LAB_COURSE_ROOT=str(course.root), **(env or {}))
    return subprocess.run([sys.executable, "-m", "autograder", "collect", *args], cwd=ROOT, env=e,
                          capture_output=True, text=True, timeout=120)


def test_collect_bad_use_is_one_line(course, tmp_path):
    for args, want in (((), "FROM is missing"), ((str(tmp_path / "nope.zip"),), "no such file or folder"),
                       (("week99", str(tmp_path)), "ASSIGNMENT=week99 is not an assignment"),
                       ((str(tmp_path), "--pattern"), "argument --pattern: expected one argument")):
        r = _cli(course, *args)
        assert r.returncode == 2 and want in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
    r = _cli(course, ASSIGNMENT, str(tmp_path), env={"PATTERN": "(x"})
    assert r.returncode == 2 and "PATTERN: not a regular expression" in r.stderr
    r = _make_collect(course)
    assert r.returncode == 2 and "FROM" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not course.submitted.exists()  # the bundled samples were not collected


def test_release_autograde_demo_of_an_unknown_assignment_is_one_line(course, capsys):
    from autograder.__main__ import main

    for argv in (["release", "week99"], ["autograde", "week99"], [ASSIGNMENT, "week99"]):
        argv = ["--course-root", str(course.root), *(argv if argv[0] in ("release", "autograde")
                                                     else ["autograde", *argv])]
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "ASSIGNMENT=week99 is not an assignment of source/" in err, err
        assert ASSIGNMENT in err  # names the known ones
    assert main(["--course-root", str(course.root), "demo", "week99"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "week99 has no sample hand-ins" in err and "make_samples week99" in err
    assert not course.release.exists() and not course.gradebook.exists()  # nothing done


# ---------------------------------------------------------------------------------------- exports

def _gradebook(course: Course, students: list[str]) -> None:
    """What autograde leaves: NB1 has a 5-point test cell and a 2-point written answer nobody graded yet."""
    from nbgrader.api import Gradebook, GradeCell, Notebook

    with Gradebook(course.db_url, "gemm-lab") as gb:
        a = gb.update_or_create_assignment(ASSIGNMENT)
        nb1 = Notebook(name=NB1, assignment=a)
        gb.db.add(GradeCell(name="t1", notebook=nb1, max_score=5, cell_type="code"))
        gb.db.add(GradeCell(name="explain", notebook=nb1, max_score=2, cell_type="markdown"))
        gb.db.add(GradeCell(name="t2", notebook=Notebook(name=NB2, assignment=a), max_score=4, cell_type="code"))
        gb.db.commit()
        for k, s in enumerate(students):
            gb.update_or_create_student(s)
            gb.add_submission(ASSIGNMENT, s)
            for gid, nb, pts in (("t1", NB1, 5 - k), ("t2", NB2, 4)):
                g = gb.find_grade(gid, nb, ASSIGNMENT, s)
                g.auto_score, g.needs_manual_grade = pts, False
            gb.db.commit()


@pytest.fixture
def graded(course, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    up = {f"{n.lower().replace(' ', '')}_{uid}_{uid}1_{nb}.ipynb": _text(course, nb, n)
          for n, uid in ((KIM, 10234), (LEE, 10235)) for nb in (NB1, NB2)}
    col.collect(course, ASSIGNMENT, _zip(tmp_path / "canvas.zip", up))
    up = {f"{n}_{pid}_assignsubmission_file_/{nb}.ipynb": _text(course, nb, n)
          for n, pid in ((KIM, 501), (LEE, 502)) for nb in (NB1, NB2)}
    course2 = course  # the same class downloaded from Moodle and Blackboard too: one roster, several ids
    col.collect(course2, ASSIGNMENT, _zip(tmp_path / "moodle.zip", up))
    ids = sorted(load_roster(course))
    _gradebook(course, ids)
    return course


@pytest.mark.filterwarnings("ignore:.*not in session")
def test_exports_parse_back_into_lms_ids(graded, tmp_path):
    course = graded
    roster = load_roster(course)
    grades = read_gradebook(course)
    assert [ag.max_score for ag in grades] == [11.0]
    (canvas, pending_file), msgs = export(course, "canvas", tmp_path / "out")
    rows = list(csv.DictReader(canvas.open(encoding="utf-8")))
    assert rows[0]["Student"].strip() == "Points Possible" and rows[0][ASSIGNMENT] == "11"
    by_id = {r["ID"]: r for r in rows[1:] if r["ID"]}
    order = sorted(roster)  # _gradebook gives the k-th student 5 - k + 4 points

    def want(uid):
        return str(9 - order.index(next(s for s, e in roster.items() if e["ids"].get("canvas") == uid)))

    assert by_id["10234"]["Student"] == "김민수" and by_id["10234"][ASSIGNMENT] == want("10234")
    assert by_id["10235"][ASSIGNMENT] == want("10235")
    assert list(rows[0]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ASSIGNMENT]
    assert any("no Canvas user id" in m for m in msgs)  # the Moodle-collected students
    assert any("in the import preview map demo01" in m and "FROM=" in m for m in msgs)
    pending = list(csv.DictReader(pending_file.open(encoding="utf-8")))
    assert {r["canvas id"] for r in pending} >= {"10234", "10235"} and {r["pending points"] for r in pending} == {"2"}
    paths, msgs = export(course, "moodle", tmp_path / "out")
    rows = list(csv.DictReader(paths[0].open(encoding="utf-8")))
    got = {r["Identifier"]: r for r in rows}
    assert set(got) == {"Participant 501", "Participant 502"}
    assert got["Participant 501"]["Full name"] == "김민수" and got["Participant 501"]["Maximum Grade"] == "11"
    # the three columns Moodle's importer requires (importgradeslib.php, init()), no comment, no pending column
    assert list(rows[0]) == ["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)"]
    assert paths[-1].name == "grades_moodle_pending.csv" and any("site's language" in m for m in msgs)
    (plain,), _ = export(course, "csv", tmp_path / "out")
    rows = list(csv.DictReader(plain.open(encoding="utf-8")))
    assert all(r["student_id"] != "max" for r in rows) and len(rows) == len(roster)
    assert {r[f"{ASSIGNMENT} pending manual grading"] for r in rows} == {"2"}
    with pytest.raises(ValueError, match="LMS="):
        export(course, "sakai", tmp_path / "out")


@pytest.mark.filterwarnings("ignore:.*not in session")
def test_make_grades_reads_the_gradebook_once(graded, tmp_path, monkeypatch, capsys):
    """make grades reads the grades once and hands them to every writer; the files are those each writer
    writes when it reads the gradebook itself."""
    from autograder.reporting import grade_table, gradebook_export, gradebook_fill, grades

    course, reads = graded, []

    def counted(*args, **kw):
        reads.append(args)
        return read_gradebook(*args, **kw)

    for module in (gradebook_export, gradebook_fill, grade_table, grades):
        monkeypatch.setattr(module, "read_gradebook", counted)
    for lms in ("canvas", "moodle", "csv"):
        reads.clear()
        out = tmp_path / lms
        assert grades.write_grades(course, lms=lms, out=str(out / "grades.csv"), export_dir=str(out)) == 0
        assert len(reads) == 1, (lms, reads)
        again = export(course, lms, tmp_path / f"{lms}-alone", grade_table.review_flags(course))[0]
        assert [p.read_text(encoding="utf-8") for p in again] == \
            [(out / p.name).read_text(encoding="utf-8") for p in again]
        assert (out / "grades.csv").read_text(encoding="utf-8") == \
            grade_table.write_grades_csv(course, tmp_path / "alone.csv").read_text(encoding="utf-8")
    assert grade_table.grade_table(course) in capsys.readouterr().out


@pytest.mark.filterwarnings("ignore:.*not in session")
def test_blackboard_export_and_grades_cli(course, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env = dict(os.environ, GEMM_LAB_COURSE_ROOT=str(course.root))
    grades = [sys.executable, "-m", "autograder", "grades"]
    r = subprocess.run(grades, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "nothing graded yet" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run(grades + ["--lms", "sakai"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "LMS=sakai" in r.stderr and "Traceback" not in r.stderr
    t = "2026-12-01-10-00-00"
    up = {f"Week 7_{u}_attempt_{t}_{nb}.ipynb": _text(course, nb, u) for u in ("kim_cs", "lee") for nb in (NB1, NB2)}
    col.collect(course, ASSIGNMENT, _zip(tmp_path / "bb.zip", up))
    _gradebook(course, ["kim_cs", "lee"])
    r = subprocess.run(grades + ["--lms", "blackboard", "--export-dir", str(tmp_path / "out")], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "await manual grading" in r.stderr and "formgrader" in r.stderr and "Column ID" in r.stderr
    text = (tmp_path / "out" / "grades_blackboard.csv").read_text(encoding="utf-8")
    assert text.splitlines()[0] == f'"Last Name","First Name","Username","Student ID","{ASSIGNMENT} [Total Pts: 11 Score]"'
    rows = {r["Username"]: r for r in csv.DictReader(text.splitlines())}
    assert rows["kim_cs"][f"{ASSIGNMENT} [Total Pts: 11 Score]"] == "9"
    assert rows["lee"][f"{ASSIGNMENT} [Total Pts: 11 Score]"] == "8"
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url, "gemm-lab") as gb:  # formgrader shows names, not "None, None"
        assert gb.find_student("kim_cs").last_name == "kim_cs"


def test_feedback_with_nothing_autograded_says_what_to_run(course):
    env = dict(os.environ, GEMM_LAB_COURSE_ROOT=str(course.root))
    r = subprocess.run([sys.executable, "-m", "autograder", "feedback"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1 and "make autograde" in r.stderr and "Traceback" not in r.stderr
