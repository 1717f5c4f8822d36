"""nbgrader cell roles, read from plain notebook JSON (also a hand-in's, whose metadata may be anything).

The roles are nbgrader's own (``nbgrader.utils.is_grade``, ``is_solution``, ``is_locked``, ``is_task``):
those functions need ``NotebookNode`` cells with well-formed metadata and cost seconds to import, so the
collector, the grader and the sample kit read the same fields here; ``tests/test_cells.py`` holds both
readings equal on every committed notebook.
"""

from __future__ import annotations


def meta(cell) -> dict:
    """The cell's ``metadata.nbgrader`` dict; ``{}`` when it is missing or not a dict."""
    m = cell.get("metadata") if isinstance(cell, dict) else None
    nbg = m.get("nbgrader") if isinstance(m, dict) else None
    return nbg if isinstance(nbg, dict) else {}


def source(cell) -> str:
    """The cell's source as one string (a list of lines is joined)."""
    src = cell.get("source", "") if isinstance(cell, dict) else ""
    return "".join(map(str, src)) if isinstance(src, list) else str(src)


def grade_id(cell) -> str | None:
    gid = meta(cell).get("grade_id")
    return gid if isinstance(gid, str) and gid else None


def is_grade(cell) -> bool:
    return bool(meta(cell).get("grade"))


def is_solution(cell) -> bool:
    return bool(meta(cell).get("solution"))


def is_task(cell) -> bool:
    return bool(meta(cell).get("task"))


def is_locked(cell) -> bool:
    """nbgrader's rule: an answer is never locked, a graded cell always is, else its ``locked`` flag."""
    m = meta(cell)
    if not m or m.get("solution"):
        return False
    return bool(m.get("grade") or m.get("locked"))


def is_code(cell) -> bool:
    return isinstance(cell, dict) and cell.get("cell_type") == "code"


def is_student_code(cell) -> bool:
    """Code the student wrote: answer cells and unmarked code cells (locked and test cells nbgrader restores)."""
    return is_code(cell) and not is_locked(cell)


def is_autograded_test(cell) -> bool:
    """A test cell: code, graded, not an answer (nbgrader restores its source and scores its outcome)."""
    return is_code(cell) and is_grade(cell) and not is_solution(cell)


def is_locked_only(cell) -> bool:
    """A locked cell that is neither graded nor an answer (imports, given launchers)."""
    m = meta(cell)
    return bool(m.get("locked")) and not m.get("grade") and not m.get("solution")


def role(cell) -> str | None:
    """'task', 'answer', 'test' (graded, not an answer), 'locked' or None (no nbgrader role)."""
    if is_task(cell):
        return "task"
    if is_solution(cell):
        return "answer"
    if is_grade(cell):
        return "test"
    if meta(cell).get("locked"):
        return "locked"
    return None


def grade_ids(nb: dict) -> list[str]:
    """grade_ids of a notebook's cells (any nbgrader cell), in order."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    return [g for g in map(grade_id, cells if isinstance(cells, list) else []) if g]
