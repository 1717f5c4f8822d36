"""Import hand-ins into autograder/submitted/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb.

Accepted inputs (``FROM``):

* an LMS download, as ``nbgrader zip_collect`` expects it: a ``.zip`` (or a folder of them) whose files are
  named ``<anything>_<student>_attempt_<timestamp>_<notebook>.ipynb`` (the regexp is
  ``c.FileNameCollectorPlugin.named_regexp`` in nbgrader_config.py); it is run through zip_collect;
* a folder of ``<student>.ipynb`` files (what Colab/Kaggle students download) for one-notebook
  assignments;
* for assignments with several notebooks, a folder of ``<student>/<notebook>.ipynb`` or of
  ``<student>__<notebook>.ipynb`` files.

Which release notebook a file is, is decided by its name (``Copy of 01_x.ipynb``, ``01_x (1).ipynb``,
``01_x.ipynb의 사본`` are recognised) or else by its nbgrader cell ids; a file that matches no notebook
of the assignment is reported and skipped. Student ids are sanitized (ASCII letters, digits, ``_``,
``-``, ``.``; other characters become ``_`` and a short hash of the original keeps ids distinct).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python autograder/collect.py [ASSIGNMENT] FROM
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nbgrader.plugins.zipcollect import FileNameCollectorPlugin  # noqa: E402

from autograder.course import Course, grade_ids, read_notebook, run_nbgrader  # noqa: E402

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def sanitize_student_id(raw: str) -> str:
    """A student id safe as a folder name and in nbgrader (deterministic, collision-resistant)."""
    text = unicodedata.normalize("NFKC", str(raw)).strip()
    safe = _SAFE.sub("_", text).strip("._-")
    if safe != text or not safe:
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]
        safe = f"{safe}_{digest}" if safe else f"s_{digest}"
    return safe[:64]


class SanitizingCollector(FileNameCollectorPlugin):
    """nbgrader zip_collect plugin: the default file-name collector with sanitized student ids."""

    def collect(self, submitted_file):
        info = super().collect(submitted_file)
        if info:
            info["student_id"] = sanitize_student_id(info["student_id"])
        return info


_COPY_NOISE = [re.compile(p) for p in (r"^copy of ", r"^사본 - ", r"\.ipynb의 사본$", r"의 사본$",
                                       r" \(\d+\)$", r"-\d+$", r"_copy$")]


def _clean_stem(stem: str) -> str:
    s = stem.strip()
    for _ in range(3):
        for pat in _COPY_NOISE:
            s = pat.sub("", s, count=1) if pat.pattern.startswith("^") else pat.sub("", s)
        s = s.strip()
    return s.lower()


@dataclass
class CollectReport:
    collected: dict = field(default_factory=dict)  # student -> [notebook, ...]
    skipped: list = field(default_factory=list)  # (path, reason)

    def summary(self) -> str:
        lines = [f"collected {sum(len(v) for v in self.collected.values())} notebooks of "
                 f"{len(self.collected)} students"]
        lines += [f"  skipped {p}: {why}" for p, why in self.skipped]
        return "\n".join(lines)


def identify_notebook(path: Path, notebooks: dict[str, set], stem: str | None = None) -> str | None:
    """The release notebook ``path`` is a hand-in of: by name, else by nbgrader cell ids."""
    stem = _clean_stem(stem if stem is not None else path.stem)
    for name in notebooks:
        if stem == name.lower():
            return name
    try:
        ids = set(grade_ids(read_notebook(path)))
    except (ValueError, OSError, UnicodeDecodeError):
        return None
    best, best_score = None, 0.0
    for name, ref in notebooks.items():
        if not ref:
            continue
        score = len(ids & ref) / len(ref)
        if score > best_score:
            best, best_score = name, score
    return best if best_score >= 0.5 else None


def _release_index(course: Course, assignment: str) -> dict[str, set]:
    base = course.release / assignment
    if not base.is_dir() or not any(base.glob("*.ipynb")):
        base = course.source / assignment  # not released yet: the masters have the same names and ids
    if not base.is_dir() or not any(base.glob("*.ipynb")):
        raise FileNotFoundError(f"no notebooks for {assignment} in release/ or source/")
    return {p.stem: set(grade_ids(read_notebook(p))) for p in sorted(base.glob("*.ipynb"))}


def _valid_notebook(path: Path) -> str | None:
    try:
        nb = read_notebook(path)
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        return f"not a notebook ({type(exc).__name__})"
    if not isinstance(nb, dict) or "cells" not in nb:
        return "not a notebook (no cells)"
    return None


def _place(course: Course, assignment: str, student_raw: str, nb_name: str, src: Path,
           report: CollectReport) -> None:
    student = sanitize_student_id(student_raw)
    dest = course.submitted / student / assignment / f"{nb_name}.ipynb"
    if nb_name in report.collected.get(student, []):
        report.skipped.append((str(src), f"second hand-in of {nb_name} for {student}"))
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    report.collected.setdefault(student, []).append(nb_name)


def collect_folder(course: Course, assignment: str, folder: Path) -> CollectReport:
    """Import ``<student>.ipynb``, ``<student>__<notebook>.ipynb`` or ``<student>/<notebook>.ipynb``."""
    notebooks = _release_index(course, assignment)
    report = CollectReport()
    for path in sorted(Path(folder).iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_dir():
            for nb_path in sorted(path.rglob("*.ipynb")):
                if ".ipynb_checkpoints" in nb_path.parts:
                    continue
                _one(course, assignment, path.name, nb_path, nb_path.stem, notebooks, report)
        elif path.suffix == ".ipynb":
            if "__" in path.stem:
                student, _, nb_stem = path.stem.partition("__")
            else:
                student, nb_stem = path.stem, None
            _one(course, assignment, student, path, nb_stem, notebooks, report)
    return report


def _one(course, assignment, student, path, nb_stem, notebooks, report):
    if path.is_symlink():
        report.skipped.append((str(path), "a symbolic link (not copied: it could point at anything)"))
        return
    bad = _valid_notebook(path)
    if bad:
        report.skipped.append((str(path), bad))
        return
    if nb_stem is None and len(notebooks) == 1:
        name = next(iter(notebooks))
    else:
        name = identify_notebook(path, notebooks, stem=nb_stem)
    if name is None:
        report.skipped.append((str(path), f"matches no notebook of {assignment}: {sorted(notebooks)}"))
        return
    _place(course, assignment, student, name, path, report)


def collect_zip(course: Course, assignment: str, archives: list[Path]) -> CollectReport:
    """Run nbgrader zip_collect on LMS downloads, then normalise notebook names."""
    _release_index(course, assignment)
    archive_dir = course.work / "downloaded" / assignment / "archive"
    if archive_dir.exists():
        shutil.rmtree(archive_dir)
    archive_dir.mkdir(parents=True)
    for a in archives:
        if not zipfile.is_zipfile(a):
            raise ValueError(f"{a} is not a zip archive")
        shutil.copy(a, archive_dir / Path(a).name)
    run_nbgrader(["zip_collect", assignment, "--force",
                  "--ZipCollectApp.collector_plugin=autograder.collect.SanitizingCollector"],
                 cwd=course.root, env={"PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
                 log=course.logs / f"zip_collect_{assignment}.log")
    return normalise_submitted(course, assignment)


def normalise_submitted(course: Course, assignment: str) -> CollectReport:
    """Rename collected files to release notebook names (zip_collect keeps the LMS file names)."""
    notebooks = _release_index(course, assignment)
    report = CollectReport()
    if not course.submitted.is_dir():
        return report
    for sdir in sorted(course.submitted.iterdir()):
        adir = sdir / assignment
        if not adir.is_dir():
            continue
        for path in sorted(adir.glob("*.ipynb")):
            if path.stem in notebooks:
                report.collected.setdefault(sdir.name, []).append(path.stem)
                continue
            name = identify_notebook(path, notebooks)
            if name is None or (adir / f"{name}.ipynb").exists():
                report.skipped.append((str(path), "matches no notebook (or a duplicate)"))
                path.rename(path.with_suffix(".ipynb.unmatched"))
                continue
            path.rename(adir / f"{name}.ipynb")
            report.collected.setdefault(sdir.name, []).append(name)
    return report


def collect(course: Course, assignment: str, source: str | Path) -> CollectReport:
    """Import hand-ins from ``source`` (zip file, folder of zips, or folder of notebooks)."""
    source = Path(source)
    if source.is_file() and source.suffix == ".zip":
        return collect_zip(course, assignment, [source])
    if source.is_dir():
        zips = sorted(source.glob("*.zip"))
        if zips and not any(source.glob("*.ipynb")):
            return collect_zip(course, assignment, zips)
        return collect_folder(course, assignment, source)
    raise FileNotFoundError(f"{source}: expected a .zip or a folder")


if __name__ == "__main__":
    import sys

    from autograder.__main__ import main

    raise SystemExit(main(["collect", *sys.argv[1:]]))
