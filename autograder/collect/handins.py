"""Import hand-ins into autograder/submitted/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb (``make collect``).

``FROM`` is a folder or a ``.zip`` (an LMS download, or any zip of the layouts in autograder/collect/lms.py); a
folder may hold ``.zip`` files beside notebooks. Who handed a file in is read from its path by the LMS
formats of lms.py (Canvas, Moodle, Blackboard, Google Classroom/Drive, Gradescope, nbgrader, plain
``<student>.ipynb`` layouts) or by a ``PATTERN``; the report says which format each file was read as.
Names are Unicode-normalised (NFC) before ids are made, and each student keeps the raw name and the LMS's
own id in the roster (roster.py), which the gradebook exports use.

Which release notebook a file is, is decided by its name (Colab's ``Copy of``, ``(1)``, ``의 사본``,
Canvas's ``-1`` are recognised) or else by its nbgrader cell ids. Of several hand-ins of one notebook by
one student the newest wins (LMS time, else the file's time). Hand-ins of *different* people never
become one student: files whose names point at different people under one student are an error, and
nothing is collected. Every file that is not collected gets one line with the reason (report.py;
the report is also saved in autograder/logs/collect_ASSIGNMENT.json and read by grades.csv). Links are
never followed and only regular files are opened; zips are checked before anything is unpacked
(archive.py). Accepted hand-ins are staged in autograder/work/ and moved into submitted/ at the end,
so an interrupted or refused run leaves submitted/ as it was; the upload is only read.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.cells import grade_ids
from autograder.collect import lms
from autograder.collect.archive import ZipLimits, open_zip, student_zip_entries, zip_entries
from autograder.collect.check import parse_notebook
from autograder.collect.names import clean_stem, sanitize_student_id
from autograder.collect.roster import record_students
from autograder.collect.sources import Entry, walk_folder
from autograder.collect.summary import CollectReport, known_raw_ids, save
from autograder.course import Course, read_notebook
from autograder.course_lock import clean_stale_stages, stage_dir

__all__ = ["CollectError", "CollectReport", "collect", "identify_notebook", "sanitize_student_id", "cli"]

MAX_SIDE_FILE = 2**20  # Blackboard receipts and Gradescope's metadata are a few KB


class CollectError(ValueError):
    """The upload cannot be collected as it is (nothing was written): the message says what to do."""


@dataclass
class _Candidate:
    student: str
    notebook: str
    when: tuple
    where: str
    staged: Path
    naming: lms.Naming  # how the LMS named it: its time, the stem as handed in, the Canvas attachment id


def _notebook_index(course: Course, assignment: str) -> dict[str, set]:
    for base in (course.release / assignment, course.source / assignment):
        files = sorted(base.glob("*.ipynb")) if base.is_dir() else []
        if files:  # not released yet: the masters have the same names and ids
            return {p.stem: set(grade_ids(read_notebook(p))) for p in files}
    return {}


def identify_notebook(nb: dict, notebooks: dict[str, set], stem: str | None) -> str | None:
    """The notebook of ``notebooks`` a hand-in is: by (cleaned) file name, else by its nbgrader cell ids."""
    if stem is not None:
        cleaned = clean_stem(stem)
        for name in notebooks:
            if cleaned == name.lower():
                return name
    ids = set(grade_ids(nb))
    best, best_score = None, 0.0
    for name, ref in notebooks.items():
        score = len(ids & ref) / len(ref) if ref else 0.0
        if score > best_score:
            best, best_score = name, score
    return best if best_score >= 0.5 else None


def _disk_name(n: lms.Naming) -> str:
    """What a student's id on disk is made from: stable across assignments of one LMS."""
    if n.fmt == "canvas":
        return f"{n.student}_{n.lms_id}"
    if n.fmt == "canvas_anon":
        return n.student  # anon_<anonymous id>
    if n.fmt in ("blackboard", "gradescope") and n.lms_id:
        return n.lms_id
    return n.student


