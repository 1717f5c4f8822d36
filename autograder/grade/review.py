"""How the autograder uses gemm_lab.grading.audit.scan.scan_source: a review aid, never a defence.

Scores do not depend on what a hand-in does in its kernel: test cells are judged in the grader's
process on handed-out values, kernels and function answers from their source in a fresh worker
(gemm_lab.grading.judge says how). The scan still reads the code the student wrote (answer cells and
added cells of the *autograded* notebook, after nbgrader restored the locked and test cells) and lists every
construct that tries to subvert a checker in the student's own process (builtins, import hooks, frames,
``exec``, written modules, ...) in the review
column, so the instructor knows who tried. It changes no score (the codes and their Korean text:
gemm_lab/grading/audit/findings.py).
"""

from __future__ import annotations

from autograder import cells as nbcells
from gemm_lab.grading.audit.findings import FLAG_TEXT
from gemm_lab.grading.audit.scan import scan_source


def review_notebook(nb: dict) -> list[str]:
    """The findings of one autograded notebook, each ``"셀 N [grade_id]: <scan_source finding>"``."""
    cells = list(enumerate(nb.get("cells", [])))
    scanned = [(i, c, f) for i, c in cells if nbcells.is_student_code(c) for f in scan_source(nbcells.source(c))]
    judged = [(i, c, f) for i, c in cells for f in verdict_findings(c)]
    return [f"셀 {i} [{nbcells.meta(c).get('grade_id', '-')}]: {f}" for i, c, f in scanned + judged]


def verdict_findings(cell) -> list[str]:
    """What the grader's verdict on a test cell tells the instructor: a kernel refused for using something
    that is not Triton; a kernel right on every shape the cell names and wrong on a shape drawn per run."""
    verdict = (cell.get("metadata", {}).get("gemm_lab") or {}).get("verdict") or {}
    out = []
    for check in verdict.get("checks") or []:
        kernel = check.get("kernel") if isinstance(check, dict) else None
        if not isinstance(kernel, dict):
            continue
        if kernel.get("not_triton"):
            out.append(f"KERNEL_NOT_TRITON: {FLAG_TEXT['KERNEL_NOT_TRITON']} — {str(kernel.get('refused'))[:160]}")
        cases = [c for c in kernel.get("cases") or [] if isinstance(c, dict)]
        named = [c for c in cases if not c.get("drawn")]
        if named and all(c.get("ok") for c in named) and any(c.get("drawn") and not c.get("ok") for c in cases):
            bad = next(c for c in cases if c.get("drawn") and not c.get("ok"))
            out.append(f"KERNEL_SHAPE_SPECIAL: {FLAG_TEXT['KERNEL_SHAPE_SPECIAL']} — {bad.get('where', '')}")
    return out
