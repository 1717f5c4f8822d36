"""Grades CSV, the printed grade table, and HTML feedback (nbgrader generate_feedback).

grades.csv is the course's own table (a column per notebook, ``total``, ``review``, a ``max`` row), what
``make demo`` prints; the files an LMS imports are written by gradebook_export.py (``make grades LMS=...``).
Points awaiting manual grading are named in the review column.
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder.collect.summary import review_notes
from autograder.course import Course, write_csv
from autograder.reporting.gradebook_export import AssignmentGrades, read_gradebook
from autograder.reporting.gradebook_export import fmt_points as _fmt


def scores(course: Course, assignments: list[str] | None = None,
           grades: list[AssignmentGrades] | None = None) -> tuple[list[str], dict, dict]:
    """(columns, {student: {column: score}}, {column: max}) from the gradebook (``grades``: its rows as
    read_gradebook read them for ``assignments``, read here when None).

    Columns are ``ASSIGNMENT/NOTEBOOK`` for every notebook of every assignment with hand-ins. Students
    whose every hand-in was refused by collect (logs/collect_ASSIGNMENT.json) have a row with no scores.
    """
    table, maxima = {}, {}
    for students in review_notes(course, assignments)[1].values():
        for student in students:  # collected nothing readable: a row of zeros (review says why)
            table.setdefault(student, {})
    for ag in read_gradebook(course, assignments) if grades is None else grades:
        maxima.update({f"{ag.name}/{nb}": top for nb, top in ag.notebooks.items()})
        for student, per_nb in ag.notebook_scores.items():
            table.setdefault(student, {}).update({f"{ag.name}/{nb}": v for nb, v in per_nb.items()})
    return list(maxima), table, maxima


def review_flags(course: Course, grades: list[AssignmentGrades] | None = None) -> dict[str, list[str]]:
    """student -> short review notes (collect's notes, tampering findings, grader incidents); ``grades``:
    read_gradebook's rows (read here when None)."""
    out: dict[str, list[str]] = review_notes(course)[0]
    for ag in read_gradebook(course) if grades is None else grades:  # written answers nobody graded yet: say so, never a silent 0
        for student in sorted(ag.pending_cells):
            out.setdefault(student, []).append(
                f"{ag.name}: {_fmt(ag.pending[student])} pts await manual grading (formgrader), not counted")
    for student, notes in grader_notes(course, findings_note=" (review; scores are the grader's)").items():
        out.setdefault(student, []).extend(notes)
    return {k: v for k, v in out.items() if v}


def grader_notes(course: Course, assignments: list[str] | None = None, findings_note: str = "") -> dict:
    """{student: notes} from autograde's logs/review.json: grader errors, findings (review only: scores never
    depend on one), incidents, repairs and redactions; ``findings_note`` follows each findings note."""
    try:
        data = json.loads(course.review_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    notes: dict[str, list[str]] = {}
    for a, entries in sorted(data.items()) if isinstance(data, dict) else []:
        if (assignments is not None and a not in assignments) or not isinstance(entries, dict):
            continue
        for s, entry in sorted(entries.items()):
            if not isinstance(entry, dict):
                continue
            out = notes.setdefault(s, [])
            if not entry.get("ok", True):
                out.append(f"{a}: grader error")
            out += [f"{a}/{nb}: {_findings_note(items)}{findings_note}"
                    for nb, items in sorted(entry.get("findings", {}).items()) if items]
            out += [f"{a}/{nb}: {', '.join(sorted({_incident_tag(str(i)) for i in items}))}"
                    for nb, items in sorted(entry.get("incidents", {}).items())]
            for key, label in (("repairs", "repaired before grading"), ("redacted", "hidden-test text redacted")):
                out += [f"{a}/{nb}: {label}: {'; '.join(map(str, v))}" for nb, v in sorted(entry.get(key, {}).items())]
    return {s: v for s, v in notes.items() if v}


def _findings_note(items) -> str:
    """``3 findings (KERNEL_NOT_TRITON, WRITES_MODULE)``: how many, and what the gate refused or the scan saw."""
    codes = sorted({str(i).split(": ", 1)[-1].split(" ")[0].rstrip(":") for i in items})
    return f"{len(items)} findings ({', '.join(codes)})"


def _incident_tag(text: str) -> str:
    if text.startswith("killed by signal"):  # from outside (OOM killer, admin): autograder/grade/merge.py flags it
        return f"kernel {text}, manual grading"
    if text.startswith("LIMIT_"):  # a sandbox limit ended the kernel (autograder/sandbox/limits.py codes)
        return text
    if "커널" in text:
        return "kernel died"
    if "노트북 전체" in text:
        return "notebook time limit"
    if "CellTimeout" in text:
        return "cell time limit"
    return "incident"


def write_grades_csv(course: Course, path: Path | None = None,
                     grades: list[AssignmentGrades] | None = None) -> Path:
    """One row per student (plus a ``max`` row): one column per notebook, ``total``, ``review``
    (``grades``: read_gradebook's rows, read here when None)."""
    path = Path(path or course.grades_csv)
    columns, table, maxima = scores(course, grades=grades)
    flags = review_flags(course, grades)
    rows = [["student_id", *columns, "total", "review"]]
    for student in sorted(table):
        vals = [table[student].get(c, 0.0) for c in columns]
        rows.append([student, *[_fmt(v) for v in vals], _fmt(sum(vals)), "; ".join(flags.get(student, []))])
    rows.append(["max", *[_fmt(maxima[c]) for c in columns], _fmt(sum(maxima.values())), ""])
    return write_csv(path, rows)  # in one step: a reader sees the old table or the new one


def grade_table(course: Course, handed_in: dict[str, set[tuple[str, str]]] | None = None,
                grades: list[AssignmentGrades] | None = None) -> str:
    """The grade table as text: a column per notebook under its assignment, total, review notes.

    ``handed_in`` ({assignment: {(student, notebook)}}, what ``make demo`` prints): only those students and
    notebooks, ``-`` where a student handed no such notebook in (not a zero), totals over the hand-ins.
    ``grades``: read_gradebook's rows (of every assignment), read here when None."""
    columns, table, maxima = scores(course, None if handed_in is None else list(handed_in), grades)
    students = sorted(table)
    if handed_in is not None:
        has = {(s, f"{a}/{nb}") for a, pairs in handed_in.items() for s, nb in pairs}
        columns = [c for c in columns if c in {col for _, col in has}]
        students = sorted({s for s, _ in has})
    flags = review_flags(course, grades)
    width, w = max([10] + [len(s) for s in students]), 14
    groups = f"{'':<{width}} " + " ".join(f"{c.split('/', 1)[0]:>{w}}" for c in columns)
    head = f"{'student':<{width}} " + " ".join(f"{c.split('/', 1)[1][:w]:>{w}}" for c in columns) \
        + f" {'total':>7}  review"
    lines = [groups, head, "-" * len(head)]
    for s in students:
        vals = [table.get(s, {}).get(c, 0.0) if handed_in is None or (s, c) in has else None for c in columns]
        cells = " ".join(f"{'-' if v is None else _fmt(v):>{w}}" for v in vals)
        lines.append(f"{s:<{width}} {cells} {_fmt(sum(v for v in vals if v is not None)):>7}  "
                     + "; ".join(flags.get(s, [])))
    lines.append(f"{'max':<{width}} " + " ".join(f"{_fmt(maxima[c]):>{w}}" for c in columns)
                 + f" {_fmt(sum(maxima[c] for c in columns)):>7}")
    return "\n".join(lines)