class _Run:
    """One collect of one assignment: name every entry, stage accepted bytes, pick the newest, commit."""

    def __init__(self, course: Course, assignment: str, source: Path, stage: Path, pattern: str | None = None):
        self.course, self.assignment, self.stage = course, assignment, stage
        self.notebooks = _notebook_index(course, assignment)
        if not self.notebooks:
            raise FileNotFoundError(f"assignment: no notebooks for {assignment!r} in release/ or source/")
        self.report = CollectReport(assignment=assignment, source=str(source))
        self.previous_raw = known_raw_ids(course, assignment)
        self.candidates: list[_Candidate] = []
        self._others: dict | None = None
        self.ctx = lms.Context(assignment, {n.lower() for n in self.notebooks},
                               pattern=lms.compile_pattern(pattern))
        self.namings: dict[int, lms.Naming | str | None] = {}
        self.ids: dict[str, str] = {}  # naming key -> student id
        self.formats: dict[str, int] = {}

    # ------------------------------------------------------------------ names of the whole upload
    def prepare(self, entries: list[Entry]) -> None:
        """Read every entry's name with the upload in view (Blackboard title, receipts, Gradescope
        metadata, shared top folders), then give each student key one id."""
        by_origin: dict[str, list[Entry]] = {}
        for e in entries:
            if not any(p.startswith(".") for p in e.parts):
                by_origin.setdefault(e.origin, []).append(e)
        for origin, group in by_origin.items():
            heads, paths = [], []
            for e in group:
                low = e.name.lower()
                if low == "submission_metadata.yml":
                    meta = self._side_text(e)
                    parsed = lms.parse_gradescope_metadata(meta) if meta is not None else "unreadable"
                    if isinstance(parsed, str):
                        self.report.skipped.append((e.where, f"Gradescope metadata: {parsed}"))
                    else:
                        self.ctx.gradescope[origin] = parsed
                elif low.endswith(".txt") and "_attempt_" in e.name:
                    text = self._side_text(e)
                    got = lms.parse_receipt(text) if text else None
                    if got:
                        self.ctx.bb_receipts[(origin, lms.nfc(e.name[:-4]))] = got
                elif low.endswith(".ipynb"):
                    paths.append(e.container[:-1] + (e.name,) if e.container else e.parts)
                    m = lms.bb_split(e.name)
                    if m and m["file"] and lms._BB_TS.match(m["ts"]):
                        heads.append(lms.nfc(m["head"]))
            self.ctx.bb_prefix[origin] = lms.blackboard_prefix(heads)
            self.ctx.plain_depth[origin] = lms.plain_depth(paths, self.assignment, self.ctx.is_notebook_name)
        namings = []
        for e in entries:
            if e.name.lower().endswith(".ipynb") and not any(p.startswith(".") for p in e.parts):
                n = self._naming(e)
                self.namings[id(e)] = n
                if isinstance(n, lms.Naming):
                    namings.append(n)
        self._namesakes(namings)
        for n in sorted(namings, key=lambda n: (n.key, n.student)):
            if n.key not in self.ids:
                self.ids[n.key] = self.student_id(_disk_name(n))
                self.report.roster[self.ids[n.key]] = {"name": n.student, "format": n.fmt, "lms_id": n.lms_id}

    def _naming(self, e: Entry) -> lms.Naming | str | None:
        if not e.container:
            return lms.read_name(e.parts, e.origin, self.ctx)
        # from a student's zip: the LMS's name of the zip says who (Canvas, Moodle, ... and a top-level
        # <student>.zip), a plain folder per student says who when the zip is inside one
        n = lms.read_name(e.container, e.origin, self.ctx)
        if isinstance(n, lms.Naming) and n.fmt == "plain" and len(e.container) > 1:
            n = lms.read_name(e.container[:-1] + (e.name,), e.origin, self.ctx)
        if isinstance(n, lms.Naming):
            n = dataclasses.replace(n, stem=lms.nfc(e.name[:-len(".ipynb")]), notes=[
                *n.notes, f"{e.name}: taken from the zip {e.parts[len(e.container) - 1]}"])
        return n

    def _namesakes(self, namings: list[lms.Naming]) -> None:
        """Two Moodle participants with one full name stay two students (the participant id tells them apart)."""
        pids: dict[str, set] = {}
        for n in namings:
            if n.fmt == "moodle":
                pids.setdefault(n.key, set()).add(n.lms_id)
        for n in namings:
            if n.fmt == "moodle" and len(pids.get(f"moodle:{n.student}", ())) > 1:
                n.key = f"moodle:{n.student}#{n.lms_id}"
                n.notes.append(f"another participant is also named {n.student!r}: told apart by the Moodle "
                               f"participant id {n.lms_id}")
                n.student = f"{n.student}_{n.lms_id}"

    def _side_text(self, e: Entry) -> str | None:
        data, why = e.read()  # (a link or special file: its reason, never its bytes)
        if why or data is None or len(data) > MAX_SIDE_FILE:
            return None
        return data.decode("utf-8-sig", errors="replace")

    def student_id(self, raw: str) -> str:
        raw = lms.nfc(raw)
        sid = sanitize_student_id(raw)
        owner = self.report.raw_ids.get(sid, self.previous_raw.get(sid, raw))
        if owner != raw:
            longer = sanitize_student_id(raw, hash_len=16)
            self.report.note(longer, f"id {raw!r} would have become {sid!r}, already used by {owner!r}: "
                                     f"collected as {longer!r}")
            sid = longer
        self.report.raw_ids.setdefault(sid, raw)
        return sid

    def other_assignment(self, nb: dict, stem: str | None) -> str | None:
        if self._others is None:
            self._others = {a: _notebook_index(self.course, a) for a in self.course.assignments()
                            if a != self.assignment}
        for a, index in self._others.items():
            name = identify_notebook(nb, index, stem)
            if name:
                return f"{a}/{name}"
        return None

    def which_notebook(self, nb: dict, stem: str | None) -> tuple[str | None, str | None]:
        """(release notebook name, None) or (None, why not): a ``<student>.ipynb`` of a one-notebook
        assignment is that notebook unless its cell ids are another assignment's."""
        if stem is None and len(self.notebooks) == 1:
            name = next(iter(self.notebooks))
            ids = set(grade_ids(nb))
            other = self.other_assignment(nb, None) if ids and not ids & self.notebooks[name] else None
            return (None, f"a notebook of {other}, not of {self.assignment}") if other else (name, None)
        name = identify_notebook(nb, self.notebooks, stem)
        if name is not None:
            return name, None
        other = self.other_assignment(nb, stem)
        return None, (f"a notebook of {other}, not of {self.assignment}" if other
                      else f"matches no notebook of {self.assignment} {sorted(self.notebooks)}")

    def take(self, entry: Entry) -> None:
        """Classify one entry: stage it as a candidate, or report why not (noted for its student)."""
        where = entry.where
        if any(p.startswith(".") for p in entry.parts):
            self.report.skipped.append((where, "hidden file: not collected"))
            return
        low = entry.name.lower()
        if not low.endswith(".ipynb"):
            if entry.problem:
                why = entry.problem
            elif low == "submission_metadata.yml" or (low.endswith(".txt") and "_attempt_" in entry.name):
                why = "the LMS's record of a hand-in (read for names): not a notebook"
            else:
                why = f"{'zip inside a zip or a student folder' if low.endswith('.zip') else 'not a notebook'}: ignored"
            self.report.skipped.append((where, why))
            return
        naming = self.namings.get(id(entry))
        if isinstance(naming, str):
            self.report.skipped.append((where, naming))
            return
        student = self.ids.get(naming.key) if naming is not None else None
        data, why = entry.read()
        nb = None
        if why is None:
            nb, why = parse_notebook(data)
        name = None
        if why is None:
            name, why = self.which_notebook(nb, naming.stem if naming else None)
        if why is not None:
            self.report.skipped.append((where, why))
            self.report.note(student, f"{Path(where).name}: {why}")
            return
        if student is None:
            self.report.skipped.append((where, "no student id in the name: not collected"))
            return
        self.formats[naming.fmt] = self.formats.get(naming.fmt, 0) + 1
        staged = self.stage / "handins" / f"{len(self.candidates)}.ipynb"
        staged.parent.mkdir(parents=True, exist_ok=True)
        staged.write_bytes(data)
        for note in naming.notes:
            self.report.note(student, note)
        when = naming.when if naming.when is not None else entry.when
        self.candidates.append(_Candidate(student, name, tuple(when) + (naming.order,), where, staged, naming))

    def choose(self) -> list[_Candidate]:
        """The newest hand-in per (student, notebook); the others are reported as dropped. Hand-ins
        that look like different people's under one student stop the run (CollectError)."""
        groups: dict[tuple, list[_Candidate]] = {}
        for c in self.candidates:
            groups.setdefault((c.student, c.notebook), []).append(c)
        self._refuse_merged_people(groups)
        winners = []
        for (student, nb), cands in sorted(groups.items()):
            cands.sort(key=lambda c: (c.when, c.where), reverse=True)
            keep = cands[0]
            winners.append(keep)
            for c in cands[1:]:
                tie = " (same time: the later name was kept)" if c.when == keep.when else ""
                self.report.dropped.append((c.where, f"older hand-in of {nb} by {student}; kept {keep.where}{tie}"))
            if len(cands) > 1:
                self.report.note(student, f"{nb}: newest of {len(cands)} hand-ins graded ({Path(keep.where).name})")
        return winners

    def _refuse_merged_people(self, groups: dict) -> None:
        """``Week 7/alice.ipynb`` and ``Week 7/bob.ipynb`` read as one student "Week 7" would grade one
        of them and drop the other: copies of one notebook whose stems are unrelated names (not the
        notebook's name, nor each other's) under a folder-named student are refused as a whole."""
        bad = []
        for (student, nb), cands in groups.items():
            if len(cands) < 2 or any(c.naming.fmt != "plain" for c in cands):  # LMS-written names: told apart
                continue
            stems = {clean_stem(c.naming.stem) for c in cands if c.naming.stem}
            unrelated = {s for s in stems if nb.lower() not in s}
            if len(unrelated) > 1:
                bad.append(f"{student}: {', '.join(sorted(Path(c.where).name for c in cands))}")
        if bad:
            raise CollectError(
                "these files would become one student although their names point at different people: "
                + "; ".join(bad[:5]) + ". Put each student's notebooks in a <student>/ folder, name them "
                "<student>__<notebook>.ipynb, or set PATTERN (see autograder/README.md); nothing was collected")

    def commit(self, winners: list[_Candidate]) -> None:
        """Move the winners into submitted/ (plus ``timestamp.txt``, the newest LMS time, as nbgrader
        zip_collect writes it, for the gradebook's submission time)."""
        stamps: dict[str, tuple] = {}
        for c in winners:
            (self.course.submitted / c.student / self.assignment).mkdir(parents=True, exist_ok=True)
            if c.naming.when is not None:  # the LMS's submission time
                stamps[c.student] = max(stamps.get(c.student, c.when), c.when)
        for student, when in stamps.items():
            staged = self.stage / "handins" / f"{student}.timestamp.txt"
            staged.write_text("{:04d}-{:02d}-{:02d} {:02d}:{:02d}:{:02d}\n".format(*when[:6]), encoding="ascii")
        for c in winners:
            os.replace(c.staged, self.course.submitted / c.student / self.assignment / f"{c.notebook}.ipynb")
            self.report.collected.setdefault(c.student, []).append(c.notebook)
            if c.naming.attachment and c.student in self.report.roster:  # a Canvas feedback file names it
                self.report.roster[c.student].setdefault("attachments", {})[c.notebook] = c.naming.attachment
        for student in stamps:
            os.replace(self.stage / "handins" / f"{student}.timestamp.txt",
                       self.course.submitted / student / self.assignment / "timestamp.txt")
        self.report.formats = {lms.FORMAT_LABELS.get(k, k): v for k, v in sorted(self.formats.items())}


