"""The grader's own copies of the @triton.jit helpers that notebooks give in locked cells.

A student's kernel may call a helper the notebook gives (week 7 ``06_persistent_loop``: ``record_tile``, the
grading record of which program computed which tile; the student writes the tile body itself, as in the
persistent-matmul blog's TODO 4). The grader does not trust the notebook's object under that name (an added
cell could redefine it, e.g. to forge the owner records): when it rebuilds the student's kernel
(``gemm_lab.grading.launchers``) it binds the name to the copy below instead.
Each copy must stay identical to the master's locked cell (``tests/test_grading_kernels.py`` checks it).

``fresh()`` loads every module of the package for each test cell, and answer-only notebooks must not pay
for importing triton: the helpers are made by ``helpers(exercise)`` on first use (after
``gemm_lab.runtime`` has decided ``TRITON_INTERPRET``), not at import.
"""

from __future__ import annotations

__all__ = ["helpers"]

_MADE: dict = {}


def _make():
    global tl
    import triton
    import triton.language as tl

    @triton.jit
    def record_tile(tile_id, visits_ptr, owner_ptr):
        """Grading record: tile ``tile_id`` was computed once more, and by this program."""
        tl.atomic_add(visits_ptr + tile_id, 1)
        tl.store(owner_ptr + tile_id, tl.program_id(0))

    return {"persistent": {"record_tile": record_tile}}


def helpers(exercise: str) -> dict:
    """{name in the notebook: the grader's copy} of the @jit helpers the exercise's notebook gives."""
    if not _MADE:
        _MADE.update(_make())
    return dict(_MADE.get(exercise, {}))
