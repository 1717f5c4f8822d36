"""Hostile hand-ins against the sandbox and the notebook: probes, tampering in the kernel, one sample per
sandbox limit, edited notebooks and feedback leaks. Each case function returns (description, notebook json,
expected points) or None where the notebook has no place for it; ``REVIEW`` says which must be flagged for
review (tampering or findings) and ``REVIEW_CONTAINS`` the text the review column must hold (a sandbox limit
or a repair).
"""

from __future__ import annotations

import ast
import copy

from autograder import cells as nbcells
from autograder.cells import is_autograded_test, is_locked_only
from gemm_lab.grading.judge.handout import read_names

from .honest import make_wrong
from .model import HIDDEN_MARK, Notebook, cell_of, insert_cell, payloads

_P = payloads("attacks_sandbox")
SNOOP = _P["SNOOP"]  # also run on its own by tests/test_autograder_e2e.py


def extra_cell(code: str, desc: str, last: bool = False):
    """The master's answers and a cell of ``code`` after the first answer (``last``: at the end)."""
    def case(nb: Notebook):
        out = nb.full()
        return desc, insert_cell(out, len(out["cells"]) if last else nb.first_answer_index() + 1, code), nb.full_points()
    return case


def after_first_test(code: str, desc: str):
    """The first test keeps its points; every later test scores 0 (the kernel is gone or tampered with)."""
    def case(nb: Notebook):
        cut, first_test = nb.after_first_test()
        expected = {g: (p if g == first_test else 0.0) for g, p in nb.full_points().items()}
        return desc, insert_cell(nb.full(), cut, code), expected
    return case


def _assigned(cell) -> set[str]:
    """Names a cell binds at top level."""
    try:
        tree = ast.parse(nbcells.source(cell))
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def tamper(code: str, desc: str):
    """Tampering after the first test; the later answers wrong (the tampering is what would earn them)."""
    def case(nb: Notebook):
        cut, first_test = nb.after_first_test()
        keep = nbcells.meta(nb.release["cells"][nb.first_answer_index()]).get("grade_id")
        out = make_wrong(nb.full(), nb, keep)
        # the grade is the grader's, computed outside the kernel: a test cell whose answers all come from the
        # kept (right) answer cell earns its points whatever the tampering does; the rest were made wrong
        kept = _assigned(cell_of(out, keep)) if keep else set()
        right = {nbcells.meta(c)["grade_id"] for c in out["cells"] if is_autograded_test(c)
                 and set(read_names(nbcells.source(c))) and set(read_names(nbcells.source(c))) <= kept}
        expected = {g: (p if g == first_test or g in right else 0.0) for g, p in nb.full_points().items()}
        return desc, insert_cell(out, cut, code), expected
    return case


def deleted_test_after_locked(nb: Notebook):
    """Delete a test cell whose nearest nbgrader cell above is locked-only (nbgrader 0.9.6 KeyError)."""
    out = nb.full()
    last = None
    for i, cell in enumerate(out["cells"]):
        if is_autograded_test(cell) and last is not None and is_locked_only(out["cells"][last]):
            gid = nbcells.meta(cell)["grade_id"]
            del out["cells"][i]
            return f"test cell {gid} (after a locked-only cell) deleted", out, nb.full_points()
        if nbcells.meta(cell):
            last = i
    return None


def first_test(edit, desc: str):
    """The master's answers with ``edit(cells, i)`` applied at the first test cell (``desc``: its ``{gid}``)."""
    def case(nb: Notebook):
        out = nb.full()
        first = next(i for i, c in enumerate(out["cells"]) if is_autograded_test(c))
        gid = nbcells.meta(out["cells"][first])["grade_id"]
        edit(out["cells"], first)
        return desc.format(gid=gid), out, nb.full_points()
    return case


def _rename(cells: list, i: int) -> None:
    cells[i]["metadata"]["nbgrader"]["grade_id"] += "_mine"


def edited_locked(nb: Notebook):
    out = nb.copy()
    for cell in out["cells"]:
        if is_autograded_test(cell):
            cell["source"] = "pass  # edited test cell"
        elif nbcells.meta(cell).get("locked") and cell["cell_type"] == "code":
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            cell["source"] = src + "\npass  # edited locked cell"
    return "blank answers, test and locked cells edited (restored)", out, nb.zero_points()


