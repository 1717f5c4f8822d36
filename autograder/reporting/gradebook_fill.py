"""Fill the LMS's own grade file: ``make grades LMS=canvas|moodle|blackboard FROM=<that LMS's download>``.

The file an LMS writes is the file its importer expects, by construction; this module changes only the score
cells of the students it graded, in the column of the assignment, and keeps every other column, every
header and the file's form as they came (reporting/lms_table.py). What each importer requires, read from
its source (autograder/README.md quotes it):

* Canvas (Grades → Export; ``gradebook_importer.rb``): the header starts ``Student, ID``; a row whose first
  cell holds ``Points Possible`` gives the maxima; students are matched by ``ID`` (the Canvas user id collect
  read from the download); an assignment column by ``Title (id)`` or its exact title. The column of an
  assignment is the one whose title is the assignment's name (``Week 7`` for ``week07``), or ``COLUMN``.
* Moodle (the assignment's "Download grading worksheet"; ``importgradeslib.php``, ``init()``): the upload is
  refused unless ``Identifier``, ``Grade`` and ``Last modified (grade)`` are found by their names in the
  site's language. The identifier column is found by its values (``Participant 501``, ``참가자501``: the
  participant id collect read from the download), the grade column by its name in a language below, or
  ``COLUMN``; "Feedback comments" is left as it came unless ``comment`` is asked for.
* Blackboard (Grade Center → Work Offline → Download): a column is matched by the Column ID in its header
  (``Week 7 [Total Pts: 14 Score] |123456``); a column without one would become a new text column worth 0
  points, so only columns with an id are filled. Students are matched by ``Username``.

A student whose written answers still await a person gets the points graded so far; what is pending is
listed in a file of its own (gradebook_export.write_pending), never in a column an importer would read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.collect.roster import load_roster
from autograder.course import Course
from autograder.reporting.gradebook_export import AssignmentGrades, fmt_points, lms_id, read_gradebook
from autograder.reporting.lms_table import Table, read_table, write_table

# Moodle's strings, by language (moodle/moodle lang/en/*.php and the language packs): the grade column is
# get_string('grade') (get_string('gradenoun') since Moodle 4.1, the same words), the importer also needs
# get_string('lastmodifiedgrade', 'assign'); identifiers are get_string('hiddenuser', 'assign') + id.
MOODLE_GRADE = {"en": "Grade", "ko": "성적", "de": "Bewertung", "fr": "Note", "es": "Calificación",
                "ca": "Qualificació", "gl": "Cualificación", "eu": "Kalifikazioa"}
MOODLE_LAST_MODIFIED_GRADE = {"en": "Last modified (grade)", "ko": "마지막 수정됨(성적)",
                              "de": "Zuletzt geändert (Bewertung)", "es": "Última modificación (calificación)",
                              "ja": "最終更新日時 (評定)", "cs": "Poslední změna (hodnocení)",
                              "nl": "Laatst gewijzigd (cijfer)", "eu": "Azken aldaketa (kalifikazioa)"}
MOODLE_FEEDBACK_COMMENTS = {"en": "Feedback comments", "ko": "피드백 코멘트"}
_MOODLE_ID = re.compile(r"^\s*(?P<prefix>\D*?)\s*(?P<pid>\d+)\s*$")
_CANVAS_TITLE_ID = re.compile(r"\A(.*)\s\((\d+)\)\Z")  # Canvas's Assignment.title_and_id
_BB_COLUMN = re.compile(r"^(?P<title>.*?)\s*\[[^\]]*\]\s*\|\s*(?P<id>\d+)\s*$")
_BB_USERNAME = ("username", "user name", "사용자명", "사용자 이름", "아이디")


@dataclass
class Filled:
    path: Path
    columns: dict = field(default_factory=dict)  # assignment -> header filled
    written: dict = field(default_factory=dict)  # (assignment, student) -> value written
    pending: list = field(default_factory=list)  # (assignment, student): points graded so far only
    not_in_file: dict = field(default_factory=dict)  # assignment -> graded students without a row
    unmatched: list = field(default_factory=list)  # assignments with no column in the file
    notes: list = field(default_factory=list)


def normalize_title(text: str) -> str:
    """``Week 7`` and ``week07`` alike: lower case, letters and digits only, numbers without leading zeros."""
    text = re.sub(r"[^0-9a-z가-힣]+", "", text.lower())
    return re.sub(r"\d+", lambda m: str(int(m.group())), text)


def _column_for(assignment: str, headers: dict[int, str], title_of, column: str | None) -> int | None:
    """The index of ``assignment``'s column among ``headers`` ({index: header}); ``column``: its header or
    title as the instructor named it."""
    if column:
        hits = [i for i, h in headers.items() if h.strip() == column.strip() or title_of(h) == column.strip()]
    else:
        hits = [i for i, h in headers.items() if normalize_title(title_of(h)) == normalize_title(assignment)]
    if len(hits) > 1:
        raise ValueError(f"{len(hits)} columns could be {assignment}: {', '.join(repr(headers[i]) for i in hits)}; "
                         f"name one: ASSIGNMENT={assignment} COLUMN='<its header>'")
    return hits[0] if hits else None


def _pick(grades: list[AssignmentGrades], assignment: str | None, column: str | None) -> list[AssignmentGrades]:
    if assignment:
        chosen = [ag for ag in grades if ag.name == assignment]
        if not chosen:
            raise ValueError(f"ASSIGNMENT={assignment} has no grades in the gradebook (graded: "
                             f"{', '.join(ag.name for ag in grades) or 'none'})")
        return chosen
    if column and len(grades) > 1:
        raise ValueError(f"COLUMN= names one column: say which assignment it is (ASSIGNMENT=<one of "
                         f"{', '.join(ag.name for ag in grades)}>)")
    return grades


def _set(table: Table, r: int, c: int, value: str) -> None:
    row = table.rows[r]
    row.extend([""] * (c + 1 - len(row)))
    row[c] = value


def _student_rows(course: Course, table: Table, col: int, lms: str) -> dict[str, int]:
    """{student: row index} of the rows whose cell ``col`` holds the student's ``lms`` id (from the roster)."""
    student_of = {lms_id(e, lms): sid for sid, e in load_roster(course).items() if lms_id(e, lms)}
    return {student_of[row[col].strip()]: r for r, row in enumerate(table.rows[1:], start=1)
            if col < len(row) and row[col].strip() in student_of}


