"""The Tutorial-03 kernel under @triton.autotune, with a config list per architecture.

On a GPU, ``matmul_autotuned`` benchmarks the configs of the device's architecture the first time a
(M, N, K, dtypes) key appears (configs that don't fit shared memory are dropped by the autotuner).
In the CPU interpreter ``@triton.autotune`` cannot run (its benchmarking asks for a GPU driver), so
the launcher picks one config itself (``interpreter_config``).
"""

from __future__ import annotations

import functools

import torch
import triton

from gemm_lab import runtime

from ._validate import check_positive_int
from .matmul import matmul_kernel, trivial_result, validate_matmul


def _cfg(bm, bn, bk, g, s, w):
    return dict(BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=g, num_stages=s, num_warps=w)


# Tutorial 03's get_cuda_autotune_config() (fp16 part), used for sm_80 and newer.
TUTORIAL_CONFIGS = [
    _cfg(128, 256, 64, 8, 3, 8),
    _cfg(64, 256, 32, 8, 4, 4),
    _cfg(128, 128, 32, 8, 4, 4),
    _cfg(128, 64, 32, 8, 4, 4),
    _cfg(64, 128, 32, 8, 4, 4),
    _cfg(128, 32, 32, 8, 4, 4),
    _cfg(64, 32, 32, 8, 5, 2),
    _cfg(32, 64, 32, 8, 5, 2),
]
# Hopper (sm_90, 227 KiB per block): the tutorial's list plus deeper / wider tiles that fit.
HOPPER_EXTRA = [
    _cfg(128, 256, 64, 8, 4, 8),
    _cfg(256, 128, 64, 8, 3, 8),
    _cfg(256, 128, 64, 8, 4, 8),
    _cfg(128, 128, 64, 8, 4, 4),
    _cfg(128, 128, 64, 8, 5, 8),
]
# sm_75 (T4: 64 KiB per block, no cp.async pipelining, FMA dot since triton 3.4): configs whose
# textbook buffer (num_stages x stage bytes, fp16) stays within 64 KiB.
TURING_CONFIGS = [
    _cfg(128, 128, 32, 8, 2, 8),
    _cfg(128, 64, 32, 8, 2, 4),
    _cfg(64, 128, 32, 8, 2, 4),
    _cfg(64, 64, 32, 8, 2, 4),
    _cfg(64, 32, 32, 8, 2, 2),
    _cfg(32, 64, 32, 8, 2, 2),
]


def configs_for(arch: str | tuple[int, int] | None) -> list[dict]:
    """The candidate list for an architecture ("sm_75", "sm_80", "sm_90", or a (major, minor) tuple)."""
    if arch is None:
        return [interpreter_config(512, 512, 512)]
    major, minor = parse_arch(arch)
    if (major, minor) < (8, 0):
        return list(TURING_CONFIGS)
    if major == 9:
        return TUTORIAL_CONFIGS + HOPPER_EXTRA
    return list(TUTORIAL_CONFIGS)


def parse_arch(arch) -> tuple[int, int]:
    """"sm_90" / (9, 0) -> (9, 0); anything else: a TypeError/ValueError naming ``arch``."""
    if isinstance(arch, str):
        digits = arch.removeprefix("sm_")
        if not arch.startswith("sm_") or len(digits) < 2 or not digits.isdigit():
            raise ValueError(f"arch must look like 'sm_75', 'sm_80' or 'sm_90', got {arch!r}")
        return int(digits[:-1]), int(digits[-1])
    if isinstance(arch, tuple) and len(arch) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in arch):
        return arch
    raise TypeError(f"arch must be a string such as 'sm_90' or a (major, minor) tuple such as (9, 0), "
                    f"got {arch!r} ({type(arch).__name__})")


def interpreter_config(M: int, N: int, K: int) -> dict:
    """What the launcher uses where autotuning can't run: 64x64x32 tiles, shrunk for tiny matrices."""
    for name, value in (("M", M), ("N", N), ("K", K)):
        check_positive_int(name, value)
    def fit(n, cap):
        return max(16, min(cap, triton.next_power_of_2(n)))
    return _cfg(fit(M, 64), fit(N, 64), fit(K, 32), 8, 3, 4)


@functools.lru_cache(maxsize=None)
def _autotuned_kernel(arch: str):
    configs = [
        triton.Config({k: c[k] for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M")},
                      num_stages=c["num_stages"], num_warps=c["num_warps"])
        for c in configs_for(arch)
    ]
    return triton.autotune(configs=configs, key=["M", "N", "K"])(matmul_kernel)


def current_arch() -> str | None:
    cc = runtime.capability()
    return None if cc is None else f"sm_{cc[0]}{cc[1]}"


def matmul_autotuned(a: torch.Tensor, b: torch.Tensor, activation: str | None = None,
                     out: torch.Tensor | None = None) -> torch.Tensor:
    """C = activation(A @ B) with the autotuned Tutorial-03 kernel (same inputs as ``matmul``)."""
    out = validate_matmul(a, b, out, activation)
    M, K = a.shape
    N = b.shape[1]
    if trivial_result(out, K):
        return out
    args = (a, b, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))
    arch = current_arch()
    if arch is None:
        cfg = interpreter_config(M, N, K)
        grid = (triton.cdiv(M, cfg["BLOCK_SIZE_M"]) * triton.cdiv(N, cfg["BLOCK_SIZE_N"]),)
        matmul_kernel[grid](*args, ACTIVATION=activation or "", **cfg)
        return out
    kernel = _autotuned_kernel(arch)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)

    kernel[grid](*args, ACTIVATION=activation or "")
    return out


def best_config(M: int, N: int, K: int) -> dict | None:
    """The config the autotuner chose for a key already run on this GPU (None if none / interpreter)."""
    arch = current_arch()
    if arch is None:
        return None
    kernel = _autotuned_kernel(arch)
    for key, cfg in kernel.cache.items():
        if tuple(key[:3]) == (M, N, K):
            return dict(cfg.kwargs, num_stages=cfg.num_stages, num_warps=cfg.num_warps)
    return None
