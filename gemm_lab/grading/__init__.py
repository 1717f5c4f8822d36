"""What nbgrader test cells call: tolerant answer checks and kernel checks, with Korean feedback.

Answer checks (light: no torch import): ``check_value``, ``check_table``, ``check_choice``,
``check_pairs`` (``answers``). Kernel checks (import torch lazily): ``check_vector_add``, ``check_softmax``,
``check_matmul``, ``check_persistent`` (``kernels``, one record per exercise in ``kernels.exercises``). Each
prints one "✅ ..." line or raises ``AssertionError`` whose Korean message names the entry (table cell,
shape, element) and the likely mistake. How the autograder judges a hand-in outside the student's process
is ``judge``; the instructor's review scan and the test-cell audit are ``audit``; ``codec`` is the plain
data that crosses a process boundary.

The test-cell rule. A test cell takes the checker AND every expected value from ``g = fresh()`` (or its
own imports) inside the cell; the student's answer variables are the only notebook names it reads. While
the autograder runs a notebook, the names a test cell reads are handed out of the student's kernel as data and the cell
itself runs in the grader's process (``judge.handout``, ``judge.replay``; kernels and function answers
run from their source in a fresh worker, ``judge.remote``), so a value the cell took from the notebook
would be the student's claim, not the key. On a student's own machine the test cells run in the notebook
and ``fresh()`` is simply this package. Constants a check needs are written in the cell or taken from
``g.calc`` (``g.calc.SEED_CONFIGS``), never from the notebook. ``tests/test_master_test_cells.py``
enforces this on every master::

    '''Checks the total number of programs (grid) for 500×600×300 with 128×128×64 tiles.'''
    from gemm_lab.grading import fresh
    g = fresh()
    g.check_value("grid", grid, g.calc.tile_grid(500, 600, 300, 128, 128, 64).grid,
                  hint="num_pid_m × num_pid_n", reveal=True)      # visible test: may show the answer
    # ...and, inside nbgrader's hidden-tests markers:
    g.check_matmul(student_matmul_kernel, hidden=True)    # the @triton.jit kernel; hidden shapes, poisoned margins

``reveal=False`` (the default) never prints the expected value: use it in hidden tests; visible tests,
whose source the student reads anyway, may pass ``reveal=True``. ``audit.scan.scan_source(code)`` lists
constructs that try to subvert a checker, for the instructor's review.
"""

import sys

from .. import calc  # test cells compute every expected value from g.calc
from . import compile_answers  # test cells read answer keys through g.compile_answers
from .answers import check_choice, check_pairs, check_table, check_value, normalize_text
from .kernels import check_matmul, check_persistent, check_softmax, check_vector_add

__all__ = [
    "calc",
    "compile_answers",
    "check_value",
    "check_table",
    "check_choice",
    "check_pairs",
    "check_vector_add",
    "check_softmax",
    "check_matmul",
    "check_persistent",
    "fresh",
    "normalize_text",
]


def fresh():
    """The grading package (test cells call ``g = fresh()`` and use ``g.check_*`` and ``g.calc``)."""
    return sys.modules[__name__]
