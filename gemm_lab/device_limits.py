"""Make Triton believe the GPU at hand has a smaller per-block shared-memory limit.

Week 7 notebook 03 teaches the T4's verdict: Triton compiles every candidate, and only when a compiled
kernel is first loaded, in ``CompiledKernel._init_handles``, does it compare ``metadata.shared`` with the
device's ``max_shared_mem`` and raise ``OutOfResources``; ``@triton.autotune`` catches that and times the
candidate ``inf``. :func:`emulate_shared_memory_limit` lets that code path run on a bigger GPU (an H200)
under a smaller limit (the T4's 64 KiB)::

    with emulate_device_shared_memory("colab-t4") as emu:     # or emulate_shared_memory_limit(65536)
        fresh = triton.jit(matmul_kernel.fn)                   # a new JITFunction: _init_handles runs again
        fresh[grid](...)                                       # OutOfResources when metadata.shared > 65536
    emu.queries                                                # how often Triton asked for the limit

**How.** Triton 3.6 and 3.7 read the limit in ``CompiledKernel._init_handles`` through the module-level
function ``triton.compiler.compiler.max_shared_mem(device)`` (``functools.lru_cache`` around
``driver.active.utils.get_device_properties(device)["max_shared_mem"]``), looked up as a module global at
call time. Inside the ``with`` block that global (and its re-exports ``triton.compiler.max_shared_mem`` and
``triton.max_shared_mem``, where they are the same object) is replaced by a function returning
``min(limit, real limit)``; on exit the original objects, lru cache included, are put back, also after an
exception. A Triton whose ``_init_handles`` does not call ``max_shared_mem(`` (checked in its source) gets
the fallback: ``driver.active.utils.get_device_properties`` is wrapped so that the dict it returns holds
``min(limit, real)`` under ``"max_shared_mem"`` (the ``max_shared_mem`` cache, if any, is cleared on entry
and on exit). :attr:`SharedMemoryLimit.patched` names what was replaced.

**What it does not emulate.**

* The kernel is still compiled for the GPU at hand (sm_90 on an H100/H200): ``metadata.shared`` is sm_90's
  (wgmma path: ``num_stages`` buffers), not what a T4 build (sm_75) would use. On sm_75 Triton has no
  cp.async pipelining, no TMA and no wgmma/mma for ``tl.dot`` (FP32 FMA), and keeps one small buffer
  whatever ``num_stages`` is, so a config that fails here may fit on a real T4 (candidate 3 of notebook 03:
  144 KiB on sm_90, 64 KiB on sm_75). Cross-compile for ``sm_75`` (``gemm_lab.compile``) for the T4's own
  number.
* Only this one check: the register file, threads per block (``load_binary`` reports the real GPU's),
  shared memory per SM (occupancy), SM count, clocks, L2 and HBM stay the H200's, so every timing is the
  H200's. The CUDA driver still loads kernels against the real limit; a limit above the real one is
  clamped to the real one (a GPU cannot be made bigger).
* Kernels already loaded are not checked again: ``_init_handles`` returns at once once a
  ``CompiledKernel`` has its module. Launch through a *fresh* ``JITFunction`` (``triton.jit(kernel.fn)``)
  inside the block, and drop it afterwards: a kernel that failed inside keeps raising (Triton stores the
  error in ``CompiledKernel._run``), and one that loaded inside is never re-checked outside.
* This process only, and the Triton Python runtime only (not other processes, not CUDA C++ code).
"""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass

__all__ = ["SharedMemoryLimit", "emulate_device_shared_memory", "emulate_shared_memory_limit", "patch_point"]

_FUNCTION = "triton.compiler.compiler.max_shared_mem"
_PROPERTIES = "triton.compiler.compiler.driver.active.utils.get_device_properties"