def _fill_rows(out: Filled, table: Table, ag: AssignmentGrades, col: int, rows: dict[str, int]) -> None:
    """Write each graded student's points into ``rows`` (student -> row index) at column ``col``."""
    for sid in sorted(ag.score):
        r = rows.get(sid)
        if r is None:
            out.not_in_file.setdefault(ag.name, []).append(sid)
            continue
        text = fmt_points(ag.score[sid])
        _set(table, r, col, text)
        out.written[(ag.name, sid)] = text
        if ag.pending.get(sid):
            out.pending.append((ag.name, sid))


def _title(pattern: re.Pattern, header: str) -> str:
    """The assignment title in an LMS's column header (Canvas ``Title (id)``, Blackboard ``Title [...] |id``)."""
    m = pattern.match(header)
    return m.group(1) if m else header


# ------------------------------------------------------------------------------------------------ Canvas
def fill_canvas(course: Course, table: Table, grades, column: str | None, out: Filled, *_) -> None:
    head = table.header
    if len(head) < 3 or not re.search(r"Student", head[0]) or not re.search(r"ID", head[1]):
        raise ValueError(f"{table.path}: not a Canvas gradebook export (its header starts 'Student, ID'): "
                         "download it from Canvas's Grades page, Export → Export entire gradebook (CSV)")
    first = 5 if len(head) > 4 and re.search(r"Section", head[4]) else 3
    assignment_cols = {i: h for i, h in enumerate(head) if i >= first and h.strip()}
    rows = _student_rows(course, table, 1, "canvas")
    points_row = next((r for r, row in enumerate(table.rows[1:], start=1)
                       if row and re.search(r"Points Possible", row[0])), None)
    for ag in grades:
        col = _column_for(ag.name, assignment_cols, lambda h: _title(_CANVAS_TITLE_ID, h), column)
        if col is None:
            out.unmatched.append(ag.name)
            continue
        out.columns[ag.name] = head[col]
        if points_row is not None:
            possible = table.rows[points_row][col] if col < len(table.rows[points_row]) else ""
            if _differs(possible, ag.max_score):
                out.notes.append(f"{head[col]!r} is worth {possible} points in Canvas, {fmt_points(ag.max_score)} "
                                 "here: the scores are written as graded here (not rescaled)")
        _fill_rows(out, table, ag, col, rows)


