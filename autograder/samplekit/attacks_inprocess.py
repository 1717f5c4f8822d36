"""Hostile hand-ins first written against an in-process grader, one per kind of trick that still means
something now that grading runs outside the student's process, behind the gate: each must still score what
the WORK deserves (the master's points on what the student answered honestly, 0 where the trick was to pass
without the work) and be flagged for review.

The attack code sits where a cell-source scan does not look, in a helper module the notebook writes to disk
and imports (``model.helper_cell``); writing a module is itself a finding (WRITES_MODULE).

* ``frame_walk`` — an answer that is not a value: every number answer written as a literal in the master
  becomes an object (a ``fractions.Fraction`` look-alike) whose ``float()`` walks the stack to the checker's
  frame and returns the expected value it finds there. No checker runs beside it any more: a wrong answer.
* ``kernel_calls_python`` — Python inside a kernel's body: the kernel calls a Python function marked as a
  Triton builtin (``__triton_builtin__``); in the interpreter it computes the output with numpy through the
  raw pointers, under the compiler it returns at once, so an empty kernel "compiles". The gate refuses it.
* ``special_shapes`` — the visible tests written into the kernel: the master's kernel body runs only at the
  shapes the release's test cells name (the exercise record's visible cases and the visible test cells); at
  any other shape it writes nothing.
* ``forged_handout`` — the grader's channel forged: the answers are never assigned to the notebook's names;
  the student computes them privately and a ``post_run_cell`` hook displays a hand-out
  (``gemm_lab.grading.judge.handout.emit``) of those values after each test cell's own. That only claims
  values, and claiming the right value is answering: it scores as if the names had been assigned (a
  claimed function cannot be forged: its source is graded).

The tricks of the old threat model that the other families cover are not repeated here: a grading module
swapped in ``sys.modules`` (``attacks_sandbox.tamper_checker``), library functions patched in the student's
process (``tamper_compare``), forged compile verdicts in a cache (``attacks_worker.poison_classmates``).
"""

from __future__ import annotations

import ast
import re
import textwrap

from autograder import cells as nbcells
from autograder.cells import is_solution
from gemm_lab.grading.kernels.exercises import for_notebook

from .honest import number_answers
from .model import (
    Notebook,
    assigned_names,
    cell_of,
    helper_cell,
    insert_cell,
    mentions,
    on_kernel,
    payloads,
    set_answer,
)

_P = payloads("attacks_inprocess")  # the written modules and cells
FRAME_WALK = _P["FRAME_WALK"]


@on_kernel("softmax")
def kernel_calls_python(nb: Notebook, _ex, gid, fn):
    args = ", ".join(a.arg for a in fn.args.args)
    call = f"@triton.jit\ndef {fn.name}({ast.unparse(fn.args)}):\n    whole_output(tl.program_id(0), {args})\n"
    out = set_answer(nb.full(), gid, call)
    helper = helper_cell("nb_tile_ops", _P["NUMPY_KERNEL"], "from nb_tile_ops import whole_output")
    insert_cell(out, nb.index_of(gid), helper)
    return ("the kernel calls a Python function marked __triton_builtin__: numpy through the raw pointers in the "
            "interpreter, nothing under the compiler", out, nb.full_except(nb.kernel_tests()))


def frame_walk(nb: Notebook):
    """Number answers take the checker's expected values from its frame."""
    out = nb.full()
    lost: set[str] = set()
    walked = []
    for gid, name, _ in number_answers(nb):
        tests = nb.tests_reading(gid, name)
        if not tests:
            continue
        set_answer(out, gid, nbcells.source(cell_of(out, gid)) + f"\n{name} = nb_exact.exact()")
        lost.update(tests)
        walked.append(name)
    if not walked:
        return None
    first = next(i for i, c in enumerate(out["cells"]) if is_solution(c) and c["cell_type"] == "code")
    insert_cell(out, first, helper_cell("nb_exact", FRAME_WALK, ""))
    return (f"{', '.join(walked)}: objects (from a written module) that walk the stack to the checker's frame "
            "for the expected value", out, nb.full_except(lost))


