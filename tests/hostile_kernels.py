# ruff: noqa: I001  (gemm_lab.runtime must be imported before triton)
"""@triton.jit kernels for tests/test_grading_integrity.py: week 6's add_kernel signature, each wrong in one way.

Imported by the tests (gemm_lab.runtime first, so the interpreter is chosen before triton loads).
"""

import builtins

from gemm_lab import runtime  # noqa: F401  (before triton: picks the CPU interpreter without a GPU)

import triton
import triton.language as tl


@triton.jit
def writes_nothing(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)  # noqa: F841  (never stores: the poisoned output stays untouched)


@triton.jit
def copies_x_and_rebinds_len(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(output_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)
    builtins.len = lambda *a: 0


@triton.jit
def exits(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    raise SystemExit(0)
