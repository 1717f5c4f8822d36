"""Static analysis of notebooks for the autograder and the course's tests; never needed by a test cell.

* ``scan`` / ``scan_rebind``: what a student's cells do that could subvert the checks
  (``scan_source``, ``scan_notebook``; ``gemm_lab.grading.integrity`` re-exports them).
* ``cell_audit``: whether a master's test cells follow the test-cell rule (``tests/test_master_test_cells.py``).

This is a subpackage so that ``fresh()``, which reloads every module of ``gemm_lab.grading`` for each
test cell, does not compile this code each time (``_loader`` loads the package's own ``*.py`` files only).
"""
