"""Static analysis of notebooks for the autograder and the course's tests; never needed by a test cell.

* ``scan``: what a student's cells do that could subvert the checks (``scan_source``),
  with the finding codes and their Korean text in ``findings``.
* ``cell_audit``: whether a master's test cells follow the test-cell rule (``tests/test_master_test_cells.py``).

A subpackage, so that importing ``gemm_lab.grading`` (every test cell does) does not load it.
"""
