"""Where grading decisions are made, and the instructor's review scan of hand-ins.

Threat model. The kernel that runs a hand-in is the student's machine: anything it prints, returns or
writes is a claim. So, while the autograder runs a notebook, test cells do not judge there: each hands
the values it reads out as data (``handout``), and the grader, in its own process, runs the test cell's
source on them (``replay``); kernels and function answers are taken from the notebook's source
(``extract``: a kernel may use only Triton) and run in a fresh sandboxed worker (``worker``/``remote``)
on inputs the grader makes, with the reference computed and compared in the grader. Nothing a hand-in
runs can change a check, the expected values or a compile verdict; forging the hand-out only claims an
answer.

On a student's own machine (not grading) the same test cells run in the notebook and print their ✅/❌
lines at once; there, ``fresh()`` is simply this package.

``scan_source(code, protected)`` (``.audit.scan``) lists constructs that try to subvert a checker
(rebinding checks or built-ins, import hooks, frames, ``exec``, history reads, ...): a review aid that
tells the instructor which hand-ins tried, never a defence the grade depends on.
"""

from __future__ import annotations

import sys

from .findings import FLAG_TEXT

__all__ = ["fresh", "scan_source", "scan_notebook", "locked_names", "FLAG_TEXT"]

_PACKAGE = "gemm_lab.grading"


def fresh():
    """The grading package (test cells call ``g = fresh()`` and use ``g.check_*`` and ``g.calc``)."""
    return sys.modules[_PACKAGE]


# --------------------------------------------------------------------------- static scan
# The finding codes, their Korean text and policy live in .findings (FLAG_TEXT is re-exported here).


def scan_source(code: str, protected=None) -> list[str]:
    """Tampering constructs in a student's code (see ``gemm_lab.grading.audit.scan.scan_source``)."""
    from .audit.scan import scan_source as _scan_source

    return _scan_source(code, protected)


def scan_notebook(notebook) -> list[str]:
    """``scan_source`` over a notebook's student cells (see ``gemm_lab.grading.audit.scan.scan_notebook``)."""
    from .audit.scan import scan_notebook as _scan_notebook

    return _scan_notebook(notebook)


def locked_names(cells, before=None) -> dict:
    """Names the given (locked) cells define (see ``gemm_lab.grading.audit.scan.locked_names``)."""
    from .audit.scan import locked_names as _locked_names

    return _locked_names(cells, before)
