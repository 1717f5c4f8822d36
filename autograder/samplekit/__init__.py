"""Sample hand-ins with expected scores, built from an assignment's release and its masters' solutions.

Modules: ``make_samples`` (the command: writes autograder/samples/ASSIGNMENT/), ``model`` (a release notebook
with its master's solutions), ``generic`` (full, blank, wrong, other formats, close-but-wrong numbers),
``kernels`` (typical kernel mistakes derived from the master's kernel, and the interpreter-only kernels of
``bad_kernels``), ``hostile`` (sandbox probes, tampering, edited notebooks and feedback leaks, one sample per
sandbox limit), ``plan`` (which case runs on which notebook), ``expected`` (writing and reading expected.csv /
cases.csv), ``compare`` (a graded course against expected.csv), ``fixture`` (the tiny two-notebook course of
the tests) and ``synthetic_class`` (a graded class, no nbgrader run, for the class report).
"""
