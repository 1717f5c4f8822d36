"""make grades LMS=... FROM=<the LMS's own grade file>: each LMS's own export (3 students) is filled and parsed
back the way that LMS's importer reads it (the rules quoted from its source), every student's score in the
right row and column, every other cell, the headers and the file's form as they came.

No nbgrader run: the students are collected from each LMS's own download (so the roster holds that LMS's ids),
and the gradebook is filled through nbgrader's API the way autograde and formgrader leave it.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.collect import handins as col
from autograder.collect.roster import load_roster
from autograder.reporting.gradebook_fill import fill
from autograder.samplekit.fixture import ASSIGNMENT

ROOT = Path(__file__).resolve().parent.parent
NB1, NB2 = "01_counts", "02_vectors"
# (name as the LMS shows it, Canvas user id, Canvas attachment id, Moodle participant id, Blackboard username)
CLASS = [("김민수", 10234, 880001, 501, "kim_ms"), ("Dave Lee", 10235, 880002, 502, "dlee"),
         ("박 지우", 10236, 880003, 503, "park.jw")]
# the gradebook: t1 (5 points) + t2 (4 points) autograded, "explain" (2 points) written, graded by a person
# for the first two students and still awaiting one for the third
AUTO = [(5, 4), (4, 3), (3, 2)]
MANUAL = [2, 1, None]
WANT = ["11", "8", "5"]  # points graded so far; the third student's 2 pending points are not in it

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")


@pytest.fixture(autouse=True)
def _venv_on_path(monkeypatch):  # nbgrader's gradebook upgrade calls alembic by name
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def _text(course, nb: str, marker: str) -> str:
    data = json.loads((course.source / ASSIGNMENT / f"{nb}.ipynb").read_text(encoding="utf-8"))
    data["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": marker})
    return json.dumps(data)


def _collect(course, tmp_path, lms: str) -> list[str]:
    """Collect the class from ``lms``'s own download; the student ids, in CLASS order."""
    up = {}
    for name, uid, aid, pid, user in CLASS:
        for j, nb in enumerate((NB1, NB2)):
            if lms == "canvas":
                up[f"{name.lower().replace(' ', '')}_{uid}_{aid + j}_{nb}.ipynb"] = _text(course, nb, name)
            elif lms == "moodle":
                up[f"{name}_{pid}_assignsubmission_file_/{nb}.ipynb"] = _text(course, nb, name)
            else:
                up[f"Week 7_{user}_attempt_2026-12-01-10-00-00_{nb}.ipynb"] = _text(course, nb, name)
    z = tmp_path / f"{lms}.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for member, text in up.items():
            zf.writestr(member, text)
    col.collect(course, ASSIGNMENT, z)
    roster = load_roster(course)
    key = {"canvas": lambda e: e["ids"].get("canvas"), "moodle": lambda e: e["moodle"].get(ASSIGNMENT),
           "blackboard": lambda e: e["ids"].get("blackboard")}[lms]
    by_id = {str(key(e)): sid for sid, e in roster.items() if key(e)}
    ids = [str({"canvas": c[1], "moodle": c[3], "blackboard": c[4]}[lms]) for c in CLASS]
    return [by_id[i] for i in ids]


_EMPTY: list[Path] = []  # one new gradebook per session (nbgrader creates it through alembic: seconds)


def _gradebook(course, students: list[str]) -> None:
    import shutil

    from nbgrader.api import Gradebook, GradeCell, Notebook, SolutionCell

    if not _EMPTY:
        import tempfile

        _EMPTY.append(Path(tempfile.mkdtemp(prefix="lms-gradebook-")) / "gradebook.db")
        with Gradebook(f"sqlite:///{_EMPTY[0]}", "gemm-lab"):
            pass
    course.gradebook.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(_EMPTY[0], course.gradebook)
    with Gradebook(course.db_url, "gemm-lab") as gb:
        a = gb.update_or_create_assignment(ASSIGNMENT)
        nb1 = Notebook(name=NB1, assignment=a)
        gb.db.add(GradeCell(name="t1", notebook=nb1, max_score=5, cell_type="code"))
        gb.db.add(GradeCell(name="explain", notebook=nb1, max_score=2, cell_type="markdown"))
        gb.db.add(SolutionCell(name="explain", notebook=nb1))
        gb.db.add(GradeCell(name="t2", notebook=Notebook(name=NB2, assignment=a), max_score=4, cell_type="code"))
        gb.db.commit()
        for k, s in enumerate(students):
            gb.update_or_create_student(s)
            gb.add_submission(ASSIGNMENT, s)
            for gid, nb, pts in (("t1", NB1, AUTO[k][0]), ("t2", NB2, AUTO[k][1])):
                g = gb.find_grade(gid, nb, ASSIGNMENT, s)
                g.auto_score, g.needs_manual_grade = pts, False
            g = gb.find_grade("explain", NB1, ASSIGNMENT, s)
            g.auto_score, g.manual_score, g.needs_manual_grade = None, MANUAL[k], MANUAL[k] is None
            gb.db.commit()


