"""What a collect run did, printed for the instructor and kept in ``autograder/logs/collect_ASSIGNMENT.json``.

The JSON keeps, per student, the raw id, the notebooks collected and the notes that concern the student
(unreadable hand-ins, older copies dropped, a notebook of another assignment...). A later collect of the
same assignment replaces the entries of the students it sees and keeps the others. ``review_notes``
reads it back for grades.csv: a student none of whose hand-ins could be read still gets a row (0 points)
with the reason.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import Course, write_atomic

MAX_RUNS_KEPT = 20


@dataclass
class CollectReport:
    assignment: str = ""
    source: str = ""
    collected: dict = field(default_factory=dict)  # student -> [notebook, ...]
    skipped: list = field(default_factory=list)  # (where, reason): not collected
    dropped: list = field(default_factory=list)  # (where, reason): an older copy of a collected hand-in
    notes: dict = field(default_factory=dict)  # student -> [note, ...] (goes to grades.csv)
    raw_ids: dict = field(default_factory=dict)  # student -> raw id as handed in
    roster: dict = field(default_factory=dict)  # student -> {"name", "format", "lms_id"} (roster.py)
    formats: dict = field(default_factory=dict)  # format label -> notebooks read in that format

    def note(self, student: str | None, text: str) -> None:
        if student:
            self.notes.setdefault(student, []).append(text)

    def unreadable(self) -> list[str]:
        """Students with notes but nothing collected (every hand-in of theirs was refused)."""
        return sorted(s for s in self.notes if not self.collected.get(s))

    def summary(self) -> str:
        n = sum(len(v) for v in self.collected.values())
        lines = [f"collected {n} notebooks of {len(self.collected)} students"]
        if self.formats:
            lines[0] += " (read as " + ", ".join(f"{k}: {v}" for k, v in self.formats.items()) + ")"
        lines += [f"  skipped {w}: {why}" for w, why in sorted(self.skipped)]
        lines += [f"  dropped {w}: {why}" for w, why in sorted(self.dropped)]
        lines += [f"  NO READABLE HAND-IN: {s} ({self.raw_ids.get(s, s)}): {'; '.join(self.notes[s])}"
                  for s in self.unreadable()]
        return "\n".join(lines)


def report_path(course: Course, assignment: str) -> Path:
    return course.logs / f"collect_{assignment}.json"


def save(course: Course, report: CollectReport) -> Path:
    """Merge ``report`` into logs/collect_ASSIGNMENT.json (written atomically)."""
    path = report_path(course, report.assignment)
    data = load(path) or {"assignment": report.assignment, "students": {}, "runs": []}
    for s in sorted(set(report.collected) | set(report.notes)):
        data["students"][s] = {"raw": report.raw_ids.get(s, s), "collected": sorted(report.collected.get(s, [])),
                               "notes": report.notes.get(s, [])}
    data["runs"] = (data.get("runs", []) + [{
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "source": report.source,
        "skipped": [list(x) for x in report.skipped], "dropped": [list(x) for x in report.dropped]}])[-MAX_RUNS_KEPT:]
    write_atomic(path, json.dumps(data, ensure_ascii=False, indent=1))
    return path


def load(path: Path) -> dict | None:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("students"), dict) else None


def known_raw_ids(course: Course, assignment: str) -> dict[str, str]:
    """student -> raw id from earlier collects of ``assignment``."""
    data = load(report_path(course, assignment)) or {"students": {}}
    return {s: e.get("raw", s) for s, e in data["students"].items() if isinstance(e, dict)}


def review_notes(course: Course, assignments: list[str] | None = None) -> tuple[dict, dict]:
    """({student: [note, ...]}, {assignment: {student: why}} of students with no readable hand-in)."""
    notes: dict[str, list[str]] = {}
    unreadable: dict[str, dict] = {}
    if not course.logs.is_dir():
        return notes, unreadable
    for path in sorted(course.logs.glob("collect_*.json")):
        data = load(path)
        if data is None:
            continue
        a = str(data.get("assignment") or path.stem[len("collect_"):])
        if assignments and a not in assignments:
            continue
        for s, entry in sorted(data["students"].items()):
            items = [str(n) for n in entry.get("notes", [])] if isinstance(entry, dict) else []
            if not items:
                continue
            if not entry.get("collected"):
                unreadable.setdefault(a, {})[s] = "; ".join(items)
                notes.setdefault(s, []).append(f"{a}: no readable hand-in, 0 points ({'; '.join(items)})")
            else:
                notes.setdefault(s, []).extend(f"{a}: {n}" for n in items)
    return notes, unreadable
