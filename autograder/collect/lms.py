"""Who handed in a file, read from where an LMS download puts it and how it names it.

Each format below turns the path of one file inside an upload (``parts``: folders then file name) into a
:class:`Naming` (the student as the LMS shows them, the LMS's own user id, the notebook's file stem, the
submission time when the name holds one), or a reason why a file that looks like that format cannot be
read, or None (not this format). :func:`read_names` tries the formats on every file, most specific first,
and says which format each file was read as; a ``PATTERN`` replaces them all.

Formats (sources: autograder/README.md, "What collect accepts"):

* Canvas "Download Submissions": ``<name>[_late]_<user id>_<attachment id>_<file>`` (``LATE`` in current
  Canvas); Canvas adds ``-1``, ``-2`` to a file name a student uploaded twice. The attachment id is kept:
  Canvas's "Re-upload Submissions" attaches a feedback file only when its name carries the user id and an
  attachment id of that user's submission (reporting/feedback_zip.py). With anonymous grading the name
  part is ``anon_<anonymous id>`` and there is no user id: one student per anonymous id.
* Moodle "Download all submissions": ``<Full Name>_<participant id>_assignsubmission_<plugin>_<file>``
  (flat) or a folder ``<Full Name>_<participant id>_assignsubmission_<plugin>_/`` per student and plugin
  ("Download submissions in folders"). Moodle writes spaces for ``_`` in names; the participant id is per
  assignment (the offline grading worksheet's ``Participant <id>``). ``onlinetext`` is HTML, never a
  notebook.
* Blackboard "Assignment File Download": ``<title>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>`` plus a
  ``<title>_<username>_attempt_<time>.txt`` receipt (``Name: Full Name (username)``). The title and the
  username may both hold ``_``: the receipt names the username; without it, the title is the longest
  ``_``-bounded prefix shared by every Blackboard name of the upload.
* Google Classroom / Drive: ``<Full Name> - <file>`` (Classroom's copy per student), and per-student folders.
* Gradescope "Export Submissions": ``submission_<id>/`` folders and ``submission_metadata.yml`` naming the
  submitters (name, SID, email) of each.
* nbgrader: ``submitted/<student>/<assignment>/<notebook>.ipynb`` and the exchange's
  ``inbound/<student>+<assignment>+<timestamp>[+<random>]/<notebook>.ipynb``.
* Plain: ``<student>.ipynb``, ``<student>__<notebook>.ipynb``, ``<student>/<notebook>.ipynb``, under any
  number of shared top folders (a zipped ``Week 7/`` folder).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from autograder.collect.names import clean_stem, parse_timestamp

FORMAT_LABELS = {
    "pattern": "PATTERN", "gradescope": "Gradescope export", "exchange": "nbgrader exchange (inbound/)",
    "moodle": "Moodle", "blackboard": "Blackboard", "canvas": "Canvas",
    "canvas_anon": "Canvas (anonymous grading)", "classroom": "Google Classroom/Drive",
    "plain": "plain folders/zips of <student>.ipynb",
}


def nfc(text: str) -> str:
    """Names from macOS zips come decomposed (NFD): the same name must give the same student."""
    return unicodedata.normalize("NFC", text)


@dataclass
class Naming:
    fmt: str
    student: str  # the student as the LMS names them (NFC)
    key: str  # what keeps two students apart within the upload (format + LMS id or name)
    stem: str | None  # the notebook's file stem, None: decided by the notebook's cell ids
    lms_id: str = ""  # the LMS's own id of the student (Canvas user id, Blackboard username, ...)
    when: tuple | None = None  # the LMS's submission time, when the name holds one
    order: int = 0  # the LMS's sequence number (Canvas attachment id): orders hand-ins of one time
    attachment: str = ""  # Canvas: the attachment id of this file (a feedback file names it)
    notes: list = field(default_factory=list)


@dataclass
class Context:
    """What the formats need to know about the whole upload (filled by :func:`read_names`)."""

    assignment: str
    notebooks: set  # notebook names of the assignment (lower case)
    bb_prefix: dict = field(default_factory=dict)  # origin -> Blackboard title prefix
    bb_receipts: dict = field(default_factory=dict)  # (origin, head_with_time) -> (username, full name)
    gradescope: dict = field(default_factory=dict)  # origin -> {submission_<id>: [submitter dicts]}
    plain_depth: dict = field(default_factory=dict)  # origin -> shared top folders to skip
    pattern: re.Pattern | None = None

    def is_notebook_name(self, stem: str) -> bool:
        return clean_stem(stem) in self.notebooks


# -------------------------------------------------------------------------------------------- formats
_CANVAS = re.compile(r"^(?P<name>[^_]+?)(?:_(?P<late>late|LATE))?_(?P<uid>\d+)_(?P<sub>\d+)_(?P<file>.+)$")
_CANVAS_ANON = re.compile(r"^anon_(?P<anon>[A-Za-z0-9]+)(?:_(?P<late>late|LATE))?_(?P<sub>\d+)_(?P<file>.+)$")
_MOODLE_FILE = re.compile(r"^(?P<name>.+?)_(?P<pid>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_(?P<file>.+)$")
_MOODLE_DIR = re.compile(r"^(?P<name>.+)_(?P<pid>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_?$")
_BB = re.compile(r"^(?P<head>.+?)_attempt_(?P<ts>[^_]*)(?:_(?P<file>.+))?$")
_BB_TS = re.compile(r"^\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}$")
_BB_NAME = re.compile(r"^\s*(?:Name|이름)\s*:\s*(?P<full>.*?)\s*\((?P<user>[^()]+)\)\s*$", re.M)
_CLASSROOM = re.compile(r"^(?P<name>.+?) - (?P<file>.+)$")
_EXCHANGE = re.compile(r"^(?P<student>[^+]+)\+(?P<assignment>[^+]+)\+(?P<ts>[^+]+)(?:\+[^+]*)?$")
_GRADESCOPE_DIR = re.compile(r"^submission_(?P<sid>\d+)$")
_COPY_WORDS = {"사본", "copy of", "복사본"}


def _stem(file: str) -> str:
    return file[:-len(".ipynb")] if file.lower().endswith(".ipynb") else file


def _pattern(parts, origin, ctx: Context):
    m = ctx.pattern.search("/".join(parts))
    if not m or not (m.groupdict().get("student") or "").strip():
        return "does not match PATTERN (no 'student' group matched)"
    student = nfc(m["student"].strip())
    nb = m.groupdict().get("notebook")
    return Naming("pattern", student, f"plain:{student}", _stem(nb) if nb else _stem(parts[-1]),
                  lms_id=nfc(m.groupdict().get("id") or ""))


def _gradescope(parts, origin, ctx: Context):
    folder = next((p for p in parts[:-1] if _GRADESCOPE_DIR.match(p)), None)
    if folder is None:
        return None
    meta = ctx.gradescope.get(origin)
    if meta is None:
        return "Gradescope submission folder but no submission_metadata.yml in the export: not collected"
    people = meta.get(folder) or []
    if not people:
        return f"Gradescope: {folder} has no submitter in submission_metadata.yml: not collected"
    first = people[0]
    ident = first.get("sid") or first.get("email") or first.get("name")
    naming = Naming("gradescope", nfc(first.get("name") or ident), f"gradescope:{ident}", _stem(parts[-1]),
                    lms_id=str(first.get("sid") or first.get("email") or ""))
    if len(people) > 1:
        naming.notes.append("group submission: graded for " + ", ".join(p.get("name", "?") for p in people)
                            + "; only the first submitter is collected")
    return naming


def _exchange(parts, origin, ctx: Context):
    for p in parts[:-1]:
        m = _EXCHANGE.match(p)
        if m:
            if m["assignment"] != ctx.assignment:
                return f"nbgrader exchange hand-in of {m['assignment']}, not {ctx.assignment}: not collected"
            stamp = parse_timestamp(re.sub(r"[^0-9]+", "-", m["ts"]).strip("-"))
            student = nfc(m["student"])
            return Naming("exchange", student, f"plain:{student}", _stem(parts[-1]),
                          when=stamp + (0.0,) if stamp else None)
    return None


def _moodle(parts, origin, ctx: Context):
    for p in parts[:-1]:
        m = _MOODLE_DIR.match(p)
        if m:
            return _moodle_naming(m, parts[-1])
    m = _MOODLE_FILE.match(parts[-1])
    return _moodle_naming(m, m["file"]) if m else None


def _moodle_naming(m, file: str):
    name = nfc(m["name"]).strip()
    if m["plugin"] != "file":
        return f"Moodle {m['plugin']} submission of {name} (not a notebook file): not collected"
    return Naming("moodle", name, f"moodle:{name}", _stem(file), lms_id=m["pid"])


def bb_split(name: str) -> dict | None:
    """{head, ts, file} of a Blackboard name: the first ``_attempt_`` followed by a well-formed time
    (a username may itself hold ``_attempt_``), else the first ``_attempt_`` at all; None: no such name."""
    found = []
    start = 0
    while (i := name.find("_attempt_", start)) > 0:
        m = _BB.match("h" + name[i:])  # "h": a stand-in head, so the match starts at this _attempt_
        if m:
            found.append({"head": name[:i], "ts": m["ts"], "file": m["file"]})
        start = i + 1
    good = [f for f in found if _BB_TS.match(f["ts"])]
    return (good or found or [None])[0]


def _blackboard(parts, origin, ctx: Context):
    m = bb_split(parts[-1])
    if not m:
        return None
    ts = m["ts"]
    stamp = parse_timestamp(ts) if _BB_TS.match(ts) else None
    if stamp is None:
        return (f"Blackboard-style name with a malformed time {ts!r} (expected YYYY-MM-DD-HH-MM-SS): "
                "not collected, so no student is guessed from it")
    if not m["file"]:
        return None  # the receipt itself
    head = nfc(m["head"])
    receipt = ctx.bb_receipts.get((origin, f"{head}_attempt_{ts}"))
    if receipt:
        user, full = receipt
    else:
        prefix = ctx.bb_prefix.get(origin, "")
        user = head[len(prefix) + 1:] if prefix and head.startswith(prefix + "_") else ""
        if not user:
            if head.startswith(ctx.assignment + "_") and len(head) > len(ctx.assignment) + 1:
                user = head[len(ctx.assignment) + 1:]
            elif "_" in head:
                user = head.split("_", 1)[1]
            else:
                return f"Blackboard name without a username before _attempt_ ({head!r}): not collected"
        full = user
    return Naming("blackboard", full or user, f"blackboard:{user}", _stem(m["file"]), lms_id=user,
                  when=stamp + (0.0,))


def _canvas(parts, origin, ctx: Context):
    anon = _CANVAS_ANON.match(parts[-1])
    m = anon or _CANVAS.match(parts[-1])
    if not m or not m["file"].lower().endswith(".ipynb"):
        return None
    if anon:
        aid = anon["anon"]
        naming = Naming("canvas_anon", f"anon_{aid}", f"canvas_anon:{aid}", _stem(m["file"]), lms_id=aid,
                        order=int(m["sub"]), attachment=m["sub"])
        naming.notes.append(f"{m['file']}: anonymous Canvas download (anonymous id {aid}): no Canvas user id "
                            "until the assignment's anonymity is lifted")
    else:
        naming = Naming("canvas", nfc(m["name"]), f"canvas:{m['uid']}", _stem(m["file"]), lms_id=m["uid"],
                        order=int(m["sub"]), attachment=m["sub"])
    if m["late"]:
        naming.notes.append(f"{m['file']}: handed in late (Canvas)")
    return naming


def _classroom(parts, origin, ctx: Context):
    m = _CLASSROOM.match(parts[-1])
    if not m or nfc(m["name"]).strip().lower() in _COPY_WORDS:
        return None
    name = nfc(m["name"]).strip()
    return Naming("classroom", name, f"plain:{name}", _stem(m["file"]))


def _plain(parts, origin, ctx: Context):
    rest = parts[ctx.plain_depth.get(origin, 0):]
    stem = _stem(rest[-1])
    if len(rest) == 1:
        if "__" in stem:
            student, _, nb = stem.partition("__")
            student = nfc(student)
            return Naming("plain", student, f"plain:{student}", nb)
        if ctx.is_notebook_name(stem):
            return (f"{rest[-1]} names a notebook, not a student, and sits in no student folder: put it in "
                    "<student>/ or name it <student>__<notebook>.ipynb (or set PATTERN)")
        student = nfc(stem)
        return Naming("plain", student, f"plain:{student}", None)
    student = nfc(rest[0])
    naming = Naming("plain", student, f"plain:{student}", stem)
    inner = [p for p in rest[1:-1] if p != ctx.assignment]
    if inner:
        naming.notes.append(f"{stem} taken from the subfolder {'/'.join(inner)}")
    return naming


FORMATS = (_gradescope, _exchange, _moodle, _blackboard, _canvas, _classroom, _plain)  # most specific first


# -------------------------------------------------------------------------------- upload-wide facts
def blackboard_prefix(heads: list[str]) -> str:
    """The Blackboard title shared by every ``<title>_<username>`` head: the longest ``_``-bounded common
    prefix that leaves a username in each (a single head: up to its first ``_``)."""
    if not heads:
        return ""
    if len(set(heads)) == 1:
        return heads[0].split("_", 1)[0] if "_" in heads[0] else ""
    common = os.path.commonprefix(heads)
    cut = common.rfind("_")
    while cut > 0 and not all(len(h) > cut + 1 for h in heads):
        cut = common.rfind("_", 0, cut)
    return common[:cut] if cut > 0 else ""


def plain_depth(paths: list[tuple], assignment: str, is_nb: Callable[[str], bool]) -> int:
    """How many shared top folders to skip before the student level (see autograder/README.md)."""
    c = 0
    while paths and all(len(p) > c + 1 for p in paths):
        if len({p[c] for p in paths}) != 1:
            break
        below = [p[c + 1:] for p in paths]
        if all(len(b) == 1 for b in below) and any(is_nb(_stem(b[0])) for b in below):
            break  # notebooks right below: the shared folder is the student
        if all(len(b) > 1 for b in below) and {b[0] for b in below} == {assignment}:
            break  # <student>/<assignment>/...: nbgrader's submitted/ of one student
        c += 1
    return c


def parse_receipt(text: str) -> tuple[str, str] | None:
    """(username, full name) from a Blackboard attempt receipt (.txt), or None."""
    m = _BB_NAME.search(text)
    return (nfc(m["user"].strip()), nfc(m["full"].strip())) if m else None


def parse_gradescope_metadata(text: str) -> dict | str:
    """{submission_<id>: [{"name", "sid", "email"}, ...]} from submission_metadata.yml, or a reason."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return f"submission_metadata.yml is not YAML ({type(exc).__name__})"
    if not isinstance(data, dict):
        return "submission_metadata.yml holds no submissions"
    out = {}
    for key, entry in data.items():
        if not isinstance(entry, dict):
            continue
        people = entry.get(":submitters") or entry.get("submitters") or []
        out[str(key)] = [{k.lstrip(":"): str(v) for k, v in p.items() if v is not None}
                         for p in people if isinstance(p, dict)]
    return out


def compile_pattern(pattern: str | None) -> re.Pattern | None:
    """``PATTERN``: a regular expression searched in each file's path inside the upload, with a named
    group ``student`` (and optionally ``notebook`` and ``id``)."""
    if not pattern:
        return None
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"PATTERN: not a regular expression ({exc})") from None
    if "student" not in rx.groupindex:
        raise ValueError("PATTERN: needs a named group (?P<student>...), e.g. "
                         "PATTERN='(?P<student>[^/]+)/(?P<notebook>[^/]+)\\.ipynb$'")
    return rx


def read_name(parts: tuple, origin: str, ctx: Context) -> Naming | str | None:
    """The first format that reads ``parts`` (a Naming) or refuses it (a reason); None: none does."""
    if ctx.pattern is not None:
        return _pattern(parts, origin, ctx)
    for fn in FORMATS:
        got = fn(parts, origin, ctx)
        if got is not None:
            return got
    return None