def redefined_launcher(nb: Notebook):
    """Blank kernel; a cell after the locked launcher rebinds ``launch`` to torch: the kernel tests stay 0."""
    ids = {nbcells.meta(c).get("grade_id") for c in nb.release["cells"]}
    if "given_launcher" not in ids or not nb.kernel_tests():
        return None
    out = nb.full()
    if "student_kernel" in ids:
        cell_of(out, "student_kernel")["source"] = cell_of(nb.release, "student_kernel")["source"]
    return "blank kernel; an added cell redefines the given launch() with torch", \
        insert_cell(out, nb.index_of("given_launcher") + 1, _P["FAKE_LAUNCH"]), nb.full_except(nb.kernel_tests())


CASES = {
    "raises": extra_cell('raise RuntimeError("sample: a cell that raises")', "an extra cell raises RuntimeError"),
    "infinite_loop": extra_cell("while True:\n    pass", "an extra cell loops forever (cell time limit)"),
    "big_output": extra_cell('print("x" * 3_000_000)\nfor i in range(60_000):\n    print(i, "y" * 40)',
                             "an extra cell prints ~6 MB"),
    "long_lines": extra_cell(_P["BIG_LINES"], "an extra cell prints six 4 MB lines (byte cap)"),
    "sys_exit": extra_cell("import sys\nsys.exit()", "an extra cell calls sys.exit()"),
    "memory_hog": extra_cell("hog = bytearray(1 << 40)", "an extra cell allocates 1 TiB (MemoryError)"),
    "fork_bomb": extra_cell(_P["FORK_BOMB"], "an extra cell forks until refused (process limit)"),
    "memory_fill": extra_cell(_P["MEMORY_FILL"], "two 3 GiB children (hand-in memory limit, OOM kill)"),
    "disk_fill": extra_cell(_P["DISK_FILL"], "an extra cell fills /tmp (disk limit)"),
    "deleted_test": first_test(list.pop, "the first test cell deleted (restored before grading)"),
    "deleted_test_after_locked": deleted_test_after_locked,
    "duplicated_test": first_test(lambda cells, i: cells.insert(i + 1, copy.deepcopy(cells[i])),
                                  "test cell {gid} duplicated"),
    "changed_grade_id": first_test(_rename, "grade_id {gid} renamed (restored before grading)"),
    "edited_locked": edited_locked,
    # a student's own cell holds the literal hidden-test marker (feedback must treat it as data)
    "hidden_literal": extra_cell(f'# 메모: "### {HIDDEN_MARK}" 가 무슨 뜻인지 궁금합니다\nnote = "### {HIDDEN_MARK} ... END"\n'
                                 "print(note)", "a student cell holds the literal hidden-test marker"),
    "history_snoop": extra_cell(_P["HISTORY_SNOOP"], "a last cell prints In/_ih/%history/Out looking for hidden tests",
                                last=True),
    "redefined_launcher": redefined_launcher,
    "os_exit": after_first_test("import os\nos._exit(0)", "os._exit() after the first test cell"),
    "kernel_crash": after_first_test("import ctypes\nctypes.string_at(0)",
                                     "a segfault (ctypes) after the first test cell"),
    "tamper_checker": tamper(_P["TAMPER_CHECKER"], "swaps gemm_lab.grading in sys.modules for always-pass checks after "
                             "the first test cell; later answers wrong"),
    "tamper_compare": tamper(_P["TAMPER_COMPARE"], "neuters numpy/torch comparisons and empties later cells after the "
                             "first test cell; later answers wrong"),
    "snoop": extra_cell(SNOOP, "reads masters/gradebook/other hand-ins, writes the gradebook, opens sockets"),
}
# redefined_launcher and history_snoop are not flagged: the grader launches its own copy of the given launcher,
# and hidden tests never run in the student's kernel, so neither is anything but the student's own business.
# The sandbox probes are flagged too: the scan names what they do (exit, fork, subprocess, files outside, ctypes).
REVIEW = {"tamper_checker", "tamper_compare", "snoop", "sys_exit", "os_exit", "fork_bomb", "memory_fill", "disk_fill",
          "kernel_crash"}
REVIEW_CONTAINS = {"fork_bomb": "LIMIT_PROCESSES", "memory_fill": "LIMIT_MEMORY", "disk_fill": "LIMIT_DISK",
                   "infinite_loop": "cell time limit", "deleted_test": "repaired before grading",
                   "deleted_test_after_locked": "repaired before grading",
                   "duplicated_test": "repaired before grading", "changed_grade_id": "repaired before grading"}
