"""A synthetic graded class for the class report's tests and benchmark (no nbgrader run, no notebook executed).

``make_class(root, n_students, spec)`` writes what ``make autograde`` leaves behind, in the layout of
:class:`autograder.course.Course`:

* ``autograder/gradebook.db`` through nbgrader's Gradebook API (assignment, notebooks, grade cells,
  students, one submission each, every cell's score: all points when each check passed, else 0);
* ``autograder/autograded/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb`` with the grader's verdict in each test
  cell's metadata (``cell.metadata["gemm_lab"]["verdict"]``, the format the grader records);
* ``release/ASSIGNMENT/NOTEBOOK.ipynb`` (headings and test-cell docstrings: the exercise titles).

The answers are planted exactly: each check's ``answers`` maps a value to how many students give it
(``None``: a blank answer; with ``"undefined": True`` the name was never defined, and the verdict has no
check, only the message); the others give the expected value. Which students give which value is a
seeded shuffle, so counts are exact and repeatable. A kernel cell's ``failures`` plants failing hidden
cases the same way. ``pad_kb`` adds that many KiB of image output to each notebook (an executed
notebook's plots) for the benchmark.
"""

from __future__ import annotations

import base64
import json
import os
import random
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path

from autograder.course import Course
from autograder.samplekit.model import notebook

ASSIGNMENT = "week07"
BREAK_EVEN_HINT = "985번에서는 아직 오토튜닝 경로가 느립니다: 나눗셈 결과를 올림하세요."
REGROUP_HINT = "행 우선 순서의 타일 적재 수입니다: GROUP_M개 행씩 묶어 다시 세어 보세요."

# One notebook per entry; a cell is a heading ({"md": ...}) or a graded cell. Counts are per 50 students
# (scale_spec scales them).
SPEC: list[dict] = [
    {"notebook": "01_pointer_blocks", "cells": [
        {"md": "# 연습문제 1 — 2차원 포인터 블록과 K 누적 (4점)"},
        {"grade_id": "matmul_kernel_hidden_shapes", "points": 4,
         "doc": "Exercise 1: the tiled matmul kernel on hidden shapes.",
         "kernel": "matmul", "cases": ["k_tail", "edge_tile", "noncontiguous", "poisoned_margin"],
         "failures": [(("k_tail",), 6), (("edge_tile", "k_tail"), 3), (("poisoned_margin",), 1),
                      ("refused", 2), ("compile", 1)]},
    ]},
    {"notebook": "02_program_order_l2", "cells": [
        {"md": "# 연습문제 2 — 행 우선 순서와 그룹 순서 (2점)"},
        {"grade_id": "ex2_loads_grouped_54", "points": 2,
         "doc": "2: tile loads of the grouped order (GROUP_M=2).",
         "checks": [{"name": "loads_grouped", "expected": 54, "mistakes": {90: REGROUP_HINT},
                     "answers": {90: 8, 72: 3, None: 2}, "undefined": True}]},
    ]},
    {"notebook": "03_tile_configs_roofline", "cells": [
        {"md": "# 연습문제 3 — TFLOP/s, 오토튜닝 손익분기점, 컴파일 캐시 (6점)"},
        {"grade_id": "ex3_1_tflops", "points": 2, "doc": "3.1: TFLOP/s of the fixed and tuned paths (2 decimals).",
         "checks": [{"name": "tflops_fixed", "expected": 85.9, "answers": {85.8993: 4, 0.0859: 3}},
                    {"name": "tflops_tuned", "expected": 200.0, "answers": {199.99: 2}}]},
        {"grade_id": "ex3_2_break_even_986", "points": 2,
         "doc": "3.2: the smallest number of calls from which the autotuned path is not slower.",
         "checks": [{"name": "break_even", "expected": 986, "mistakes": {985: BREAK_EVEN_HINT},
                     "answers": {985: 20, None: 5, 1000: 2, "<script>alert('x')</script>": 1}}]},
        {"md": "### 3.3 설명해 보세요 (2점, 수동 채점)"},
        {"grade_id": "ex3_3_explain_autotune_key", "points": 2, "manual": True, "graded": 10},
    ]},
]


