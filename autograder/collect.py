"""Import hand-ins into autograder/submitted/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb (``make collect``).

``FROM`` is a folder or a ``.zip`` (an LMS download, or any zip of the layouts below); a folder may hold
``.zip`` files beside notebooks. Inside it a hand-in is named

* ``<prefix>_<student>_attempt_<timestamp>_<notebook>.ipynb`` (LMS; see collect_names.py), anywhere;
* ``<student>.ipynb`` (one-notebook assignments) or ``<student>__<notebook>.ipynb``;
* ``<student>/<notebook>.ipynb`` (also deeper: ``<student>/sub/<notebook>.ipynb``).

Which release notebook a file is, is decided by its name (Colab's ``Copy of``, ``(1)``, ``의 사본``
are recognised) or else by its nbgrader cell ids. Of several hand-ins of one notebook by one student
the newest wins (LMS timestamp, else the file's time). Every file that is not collected gets one line
with the reason (collect_report.py; the report is also saved in autograder/logs/collect_ASSIGNMENT.json
and read by grades.csv). Links are never followed and only regular files are opened; zips are checked
before anything is unpacked (collect_zip.py). Accepted hand-ins are staged in autograder/work/ and moved
into submitted/ at the end, so an interrupted run leaves submitted/ as it was; the upload is only read.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python autograder/collect.py [ASSIGNMENT] FROM
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder.collect_check import notebook_grade_ids, parse_notebook  # noqa: E402
from autograder.collect_names import (  # noqa: E402
    clean_stem,
    parse_lms_name,
    sanitize_student_id,
    split_flat_name,
)
from autograder.collect_report import CollectReport, known_raw_ids, save  # noqa: E402
from autograder.collect_sources import Entry, walk_folder  # noqa: E402
from autograder.collect_zip import ZipLimits, open_zip, zip_entries  # noqa: E402
from autograder.course import Course, grade_ids, read_notebook  # noqa: E402

__all__ = ["CollectReport", "collect", "identify_notebook", "sanitize_student_id", "cli"]


@dataclass
class _Candidate:
    student: str
    notebook: str
    when: tuple
    where: str
    staged: Path
    lms: bool = False  # ``when`` is the LMS's submission time


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
    ids = notebook_grade_ids(nb)
    best, best_score = None, 0.0
    for name, ref in notebooks.items():
        score = len(ids & ref) / len(ref) if ref else 0.0
        if score > best_score:
            best, best_score = name, score
    return best if best_score >= 0.5 else None


class _Run:
    """One collect of one assignment: classify entries, stage accepted bytes, pick the newest, commit."""

    def __init__(self, course: Course, assignment: str, source: Path, stage: Path):
        self.course, self.assignment, self.stage = course, assignment, stage
        self.notebooks = _notebook_index(course, assignment)
        if not self.notebooks:
            raise FileNotFoundError(f"assignment: no notebooks for {assignment!r} in release/ or source/")
        self.report = CollectReport(assignment=assignment, source=str(source))
        self.previous_raw = known_raw_ids(course, assignment)
        self.candidates: list[_Candidate] = []
        self._others: dict | None = None

    def student_id(self, raw: str) -> str:
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

    def name_of(self, entry: Entry) -> tuple[str | None, str | None, tuple]:
        """(raw student id, notebook stem or None, time) from where the entry sits and its name."""
        lms = parse_lms_name(entry.name, self.assignment)
        if lms is not None:
            return lms.student, Path(lms.file_id).stem, lms.timestamp + (0.0,)
        stem = entry.name[:-len(".ipynb")]
        if len(entry.parts) == 1:
            student, nb = split_flat_name(stem)
            return student, nb, entry.when
        return entry.parts[0], stem, entry.when

    def which_notebook(self, nb: dict, stem: str | None) -> tuple[str | None, str | None]:
        """(release notebook name, None) or (None, why not): a ``<student>.ipynb`` of a one-notebook
        assignment is that notebook unless its cell ids are another assignment's."""
        if stem is None and len(self.notebooks) == 1:
            name = next(iter(self.notebooks))
            ids = notebook_grade_ids(nb)
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
        if entry.problem and not entry.name.lower().endswith(".ipynb"):
            self.report.skipped.append((where, entry.problem))
            return
        if not entry.name.lower().endswith(".ipynb"):
            kind = "zip inside a zip or a student folder" if entry.name.lower().endswith(".zip") else "not a notebook"
            self.report.skipped.append((where, f"{kind}: ignored"))
            return
        raw, stem, when = self.name_of(entry)
        student = self.student_id(raw) if raw and raw.strip() else None
        data, why = entry.read()
        nb = None
        if why is None:
            nb, why = parse_notebook(data)
        name = None
        if why is None:
            name, why = self.which_notebook(nb, stem)
        if why is not None:
            self.report.skipped.append((where, why))
            self.report.note(student, f"{Path(where).name}: {why}")
            return
        if student is None:
            self.report.skipped.append((where, "no student id in the name: not collected"))
            return
        staged = self.stage / "handins" / f"{len(self.candidates)}.ipynb"
        staged.parent.mkdir(parents=True, exist_ok=True)
        staged.write_bytes(data)
        lms = parse_lms_name(entry.name, self.assignment) is not None
        if len(entry.parts) > 2 and not lms:
            self.report.note(student, f"{name} taken from the subfolder {'/'.join(entry.parts[1:-1])}")
        self.candidates.append(_Candidate(student, name, when, where, staged, lms))

    def choose(self) -> list[_Candidate]:
        """The newest hand-in per (student, notebook); the others are reported as dropped."""
        groups: dict[tuple, list[_Candidate]] = {}
        for c in self.candidates:
            groups.setdefault((c.student, c.notebook), []).append(c)
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

    def commit(self, winners: list[_Candidate]) -> None:
        """Move the winners into submitted/ (plus ``timestamp.txt``, the newest LMS time, as nbgrader
        zip_collect writes it, for the gradebook's submission time)."""
        stamps: dict[str, tuple] = {}
        for c in winners:
            (self.course.submitted / c.student / self.assignment).mkdir(parents=True, exist_ok=True)
            if c.lms:
                stamps[c.student] = max(stamps.get(c.student, c.when), c.when)
        for student, when in stamps.items():
            staged = self.stage / "handins" / f"{student}.timestamp.txt"
            staged.write_text("{:04d}-{:02d}-{:02d} {:02d}:{:02d}:{:02d}\n".format(*when[:6]), encoding="ascii")
        for c in winners:
            os.replace(c.staged, self.course.submitted / c.student / self.assignment / f"{c.notebook}.ipynb")
            self.report.collected.setdefault(c.student, []).append(c.notebook)
        for student in stamps:
            os.replace(self.stage / "handins" / f"{student}.timestamp.txt",
                       self.course.submitted / student / self.assignment / "timestamp.txt")