@pytest.fixture(params=["canvas", "moodle", "blackboard"])
def graded(request, course, tmp_path):
    students = _collect(course, tmp_path, request.param)
    _gradebook(course, students)
    return request.param, course, students


def _unchanged_except(before: list[list[str]], after: list[list[str]], cells: set) -> None:
    assert len(before) == len(after)
    for r, (b, a) in enumerate(zip(before, after, strict=True)):
        for c in range(max(len(b), len(a))):
            if (r, c) not in cells:
                assert (b[c] if c < len(b) else "") == (a[c] if c < len(a) else ""), (r, c)


# -------------------------------------------------------------------------------------------------- Canvas
CANVAS_EXPORT = [
    ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Week 6: Triton basics (7001)", "Demo 01 (7002)",
     "Current Points", "Final Points", "Current Score", "Unposted Current Score", "Final Score",
     "Unposted Final Score"],
    ["    Points Possible", "", "", "", "", "10.00", "11.00", "(read only)", "(read only)", "(read only)",
     "(read only)", "(read only)", "(read only)"],
    ["Student, Test", "99999", "", "", "GEMM Lab", "", "", "0.00", "0.00", "", "", "0.00", "0.00"],
    ["김민수", "10234", "2026001", "kim@uni.kr", "GEMM Lab", "9.00", "", "9.00", "9.00", "90.00", "90.00", "42.86", "42.86"],
    ["Lee, Dave", "10235", "2026002", "dlee@uni.kr", "GEMM Lab", "7.00", "", "7.00", "7.00", "70.00", "70.00", "33.33", "33.33"],
    ["박 지우", "10236", "2026003", "park@uni.kr", "GEMM Lab", "", "", "0.00", "0.00", "", "", "0.00", "0.00"],
]


def canvas_import(text: str) -> tuple[dict, dict]:
    """What Canvas's importer reads (instructure/canvas-lms app/models/gradebook_importer.rb)::

        if row.length < 3 || row[0] !~ /Student/ || row[1] !~ /ID/
          raise "Couldn't find header row"
        if row[2] !~ /Section/
          if row[4] !~ /Section/ || row[2] !~ /SIS\\s+User\\s+ID/ || row[3] !~ /SIS\\s+Login\\s+ID/
            raise "Couldn't find header row"
          ... @student_columns += 2
        row.shift(@student_columns)
        while row.last =~ /Current Score|Current Points|Final Score|Final Points|Final Grade/
          row.pop
        title, id = Assignment.title_and_id(name_and_id)   # /\\A(.*)\\s\\((\\d+)\\)\\z/
        assignment = @all_assignments[id.to_i] if id.present?
        assignment ||= @all_assignments.detect { |id, a| a.title == name_and_id }   # else a NEW assignment
        ...
        if row[0] =~ /Points Possible/ ... process_pp(row)

    Returns ({assignment id or title: points possible}, {user id: {assignment id or title: grade}})."""
    rows = list(csv.reader(io.StringIO(text)))
    head = rows[0]
    if len(head) < 3 or not re.search("Student", head[0]) or not re.search("ID", head[1]):
        raise AssertionError("Couldn't find header row")
    n = 3
    if not re.search("Section", head[2]):
        if not (re.search("Section", head[4]) and re.search(r"SIS\s+User\s+ID", head[2])
                and re.search(r"SIS\s+Login\s+ID", head[3])):
            raise AssertionError("Couldn't find header row")
        n += 2
    cols = head[n:]
    while cols and re.search("Current Score|Current Points|Final Score|Final Points|Final Grade", cols[-1]):
        cols.pop()
    keys = [(m.group(2) if (m := re.match(r"\A(.*)\s\((\d+)\)\Z", c)) else c) for c in cols]
    possible, grades = {}, {}
    for row in rows[1:]:
        if re.search("Points Possible", row[0]):
            possible = dict(zip(keys, row[n:n + len(keys)], strict=True))
        else:
            grades[row[1]] = dict(zip(keys, row[n:n + len(keys)], strict=True))
    return possible, grades


