"""What nbgrader test cells call: tolerant answer checks and kernel checks, with Korean feedback.

Answer checks (light: no torch import): ``check_value``, ``check_table``, ``check_choice``,
``check_pairs``. Kernel checks (import torch/triton lazily): ``check_vector_add``, ``check_softmax``,
``check_matmul``, ``check_persistent``. Tamper resistance: ``fresh()`` returns a freshly loaded copy
of this package from disk (use it in test cells: ``from gemm_lab.grading import fresh; g = fresh()``),
``integrity.scan_source(code)`` lists tampering constructs in a hand-in. What a hostile notebook can
still do is documented in ``gemm_lab.grading.integrity``.
"""

from .answers import check_choice, check_pairs, check_table, check_value, normalize_text
from .integrity import fresh, scan_source
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
    "normalize_text",
]
