"""Where grading decisions are made, and the instructor's review scan of hand-ins.

While the autograder runs a notebook, the student's kernel only hands out data: test cells run in the
grader's process (``handout``, ``replay``), kernels and function answers from their source in a fresh
worker (``extract``, ``remote``); autograder/README.md, "How a hand-in is graded", tells the rest. On a
student's own machine the test cells run in the notebook and ``fresh()`` is simply this package.

``scan_source`` / ``scan_notebook`` (``.audit.scan``) list constructs that try to subvert a checker: a
review aid for the instructor, never a defence the grade depends on (codes: ``.findings``).
"""

from __future__ import annotations

import sys

from .findings import FLAG_TEXT

__all__ = ["fresh", "scan_source", "scan_notebook", "FLAG_TEXT"]

_PACKAGE = "gemm_lab.grading"


def fresh():
    """The grading package (test cells call ``g = fresh()`` and use ``g.check_*`` and ``g.calc``)."""
    return sys.modules[_PACKAGE]


# --------------------------------------------------------------------------- static scan
# The finding codes, their Korean text and policy live in .findings (FLAG_TEXT is re-exported here).


def scan_source(code: str) -> list[str]:
    """Tampering constructs in a student's code (see ``gemm_lab.grading.audit.scan.scan_source``)."""
    from .audit.scan import scan_source as _scan_source

    return _scan_source(code)


def scan_notebook(notebook) -> list[str]:
    """``scan_source`` over a notebook's student cells (see ``gemm_lab.grading.audit.scan.scan_notebook``)."""
    from .audit.scan import scan_notebook as _scan_notebook

    return _scan_notebook(notebook)
