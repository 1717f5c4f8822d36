"""Run untrusted student code in bubblewrap: the kernel manager (kernel.py) is the one interface the grader uses."""