def scale_spec(spec: list[dict], n_students: int, per: int = 50) -> list[dict]:
    """``spec`` with every planted count scaled from ``per`` students to ``n_students``."""
    f = n_students / per

    def cell(c):
        c = dict(c)
        if "checks" in c:
            c["checks"] = [dict(k, answers={v: round(n * f) for v, n in k.get("answers", {}).items()})
                           for k in c["checks"]]
        if "failures" in c:
            c["failures"] = [(what, round(n * f)) for what, n in c["failures"]]
        if "graded" in c:
            c["graded"] = round(c["graded"] * f)
        return c

    return [dict(nb, cells=[cell(c) for c in nb["cells"]]) for nb in spec]


def student_ids(n: int) -> list[str]:
    """``kim_001`` ... (an underscore, which base64 never holds: a test can look for ids in a page with images)."""
    return [f"kim_{i:03d}" for i in range(1, n + 1)]


def _plant(students: list[str], plan: Iterable[tuple], seed: str) -> dict:
    """student -> planted item for each (item, count) of ``plan`` (a seeded shuffle, exact counts)."""
    order = list(students)
    random.Random(seed).shuffle(order)
    out, i = {}, 0
    for item, count in plan:
        if i + count > len(order):
            raise ValueError(f"plan {seed}: {i + count} planted answers for {len(order)} students")
        for s in order[i:i + count]:
            out[s] = item
        i += count
    return out


def _fmt(v) -> str:
    return "None" if v is None else json.dumps(v, ensure_ascii=False)


def _check_verdict(check: dict, got) -> dict:
    exp = check["expected"]
    ok = got == exp
    if ok:
        msg = f"✅ {check['name']} = {_fmt(got)}"
    elif got is None:
        msg = f"❌ {check['name']}: 값이 없습니다 (None). 셀을 실행해 답을 넣으세요."
    else:
        msg = f"❌ {check['name']}: {_fmt(got)}을(를) 받았습니다."
        hint = check.get("mistakes", {}).get(got)
        if hint:
            msg += f" {hint}"
    return {"check": "check_value", "name": check["name"], "claimed": got, "expected": exp, "ok": ok,
            "message": msg}


def _kernel_verdict(cell: dict, failure) -> tuple[dict, bool]:
    refused = "global 'os' is not a Triton constant or jit function" if failure == "refused" else None
    compile_ok = failure not in ("refused", "compile")
    kinds = set(failure) if isinstance(failure, tuple) else set()
    cases = [{"kind": kind, "where": f"M=127, N=65, K=33 ({kind})", "ok": kind not in kinds,
              "reason": f"{kind}: max |diff| 3.1e+00 at (126, 64)" if kind in kinds else None}
             for kind in cell["cases"]] if compile_ok else []
    if refused:
        cases = [{"kind": "compile_refused", "where": "source", "ok": False, "reason": refused}]
    kernel = {"exercise": cell["kernel"], "refused": refused,
              "compile": {"ok": compile_ok, "message": "" if compile_ok else "CompilationError: line 12"},
              "cases": cases}
    return kernel, failure is None


def _pad_output(pad_kb: int, seed: int) -> list[dict]:
    if pad_kb <= 0:
        return []
    blob = random.Random(seed).randbytes(pad_kb * 768)  # base64: 4/3 of this
    return [{"output_type": "display_data", "metadata": {},
             "data": {"image/png": base64.b64encode(blob).decode(), "text/plain": "<Figure size 640x480>"}}]


def _grade_meta(c: dict) -> dict:
    return {"nbgrader": {"grade": True, "grade_id": c["grade_id"], "locked": not c.get("manual"),
                         "points": c["points"], "schema_version": 3, "solution": bool(c.get("manual")),
                         "task": False}}