# -------------------------------------------------------------------------------------------------- Moodle
# Moodle's strings (moodle/moodle lang/en/assign.php, lang/en/moodle.php; the Korean language pack's
# lang/ko/assign.php and moodle.php): recordid, grade (gradenoun), lastmodifiedgrade, hiddenuser
MOODLE_STRINGS = {
    "en": {"recordid": "Identifier", "grade": "Grade", "lastmodifiedgrade": "Last modified (grade)",
           "hiddenuser": "Participant ", "fullname": "Full name", "maxgrade": "Maximum Grade",
           "comments": "Feedback comments", "status": "Status"},
    "ko": {"recordid": "식별자", "grade": "성적", "lastmodifiedgrade": "마지막 수정됨(성적)", "hiddenuser": "참가자",
           "fullname": "전체 이름", "maxgrade": "최대 성적", "comments": "피드백 코멘트", "status": "상태"},
}


def moodle_worksheet(lang: str) -> str:
    """The grading worksheet as Moodle writes it (the grading table's download columns: recordid, fullname,
    email, status, grade, maximum grade, last modified (submission), last modified (grade), feedback)."""
    t = MOODLE_STRINGS[lang]
    head = [t["recordid"], t["fullname"], "이메일 주소" if lang == "ko" else "Email address", t["status"],
            t["grade"], t["maxgrade"], "마지막 수정됨(제출)" if lang == "ko" else "Last modified (submission)",
            t["lastmodifiedgrade"], t["comments"]]
    rows = [head]
    for name, _, _, pid, _ in CLASS:
        rows.append([f"{t['hiddenuser']}{pid}", name, f"{pid}@uni.kr", "Submitted for grading", "", "11.00",
                     "Tuesday, 1 December 2026, 10:00 AM", "-", "손으로 쓴 메모, 그대로"])
    rows.append([f"{t['hiddenuser']}599", "Other Student", "o@uni.kr", "No submission", "", "11.00", "-", "-", ""])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def moodle_import(text: str, lang: str) -> dict[str, str]:
    """What Moodle's importer reads (mod/assign/feedback/offline/importgradeslib.php,
    assignfeedback_offline_grade_importer)::

        $this->csvreader->load_csv_content($csvdata, 'utf-8', 'comma');   // (drops a UTF-8 BOM)
        $strgrade = get_string('grade');          // get_string('gradenoun') in Moodle 4.1+
        $strid = get_string('recordid', 'assign');
        $strmodified = get_string('lastmodifiedgrade', 'assign');
        foreach ($columns as $index => $column) {
            if ($column == $strgrade) $this->gradeindex = $index;
            if ($column == $strid) $this->idindex = $index;
            if ($column == $strmodified) $this->modifiedindex = $index;
        }
        if ($this->idindex < 0 || $this->gradeindex < 0 || $this->modifiedindex < 0) return false;
        ...  // next():
        $id = substr($idstr, strlen(get_string('hiddenuser', 'assign')));   // bytes
        $result->grade = $record[$this->gradeindex];

    in the site's language ``lang``. Returns {participant id: grade}; AssertionError where Moodle refuses."""
    t = MOODLE_STRINGS[lang]
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    idx = {k: next((i for i, c in enumerate(rows[0]) if c == t[k]), -1) for k in ("recordid", "grade",
                                                                                    "lastmodifiedgrade")}
    if min(idx.values()) < 0:
        raise AssertionError("Moodle could not read the uploaded worksheet")
    prefix = len(t["hiddenuser"].encode())
    return {row[idx["recordid"]].encode()[prefix:].decode(): row[idx["grade"]] for row in rows[1:]}


