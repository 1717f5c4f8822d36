"""Per-student feedback pages zipped in the upload layout of an LMS: ``make feedback LMS=canvas|moodle``.

Built from ``autograder/feedback/STUDENT/ASSIGNMENT/*.html`` and the roster (collect/roster.py: the LMS's own ids
collected from the download) into ``autograder/feedback_<lms>_<ASSIGNMENT>.zip``:

* ``canvas`` (Assignment → "Re-upload Submissions"; each file becomes a submission comment):
  ``<name>_<user id>_<attachment id>_<ASSIGNMENT>-<notebook>.html``. Canvas's
  ``Assignment#infer_comment_context_from_filename`` splits the name on ``_`` and takes the first two
  all-digit pieces as the user id and the attachment id, and ignores the file unless that attachment is
  one of the user's submission attachments: the attachment id is the one collect read from the download's
  name of that notebook (or of another file of the same hand-in). So the name and the page part hold no
  ``_`` and no all-digit piece (``01_pointer`` would read as attachment 1).
* ``moodle`` (the assignment's "Upload multiple feedback files in a zip"; the assignment must have the
  "Feedback files" feedback type enabled, or Moodle offers no such upload): a folder per participant
  ``<Full Name>_<participant id>_assignsubmission_file_/`` holding the pages, the layout Moodle's
  "Download submissions in folders" writes; Moodle reads the participant id after the first ``_``, so the
  name holds no ``_``.

A student without an id for that LMS (collected from another download, or an anonymous Canvas download) is
left out and named.
"""

from __future__ import annotations

import re
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.collect.roster import load_roster
from autograder.course import Course

ZIP_LMS = ("canvas", "moodle")


@dataclass
class FeedbackZip:
    path: Path | None
    members: list[str] = field(default_factory=list)
    students: int = 0
    missing_id: list[str] = field(default_factory=list)  # students with pages but no id for this LMS


def _clean(text: str, keep_space: bool) -> str:
    text = unicodedata.normalize("NFC", text)
    text = re.sub(r"[_/\\:*?\"<>|\x00-\x1f]+", " ", text)
    return re.sub(r"\s+", " " if keep_space else "", text).strip()


def _canvas_name(name: str) -> str:
    # Canvas writes the sortable name lower-case without spaces or punctuation (kimminsu); digits-only
    # pieces are never left in it
    out = re.sub(r"[^\w]", "", _clean(name, keep_space=False).lower()).replace("_", "")
    return out if out and not out.isdigit() else "student"


def _attachment(entry: dict, assignment: str, page: str) -> str:
    """The Canvas attachment id of the hand-in a page is about: its notebook's, else another file's of the
    same assignment (Canvas accepts any attachment of the user's submission)."""
    got = (entry.get("attachments") or {}).get(assignment) or {}
    aid = str(got.get(Path(page).stem) or next(iter(sorted(got.values())), "") or "")
    return aid if aid.isdigit() else ""


def member_name(lms: str, entry: dict, sid: str, assignment: str, page: str) -> str | None:
    """The zip member of one feedback page, or None when the student has no id for ``lms``."""
    name = entry.get("name") or sid
    if lms == "canvas":
        uid = str((entry.get("ids") or {}).get("canvas") or "")
        aid = _attachment(entry, assignment, page)
        if not uid.isdigit() or not aid:
            return None
        return f"{_canvas_name(name)}_{uid}_{aid}_" + re.sub(r"[_\s]+", "-", f"{assignment}-{Path(page).stem}.html")
    pid = str((entry.get("moodle") or {}).get(assignment) or "")  # moodle (build_zip checked lms)
    if not pid.isdigit():
        return None
    return f"{_clean(name, keep_space=True) or sid}_{pid}_assignsubmission_file_/{Path(page).name}"


def feedback_assignments(course: Course) -> list[str]:
    return sorted({p.parent.name for p in course.feedback.glob("*/*/*.html")})


def build_zip(course: Course, assignment: str, lms: str) -> FeedbackZip:
    """Write ``autograder/feedback_<lms>_<assignment>.zip``; path None when no page has an id for ``lms``."""
    if lms not in ZIP_LMS:
        raise ValueError(f"LMS must be one of {', '.join(ZIP_LMS)}; got {lms!r}")
    roster = load_roster(course)
    result = FeedbackZip(None)
    entries: list[tuple[str, Path]] = []
    for page_dir in sorted(course.feedback.glob(f"*/{assignment}")):
        sid = page_dir.parent.name
        pages = sorted(page_dir.glob("*.html"))
        if not pages:
            continue
        names = [member_name(lms, roster.get(sid, {}), sid, assignment, p.name) for p in pages]
        if None in names:
            result.missing_id.append(sid)
            continue
        result.students += 1
        entries += list(zip(names, pages, strict=True))
    if not entries:
        return result
    out = course.root / "autograder" / f"feedback_{lms}_{assignment}.zip"
    tmp = out.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:  # UTF-8 flag set for non-ASCII names
        for name, page in entries:
            zf.write(page, name)
    tmp.replace(out)
    result.path, result.members = out, [n for n, _ in entries]
    return result
