"""Autograde collected hand-ins: schedule, run nbgrader in the sandbox, merge into the gradebook."""
