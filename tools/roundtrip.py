"""Round trip of an assignment through nbgrader, for notebook authors.

    python -m tools.roundtrip week07 [--notebook 01_pointer_blocks] [--cell-timeout 120]

In a private scratch course (autograder/work/roundtrip/ASSIGNMENT-*, removed afterwards; nothing
else is touched): release the
assignment, hand in the master (student "master") and the untouched release (student "release"),
autograde both (sandboxed, in parallel) and print every graded cell. Passes when the master gets full
marks and the release zero on every auto-graded cell; exit status 1 otherwise.

A master whose .ipynb is missing or older than its jupytext .py is converted in the scratch copy
(jupytext), so an author can run this right after editing the .py.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from autograder.course import Course, read_notebook, release
from autograder.grade.autograde import autograde

MASTER, RELEASE = "master", "release"


@dataclass
class CellResult:
    notebook: str
    grade_id: str
    auto: bool
    points: float
    master: float
    release: float
    master_error: str = ""

    @property
    def ok(self) -> bool:
        if not self.auto:
            return True
        return self.master == self.points and self.release == 0


def _prepare(repo: Course, assignment: str, scratch: Path, notebooks: list[str] | None) -> Course:
    if scratch.exists():
        shutil.rmtree(scratch)
    course = repo.scratch(scratch, [assignment])
    dst = course.source / assignment
    for py in sorted(dst.glob("*.py")):
        nb = py.with_suffix(".ipynb")
        if not nb.exists() or nb.stat().st_mtime < py.stat().st_mtime:
            subprocess.run([sys.executable, "-m", "jupytext", "--to", "ipynb", str(py), "-o", str(nb)],
                           check=True, capture_output=True)
    if notebooks:
        for nb in dst.glob("*.ipynb"):
            if nb.stem not in notebooks:
                nb.unlink()
    release(course, assignment)
    for student, base in ((MASTER, course.source), (RELEASE, course.release)):
        d = course.submitted / student / assignment
        d.mkdir(parents=True)
        for nb in (base / assignment).glob("*.ipynb"):
            shutil.copy(nb, d / nb.name)
    return course


def _first_error(nb: dict, grade_id: str) -> str:
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            for out in cell.get("outputs", []):
                if out.get("output_type") == "error":
                    return f"{out.get('ename')}: {str(out.get('evalue'))[:160]}"
    return ""


def roundtrip(assignment: str, *, repo: Course | None = None, notebooks: list[str] | None = None,
              cell_timeout: int = 120, notebook_timeout: int = 600, jobs: int = 2,
              allow_unsandboxed: bool = False, keep: bool = False) -> list[CellResult]:
    repo = repo or Course.at()
    (repo.work / "roundtrip").mkdir(parents=True, exist_ok=True)
    # a private scratch course per run: authors run this concurrently
    scratch = Path(tempfile.mkdtemp(prefix=f"{assignment}-", dir=repo.work / "roundtrip"))
    try:
        return _roundtrip(repo, assignment, scratch, notebooks, cell_timeout, notebook_timeout, jobs,
                          allow_unsandboxed)
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def _roundtrip(repo, assignment, scratch, notebooks, cell_timeout, notebook_timeout, jobs, allow_unsandboxed):
    from nbgrader.api import Gradebook

    course = _prepare(repo, assignment, scratch, notebooks)
    results = autograde(course, assignment, jobs=jobs, cell_timeout=cell_timeout,
                        notebook_timeout=notebook_timeout, allow_unsandboxed=allow_unsandboxed, quiet=True)
    for r in results:
        if not r.ok:
            raise RuntimeError(f"grading {r.student} failed: {r.error}")
    out = []
    with Gradebook(course.db_url, "gemm-lab") as gb:
        for nb in sorted(gb.find_assignment(assignment).notebooks, key=lambda n: n.name):
            graded = read_notebook(course.autograded / MASTER / assignment / f"{nb.name}.ipynb")
            for cell in nb.grade_cells:
                auto = cell.cell_type == "code" and not _is_solution(gb, cell)
                m = gb.find_grade(cell.name, nb.name, assignment, MASTER).score
                r = gb.find_grade(cell.name, nb.name, assignment, RELEASE).score
                out.append(CellResult(nb.name, cell.name, auto, float(cell.max_score), float(m), float(r),
                                      _first_error(graded, cell.name) if auto and m < cell.max_score else ""))
    return out


def _is_solution(gb, grade_cell) -> bool:
    try:
        gb.find_solution_cell(grade_cell.name, grade_cell.notebook.name, grade_cell.notebook.assignment.name)
        return True
    except Exception:
        return False


def format_results(results: list[CellResult]) -> str:
    lines = [f"{'notebook':<26} {'grade_id':<34} {'pts':>4} {'master':>6} {'release':>7}  verdict"]
    for r in results:
        verdict = ("manual" if not r.auto else "ok" if r.ok else
                   "MASTER NOT FULL" if r.master != r.points else "RELEASE NOT ZERO")
        lines.append(f"{r.notebook:<26} {r.grade_id:<34} {r.points:>4g} {r.master:>6g} {r.release:>7g}  {verdict}")
        if r.master_error:
            lines.append(f"{'':<26}   master: {r.master_error}")
    return "\n".join(lines)


def main(argv=None) -> int:
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("assignment")
    ap.add_argument("--notebook", action="append", help="only this notebook (repeatable)")
    ap.add_argument("--cell-timeout", type=int, default=120)
    ap.add_argument("--notebook-timeout", type=int, default=600)
    ap.add_argument("--allow-unsandboxed", action="store_true")
    ap.add_argument("--jobs", type=int, default=2, help="notebooks graded at once (default 2)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch course (to read the logs)")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    results = roundtrip(args.assignment, notebooks=args.notebook, cell_timeout=args.cell_timeout,
                        notebook_timeout=args.notebook_timeout, allow_unsandboxed=args.allow_unsandboxed,
                        keep=args.keep, jobs=args.jobs)
    print(format_results(results))
    bad = [r for r in results if not r.ok]
    print(f"\n{args.assignment}: {len(results)} graded cells, {len(bad)} problems, "
          f"{time.monotonic() - t0:.0f}s")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