def _differs(text: str, value: float) -> bool:
    try:
        return abs(float(text.strip()) - float(value)) > 1e-9
    except ValueError:
        return False


# ------------------------------------------------------------------------------------------------ Moodle
def moodle_ids(table: Table) -> dict[str, int] | None:
    """{participant id: row} of the identifier column: the column whose every value is one word and a number
    (``Participant 501``), the words the same in every row."""
    for c in range(len(table.header)):
        prefixes, ids = set(), {}
        for r, row in enumerate(table.rows[1:], start=1):
            if c >= len(row) or not row[c].strip():
                continue
            m = _MOODLE_ID.match(row[c])
            if not m or not m["prefix"]:
                ids = {}
                break
            prefixes.add(m["prefix"])
            ids[m["pid"]] = r
        if ids and len(prefixes) == 1:
            return ids
    return None


def fill_moodle(course: Course, table: Table, grades, column: str | None, out: Filled, assignment: str | None,
                comment: bool) -> None:
    head = [h.strip() for h in table.header]
    pid_rows = moodle_ids(table)
    if pid_rows is None:
        raise ValueError(f"{table.path}: not a Moodle grading worksheet (no column of 'Participant <id>' "
                         "identifiers): download it from the assignment's 'View all submissions' page, Grading "
                         "action → Download grading worksheet")
    if column:
        grade_cols = [i for i, h in enumerate(head) if h == column.strip()]
    else:
        grade_cols = [i for i, h in enumerate(head) if h in MOODLE_GRADE.values()]
    if len(grade_cols) != 1:
        wanted = f"COLUMN={column!r}" if column else "one of " + ", ".join(sorted(set(MOODLE_GRADE.values())))
        raise ValueError(f"{table.path}: no single grade column ({wanted}) among its headers {head}: name it, "
                         "e.g. make grades LMS=moodle FROM=... COLUMN='<the header of the grade column>'")
    if not any(h in MOODLE_LAST_MODIFIED_GRADE.values() for h in head):
        if not column:  # the language is known: the column Moodle needs is missing
            raise ValueError(f"{table.path}: no 'Last modified (grade)' column: Moodle refuses such a worksheet "
                             "('Moodle could not read the uploaded worksheet'); download it again from Moodle")
        out.notes.append("the worksheet's language is not one this kit knows: Moodle itself checks its "
                         "'Identifier', 'Grade' and 'Last modified (grade)' columns on upload")
    grade_col = grade_cols[0]
    roster = load_roster(course)

    def pid(entry: dict, a: str) -> str:
        return str((entry.get("moodle") or {}).get(a, ""))

    if assignment is None:  # the assignment whose participant ids the worksheet holds
        overlap = {ag.name: sum(pid(e, ag.name) in pid_rows for e in roster.values()) for ag in grades}
        best = sorted((n, a) for a, n in overlap.items() if n)
        if not best:
            raise ValueError(f"{table.path}: none of its participants was collected from a Moodle download: "
                             "run make collect FROM=<the assignment's Moodle download> first, or name the "
                             "assignment (ASSIGNMENT=)")
        if len(best) > 1 and best[-1][0] == best[-2][0]:
            raise ValueError(f"{table.path}: its participants match {best[-1][1]} and {best[-2][1]} alike: "
                             "name the assignment (ASSIGNMENT=)")
        grades = [ag for ag in grades if ag.name == best[-1][1]]
    ag = grades[0]
    rows = {sid: pid_rows[pid(e, ag.name)] for sid, e in roster.items() if pid(e, ag.name) in pid_rows}
    out.columns[ag.name] = head[grade_col]
    _fill_rows(out, table, ag, grade_col, rows)
    comment_cols = [i for i, h in enumerate(head) if h in MOODLE_FEEDBACK_COMMENTS.values()]
    if comment and comment_cols:
        for _, sid in out.pending:
            _set(table, rows[sid], comment_cols[0], f"수동 채점 전 {fmt_points(ag.pending[sid])}점 제외")
    elif comment:
        out.notes.append("no 'Feedback comments' column in the worksheet: no comment written")


