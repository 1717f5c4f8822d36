"""What nbgrader test cells call: tolerant answer checks and kernel checks, with Korean feedback.

Answer checks (light: no torch import): ``check_value``, ``check_table``, ``check_choice``,
``check_pairs`` (``gemm_lab.grading.answers``). Kernel checks (import torch lazily):
``check_vector_add``, ``check_softmax``, ``check_matmul``, ``check_persistent``
(``gemm_lab.grading.kernels``). Each prints one "✅ ..." line or raises ``AssertionError`` whose
Korean message names the entry (table cell, shape, element) and the likely mistake.

A test cell loads a fresh copy of the grader, so a notebook that patched it earlier gains nothing::

    '''Checks the total number of programs (grid) for 500×600×300 with 128×128×64 tiles.'''
    from gemm_lab.grading import fresh
    from gemm_lab.calc import tiling
    g = fresh()
    g.check_value("grid", grid, tiling.tile_grid(500, 600, 300, 128, 128, 64).grid,
                  hint="num_pid_m × num_pid_n", reveal=True)      # visible test: may show the answer
    # ...and, inside nbgrader's hidden-tests markers:
    g.check_matmul(launch, hidden=True)                            # hidden shapes, poisoned margins

``reveal=False`` (the default) never prints the expected value: use it in hidden tests; visible tests,
whose source the student reads anyway, may pass ``reveal=True``. ``integrity.scan_source(code)`` lists
tampering constructs in a hand-in for the autograder; what a hostile notebook can still do is
documented in ``gemm_lab.grading.integrity``.
"""

from . import _seal
from .answers import check_choice, check_pairs, check_table, check_value, normalize_text
from .integrity import fresh, scan_notebook, scan_source
from .kernels import check_matmul, check_persistent, check_softmax, check_vector_add

__all__ = [
    "check_value",
    "check_table",
    "check_choice",
    "check_pairs",
    "check_vector_add",
    "check_softmax",
    "check_matmul",
    "check_persistent",
    "fresh",
    "scan_source",
    "scan_notebook",
    "normalize_text",
]

# Read-only from here on: `g.check_value = ...` in a notebook raises AttributeError (see _seal).
_seal.seal(__name__, __all__)
