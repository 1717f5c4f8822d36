"""No silent zeros: before a class is graded, each assignment's masters are graded through the same sandbox.

``check_masters(course, assignments)`` hands the masters (``source/ASSIGNMENT/*.ipynb``, solutions
included) in as one student of a scratch course and autogrades them exactly as a class is graded. Every
auto-graded cell must get full marks; otherwise :class:`MastersNotFull` names the cells, their first error
and the likely cause (``gemm_lab`` not importable in the sandbox, no sandbox, a grader error), and nothing
of the class is graded. A passing result is remembered (``~/.cache/gemm_lab/precheck/``) per master
files, grader code, Python and sandbox mode, so it runs once per change.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from autograder import cells as nbcells
from autograder.course import Course, read_notebook

if TYPE_CHECKING:
    from autograder.grade.autograde import GradeSettings

__all__ = ["MastersNotFull", "check_masters", "cache_key"]

STUDENT = "master-check"
_CODE_GLOBS = ("gemm_lab/grading/**/*.py", "gemm_lab/calc/*.py", "gemm_lab/*.py", "autograder/*.py")


class MastersNotFull(RuntimeError):
    """The solutions did not get full marks in this grading environment (one-line message)."""


def _cache_dir() -> Path:
    return Path(os.environ.get("GEMM_LAB_PRECHECK_CACHE") or Path.home() / ".cache" / "gemm_lab" / "precheck")


def cache_key(course: Course, assignment: str, mode: str) -> str:
    h = hashlib.sha256(f"{sys.executable}\n{mode}\n{assignment}\n".encode())
    repo = Path(__file__).resolve().parents[2]
    files = sorted((course.source / assignment).glob("*.ipynb"))
    for pattern in _CODE_GLOBS:
        files += sorted(repo.glob(pattern))
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:32]


def _cause(errors: list[str]) -> str:
    text = " ".join(errors)
    if "gemm_lab" in text and ("ModuleNotFoundError" in text or "ImportError" in text):
        return "gemm_lab is not importable inside the sandbox (install the course package into the Python " \
               "autograde runs with: make setup)"
    if "ModuleNotFoundError" in text or "ImportError" in text:
        return "a module the notebooks import is missing inside the sandbox (make setup)"
    if "채점기가 이 셀의 답을 받지 못했습니다" in text:
        return "the kernel gave no answers to the grader (the sandbox's Python cannot run the notebooks)"
    return "a master's test cell fails in this environment (run python -m tools.roundtrip ASSIGNMENT to see it)"


def _first_errors(graded: Path) -> dict[str, str]:
    out = {}
    for nb_path in sorted(graded.glob("*.ipynb")):
        for cell in filter(nbcells.is_grade, read_notebook(nb_path).get("cells", [])):
            err = next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)
            if err is not None:
                out[f"{nb_path.stem}/{nbcells.grade_id(cell)}"] = f"{err.get('ename')}: {str(err.get('evalue'))[:200]}"
    return out


def check_masters(course: Course, assignments: list[str], settings: GradeSettings, *, mode: str,
                  log=print) -> None:
    """Raise :class:`MastersNotFull` unless every assignment's masters get full marks (see the module doc)."""
    from nbgrader.api import Gradebook

    from autograder.grade import autograde as grade

    for assignment in assignments:
        key = cache_key(course, assignment, mode)
        stamp = _cache_dir() / f"{key}.json"
        if stamp.is_file():
            continue
        masters = sorted((course.source / assignment).glob("*.ipynb"))
        if not masters:
            continue
        log(f"{assignment}: grading the {len(masters)} master notebook(s) first (once per change), "
            "to check the sandbox grades full marks ...")
        course.work.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f"precheck-{assignment}-", dir=course.work))
        try:
            sc = course.scratch(scratch, [assignment], released=True)
            hand_in = sc.submitted / STUDENT / assignment
            hand_in.mkdir(parents=True)
            for nb in masters:
                shutil.copy(nb, hand_in / nb.name)
            results = grade.autograde(sc, assignment, settings, quiet=True, regrade=False, keep_scratch=False)
            if not all(r.ok for r in results):
                bad = next(r for r in results if not r.ok)
                raise MastersNotFull(f"{assignment}: grading the masters failed ({bad.error}); no hand-in "
                                     "was graded")
            with Gradebook(sc.db_url, "gemm-lab") as gb:
                missing = [f"{nb.name}/{cell.name}" for nb in gb.find_assignment(assignment).notebooks
                           for cell in nb.grade_cells if cell.cell_type == "code"
                           and gb.find_grade(cell.name, nb.name, assignment, STUDENT).score < cell.max_score]
            if missing:
                errors = _first_errors(sc.autograded / STUDENT / assignment)
                first = errors.get(missing[0], "no error output")
                raise MastersNotFull(
                    f"{assignment}: the masters lose points in this grading environment at {len(missing)} "
                    f"cell(s) (first: {missing[0]}: {first}); likely cause: {_cause(list(errors.values()))}. "
                    "No hand-in was graded.")
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(json.dumps({"assignment": assignment, "masters": [m.name for m in masters]}))
            log(f"{assignment}: masters get full marks in the sandbox")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