@dataclass
class SharedMemoryLimit:
    """What :func:`emulate_shared_memory_limit` yields: the limit, what was patched, and a count of the
    times Triton asked for the limit inside the block (0 after a launch means nothing was checked: the
    kernel was already loaded)."""

    limit: int
    patched: str
    queries: int = 0
    real_limit: int | None = None  # the real limit of the last device asked about


def _check_limit(limit_bytes) -> int:
    if isinstance(limit_bytes, bool) or not isinstance(limit_bytes, int):
        raise TypeError(f"limit_bytes must be an int (bytes of shared memory per block), got "
                        f"{type(limit_bytes).__name__} ({limit_bytes!r})")
    if limit_bytes <= 0:
        raise ValueError(f"limit_bytes must be a positive number of bytes, got {limit_bytes}")
    return limit_bytes


def patch_point() -> str:
    """Which object :func:`emulate_shared_memory_limit` replaces in the installed Triton: ``_FUNCTION``
    when ``CompiledKernel._init_handles`` calls ``max_shared_mem(`` (triton 3.6, 3.7), else ``_PROPERTIES``."""
    import triton.compiler.compiler as cc

    if not callable(getattr(cc, "max_shared_mem", None)):
        return _PROPERTIES
    try:
        source = inspect.getsource(cc.CompiledKernel._init_handles)
    except (OSError, TypeError):  # no source shipped: trust the module global
        return _FUNCTION
    return _FUNCTION if "max_shared_mem(" in source else _PROPERTIES


@contextlib.contextmanager
def emulate_shared_memory_limit(limit_bytes: int):
    """Inside the block, Triton's load-time check sees ``min(limit_bytes, real limit)`` bytes of shared
    memory per block (see the module docstring for how, and for what is not emulated). Yields a
    :class:`SharedMemoryLimit`. ``limit_bytes``: a positive ``int`` (``TypeError``/``ValueError`` otherwise)."""
    limit = _check_limit(limit_bytes)
    where = patch_point()
    info = SharedMemoryLimit(limit=limit, patched=where)
    if where == _FUNCTION:
        with _patched_function(info):
            yield info
    else:
        with _patched_properties(info):
            yield info


def emulate_device_shared_memory(device: str = "colab-t4"):
    """:func:`emulate_shared_memory_limit` with the per-block opt-in limit of a device of
    ``gemm_lab.calc.DEVICES`` (``"colab-t4"``: 65,536 B)."""
    from gemm_lab import calc

    return emulate_shared_memory_limit(calc.get_device(device).smem_per_block_optin)


@contextlib.contextmanager
def _patched_function(info: SharedMemoryLimit):
    import triton
    import triton.compiler as tc
    import triton.compiler.compiler as cc

    original = cc.max_shared_mem

    def emulated_max_shared_mem(device):
        real = int(original(device))
        info.queries += 1
        info.real_limit = real
        return min(info.limit, real)

    aliases = [m for m in (cc, tc, triton) if getattr(m, "max_shared_mem", None) is original]
    for mod in aliases:
        mod.max_shared_mem = emulated_max_shared_mem
    try:
        yield
    finally:
        for mod in aliases:
            mod.max_shared_mem = original


@contextlib.contextmanager
def _patched_properties(info: SharedMemoryLimit):
    import triton.compiler.compiler as cc

    utils = cc.driver.active.utils  # the driver object _init_handles and max_shared_mem use
    had_own = "get_device_properties" in vars(utils)
    original = utils.get_device_properties

    def emulated_get_device_properties(device):
        props = dict(original(device))
        real = int(props["max_shared_mem"])
        info.queries += 1
        info.real_limit = real
        props["max_shared_mem"] = min(info.limit, real)
        return props

    def clear_cache():
        clear = getattr(getattr(cc, "max_shared_mem", None), "cache_clear", None)
        if clear is not None:
            clear()

    clear_cache()
    utils.get_device_properties = emulated_get_device_properties
    try:
        yield
    finally:
        if had_own:
            utils.get_device_properties = original
        else:
            del utils.get_device_properties
        clear_cache()