# -------------------------------------------------------------------------------------------------- Blackboard
def blackboard_download() -> bytes:
    """Grade Center → Work Offline → Download: tab-delimited, UTF-16 with a byte-order mark, every field quoted;
    each grade column's header ends in its Column ID."""
    head = ["Last Name", "First Name", "Username", "Student ID", "Last Access", "Availability",
            "Week 6 [Total Pts: 10 Score] |101", "Demo 01 [Total Pts: 11 Score] |102",
            "Total [Total Pts: up to 21 Score] |103"]
    rows = [head] + [[name.split()[-1], name.split()[0], user, f"2026{k:03d}", "2026-12-01 10:00:00", "Yes",
                      "8.00", "", "8.00"] for k, (name, _, _, _, user) in enumerate(CLASS)]
    buf = io.StringIO()
    csv.writer(buf, delimiter="\t", quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerows(rows)
    return codecs.BOM_UTF16_LE + buf.getvalue().encode("utf-16-le")


def blackboard_import(data: bytes) -> dict[str, dict[str, str]]:
    """What the Grade Center upload reads ("Uploading External Grade Center Items", Blackboard Learn help):
    "The unique identifier used for each Student is the Student's User Name. The unique identifier for each
    column is a Column ID number. ... Columns that do not have Column ID numbers in an uploaded file will
    create new columns in the Grade Center ... added as text columns with points possible equaling zero".
    Returns {username: {column id: value}}; a column without an id fails the test (it would be a new one)."""
    text = data.decode("utf-16")
    rows = list(csv.reader(io.StringIO(text), delimiter="\t"))
    user = rows[0].index("Username")
    ids = {}
    for i, h in enumerate(rows[0]):
        m = re.search(r"\|(\d+)$", h)
        if m:
            ids[i] = m.group(1)
        elif "[" in h:
            raise AssertionError(f"{h!r}: no Column ID, Blackboard would add it as a new text column")
    return {row[user]: {cid: row[i] for i, cid in ids.items()} for row in rows[1:]}


# -------------------------------------------------------------------------------------------------- the tests
def test_fill_each_lms_own_export_and_parse_it_back(graded, tmp_path):
    lms, course, students = graded
    out = tmp_path / "out"
    if lms == "canvas":
        src = tmp_path / "2026-12-05T1030_Grades-GEMM_Lab.csv"
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(CANVAS_EXPORT)
        src.write_text(buf.getvalue(), encoding="utf-8")
        done = fill(course, "canvas", src, out)
        text = done.path.read_text(encoding="utf-8")
        possible, got = canvas_import(text)
        assert possible["7002"] == "11.00" and possible["7001"] == "10.00"
        assert [got[str(c[1])]["7002"] for c in CLASS] == WANT
        assert [got[str(c[1])]["7001"] for c in CLASS] == ["9.00", "7.00", ""]  # the other assignment as it came
        assert got["99999"]["7002"] == ""  # Canvas's test student: not ours, untouched
        before, after = CANVAS_EXPORT, list(csv.reader(io.StringIO(text)))
        filled = {(3 + k, 6) for k in range(3)}
    elif lms == "moodle":
        results = {}
        for lang in ("ko", "en"):
            src = tmp_path / f"Grades-GEMM Lab-{lang}-77.csv"
            src.write_bytes(codecs.BOM_UTF8 + moodle_worksheet(lang).encode("utf-8"))
            done = fill(course, "moodle", src, out)
            data = done.path.read_bytes()
            assert data.startswith(codecs.BOM_UTF8)  # Moodle's own form, BOM included
            results[lang] = moodle_import(data.decode("utf-8"), lang)
            assert [results[lang][str(c[3])] for c in CLASS] == WANT
            assert results[lang]["599"] == ""  # a participant not collected: untouched
            # the other language's strings are not there: that Moodle would refuse this file
            other = "en" if lang == "ko" else "ko"
            with pytest.raises(AssertionError, match="could not read"):
                moodle_import(data.decode("utf-8"), other)
        src_text = moodle_worksheet("ko")
        before = list(csv.reader(io.StringIO(src_text)))
        after = list(csv.reader(io.StringIO((out / "grades_moodle_filled_Grades-GEMM Lab-ko-77.csv")
                                            .read_text(encoding="utf-8-sig"))))
        filled = {(1 + k, 4) for k in range(3)}
        assert all(row[8] in ("손으로 쓴 메모, 그대로", "") for row in after[1:])  # no automatic comment
    else:
        src = tmp_path / "gc_GEMM_fullgc_2026-12-05-10-30-00.xls"
        src.write_bytes(blackboard_download())
        done = fill(course, "blackboard", src, out)
        data = done.path.read_bytes()
        assert data.startswith(codecs.BOM_UTF16_LE)
        got = blackboard_import(data)
        assert [got[c[4]]["102"] for c in CLASS] == WANT
        assert [got[c[4]]["101"] for c in CLASS] == ["8.00"] * 3
        before = list(csv.reader(io.StringIO(blackboard_download().decode("utf-16")), delimiter="\t"))
        after = list(csv.reader(io.StringIO(data.decode("utf-16")), delimiter="\t"))
        assert data.decode("utf-16").split("\r\n", 1)[0] == blackboard_download().decode("utf-16").split("\r\n")[0]
        filled = {(1 + k, 7) for k in range(3)}
    assert after[0] == before[0]  # the headers as they came
    _unchanged_except(before, after, filled)
    assert done.pending == [(ASSIGNMENT, students[2])]


def test_pending_points_go_to_their_own_file_and_the_cli_says_so(graded, tmp_path):
    lms, course, students = graded
    src = tmp_path / "lms_file"
    if lms == "canvas":
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(CANVAS_EXPORT)
        src.write_text(buf.getvalue(), encoding="utf-8")
    elif lms == "moodle":
        src.write_text(moodle_worksheet("ko"), encoding="utf-8")
    else:
        src.write_bytes(blackboard_download())
    env = dict(os.environ, GEMM_LAB_COURSE_ROOT=str(course.root))
    r = subprocess.run([sys.executable, "-m", "autograder", "grades", "--lms", lms, "--from", str(src),
                        "--export-dir", str(tmp_path / "out")], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"grades_{lms}_filled_lms_file" in r.stdout and "3 scores" in r.stdout
    rows = list(csv.DictReader((tmp_path / "out" / f"grades_{lms}_pending.csv").open(encoding="utf-8")))
    assert [(x["student_id"], x["graded points"], x["pending points"]) for x in rows] == [(students[2], "5", "2")]
    assert rows[0]["answers awaiting a person"] == f"{NB1}/explain"


def test_moodle_comment_only_when_asked(course, tmp_path):
    students = _collect(course, tmp_path, "moodle")
    _gradebook(course, students)
    src = tmp_path / "ws.csv"
    src.write_text(moodle_worksheet("ko"), encoding="utf-8")
    done = fill(course, "moodle", src, tmp_path / "out", comment=True)
    rows = list(csv.reader(io.StringIO(done.path.read_text(encoding="utf-8"))))
    assert [r[8] for r in rows[1:4]] == ["손으로 쓴 메모, 그대로", "손으로 쓴 메모, 그대로", "수동 채점 전 2점 제외"]


def test_canvas_column_named_by_the_instructor_and_bad_use(course, tmp_path):
    students = _collect(course, tmp_path, "canvas")
    _gradebook(course, students)
    src = tmp_path / "export.csv"
    rows = [r[:] for r in CANVAS_EXPORT]
    rows[0][6] = "Week 7: tiled matmul (7002)"  # a title that is not the assignment's name
    src.write_text("\n".join(",".join(f'"{c}"' for c in r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no column for demo01.*COLUMN="):
        fill(course, "canvas", src, tmp_path / "out")
    done = fill(course, "canvas", src, tmp_path / "out", column="Week 7: tiled matmul (7002)")
    _, got = canvas_import(done.path.read_text(encoding="utf-8"))
    assert [got[str(c[1])]["7002"] for c in CLASS] == WANT
    assert done.path.read_text(encoding="utf-8").startswith('"Student","ID"')  # every field quoted, as it came
    with pytest.raises(ValueError, match="not a Moodle grading worksheet"):
        fill(course, "moodle", src, tmp_path / "out")
    with pytest.raises(ValueError, match="not a Grade Center download"):
        fill(course, "blackboard", src, tmp_path / "out")


def test_make_grades_from_bad_use_is_one_line(course, tmp_path, capsys):
    from autograder.__main__ import main

    students = _collect(course, tmp_path, "canvas")
    _gradebook(course, students)
    src = tmp_path / "moodle.csv"
    src.write_text(moodle_worksheet("en"), encoding="utf-8")
    cases = [(["--from", str(src)], "needs LMS="), (["--lms", "csv", "--from", str(src)], "needs LMS="),
             (["--lms", "moodle", "--from", str(tmp_path / "nope.csv")], "no such file"),
             (["--lms", "canvas", "--assignment", ASSIGNMENT], "go with FROM="),
             (["--lms", "canvas", "--from", str(src)], "not a Canvas gradebook export"),
             (["--lms", "moodle", "--from", str(src)], "none of its participants was collected")]
    for args, needle in cases:
        assert main(["--course-root", str(course.root), "grades", *args]) == 2, args
        err = capsys.readouterr().err
        assert needle in err and len(err.strip().splitlines()) == 1, (args, err)
    # the make target's own command line: one line on stderr, exit 2, no traceback
    env = dict(os.environ, GEMM_LAB_COURSE_ROOT=str(course.root))
    dry = subprocess.run(["make", "-n", "-s", "--no-print-directory", "grades", "LMS=canvas", f"FROM={src}"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    (line,) = [x for x in dry.stdout.splitlines() if "-m autograder grades" in x]
    r = subprocess.run(["bash", "-c", line.replace(".venv/bin/python", sys.executable, 1)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "not a Canvas gradebook export" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
