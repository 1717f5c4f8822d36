"""Sample hand-ins with expected scores, built from an assignment's release and its masters' solutions.

Modules: ``model`` (a release notebook with its master's solutions), ``generic`` (full, blank, wrong, other
formats, close-but-wrong numbers), ``kernels`` (typical kernel mistakes derived from the master's kernel, and
the interpreter-only kernels of ``autograder/samplekit/bad_kernels.py``), ``hostile`` (sandbox probes, tampering, the
edited-notebook and feedback-leak cases of issue 17, one sample per sandbox limit), ``plan`` (which case runs
on which notebook) and ``expected`` (writing and reading expected.csv / cases.csv).
"""