def _source_cell(c: dict) -> dict:
    if "md" in c:
        return {"cell_type": "markdown", "id": f"md-{zlib.crc32(c['md'].encode()):08x}", "metadata": {},
                "source": c["md"]}
    if c.get("manual"):
        return {"cell_type": "markdown", "id": c["grade_id"], "metadata": _grade_meta(c),
                "source": "YOUR ANSWER HERE"}
    return {"cell_type": "code", "id": c["grade_id"], "metadata": _grade_meta(c), "execution_count": None,
            "outputs": [], "source": f'"""{c["doc"]}"""\nfrom gemm_lab.grading import fresh\ng = fresh()\n'}


def make_class(root: str | os.PathLike, n_students: int = 50, spec: list[dict] | None = None, *,
               assignment: str = ASSIGNMENT, pad_kb: int = 0, extras: bool = True,
               progress=None) -> Course:
    """Write a graded class of ``n_students`` under ``root`` (see the module docstring); return its Course.

    ``extras``: also a corrupt autograded notebook, a grader error, a forged verdict on an ungraded cell,
    a tampering finding in logs/review.json and a student whose only hand-in collect could not read.
    """
    from nbgrader.api import Grade, Gradebook, Student, SubmittedAssignment, SubmittedNotebook

    spec = spec if spec is not None else scale_spec(SPEC, n_students)
    course = Course.at(root)
    students = student_ids(n_students)
    (course.release / assignment).mkdir(parents=True, exist_ok=True)
    for nb in spec:
        (course.release / assignment / f"{nb['notebook']}.ipynb").write_text(
            json.dumps(notebook([_source_cell(c) for c in nb["cells"]]), ensure_ascii=False, indent=1))

    # what each student gets: {(notebook, grade_id): (verdict or None, points, manual_score or None)}
    plans = {}
    for nb in spec:
        for c in nb["cells"]:
            gid = c.get("grade_id")
            if not gid:
                continue
            key = f"{assignment}/{nb['notebook']}/{gid}"
            if c.get("manual"):
                plans[gid] = {"manual": _plant(students, [(True, c.get("graded", 0))], key)}
            elif "kernel" in c:
                plans[gid] = {"kernel": _plant(students, c["failures"], key)}
            else:
                plans[gid] = {k["name"]: _plant(students, list(k.get("answers", {}).items()), f"{key}/{k['name']}")
                              for k in c["checks"]}

    course.gradebook.parent.mkdir(parents=True, exist_ok=True)
    # a new gradebook asks the `alembic` script of this environment for its schema version
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
    with Gradebook(course.db_url, "gemm-lab") as gb:
        gb.update_or_create_assignment(assignment)
        for nb in spec:
            gb.update_or_create_notebook(nb["notebook"], assignment)
            for c in nb["cells"]:
                if c.get("grade_id"):
                    gb.update_or_create_grade_cell(c["grade_id"], nb["notebook"], assignment, max_score=c["points"],
                                                   cell_type="markdown" if c.get("manual") else "code")
        assignment_row = gb.find_assignment(assignment)
        cells = {(n.name, gc.name): gc for n in assignment_row.notebooks for gc in n.grade_cells}
        for i, s in enumerate(students):
            student = Student(id=s)
            sub = SubmittedAssignment(assignment=assignment_row, student=student)
            folder = course.autograded / s / assignment
            folder.mkdir(parents=True, exist_ok=True)
            for nb_row in assignment_row.notebooks:
                nb_spec = next(nb for nb in spec if nb["notebook"] == nb_row.name)
                snb = SubmittedNotebook(notebook=nb_row, assignment=sub)
                out_cells = [{"cell_type": "code", "id": "plot", "metadata": {}, "execution_count": 1,
                              "outputs": _pad_output(pad_kb, i), "source": "plot()"}]
                for c in nb_spec["cells"]:
                    cell = _source_cell(c)
                    out_cells.append(cell)
                    gid = c.get("grade_id")
                    if not gid:
                        continue
                    plan = plans[gid]
                    gc = cells[(nb_row.name, gid)]
                    if c.get("manual"):
                        graded = plan["manual"].get(s)
                        Grade(cell=gc, notebook=snb, manual_score=c["points"] / 2 if graded else None,
                              needs_manual_grade=not graded)
                        continue
                    if "kernel" in c:
                        kernel, ok = _kernel_verdict(c, plan["kernel"].get(s))
                        msg = "✅ 숨은 크기 모두 통과" if ok else f"❌ matmul: {kernel['refused'] or '숨은 크기 검사 실패'}"
                        checks = [{"check": "check_matmul", "name": "matmul", "claimed": None, "expected": None,
                                   "ok": ok, "message": msg}]  # as the grader records a kernel check
                    else:
                        kernel = None
                        got = {k["name"]: plan[k["name"]].get(s, k["expected"]) for k in c["checks"]}
                        undefined = [k["name"] for k in c["checks"] if k.get("undefined") and got[k["name"]] is None]
                        if undefined:  # the name was never defined: the grader stops before any check
                            checks, ok = [], False
                            msg = (f"❌ `{undefined[0]}`이(가) 정의되지 않았습니다: 답을 적는 셀을 실행해 "
                                   f"`{undefined[0]}`을(를) 만들었는지 확인하세요.")
                        else:
                            checks = [_check_verdict(k, got[k["name"]]) for k in c["checks"]]
                            ok = all(ch["ok"] for ch in checks)
                            msg = "\n".join(ch["message"] for ch in checks)
                    status = "pass" if ok else "fail"
                    if extras and s == students[-1] and gid == "ex3_1_tflops":
                        status, ok, checks, msg = "grader_error", False, [], "채점기 오류: 작업자가 응답하지 않았습니다"
                    points = float(c["points"]) if ok else 0.0
                    cell["metadata"]["gemm_lab"] = {"verdict": {
                        "grade_id": gid, "points": points, "max_points": float(c["points"]), "status": status,
                        "message": msg, "checks": checks, "kernel": kernel, "seed": 1000 + i}}
                    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": msg + "\n"}]
                    Grade(cell=gc, notebook=snb, auto_score=points, needs_manual_grade=False)
                if extras and s == students[0] and nb_row.name == spec[-1]["notebook"]:
                    # a verdict a student wrote into an ungraded cell: the report must not count it
                    out_cells[0]["metadata"]["gemm_lab"] = {"verdict": {
                        "grade_id": "ex3_2_break_even_986", "points": 2.0, "max_points": 2.0, "status": "fail",
                        "message": "forged", "checks": [{"check": "check_value", "name": "break_even",
                                                         "claimed": 4242, "expected": 986, "ok": False,
                                                         "message": "forged"}], "kernel": None, "seed": 0}}
                path = folder / f"{nb_row.name}.ipynb"
                if extras and s == students[1] and nb_row.name == spec[0]["notebook"]:
                    path.write_text('{"cells": [')  # cut short (a disk filled up while grading)
                else:
                    path.write_text(json.dumps(notebook(out_cells), ensure_ascii=False))
            gb.db.add(sub)
            if progress and (i + 1) % 100 == 0:
                progress(f"  {i + 1}/{n_students} students written")
        gb.db.commit()

    if extras:
        course.logs.mkdir(parents=True, exist_ok=True)
        course.review_json.write_text(json.dumps({assignment: {students[2]: {
            "ok": True, "findings": {spec[-1]["notebook"]: ["grading module replaced (sys.modules)"]}}}},
            ensure_ascii=False))
        (course.logs / f"collect_{assignment}.json").write_text(json.dumps({
            "assignment": assignment, "runs": [],
            "students": {"lee_404": {"raw": "lee_404", "collected": [],
                                     "notes": ["03_tile_configs_roofline.ipynb: invalid JSON at line 1"]}}}))
    return course