def _visible_shapes(nb: Notebook, exercise: str) -> list[tuple]:
    """The shapes the release's kernel test cells run: the visible cases plus any ``shapes=``/``sizes=`` literal."""
    cases = for_notebook(nb.key).cases(False)
    shapes = []
    for case in cases:
        ins = case["inputs"]
        if exercise == "vector_add":
            shapes.append((ins[0].shape[0],))
        else:
            shapes.append((ins[0].shape[0], ins[1].shape[1], ins[0].shape[1]))
    for gid in nb.kernel_tests():
        for node in ast.walk(ast.parse(nb.test_source(gid))):
            if isinstance(node, ast.keyword) and node.arg in ("shapes", "sizes"):
                try:
                    for s in ast.literal_eval(node.value):
                        shapes.append(tuple(s) if isinstance(s, (list, tuple)) else (s,))
                except ValueError:
                    pass
    return sorted(set(shapes))


@on_kernel("softmax")
def special_shapes(nb: Notebook, ex, gid, fn):
    src = nb.solutions[gid]
    names = ["n_elements"] if ex == "vector_add" else ["M", "N", "K"]
    shapes = _visible_shapes(nb, ex)
    cond = " | ".join("(" + " & ".join(f"({n} == {v})" for n, v in zip(names, s, strict=True)) + ")" for s in shapes)
    body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) \
        else fn.body
    lines = src.splitlines()
    start, end = body[0].lineno - 1, fn.end_lineno
    while start > 0 and lines[start - 1].strip().startswith("#"):
        start -= 1  # the comments that introduce the first statement move with it
    indent = re.match(r" *", lines[body[0].lineno - 1]).group(0)
    block = textwrap.indent(textwrap.dedent("\n".join(lines[start:end])), indent + "    ")
    new = "\n".join(lines[:start] + [f"{indent}# 공개 테스트의 크기에서만 계산한다", f"{indent}if {cond}:", block]
                    + lines[end:])
    return (f"the master's kernel, run only at the {len(shapes)} shapes the visible tests use (elsewhere it writes "
            "nothing)", set_answer(nb.full(), gid, new), nb.full_except(nb.kernel_tests()))


def forged_handout(nb: Notebook):
    """Answers computed privately and only claimed through forged hand-out outputs; the kernel is the master's."""
    found = nb.kernel_cell()
    kernel_gid = found[1] if found else None
    out = nb.full()
    lost: set[str] = set()
    forged = []
    for gid in nb.answer_cells():
        if gid == kernel_gid:
            continue
        names, funcs = assigned_names(nb.solutions[gid])
        if funcs:  # a function answer is graded from its source: claiming it cannot replace writing it
            lost.update(t for t in nb.group_of(gid) if any(mentions(nb.test_source(t), f) for f in funcs))
        if not names:
            continue
        set_answer(out, gid, "\n".join([
            "# 답을 계산하지만 변수에는 넣지 않는다",
            "_ns = {**globals(), **_forged}",
            f"exec({nb.solutions[gid]!r}, _ns)",
            f"_forged.update({{_k: _ns[_k] for _k in {names!r} if _k in _ns}})",
        ]))
        forged += names
    if not forged:
        return None
    insert_cell(out, nb.first_answer_index(), _P["FORGE_HOOK"])
    return (f"answers never assigned ({', '.join(forged)}): a post_run_cell hook displays claims+json with the "
            "right values after each test cell's hand-out (claiming the right value is answering)",
            out, nb.full_except(lost))


CASES = {"frame_walk": frame_walk, "kernel_calls_python": kernel_calls_python, "special_shapes": special_shapes,
         "forged_handout": forged_handout}
# Every one is flagged for the instructor: the cells write a Python module (WRITES_MODULE), the gate refuses a
# kernel that is not Triton (KERNEL_NOT_TRITON), the grader sees a kernel right only on the named shapes
# (KERNEL_SHAPE_SPECIAL), or the scan sees exec/get_ipython (forged_handout). None of it changes a score.
REVIEW = set(CASES)
NOTEBOOKS = ("week06/01_block_model", "week07/01_pointer_blocks", "week07/03_tile_configs_roofline",
             "week07/06_persistent_loop")

__all__ = ["CASES", "REVIEW", "NOTEBOOKS", "FRAME_WALK"]