def _entries_of(source: Path, report: CollectReport, limits: ZipLimits, stack) -> list[Entry]:
    """Every entry of the upload (zips at the top of a folder opened too; ``stack`` keeps them open), a
    student's own zip (inside the upload's zip, or in a student folder) read as the notebooks it holds."""
    if source.is_file() and source.suffix.lower() == ".zip":
        zf = stack.enter_context(open_zip(source, report.skipped, limits))
        entries = zip_entries(zf, str(source), report.skipped, limits) if zf is not None else []
    elif not source.is_dir():
        raise FileNotFoundError(f"source: {source} is neither a .zip nor a folder")
    else:
        entries = []
        for e in walk_folder(source, report.skipped):
            if len(e.parts) == 1 and e.name.lower().endswith(".zip") and not e.problem:
                zf = stack.enter_context(open_zip(Path(e.where), report.skipped, limits))
                if zf is not None:
                    entries += zip_entries(zf, e.where, report.skipped, limits)
            else:
                entries.append(e)
    out = []
    for e in entries:
        if e.name.lower().endswith(".zip") and not e.problem and not any(p.startswith(".") for p in e.parts):
            out += student_zip_entries(e, report.skipped, limits)
        else:
            out.append(e)
    return out


def collect(course: Course, assignment: str, source: str | os.PathLike,
            limits: ZipLimits | None = None, pattern: str | None = None) -> CollectReport:
    """Import hand-ins of ``assignment`` from ``source`` (a folder or a .zip); see the module docstring.
    ``limits``: the zip limits (default ``ZipLimits()``); ``pattern``: see lms.compile_pattern."""
    from contextlib import ExitStack

    limits = limits or ZipLimits()
    if not isinstance(assignment, str) or not assignment or "/" in assignment or assignment.startswith("."):
        raise ValueError(f"assignment: expected an assignment name, got {assignment!r}")
    source = Path(source)
    if not source.exists():
        raise FileNotFoundError(f"source: {source} does not exist")
    clean_stale_stages(course.work)  # a killed collect's staging (its process is gone)
    stage = stage_dir(course.work, "collect", assignment)
    try:
        run = _Run(course, assignment, source, stage, pattern)
        with ExitStack() as stack:
            entries = _entries_of(source, run.report, limits, stack)
            run.prepare(entries)
            for e in entries:
                run.take(e)
        run.commit(run.choose())
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    save(course, run.report)
    record_students(course, assignment, run.report)
    return run.report


