"""Grades the LMS imports as they are: ``make grades LMS=canvas|moodle|blackboard|csv``.

Read from the nbgrader gradebook (scores per cell, as autograde and formgrader leave them) and the roster
(collect/roster.py: names and the LMS's own user ids collected from the download). One score per assignment (the
sum of its notebooks), points still awaiting a person in formgrader in a column of their own (never
counted as 0 without saying so), no ``max`` data row. Formats (sources in autograder/README.md):

* ``canvas`` -> ``grades_canvas.csv``: Canvas Gradebook import columns ``Student, ID, SIS User ID,
  SIS Login ID, Section``, one column per assignment, and Canvas's own ``Points Possible`` row under the
  header (the row Canvas's export writes and its importer reads); ``ID`` is the Canvas user id.
* ``moodle`` -> ``grades_moodle_ASSIGNMENT.csv``, one per assignment: the assignment's offline grading
  worksheet (Grading action "Upload grading worksheet"): ``Identifier`` = ``Participant <id>`` from the
  download, ``Full name``, ``Grade``, ``Maximum Grade``, ``Feedback comments``.
* ``blackboard`` -> ``grades_blackboard.csv``: Grade Center upload columns ``Last Name, First Name,
  Username, Student ID``, one column per assignment (``NAME [Total Pts: N Score]``), every field quoted.
* ``csv`` -> ``grades_by_assignment.csv``: student id, name, LMS ids, score and pending points per
  assignment, total, review notes.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from autograder.collect.roster import load_roster
from autograder.course import Course

LMS_CHOICES = ("canvas", "moodle", "blackboard", "csv")
PENDING = "pending manual grading"


@dataclass
class AssignmentGrades:
    name: str
    max_score: float = 0.0
    score: dict = field(default_factory=dict)  # student -> points earned (graded cells only)
    pending: dict = field(default_factory=dict)  # student -> points awaiting a person
    pending_cells: dict = field(default_factory=dict)  # student -> ["notebook/grade_id", ...]


def each_assignment(gb, assignments: list[str] | None = None):
    """The gradebook's assignments named in ``assignments`` (all, by name, when None); unknown names skipped."""
    from nbgrader.api import MissingEntry

    for a_name in assignments or sorted(a.name for a in gb.assignments):
        try:
            yield gb.find_assignment(a_name)
        except MissingEntry:
            continue


def read_gradebook(course: Course, assignments: list[str] | None = None) -> list[AssignmentGrades]:
    """Per assignment: max score, earned points and pending manual points per student."""
    if not course.gradebook.exists():
        return []
    from nbgrader.api import Gradebook

    out = []
    with Gradebook(course.db_url, "gemm-lab") as gb:
        for assignment in each_assignment(gb, assignments):
            a_name = assignment.name
            ag = AssignmentGrades(a_name, float(sum(nb.max_score or 0 for nb in assignment.notebooks)))
            for sub in assignment.submissions:
                sid = sub.student.id
                earned = pending = 0.0
                for snb in sub.notebooks:
                    for g in snb.grades:
                        if g.needs_manual_grade and g.manual_score is None:  # nobody graded it yet
                            pending += float(g.max_score or 0)
                            ag.pending_cells.setdefault(sid, []).append(f"{snb.name}/{g.name}")
                        else:
                            earned += float(g.score or 0)
                ag.score[sid], ag.pending[sid] = earned, pending
            out.append(ag)
    return out


def _fmt(v: float) -> str:
    v = float(v or 0.0)
    return str(int(v)) if v == int(v) else f"{v:.2f}"


def _students(grades: list[AssignmentGrades]) -> list[str]:
    return sorted({s for ag in grades for s in ag.score})


def pending_summary(grades: list[AssignmentGrades]) -> str | None:
    """One line when answers await manual grading (None when none do)."""
    cells = sum(len(v) for ag in grades for v in ag.pending_cells.values())
    if not cells:
        return None
    people = {s for ag in grades for s, v in ag.pending_cells.items() if v}
    points = sum(p for ag in grades for p in ag.pending.values())
    return (f"warning: {cells} written answers of {len(people)} students ({_fmt(points)} points) await manual "
            "grading: grade them in formgrader (make formgrader, or .venv/bin/jupyter lab and open Nbgrader > "
            "Manage Assignments), then run make grades again. Until then they are in the 'pending' columns, "
            "not counted")


def write_canvas(course: Course, grades: list[AssignmentGrades], out: Path) -> tuple[Path, list[str]]:
    roster = load_roster(course)
    path = out / "grades_canvas.csv"
    warnings = []
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                    *[ag.name for ag in grades], *[f"{ag.name} ({PENDING}, not imported)" for ag in grades]])
        w.writerow(["    Points Possible", "", "", "", "", *[_fmt(ag.max_score) for ag in grades],
                    *["" for _ in grades]])
        for s in _students(grades):
            entry = roster.get(s, {})
            canvas_id = (entry.get("ids") or {}).get("canvas", "")
            if not canvas_id:
                warnings.append(s)
            w.writerow([entry.get("name", s), canvas_id, "", "", "",
                        *[_fmt(ag.score[s]) if s in ag.score else "" for ag in grades],
                        *[_fmt(ag.pending.get(s, 0)) if s in ag.score else "" for ag in grades]])
    msgs = [f"canvas: {len(warnings)} students have no Canvas user id (not collected from a Canvas download): "
            f"{', '.join(warnings[:5])}; Canvas matches them by name only"] if warnings else []
    return path, msgs


