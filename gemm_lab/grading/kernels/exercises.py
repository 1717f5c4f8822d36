"""One record per kernel exercise: what a new kernel exercise adds to the grader, besides its master.

An ``Exercise`` names the kernel the student writes and the check a test cell calls on it, the master notebook
(``source/<notebook>.ipynb``) and its solution cell, the arguments the notebook's locked launcher passes (and
which of them are ``tl.constexpr``), the grader's copy of that launcher, the constexpr sets it makes Triton
compile, and the case builder of ``cases``. The grade ids and points of the test cells that call the check
are read from the master (``Exercise.tests``), never typed here; ``Exercise.problems`` says where the master
and the record disagree (``tests/test_exercises.py`` runs it on every master).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...calc import cdiv as _cdiv
from . import cases

__all__ = ["Exercise", "EXERCISES", "for_notebook"]

_ROOT = Path(__file__).resolve().parents[3]  # the course repository: source/ holds the masters


@dataclass(frozen=True)
class Exercise:
    """A kernel exercise (see the module docstring)."""

    name: str  # the key of EXERCISES
    kernel: str  # the @triton.jit function the student writes
    check: str  # the check a test cell calls on it: g.<check>(<kernel>)
    notebook: str  # the master, relative to source/ without its suffix
    solution_cell: str  # grade id of the master's cell that defines the kernel
    params: tuple[str, ...]  # the locked launcher's arguments, in order
    constexpr_params: tuple[str, ...]  # those the kernel annotates tl.constexpr
    pointers: tuple[str, ...]  # tensors of the graded dtype
    int_pointers: tuple[str, ...]  # int32 buffers
    launch: Callable  # launch(kernel, *tensors, *extra): the grader's copy of the locked launcher
    constexprs: Callable  # constexprs(shapes, extras): every constexpr set the launcher passes for these input
    # shapes (one list per run) and extra arguments, smallest first
    cases: Callable  # cases(hidden, extra, **options): the check's cases (``cases``), ``extra`` shapes last
    drawn: Callable  # drawn(d): the shape the grader adds to a check of a hand-in (``d(lo, hi)``: a drawn int)

    def master(self, root=None) -> Path:
        return Path(root or _ROOT) / "source" / f"{self.notebook}.ipynb"

    def _cells(self, root=None) -> list[tuple[dict, str]]:
        nb = json.loads(self.master(root).read_text(encoding="utf-8"))
        return [(c.get("metadata", {}).get("nbgrader", {}), "".join(c.get("source", ""))) for c in nb["cells"]]

    def tests(self, root=None) -> dict:
        """grade id -> points of the master's test cells that call ``g.<check>(...)``, in cell order."""
        return {meta["grade_id"]: meta.get("points", 0) for meta, src in self._cells(root)
                if meta.get("grade") and not meta.get("solution") and f".{self.check}(" in src}

    def problems(self, root=None) -> list[str]:
        """Where the master and this record disagree, each line naming the record ([] when they agree)."""
        me = f"EXERCISES[{self.name!r}] (gemm_lab/grading/kernels/exercises.py) vs {self.master(root)}"
        try:
            cells = self._cells(root)
        except (OSError, ValueError, KeyError) as exc:
            return [f"{me}: the master cannot be read ({exc})"]
        tests = self.tests(root)
        out = [] if tests else [f"{me}: no test cell calls g.{self.check}(...)"]
        out += [f"{me}: test cell {gid!r} has points {pts!r}" for gid, pts in tests.items()
                if not isinstance(pts, (int, float)) or pts <= 0]
        solution = [src for meta, src in cells if meta.get("grade_id") == self.solution_cell]
        if not solution:
            return out + [f"{me}: no cell with grade id {self.solution_cell!r} (solution_cell)"]
        try:
            tree = ast.parse(solution[0])
        except SyntaxError as exc:
            return out + [f"{me}: solution cell {self.solution_cell!r} does not parse ({exc.msg})"]
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == self.kernel]
        if not defs:
            return out + [f"{me}: solution cell {self.solution_cell!r} defines no {self.kernel}"]
        args = defs[0].args.args
        params = tuple(a.arg for a in args)
        constexprs = tuple(a.arg for a in args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation))
        if params != self.params:
            out.append(f"{me}: {self.kernel} takes {params}, the record says params={self.params}")
        if constexprs != self.constexpr_params:
            out.append(f"{me}: {self.kernel} annotates {constexprs} tl.constexpr, the record says "
                       f"constexpr_params={self.constexpr_params}")
        return out


