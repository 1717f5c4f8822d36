"""How the autograder uses gemm_lab.grading.integrity.scan_source.

Policy (applied to the *autograded* notebook, i.e. after nbgrader restored the locked and test cells, so
only code the student wrote is scanned: answer cells and cells the student added). Each student cell is
scanned with the names the given (locked) cells above it define as protected (``locked_names``).

* a finding that can raise a score makes every auto-graded test cell *after* the first such cell score
  zero and marks it for manual grading (``needs_manual_grade``): the instructor looks and restores the
  points in formgrader if the code was innocent. Test cells before it keep their score: the tampering
  cannot have reached them. These are: rebinding the checker, ``check_*``/``assert*`` names, builtins,
  ``AssertionError``, module attributes such as ``np.allclose``, sys hooks, frames, ``exec``/``eval``,
  ctypes, ``get_ipython()``, torch hooks, and LOCKED_REBIND: rebinding, deleting or mutating a name a
  given cell defines (its imports such as ``calc``/``rf``, a given ``launch``, ``expected_table``,
  ``CONFIGS``, ``M``) or a ``gemm_lab`` calculator module name. A test cell or kernel check that reads
  such a name (a master that does not follow the test-cell rule yet, a launcher the check takes from
  the notebook) would then be fooled, and an honest answer never needs to reuse a given name (the masters'
  own cells are checked to trigger nothing: tests/test_grading_integrity.py).
* findings that cannot raise a score are listed for review only: ending the kernel, network, files
  outside the working folder, shell ``!``/``%`` lines, syntax errors, and INPUT_HISTORY (reading
  ``In``/``Out``/``_ih``/``%history``): a test cell's result is decided by its own output, which a later
  cell cannot change; what history exposes is the source of hidden tests, a feedback leak that the
  feedback step handles (hidden-test text is stripped from outputs before feedback is written), so the
  finding asks a human to look without touching the score.
"""

from __future__ import annotations

import re

try:
    from gemm_lab.grading.integrity import locked_names, scan_source
except ImportError as exc:  # pragma: no cover - the package is part of this repository
    raise ImportError("autograder needs gemm_lab.grading.integrity.scan_source") from exc

ZEROING_CODES = frozenset({
    "MODULE_ATTR", "IMPORT_BUILTINS", "DUNDER_BUILTINS", "SYS_HOOK", "FRAME_ACCESS", "REDEFINE_CHECK",
    "ASSERTION_ERROR", "CTYPES", "DYNAMIC_CODE", "GLOBALS_WRITE", "TORCH_HOOK", "LOCKED_REBIND",
})
REVIEW_ONLY_CODES = frozenset({"EXIT", "NETWORK", "OPEN_OUTSIDE", "SHELL", "SYNTAX", "INPUT_HISTORY"})
_CODE_RE = re.compile(r"^([A-Z_]+) ")


def finding_code(finding: str) -> str:
    m = _CODE_RE.match(finding)
    return m.group(1) if m else "UNKNOWN"


def raises_score(finding: str) -> bool:
    """True when the construct could make a failing test pass (see the module docstring)."""
    code = finding_code(finding)
    if code == "SHELL":
        return "get_ipython" in finding  # input transformers, run_cell hooks; plain !/% lines are not
    return code in ZEROING_CODES or code not in REVIEW_ONLY_CODES


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def is_student_code(cell) -> bool:
    """Code the student wrote: answer cells and unmarked cells (locked/test cells are restored)."""
    if cell.get("cell_type") != "code":
        return False
    m = _meta(cell)
    if m.get("solution"):
        return True
    return not (m.get("grade") or m.get("locked"))


def is_autograded_test(cell) -> bool:
    m = _meta(cell)
    return cell.get("cell_type") == "code" and bool(m.get("grade")) and not m.get("solution")


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def review_notebook(nb: dict) -> tuple[list[str], list[str]]:
    """(findings, grade_ids to zero) for one autograded notebook.

    Each finding is ``"셀 N [grade_id]: <scan_source finding>"``, with ``[검토만]`` appended when it does
    not zero anything.
    """
    findings: list[str] = []
    first_bad = None
    cells = nb.get("cells", [])
    for idx, cell in enumerate(cells):
        if not is_student_code(cell):
            continue
        gid = _meta(cell).get("grade_id", "-")
        for f in scan_source(_source(cell), locked_names(cells, before=idx)):
            zeroing = raises_score(f)
            findings.append(f"셀 {idx} [{gid}]: {f}" + ("" if zeroing else " [검토만]"))
            if zeroing and first_bad is None:
                first_bad = idx
    zero = []
    if first_bad is not None:
        zero = [_meta(c)["grade_id"] for c in nb["cells"][first_bad + 1:] if is_autograded_test(c)]
    return findings, zero