def write_moodle(course: Course, grades: list[AssignmentGrades], out: Path) -> tuple[list[Path], list[str]]:
    roster = load_roster(course)
    paths, msgs = [], []
    for ag in grades:
        path = out / f"grades_moodle_{ag.name}.csv"
        missing = []
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["Identifier", "Full name", "Grade", "Maximum Grade", "Feedback comments",
                        "Pending manual grading"])
            for s in sorted(ag.score):
                entry = roster.get(s, {})
                pid = (entry.get("moodle") or {}).get(ag.name, "")
                if not pid:
                    missing.append(s)
                    continue
                pend = ag.pending.get(s, 0)
                comment = f"수동 채점 전 {_fmt(pend)}점 제외" if pend else ""
                w.writerow([f"Participant {pid}", entry.get("name", s), _fmt(ag.score[s]), _fmt(ag.max_score),
                            comment, _fmt(pend)])
        paths.append(path)
        if missing:
            msgs.append(f"moodle: {ag.name}: {len(missing)} students have no Moodle participant id (not "
                        f"collected from a Moodle download of {ag.name}), left out: {', '.join(missing[:5])}")
    return paths, msgs


def write_blackboard(course: Course, grades: list[AssignmentGrades], out: Path) -> tuple[Path, list[str]]:
    roster = load_roster(course)
    path = out / "grades_blackboard.csv"
    missing = []
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(["Last Name", "First Name", "Username", "Student ID",
                    *[f"{ag.name} [Total Pts: {_fmt(ag.max_score)} Score]" for ag in grades],
                    *[f"{ag.name} {PENDING} [Total Pts: 0 Text]" for ag in grades]])
        for s in _students(grades):
            entry = roster.get(s, {})
            user = (entry.get("ids") or {}).get("blackboard", "")
            if not user:
                missing.append(s)
                continue
            w.writerow([entry.get("name", s), "", user, "",
                        *[_fmt(ag.score[s]) if s in ag.score else "" for ag in grades],
                        *[_fmt(ag.pending.get(s, 0)) if s in ag.score else "" for ag in grades]])
    msgs = [f"blackboard: {len(missing)} students have no Blackboard username (not collected from a Blackboard "
            f"download), left out: {', '.join(missing[:5])}"] if missing else []
    return path, msgs


def write_plain(course: Course, grades: list[AssignmentGrades], out: Path, flags: dict) -> tuple[Path, list[str]]:
    roster = load_roster(course)
    path = out / "grades_by_assignment.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        head = ["student_id", "name", "lms_ids"]
        for ag in grades:
            head += [f"{ag.name} (of {_fmt(ag.max_score)})", f"{ag.name} {PENDING}"]
        w.writerow(head + [f"total (of {_fmt(sum(ag.max_score for ag in grades))})", PENDING, "review"])
        for s in _students(grades):
            entry = roster.get(s, {})
            ids = "; ".join(f"{k}:{v}" for k, v in sorted((entry.get("ids") or {}).items()))
            ids += "".join(f"; moodle/{a}:{p}" for a, p in sorted((entry.get("moodle") or {}).items()))
            row = [s, entry.get("name", ""), ids.strip("; ")]
            for ag in grades:
                row += [_fmt(ag.score[s]), _fmt(ag.pending.get(s, 0))] if s in ag.score else ["", ""]
            row += [_fmt(sum(ag.score.get(s, 0) for ag in grades)), _fmt(sum(ag.pending.get(s, 0) for ag in grades)),
                    "; ".join(flags.get(s, []))]
            w.writerow(row)
    return path, []


def export(course: Course, lms: str, out: Path | None = None, flags: dict | None = None) -> tuple[list[Path], list[str]]:
    """Write the ``lms`` export(s) under ``out`` (default autograder/); returns (paths, warnings)."""
    if lms not in LMS_CHOICES:
        raise ValueError(f"LMS={lms!r}: expected one of {', '.join(LMS_CHOICES)}")
    out = Path(out or course.root / "autograder")
    out.mkdir(parents=True, exist_ok=True)
    grades = read_gradebook(course)
    if lms == "canvas":
        p, msgs = write_canvas(course, grades, out)
        return [p], msgs
    if lms == "moodle":
        return write_moodle(course, grades, out)
    if lms == "blackboard":
        p, msgs = write_blackboard(course, grades, out)
        return [p], msgs
    p, msgs = write_plain(course, grades, out, flags or {})
    return [p], msgs