def _entries_of(source: Path, report: CollectReport, limits: ZipLimits, run: _Run) -> None:
    if source.is_file() and source.suffix.lower() == ".zip":
        with open_zip(source, report.skipped, limits) as zf:
            if zf is not None:
                for e in zip_entries(zf, str(source), report.skipped, limits):
                    run.take(e)
        return
    if not source.is_dir():
        raise FileNotFoundError(f"source: {source} is neither a .zip nor a folder")
    for e in walk_folder(source, report.skipped):
        if len(e.parts) == 1 and e.name.lower().endswith(".zip"):
            with open_zip(Path(e.where), report.skipped, limits) as zf:
                if zf is not None:
                    for z in zip_entries(zf, e.where, report.skipped, limits):
                        run.take(z)
        else:
            run.take(e)


def collect(course: Course, assignment: str, source: str | os.PathLike,
            limits: ZipLimits | None = None) -> CollectReport:
    """Import hand-ins of ``assignment`` from ``source`` (a folder or a .zip); see the module docstring.
    ``limits``: the zip limits (default ``ZipLimits()``)."""
    limits = limits or ZipLimits()
    if not isinstance(assignment, str) or not assignment or "/" in assignment or assignment.startswith("."):
        raise ValueError(f"assignment: expected an assignment name, got {assignment!r}")
    source = Path(source)
    if not source.exists():
        raise FileNotFoundError(f"source: {source} does not exist")
    course.work.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f"collect-{assignment}-", dir=course.work))
    try:
        run = _Run(course, assignment, source, stage)
        _entries_of(source, run.report, limits, run)
        run.commit(run.choose())
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    save(course, run.report)
    return run.report


def cli(course: Course, args: list[str]) -> int:
    """``collect [ASSIGNMENT] FROM``; without ASSIGNMENT: FROM/<assignment>/ for every assignment found
    there (e.g. autograder/samples), or the only assignment in source/. Exit 1 when nothing is collected."""
    if len(args) == 2:
        jobs = [(args[0], Path(args[1]))]
    elif len(args) == 1:
        src = Path(args[0])
        known = course.assignments()
        jobs = [(a, src / a) for a in known if (src / a).is_dir()]
        if not jobs and len(known) == 1:
            jobs = [(known[0], src)]
        if not jobs:
            print(f"error: say which assignment: collect ASSIGNMENT {src} (known: {known})", file=sys.stderr)
            return 2
    else:
        print("usage: collect [ASSIGNMENT] FROM", file=sys.stderr)
        return 2
    ok = True
    for assignment, src in jobs:
        try:
            report = collect(course, assignment, src)
        except (FileNotFoundError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"{assignment}: {report.summary()}")
        ok = ok and bool(report.collected)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(cli(Course.at(os.environ.get("GEMM_LAB_COURSE_ROOT")), sys.argv[1:]))
