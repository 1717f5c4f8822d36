"""Build the cases of a plan and write / read ``expected.csv`` and ``cases.csv``.

``expected.csv``: one row per graded cell of every handed-in notebook (student, notebook, grade_id,
max_points, expected_points: the master's points, 0 where the case loses them, 0 for manual cells).
``cases.csv``: one row per student (student, case, review_expected, review_contains). ``options.json``
records the plan so a test can regenerate the folder and compare.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from autograder import cells as nbcells
from autograder.course import write_csv

from .model import Notebook
from .plan import ALL, FIRST, REVIEW, REVIEW_CONTAINS, case_function


def build_cases(notebooks: list[Notebook], plan: dict):
    """Yield (student, description, review_expected, review_contains, {nb: json}, {nb: {grade_id: points}})."""
    for case, where in plan.items():
        make = case_function(case)
        names = [nb.name for nb in notebooks] if where == ALL else [notebooks[0].name] if where == FIRST else where
        unknown = set(names) - {nb.name for nb in notebooks}
        if unknown:
            raise ValueError(f"plan case {case!r} names notebooks {sorted(unknown)} not in the assignment")
        files, expected, descs = {}, {}, []
        for nb in notebooks:
            if nb.name not in names:
                continue
            built = make(nb)
            if built is None:
                continue
            desc, nb_json, exp = built
            files[nb.name], expected[nb.name] = nb_json, exp
            descs.append(f"{nb.name}: {desc}" if len(names) > 1 else desc)
        if files:
            review = case in REVIEW or any(refuses_a_kernel(nb_json) for nb_json in files.values())
            yield (case, "; ".join(dict.fromkeys(descs)) if len(files) > 1 else descs[0],
                   review, REVIEW_CONTAINS.get(case, ""), files, expected)


def refuses_a_kernel(nb_json: dict) -> bool:
    """True when the gate will refuse a kernel a test cell names for using something that is not Triton:
    the autograder flags every such refusal for the instructor (a missing kernel is not flagged)."""
    from gemm_lab.grading.judge import gate, handout

    sources = []
    for cell in nb_json.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        src = nbcells.source(cell)
        if nbcells.is_grade(cell) and not nbcells.is_solution(cell):
            for name in set(handout.read_names(src)) & gate.jit_names(sources):
                try:
                    gate.module_for(sources, name)
                except gate.Refused as exc:
                    if exc.not_triton:
                        return True
        else:
            sources.append(src)
    return False


def write_cases(nbs: list[Notebook], out: Path, plan: dict) -> Path:
    """Write the cases of ``plan`` built from ``nbs`` (release + master solutions) to ``out`` (replaced)."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rows, case_rows = [], []
    for student, desc, review, contains, files, expected in build_cases(nbs, plan):
        for nb_name, nb_json in files.items():
            p = out / student / f"{nb_name}.ipynb"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps(nb_json, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            points = {g: p_ for g, p_, _ in next(n for n in nbs if n.name == nb_name).graded_cells()}
            for gid, exp in expected[nb_name].items():
                rows.append([student, nb_name, gid, _num(points[gid]), _num(exp)])
        case_rows.append([student, desc, "yes" if review else "no", contains])
    write_csv(out / "expected.csv", [["student", "notebook", "grade_id", "max_points", "expected_points"], *rows])
    write_csv(out / "cases.csv", [["student", "case", "review_expected", "review_contains"], *case_rows])
    return out


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _read_csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def read_expected(folder: Path) -> tuple[dict, dict]:
    """({(student, notebook, grade_id): expected_points}, {student: review_expected})."""
    exp = {(r["student"], r["notebook"], r["grade_id"]): float(r["expected_points"])
           for r in _read_csv(Path(folder) / "expected.csv")}
    return exp, {r["student"]: r["review_expected"] == "yes" for r in _read_csv(Path(folder) / "cases.csv")}


def read_review_contains(folder: Path) -> dict[str, str]:
    """{student: text its review column must contain} (sandbox limits, repairs); students without one left out."""
    return {r["student"]: r["review_contains"] for r in _read_csv(Path(folder) / "cases.csv") if r.get("review_contains")}