USAGE = "make collect FROM=<LMS download .zip or folder> [ASSIGNMENT=week07] [PATTERN=<regex>]"


def cli(course: Course, where: list[str], pattern: str | None = None) -> int:
    """``collect [ASSIGNMENT] FROM [--pattern REGEX]`` (``where``: [ASSIGNMENT] FROM); without ASSIGNMENT:
    FROM/<assignment>/ for every assignment found there (e.g. autograder/samples), or the only assignment in
    source/. Exit 1 when nothing is collected, 2 on bad use (one line on stderr, no traceback)."""
    args = [a for a in where if a.strip()]
    if not args or len(args) > 2:
        print(f"error: say where the hand-ins are ({'FROM is missing' if not args else 'FROM given twice'}): "
              f"{USAGE}", file=sys.stderr)
        return 2
    src = Path(args[-1])
    if not src.exists():
        print(f"error: FROM={src}: no such file or folder (give the LMS download .zip or its unpacked folder)",
              file=sys.stderr)
        return 2
    known = course.assignments()
    if len(args) == 2:
        if args[0] not in known:
            print(f"error: ASSIGNMENT={args[0]} is not an assignment of source/ (known: {', '.join(known)})",
                  file=sys.stderr)
            return 2
        jobs = [(args[0], src)]
    else:
        jobs = [(a, src / a) for a in known if (src / a).is_dir()] if src.is_dir() else []
        if not jobs and len(known) == 1:
            jobs = [(known[0], src)]
        if not jobs:
            print(f"error: say which assignment FROM={src} holds: make collect ASSIGNMENT=<one of "
                  f"{', '.join(known)}> FROM={src}", file=sys.stderr)
            return 2
    ok = True
    for assignment, path in jobs:
        try:
            report = collect(course, assignment, path, pattern=pattern)
        except (FileNotFoundError, ValueError) as exc:  # CollectError is a ValueError
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"{assignment}: {report.summary()}")
        ok = ok and bool(report.collected)
    return 0 if ok else 1

