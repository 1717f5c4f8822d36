"""Execute notebooks the way a student runs them, and report every error by the kind of cell it is in.

    python tools/student_run.py [--timeout S] [--json OUT] NOTEBOOK...

Each notebook runs in its own folder (copy it into an empty one first, as a student who downloaded
it has nothing else) top to bottom with nbclient (errors do not stop the run, as in JupyterLab's "Run All" with a student who reads on). The kernel is
this interpreter's (``python3`` of the environment that runs the script), without GEMM_LAB_GRADING:
every demonstration cell runs. The report lists, per notebook, its wall time and each error with the
cell's nbgrader role: ``solution`` (a TODO the student fills in), ``test`` (a graded check), or
``other`` (everything else, which must run). Needs only nbclient, nbformat and ipykernel.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

GRADING_ENV = "GEMM_LAB_GRADING"


def cell_role(cell) -> str:
    # read here, not from autograder.cells: this runs in a student's venv, which has gemm_lab and no autograder
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return "solution" if meta.get("solution") else "test" if meta.get("grade") else "other"


def run(notebook: Path, timeout: int = 600) -> dict:
    """Run one notebook in its folder; return {notebook, seconds, status, code_cells, errors: [...]}."""
    import nbformat
    from nbclient import NotebookClient

    os.environ.pop(GRADING_ENV, None)  # a student never has it; the kernel inherits this environment
    nb = nbformat.read(notebook, as_version=4)
    started: dict[int, float] = {}
    cell_seconds: dict[int, float] = {}

    def on_start(cell, cell_index, **_):
        started[cell_index] = time.perf_counter()

    def on_done(cell, cell_index, **_):
        cell_seconds[cell_index] = round(time.perf_counter() - started[cell_index], 3)

    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            on_cell_start=on_start, on_cell_executed=on_done,
                            resources={"metadata": {"path": str(Path(notebook).resolve().parent)}})
    start = time.perf_counter()
    status = "ok"
    try:
        client.execute()
    except Exception as exc:  # a dead kernel or a cell past its time limit
        status = f"{type(exc).__name__}: {str(exc)[-500:]}"
    seconds = time.perf_counter() - start
    errors = []
    stderr = []  # what the student sees in red: warnings among it (make compat diffs them across versions)
    code_cells = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        code_cells += 1
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                stderr.append({"cell": index, "text": str(out.get("text", ""))[:4000]})
            if out.get("output_type") == "error":
                errors.append({"cell": index, "role": cell_role(cell), "ename": out.get("ename", ""),
                               "evalue": str(out.get("evalue", ""))[:300],
                               "source": cell.source[:120]})
    unfinished = sorted(set(started) - set(cell_seconds))
    return {"notebook": str(notebook), "seconds": round(seconds, 2), "status": status,
            "code_cells": code_cells, "errors": errors, "stderr": stderr, "cell_seconds": cell_seconds,
            "stuck_at": {"cell": unfinished[0], "source": nb.cells[unfinished[0]].source[:300]} if unfinished else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="+", type=Path)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    ap.add_argument("--json", type=Path, help="write the reports (a JSON list) here")
    args = ap.parse_args(argv)
    reports = []
    for nb in args.notebooks:
        report = run(nb, timeout=args.timeout)
        roles = sorted({e["role"] for e in report["errors"]})
        print(f"{nb}: {report['seconds']:.1f} s, {len(report['errors'])} error(s) in {roles or '-'}, "
              f"{report['status']}", flush=True)
        reports.append(report)
        if args.json:  # after every notebook: a run cut short keeps what it measured
            args.json.write_text(json.dumps(reports, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0 if all(r["status"] == "ok" for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
