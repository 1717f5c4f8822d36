"""Resume after a crash: which hand-ins are already graded, and the review notes written per hand-in.

A hand-in counts as graded when the gradebook holds a row of ``gemm_lab_graded`` for it with the same
checksum of the submitted files and of the assignment's source/ folder. The row is written in the same
SQLite transaction as the hand-in's scores (see grade._merge), so a kill at any point leaves either both or
neither: a rerun skips exactly the hand-ins whose scores were committed and grades the rest once.

The review notes (incidents, integrity findings, repairs) are kept in the same row and written out as
``autograder/logs/review.json`` after every hand-in (atomic replace), so nothing is lost when a run is
killed halfway.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

from autograder.course import Course, write_atomic

TABLE = "gemm_lab_graded"
_SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints"}

CREATE_SQL = (f"CREATE TABLE IF NOT EXISTS {TABLE} (assignment TEXT NOT NULL, student TEXT NOT NULL, "
              "handin_sha TEXT NOT NULL, source_sha TEXT NOT NULL, ok INTEGER NOT NULL, review TEXT NOT NULL, "
              "PRIMARY KEY (assignment, student))")
UPSERT_SQL = (f"INSERT OR REPLACE INTO {TABLE} (assignment, student, handin_sha, source_sha, ok, review) "
              "VALUES (:assignment, :student, :handin_sha, :source_sha, :ok, :review)")


def tree_sha256(folder: Path) -> str:
    """Checksum of every file under ``folder`` (relative names and bytes; links by their target text)."""
    h = hashlib.sha256()
    folder = Path(folder)
    if not folder.is_dir():
        return h.hexdigest()
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            p = Path(dirpath) / name
            rel = p.relative_to(folder).as_posix()
            h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
            if p.is_symlink():
                h.update(b"L" + os.readlink(p).encode("utf-8", "surrogateescape"))
            elif p.is_file():
                with p.open("rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
            h.update(b"\0")
    return h.hexdigest()


def ensure_table(gradebook: Path) -> None:
    with sqlite3.connect(gradebook) as db:
        db.execute(CREATE_SQL)


def graded_rows(gradebook: Path, assignment: str | None = None) -> dict[tuple[str, str], dict]:
    """(assignment, student) -> row, for every hand-in recorded as graded (autograde made the table first)."""
    if not Path(gradebook).exists():
        return {}
    with sqlite3.connect(gradebook) as db:
        q = f"SELECT assignment, student, handin_sha, source_sha, ok, review FROM {TABLE}"
        rows = db.execute(q + (" WHERE assignment = ?" if assignment else ""),
                          (assignment,) if assignment else ()).fetchall()
    return {(a, s): {"handin_sha": h, "source_sha": src, "ok": bool(ok), "review": json.loads(rev)}
            for a, s, h, src, ok, rev in rows}


def forget(gradebook: Path, assignment: str, student: str) -> None:
    """Drop the 'graded' mark before a hand-in's scores are rewritten (a kill midway then regrades it)."""
    with sqlite3.connect(gradebook) as db:
        db.execute(f"DELETE FROM {TABLE} WHERE assignment = ? AND student = ?", (assignment, student))


def already_graded(course: Course, assignment: str, students: list[str]) -> dict[str, dict]:
    """student -> graded row, for the students whose current hand-in is graded from today's source."""
    rows = graded_rows(course.gradebook, assignment)
    src = tree_sha256(course.source / assignment)
    return {s: row for s in students if (row := rows.get((assignment, s))) and row["ok"] and row["source_sha"] == src
            and row["handin_sha"] == tree_sha256(course.submitted / s / assignment)}


def write_review_files(course: Course) -> None:
    """Write review.json ({assignment: {student: review notes}}) from the gradebook."""
    combined: dict[str, dict] = {}
    for (a, s), row in sorted(graded_rows(course.gradebook).items()):
        combined.setdefault(a, {})[s] = row["review"]
    write_atomic(course.review_json, json.dumps(combined, ensure_ascii=False, indent=1, sort_keys=True))