# ------------------------------------------------------------------------------------------------ Blackboard
def fill_blackboard(course: Course, table: Table, grades, column: str | None, out: Filled, *_) -> None:
    head = table.header
    user_cols = [i for i, h in enumerate(head) if h.strip().strip('"').lower() in _BB_USERNAME]
    if not user_cols:
        raise ValueError(f"{table.path}: not a Grade Center download (no 'Username' column): in Blackboard's "
                         "Full Grade Center, Work Offline → Download")
    rows = _student_rows(course, table, user_cols[0], "blackboard")
    with_id = {i: h for i, h in enumerate(head) if _BB_COLUMN.match(h)}
    for ag in grades:
        col = _column_for(ag.name, with_id, lambda h: _title(_BB_COLUMN, h), column)
        if col is None:
            if column and any(h.strip() == column.strip() for h in head):
                raise ValueError(f"COLUMN={column!r} has no Column ID ('|<id>' at the end of its header): "
                                 "Blackboard would make it a new text column worth 0 points")
            out.unmatched.append(ag.name)
            continue
        out.columns[ag.name] = head[col]
        _fill_rows(out, table, ag, col, rows)


# ------------------------------------------------------------------------------------------------ entry
# each takes (course, table, grades, column, out, assignment, comment); only Moodle's reads the last two
FILLERS = {"canvas": fill_canvas, "moodle": fill_moodle, "blackboard": fill_blackboard}
FILL_LMS = tuple(FILLERS)


def fill(course: Course, lms: str, source: str | Path, out_dir: str | Path | None = None,
         assignment: str | None = None, column: str | None = None, comment: bool = False,
         grades: list[AssignmentGrades] | None = None) -> Filled:
    """Fill ``source`` (the LMS's own download) with the gradebook's scores (``grades``: read_gradebook's rows,
    read here when None); writes ``autograder/grades_<lms>_filled_<source name>`` and returns what was done.
    ValueError: bad use."""
    if lms not in FILL_LMS:
        raise ValueError(f"LMS={lms}: FROM= fills the grade file of {', '.join(FILL_LMS)}")
    if comment and lms != "moodle":
        raise ValueError("COMMENT=1: only Moodle's worksheet takes a feedback comment per student")
    source = Path(source)
    table = read_table(source)
    grades = read_gradebook(course) if grades is None else grades
    grades = _pick([ag for ag in grades if ag.score], assignment, column)
    if not grades:
        raise ValueError("nothing graded yet: run make autograde first")
    out_dir = Path(out_dir or course.root / "autograder")
    out = Filled(out_dir / f"grades_{lms}_filled_{source.name}")
    FILLERS[lms](course, table, grades, column, out, assignment, comment)
    if not out.columns:
        titles = [h for h in table.header if h.strip()]
        raise ValueError(f"{source.name}: no column for {', '.join(out.unmatched)} among {titles[:12]}: name it, "
                         f"e.g. make grades LMS={lms} FROM={source} ASSIGNMENT={out.unmatched[0]} COLUMN='<its header>'")
    write_table(table, out.path)
    return out
