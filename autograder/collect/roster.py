"""The class as the LMS knows it: each student's id on disk, name and the LMS's own user ids.

``autograder/logs/roster.json`` maps the id used in submitted/ and the gradebook to
``{"name": raw name (NFC), "ids": {format: LMS user id}, "moodle": {assignment: participant id},
"attachments": {assignment: {notebook: Canvas attachment id}}}`` (the attachment ids of the hand-ins
collected: a Canvas feedback file must name one of them).
collect adds to it (a later collect updates the students it sees, keeps the others); the gradebook exports
(reporting/gradebook_export.py) read it, so a Canvas, Moodle or Blackboard file carries the LMS's identifiers.
The names also go into the nbgrader gradebook (Student.last_name, lms_user_id), so formgrader lists
students by name instead of "None, None".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from autograder.course import Course, write_atomic


def roster_path(course: Course) -> Path:
    return course.logs / "roster.json"


def load_roster(course: Course) -> dict:
    try:
        data = json.loads(roster_path(course).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_students(course: Course, assignment: str, report) -> None:
    """Merge the students of one collect (``report.roster``) into roster.json and the gradebook."""
    if not report.roster:
        return
    data = load_roster(course)
    for sid, info in report.roster.items():
        entry = data.setdefault(sid, {"name": info["name"], "ids": {}, "moodle": {}})
        entry["name"] = info["name"]
        if info.get("lms_id"):
            if info["format"] == "moodle":  # participant ids are per assignment
                entry.setdefault("moodle", {})[assignment] = info["lms_id"]
            else:
                entry.setdefault("ids", {})[info["format"]] = info["lms_id"]
        if info.get("attachments"):
            entry.setdefault("attachments", {})[assignment] = dict(info["attachments"])
    write_atomic(roster_path(course), json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True))
    try:
        sync_gradebook(course, data)
    except Exception as exc:  # noqa: BLE001 (names in formgrader are a convenience: never fail a collect)
        print(f"warning: student names not written to the gradebook ({type(exc).__name__}: {exc}); "
              "make grades writes them again", file=sys.stderr)


def sync_gradebook(course: Course, data: dict | None = None) -> None:
    """Write roster names into the gradebook's students (created when missing)."""
    data = load_roster(course) if data is None else data
    if not course.gradebook.exists() or not data:
        return
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url, "gemm-lab") as gb:
        for sid, entry in data.items():
            ids = entry.get("ids") or {}
            lms_id = next(iter(ids.values()), None)
            gb.update_or_create_student(sid, last_name=entry.get("name") or sid, first_name="",
                                        lms_user_id=lms_id)