# --------------------------------------------------------------------------- the locked launchers' copies


def _launch_vector_add(kernel, x, y, out):
    """week06/01 ``launch(x, y, out)``: one program per 128 elements."""
    n_elements = out.numel()
    kernel[(_cdiv(n_elements, 128),)](x, y, out, n_elements, BLOCK_SIZE=128)


def _launch_softmax(kernel, x, out):
    """week06/02 ``launch(x, out)``: one program per row, BLOCK_SIZE = next_power_of_2(n_cols)."""
    n_rows, n_cols = x.shape
    kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), x.stride(1), out.stride(1), n_rows, n_cols,
                      BLOCK_SIZE=cases.next_pow2(n_cols))


def _launch_matmul(kernel, a, b, c):
    """week07/01 ``launch(a, b, c)``: 16×16×16 tiles, one program per C tile."""
    M, K = a.shape
    N = b.shape[1]
    kernel[(_cdiv(M, 16) * _cdiv(N, 16),)](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16)


def _launch_persistent(kernel, a, b, c, num_programs, visits, owner):
    """week07/06 ``launch(a, b, c, num_programs, visits=..., owner=...)``: 32×32×32 tiles."""
    M, K = a.shape
    N = b.shape[1]
    kernel[(num_programs,)](
        a, b, c, visits, owner, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        NUM_PROGRAMS=num_programs, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)


def _drawn_mm(d):
    return d(17, 60), d(17, 60), d(17, 60)  # every dimension drawn, past the tile multiples


_MM_INTS = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")

EXERCISES = {ex.name: ex for ex in (
    Exercise(
        "vector_add", "add_kernel", "check_vector_add", "week06/01_block_model", "ex4_add_kernel",
        params=("x_ptr", "y_ptr", "output_ptr", "n_elements", "BLOCK_SIZE"), constexpr_params=("BLOCK_SIZE",),
        pointers=("x_ptr", "y_ptr", "output_ptr"), int_pointers=(), launch=_launch_vector_add,
        constexprs=lambda cs, extras: [{"BLOCK_SIZE": 128}], cases=cases.vector_add_cases,
        drawn=lambda d: d(1025, 3000)),
    Exercise(
        "softmax", "softmax_kernel", "check_softmax", "week06/02_fusion_softmax", "ex4_softmax_kernel",
        params=("output_ptr", "input_ptr", "input_row_stride", "output_row_stride", "input_col_stride",
                "output_col_stride", "n_rows", "n_cols", "BLOCK_SIZE"), constexpr_params=("BLOCK_SIZE",),
        pointers=("output_ptr", "input_ptr"), int_pointers=(), launch=_launch_softmax,
        constexprs=lambda cs, extras: [
            {"BLOCK_SIZE": b} for b in sorted({cases.next_pow2(shapes[0][1]) for shapes in cs})],
        cases=cases.softmax_cases, drawn=lambda d: (d(2, 12), d(17, 150))),
    Exercise(
        "matmul", "student_matmul_kernel", "check_matmul", "week07/01_pointer_blocks", "student_kernel",
        params=("a_ptr", "b_ptr", "c_ptr") + _MM_INTS + ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"),
        constexpr_params=("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"),
        pointers=("a_ptr", "b_ptr", "c_ptr"), int_pointers=(), launch=_launch_matmul,
        constexprs=lambda cs, extras: [{"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 16, "BLOCK_SIZE_K": 16}],
        cases=cases.matmul_cases, drawn=_drawn_mm),
    Exercise(
        "persistent", "student_persistent_kernel", "check_persistent", "week07/06_persistent_loop",
        "student_kernel",
        params=("a_ptr", "b_ptr", "c_ptr", "visits_ptr", "owner_ptr") + _MM_INTS
        + ("NUM_PROGRAMS", "BLOCK_M", "BLOCK_N", "BLOCK_K"),
        constexpr_params=("NUM_PROGRAMS", "BLOCK_M", "BLOCK_N", "BLOCK_K"),
        pointers=("a_ptr", "b_ptr", "c_ptr"), int_pointers=("visits_ptr", "owner_ptr"), launch=_launch_persistent,
        constexprs=lambda cs, extras: [
            {"NUM_PROGRAMS": p, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32} for p in sorted(set(extras))],
        cases=cases.persistent_cases, drawn=_drawn_mm),
)}


def for_notebook(key: str) -> Exercise | None:
    """The record whose master is ``key`` ("week07/01_pointer_blocks"), or None."""
    return next((ex for ex in EXERCISES.values() if ex.notebook == key), None)
