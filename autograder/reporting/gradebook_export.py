"""Grades the LMS imports as they are: ``make grades LMS=canvas|moodle|blackboard|csv``.

Read from the nbgrader gradebook (scores per cell, as autograde and formgrader leave them) and the roster
(collect/roster.py: names and the LMS's own user ids collected from the download). One score per assignment (the
sum of its notebooks, the points graded so far); points still awaiting a person in formgrader go to a file of
their own, ``grades_<lms>_pending.csv`` (:func:`write_pending`), never into a column an importer would read or
turn into an assignment, and no feedback comment is written. The best file is the LMS's own download filled in
(``FROM=``, reporting/gradebook_fill.py); without one these are written, each with one line saying what the
instructor must do in the LMS's import preview (:data:`PREVIEW_HINT`):

* ``canvas`` -> ``grades_canvas.csv``: Canvas Gradebook import columns ``Student, ID, SIS User ID,
  SIS Login ID, Section``, one column per assignment titled with its name, and Canvas's own ``Points
  Possible`` row under the header; ``ID`` is the Canvas user id.
* ``moodle`` -> ``grades_moodle_ASSIGNMENT.csv``, one per assignment, in the columns of Moodle's offline grading
  worksheet in English: ``Identifier`` (``Participant <id>`` from the download), ``Full name``, ``Grade``,
  ``Maximum Grade``, ``Last modified (grade)`` (Moodle's importer refuses a file without it).
* ``blackboard`` -> ``grades_blackboard.csv``: Grade Center upload columns ``Last Name, First Name,
  Username, Student ID``, one column per assignment (``NAME [Total Pts: N Score]``), every field quoted.
* ``csv`` -> ``grades_by_assignment.csv``: student id, name, LMS ids, score and pending points per
  assignment, total, review notes (for a person, not an importer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.collect.roster import load_roster
from autograder.course import Course, write_csv

PENDING = "pending manual grading"
PREVIEW_HINT = {
    "canvas": "Canvas matches a column by 'Title (id)' or its exact title: in the import preview map {cols} to your "
              "Canvas assignment(s) or each becomes a new assignment; or fill Canvas's own export instead: "
              "make grades LMS=canvas FROM=<Grades → Export CSV>",
    "moodle": "Moodle finds Identifier, Grade and Last modified (grade) by their names in the site's language, so "
              "a Moodle not in English refuses this file, and a grade changed in Moodle since is skipped: better, "
              "make grades LMS=moodle FROM=<the assignment's Download grading worksheet>",
    "blackboard": "Blackboard makes a column without its Column ID a new text column worth 0 points ({cols}): "
                  "fill the Grade Center's own download instead: make grades LMS=blackboard FROM=<Work Offline → "
                  "Download>",
}


@dataclass
class AssignmentGrades:
    name: str
    max_score: float = 0.0
    score: dict = field(default_factory=dict)  # student -> points earned (graded cells only)
    pending: dict = field(default_factory=dict)  # student -> points awaiting a person
    pending_cells: dict = field(default_factory=dict)  # student -> ["notebook/grade_id", ...]
    notebooks: dict = field(default_factory=dict)  # notebook -> max score, by name
    notebook_scores: dict = field(default_factory=dict)  # student -> {notebook: points, pending ones included}
    cells: list = field(default_factory=list)  # (notebook, grade_id, max score) of every graded cell
    grades: dict = field(default_factory=dict)  # (student, notebook) -> [(grade_id, score, needs manual, scored)]


def read_gradebook(course: Course, assignments: list[str] | None = None) -> list[AssignmentGrades]:
    """Per assignment named (all when None; unknown names skipped): max score, earned points and pending
    manual points per student, the points of each notebook and each cell. The grades are read in one query
    (object by object, a big class takes seconds)."""
    if not course.gradebook.exists():
        return []
    from nbgrader.api import (
        Assignment,
        BaseCell,
        Grade,
        Gradebook,
        Notebook,
        SubmittedAssignment,
        SubmittedNotebook,
    )
    from sqlalchemy import text

    out = {}
    with Gradebook(course.db_url, "gemm-lab") as gb:
        known = {a.name: a for a in gb.assignments}
        for a in [known[a] for a in assignments or sorted(known) if a in known]:
            out[a.name] = ag = AssignmentGrades(
                a.name, float(sum(nb.max_score or 0 for nb in a.notebooks)),
                notebooks={nb.name: nb.max_score for nb in sorted(a.notebooks, key=lambda n: n.name)},
                cells=[(nb.name, c.name, float(c.max_score))
                       for nb in a.notebooks for c in [*nb.grade_cells, *nb.task_cells]])
            for sub in a.submissions:  # every hand-in, with grades or not
                ag.score[sub.student_id] = ag.pending[sub.student_id] = 0.0
                ag.notebook_scores[sub.student_id] = {}
        q = (gb.db.query(Assignment.name, SubmittedAssignment.student_id, Notebook.name, BaseCell.name, Grade.score,
                         Grade.max_score, Grade.needs_manual_grade, Grade.auto_score, Grade.manual_score)
             .select_from(Grade)
             .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
             .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
             .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
             .join(Assignment, Notebook.assignment_id == Assignment.id)
             .join(BaseCell, Grade.cell_id == BaseCell.id)
             .filter(Assignment.name.in_(list(out)))
             .order_by(text("submitted_notebook.rowid, grade.rowid")))  # as nbgrader stored them: cell order
        for a, sid, nb, gid, score, top, manual, auto, man in q:
            ag, score = out[a], float(score or 0.0)
            ag.grades.setdefault((sid, nb), []).append((gid, score, bool(manual), auto is not None or man is not None))
            per_nb = ag.notebook_scores[sid]
            per_nb[nb] = per_nb.get(nb, 0.0) + score
            if manual:  # awaits a person (formgrader shows it so, too)
                ag.pending[sid] += float(top or 0)
                ag.pending_cells.setdefault(sid, []).append(f"{nb}/{gid}")
            else:
                ag.score[sid] += score
    return list(out.values())


def fmt_points(v: float) -> str:
    v = float(v or 0.0)
    return str(int(v)) if v == int(v) else f"{v:.2f}"


_fmt = fmt_points


def _students(grades: list[AssignmentGrades]) -> list[str]:
    return sorted({s for ag in grades for s in ag.score})


def pending_summary(grades: list[AssignmentGrades]) -> str | None:
    """One line when answers await manual grading (None when none do)."""
    cells = sum(len(v) for ag in grades for v in ag.pending_cells.values())
    if not cells:
        return None
    people = {s for ag in grades for s in ag.pending_cells}
    points = sum(p for ag in grades for p in ag.pending.values())
    return (f"warning: {cells} written answers of {len(people)} students ({_fmt(points)} points) await manual "
            "grading: grade them in formgrader (make formgrader, or .venv/bin/jupyter lab and open Nbgrader > "
            "Manage Assignments), then run make grades again. Until then the grades hold the points graded so "
            "far; the pending points are listed in autograder/grades_<LMS>_pending.csv")


def lms_id(entry: dict, lms: str, assignment: str | None = None) -> str:
    """A roster entry's id in ``lms`` as that LMS's files write it ('' when collect read none)."""
    if lms == "moodle":
        pid = (entry.get("moodle") or {}).get(assignment)
        return f"Participant {pid}" if pid else ""
    return str((entry.get("ids") or {}).get(lms) or "")


def _by_id(roster: dict, students, lms: str, assignment: str | None = None) -> tuple[list, list[str]]:
    """([(student, roster entry, its ``lms`` id)], [students without one])."""
    rows = [(s, roster.get(s, {}), lms_id(roster.get(s, {}), lms, assignment)) for s in students]
    return [r for r in rows if r[2]], [s for s, _, i in rows if not i]


def _scores(grades: list[AssignmentGrades], s: str) -> list[str]:
    return [_fmt(ag.score[s]) if s in ag.score else "" for ag in grades]


def write_canvas(course: Course, grades: list[AssignmentGrades], out: Path, flags: dict) -> tuple[list, list]:
    roster = load_roster(course)
    _, missing = _by_id(roster, _students(grades), "canvas")
    path = write_csv(out / "grades_canvas.csv", [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *[ag.name for ag in grades]],
        ["    Points Possible", "", "", "", "", *[_fmt(ag.max_score) for ag in grades]],
        *[[roster.get(s, {}).get("name", s), lms_id(roster.get(s, {}), "canvas"), "", "", "", *_scores(grades, s)]
          for s in _students(grades)]])
    return [path], [f"canvas: {len(missing)} students have no Canvas user id (not collected from a Canvas download): "
                  f"{', '.join(missing[:5])}; Canvas matches them by name only"] if missing else []


def write_moodle(course: Course, grades: list[AssignmentGrades], out: Path, flags: dict) -> tuple[list, list]:
    roster = load_roster(course)
    paths, msgs = [], []
    for ag in grades:
        found, missing = _by_id(roster, sorted(ag.score), "moodle", ag.name)
        paths.append(write_csv(out / f"grades_moodle_{ag.name}.csv", [
            ["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)"],
            *[[pid, e.get("name", s), _fmt(ag.score[s]), _fmt(ag.max_score), "-"] for s, e, pid in found]]))
        if missing:
            msgs.append(f"moodle: {ag.name}: {len(missing)} students have no Moodle participant id (not "
                        f"collected from a Moodle download of {ag.name}), left out: {', '.join(missing[:5])}")
    return paths, msgs


def write_blackboard(course: Course, grades: list[AssignmentGrades], out: Path, flags: dict) -> tuple[list, list]:
    found, missing = _by_id(load_roster(course), _students(grades), "blackboard")
    path = write_csv(out / "grades_blackboard.csv", [
        ["Last Name", "First Name", "Username", "Student ID",
         *[f"{ag.name} [Total Pts: {_fmt(ag.max_score)} Score]" for ag in grades]],
        *[[e.get("name", s), "", user, "", *_scores(grades, s)] for s, e, user in found]], quote_all=True)
    return [path], [f"blackboard: {len(missing)} students have no Blackboard username (not collected from a "
                  f"Blackboard download), left out: {', '.join(missing[:5])}"] if missing else []


def write_plain(course: Course, grades: list[AssignmentGrades], out: Path, flags: dict) -> tuple[list, list]:
    roster = load_roster(course)
    head = ["student_id", "name", "lms_ids"]
    for ag in grades:
        head += [f"{ag.name} (of {_fmt(ag.max_score)})", f"{ag.name} {PENDING}"]
    rows = [head + [f"total (of {_fmt(sum(ag.max_score for ag in grades))})", PENDING, "review"]]
    for s in _students(grades):
        entry = roster.get(s, {})
        ids = "; ".join(f"{k}:{v}" for k, v in sorted((entry.get("ids") or {}).items()))
        ids += "".join(f"; moodle/{a}:{p}" for a, p in sorted((entry.get("moodle") or {}).items()))
        row = [s, entry.get("name", ""), ids.strip("; ")]
        for ag in grades:
            row += [_fmt(ag.score[s]), _fmt(ag.pending.get(s, 0))] if s in ag.score else ["", ""]
        rows.append(row + [_fmt(sum(ag.score.get(s, 0) for ag in grades)),
                           _fmt(sum(ag.pending.get(s, 0) for ag in grades)), "; ".join(flags.get(s, []))])
    return [write_csv(out / "grades_by_assignment.csv", rows)], []


def write_pending(course: Course, grades: list[AssignmentGrades], out: Path, lms: str) -> Path | None:
    """``grades_<lms>_pending.csv``: per student and assignment the points graded so far, the points that
    await a person and which answers (None, and an old file removed, when nothing is pending)."""
    path = out / f"grades_{lms}_pending.csv"
    pending = [(ag, s) for ag in grades for s in sorted(ag.pending_cells)]
    if not pending:
        path.unlink(missing_ok=True)
        return None
    roster = load_roster(course)
    return write_csv(path, [["student_id", "name", f"{lms} id", "assignment", "graded points", "pending points",
                              "max points", "answers awaiting a person"]] + [
        [s, roster.get(s, {}).get("name", ""), lms_id(roster.get(s, {}), lms, ag.name), ag.name,
         _fmt(ag.score.get(s, 0)), _fmt(ag.pending.get(s, 0)), _fmt(ag.max_score), " ".join(ag.pending_cells[s])]
        for ag, s in pending])


WRITERS = {"canvas": write_canvas, "moodle": write_moodle, "blackboard": write_blackboard, "csv": write_plain}
LMS_CHOICES = tuple(WRITERS)


def export(course: Course, lms: str, out: Path | None = None, flags: dict | None = None,
           grades: list[AssignmentGrades] | None = None) -> tuple[list[Path], list[str]]:
    """Write the ``lms`` export(s) under ``out`` (default autograder/); returns (paths, warnings).
    ``grades``: read_gradebook's rows (read here when None)."""
    if lms not in LMS_CHOICES:
        raise ValueError(f"LMS={lms!r}: expected one of {', '.join(LMS_CHOICES)}")
    out = Path(out or course.root / "autograder")
    out.mkdir(parents=True, exist_ok=True)
    grades = read_gradebook(course) if grades is None else grades
    paths, msgs = WRITERS[lms](course, grades, out, flags or {})
    if lms == "csv":  # for a person: the pending points are in its own columns
        return paths, msgs
    pending = write_pending(course, grades, out, lms)
    msgs = msgs + [f"{lms}: " + PREVIEW_HINT[lms].format(cols=", ".join(ag.name for ag in grades))]
    return paths + ([pending] if pending else []), msgs
