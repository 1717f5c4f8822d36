"""How the autograder uses gemm_lab.grading.integrity.scan_source.

Policy (applied to the *autograded* notebook, i.e. after nbgrader restored the locked and test cells, so
only code the student wrote is scanned: answer cells and cells the student added). Each student cell is
scanned with the names the given (locked) cells above it define as protected (``locked_names``).

* a finding that can raise a score makes every auto-graded test cell *after* the first such cell score
  zero and marks it for manual grading (``needs_manual_grade``): the instructor looks and restores the
  points in formgrader if the code was innocent. Test cells before it keep their score: the tampering
  cannot have reached them. These are: rebinding the checker, ``check_*``/``assert*`` names, builtins,
  ``AssertionError``, module attributes such as ``np.allclose``, sys hooks, frames, ``exec``/``eval``,
  ctypes, ``get_ipython()``, torch hooks.
* LOCKED_REBIND (rebinding, deleting or mutating a name a given cell defines: its imports such as
  ``calc``/``rf``, a given ``launch``, ``expected_table``, ``CONFIGS``, ``M``, or a ``gemm_lab``
  calculator module name) zeroes like the above only when a later test cell reads one of the names the
  cell rebinds (directly, or through a given function it calls): such a test does not follow the
  test-cell rule (``gemm_lab.grading`` docstring) and would be fooled. A test that follows the rule
  reads only its own ``fresh()`` grader and the student's answer names, and the kernel checks launch the
  student's kernel with their own launcher, so there the rebinding cannot change a score: the finding
  is then for review only, and an honest student who reuses a given name to experiment loses nothing.
  (The masters' own cells trigger no finding at all: tests/test_grading_scan_rebind.py.)
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
    from gemm_lab.grading.audit.cell_audit import notebook_reads
    from gemm_lab.grading.audit.scan import rebound_names
    from gemm_lab.grading.audit.scan_rebind import protected_names
    from gemm_lab.grading.integrity import locked_names, scan_source
except ImportError as exc:  # pragma: no cover - the package is part of this repository
    raise ImportError("autograder needs gemm_lab.grading.integrity.scan_source") from exc

ZEROING_CODES = frozenset({
    "MODULE_ATTR", "IMPORT_BUILTINS", "DUNDER_BUILTINS", "SYS_HOOK", "FRAME_ACCESS", "REDEFINE_CHECK",
    "ASSERTION_ERROR", "CTYPES", "DYNAMIC_CODE", "GLOBALS_WRITE", "TORCH_HOOK", "LOCKED_REBIND",
    "GRADER_CACHE",
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


def _test_reads(cells) -> dict[int, set[str]]:
    """{index: notebook names the test cell reads} for every auto-graded test cell; a test that calls a
    function a given cell defines also reads what that given cell reads (one level)."""
    given_reads: dict[str, set[str]] = {}
    for cell in cells:
        if cell.get("cell_type") == "code" and _meta(cell).get("locked") and not is_autograded_test(cell):
            src = _source(cell)
            try:
                reads = notebook_reads(src)
            except SyntaxError:
                continue
            for name in protected_names(src):
                given_reads[name] = reads
    out = {}
    for idx, cell in enumerate(cells):
        if is_autograded_test(cell):
            try:
                reads = notebook_reads(_source(cell))
            except SyntaxError:
                reads = set()
            out[idx] = reads.union(*(given_reads.get(n, set()) for n in reads))
    return out


def review_notebook(nb: dict) -> tuple[list[str], list[str]]:
    """(findings, grade_ids to zero) for one autograded notebook.

    Each finding is ``"셀 N [grade_id]: <scan_source finding>"``, with ``[검토만]`` appended when it does
    not zero anything. A LOCKED_REBIND finding zeroes only when a later test cell reads a name the cell
    rebinds (see the module docstring).
    """
    findings: list[str] = []
    first_bad = None
    cells = nb.get("cells", [])
    test_reads = None
    for idx, cell in enumerate(cells):
        if not is_student_code(cell):
            continue
        gid = _meta(cell).get("grade_id", "-")
        protected = locked_names(cells, before=idx)
        found = scan_source(_source(cell), protected)
        reaches_a_test = False
        if any(finding_code(f) == "LOCKED_REBIND" for f in found):
            test_reads = _test_reads(cells) if test_reads is None else test_reads
            rebound = rebound_names(_source(cell), protected)
            reaches_a_test = any(rebound & reads for t, reads in test_reads.items() if t > idx)
        for f in found:
            zeroing = raises_score(f) and (finding_code(f) != "LOCKED_REBIND" or reaches_a_test)
            findings.append(f"셀 {idx} [{gid}]: {f}" + ("" if zeroing else " [검토만]"))
            if zeroing and first_bad is None:
                first_bad = idx
    zero = []
    if first_bad is not None:
        zero = [_meta(c)["grade_id"] for c in nb["cells"][first_bad + 1:] if is_autograded_test(c)]
    return findings, zero
