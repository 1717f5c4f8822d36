"""Hand-in kernels that a grader running them only in the CPU interpreter would over-score: data for sample
hand-ins and for the tests.

Each entry of ``BAD_KERNELS`` (written in ``bad_kernels.toml``) is one student's answer to one kernel
exercise: ``source`` replaces the solution cell ``cell`` of ``notebook`` (the kernel keeps the exercise's
name and arguments), and ``added_cell`` (optional) is a cell the student added right after the cell named by
``added_after``.

``kind``:

* ``"compile"`` — runs correctly under ``TRITON_INTERPRET=1`` (``interpreter_ok``) but triton 3.7.1's
  compiler refuses it for sm_75/sm_80/sm_90 (``reason``: why), or never finishes compiling it
  (``compiler_hangs``: recursion, which the grader refuses statically). A grader that only ran it in the interpreter
  would give it full marks on a CPU, and it fails on a Colab T4.
* ``"unmasked"`` — right answer in the interpreter (the out-of-bounds lanes are read but never stored), but
  a ``tl.load`` of a pointer block has no mask: on a GPU it reads out of bounds. Caught statically.
* ``"fake"`` — not a real kernel's work: the object passed, or a rebound name, tries to get the points
  without a working kernel.

The notebook, its kernel cell and its test cells come from the exercise record
(``gemm_lab.grading.kernels.exercises``). ``message`` is a fragment of the Korean feedback the check gives;
``tests_lost`` are the test cells (grade ids) that must score 0 in the sample, every other test cell of the
notebook keeps its points.
``tests/test_grading_kernels.py`` proves, for every entry, that the interpreter part holds and that the
check fails with ``message``.
"""

from __future__ import annotations

from pathlib import Path

import tomllib

from gemm_lab.grading.kernels.exercises import EXERCISES

__all__ = ["BAD_KERNELS", "by_name"]


def _entry(name, exercise, kind, reason, message, source, *, interpreter_ok=True, added_cell=None,
           added_after=None, tests_lost=None, compiler_hangs=False):
    ex = EXERCISES[exercise]
    return {
        "name": name, "exercise": exercise, "notebook": ex.notebook, "cell": ex.solution_cell, "kind": kind,
        "reason": reason, "message": message, "source": source, "interpreter_ok": interpreter_ok,
        "compiler_hangs": compiler_hangs,
        "added_cell": added_cell, "added_after": added_after,
        "tests_lost": tuple(tests_lost if tests_lost is not None else
                            [g for g in ex.tests() if g != "every_tile_once_by_its_program"]),
    }


with (Path(__file__).parent / "bad_kernels.toml").open("rb") as _f:
    BAD_KERNELS = tuple(_entry(**k) for k in tomllib.load(_f)["kernel"])


def by_name(name: str) -> dict:
    """The entry called ``name``."""
    for entry in BAD_KERNELS:
        if entry["name"] == name:
            return entry
    raise KeyError(f"no bad kernel named {name!r}; known: {', '.join(e['name'] for e in BAD_KERNELS)}")

