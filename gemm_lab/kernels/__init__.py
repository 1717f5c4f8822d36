"""Triton kernels and their validating launchers (vector add, fused softmax, tiled / autotuned /
persistent / split-K / fp8 matmul, and ``best_matmul``, which picks among them per shape). Importing
this package imports ``gemm_lab.runtime`` first, which switches Triton to the CPU interpreter when there
is no CUDA device."""

# isort: off
from gemm_lab import runtime  # noqa: F401  (must come before triton)
from gemm_lab import _lang_state  # noqa: F401  (snapshot of triton.language before any interpreter run)
# isort: on
from .autotuned import best_config, configs_for, interpreter_config, matmul_autotuned
from .best import best_matmul
from .check import assert_close, assert_close_fp16, max_ulp_error, relative_error
from .fp8 import fp8_matmul, reference_fp8_matmul
from .hinted import hinted_matmul, hinted_matmul_kernel
from .matmul import leaky_relu, matmul, matmul_kernel, reference_matmul
from .persistent import (
    grouped_persistent_kernel,
    naive_tiled_matmul,
    persistent_matmul,
    persistent_matmul_kernel,
    tiled_matmul_kernel,
)
from .persistent_tma import tma_persistent_kernel, tma_persistent_matmul
from .softmax import naive_softmax, reference_softmax, softmax, softmax_kernel
from .splitk import splitk_matmul
from .vector_add import add_kernel, reference_add, vector_add

__all__ = [
    "add_kernel", "assert_close", "best_matmul", "assert_close_fp16", "best_config", "configs_for", "fp8_matmul", "grouped_persistent_kernel",
    "hinted_matmul", "hinted_matmul_kernel",
    "interpreter_config", "leaky_relu", "matmul", "matmul_autotuned", "matmul_kernel", "max_ulp_error",
    "naive_softmax", "naive_tiled_matmul", "persistent_matmul", "persistent_matmul_kernel", "reference_add",
    "reference_fp8_matmul", "reference_matmul", "reference_softmax", "relative_error", "softmax", "softmax_kernel", "splitk_matmul", "tiled_matmul_kernel",
    "tma_persistent_kernel", "tma_persistent_matmul", "vector_add",
]
