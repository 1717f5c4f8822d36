"""Sample hand-ins with expected scores, built from an assignment's release and its masters' solutions.

Modules: ``make_samples`` (the command: writes autograder/samples/ASSIGNMENT/), ``model`` (a release notebook
with its master's solutions, and the cell and kernel helpers; the kernel exercises come from
``gemm_lab.grading.kernels.exercises``), ``honest`` (full, blank, wrong, close numbers, the master's answers written
otherwise), ``kernels`` (typical kernel mistakes and the interpreter-only kernels of ``bad_kernels``),
``attacks_sandbox`` / ``attacks_inprocess`` / ``attacks_worker`` / ``attacks_gate`` (hostile hand-ins against the
sandbox and notebook, the tricks first aimed at an in-process grader, the kernel workers and what hand-ins
share, the gate; their cell texts are in ``payloads.toml``, the bad kernels in ``bad_kernels.toml``), ``plan``
(every case, which runs on which notebook), ``expected`` (writing and reading expected.csv / cases.csv),
``compare`` (a graded course against expected.csv), ``fixture`` (the tiny two-notebook course of the tests),
``synthetic_class`` (a graded class, no nbgrader run, for the class report) and ``leaderboard_demo`` (the
leaderboard's demo hand-ins).
"""
