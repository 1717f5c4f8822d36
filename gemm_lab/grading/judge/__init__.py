"""How the autograder judges a hand-in outside the student's process; never needed by a test cell on a
student's own machine (``gate.notebook_kernel`` aside, which the kernel checks call).

* ``handout``: what a test cell becomes in the student's kernel while grading (the names it reads, handed
  out as plain data) and reading that hand-out back;
* ``replay``: the test cell's own source run in the grader's process on the handed-out values;
* ``gate``: the module a kernel worker imports, written from the notebook's checked syntax tree;
* ``remote`` / ``worker``: kernels and function answers held as source and run in fresh worker processes
  (``python -m gemm_lab.grading.judge.worker``), which hand back raw data that the grader judges.
"""
