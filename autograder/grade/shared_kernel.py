"""The kernel the notebooks of one hand-in share (one per nbgrader process), and the code that resets it.

After a notebook that ended cleanly, :class:`autograder.grade.nbexec.GuardedExecute` keeps its kernel here
(:func:`keep`); the next notebook takes it (:func:`take`), runs ``RESET_SOURCE`` in it (the kernel's namespace
and common process-wide settings back to what ``BASELINE_SOURCE`` recorded at its start) and runs there,
sparing a kernel start and the course's imports per notebook. A notebook that timed out, stopped or lost
its kernel hands the next one a fresh kernel (the kernel is the student's machine: what one notebook leaves
there can only change what the next one claims, and claims are checked in the grader).
"""

from __future__ import annotations

import atexit
import os

from nbclient.util import run_sync

# Run silently in a fresh kernel before its first cell: what the reset below puts back or checks.
BASELINE_SOURCE = """\
import sys as _sys, os as _os, builtins as _b, warnings as _w, importlib.util as _u
_spec = _u.find_spec("gemm_lab")
_sys._gemm_lab_baseline = dict(
    environ=dict(_os.environ), path=list(_sys.path), builtins=dict(vars(_b)), filters=list(_w.filters),
    meta_path=list(_sys.meta_path), path_hooks=list(_sys.path_hooks),
    gemm_lab=_os.path.dirname(_os.path.realpath(_spec.origin)) if _spec and _spec.origin else None)
del _sys, _os, _b, _w, _u, _spec
"""

# Run in a kept kernel before the next notebook: a fresh session (user namespace, history, Out) in the
# folder the kernel started in (the sandbox's working directory, or the notebook's folder unsandboxed),
# with the process-wide settings a notebook commonly changes put back: environment, sys.path, builtins
# (added names removed, replaced ones restored), warning filters, torch's default dtype and grad mode,
# numpy's error handling, open figures. It refuses (and the next notebook gets a fresh kernel) when the
# import machinery was changed: an import hook on sys.meta_path / sys.path_hooks, or a gemm_lab module
# loaded from anywhere but the installed package. What is left (a patched library function, say) can only
# change what the next notebook claims, and claims are checked in the grader.
RESET_SOURCE = """\
import os as _os, gc as _gc, sys as _sys, builtins as _b, warnings as _w
_base = getattr(_sys, "_gemm_lab_baseline", None)
if not isinstance(_base, dict):
    raise RuntimeError("no baseline")
if _sys.meta_path != _base["meta_path"] or _sys.path_hooks != _base["path_hooks"]:
    raise RuntimeError("import machinery changed")
for _n, _m in list(_sys.modules.items()):
    if _n == "gemm_lab" or _n.startswith("gemm_lab."):
        _f = getattr(_m, "__file__", None)
        if not _f or not _base["gemm_lab"] or not _os.path.realpath(_f).startswith(_base["gemm_lab"] + _os.sep):
            raise RuntimeError("gemm_lab replaced")
for _n in set(vars(_b)) - set(_base["builtins"]):
    delattr(_b, _n)
for _n, _v in _base["builtins"].items():
    if vars(_b).get(_n, _b) is not _v:
        setattr(_b, _n, _v)
get_ipython().reset(new_session=True, aggressive=False)
import os as _os, gc as _gc, sys as _sys, warnings as _w
_base = _sys._gemm_lab_baseline
_os.chdir(%r)
_os.environ.clear()
_os.environ.update(_base["environ"])
if getattr(_sys.modules.get("gemm_lab.runtime"), "INTERPRET", False):  # the course's runtime stays decided
    _os.environ["TRITON_INTERPRET"] = "1"
_sys.path[:] = _base["path"]
_w.filters[:] = _base["filters"]
if "torch" in _sys.modules:
    _sys.modules["torch"].set_default_dtype(_sys.modules["torch"].float32)
    _sys.modules["torch"].set_grad_enabled(True)
if "numpy" in _sys.modules:
    _sys.modules["numpy"].seterr(divide="warn", over="warn", under="ignore", invalid="warn")
if "matplotlib.pyplot" in _sys.modules:
    _sys.modules["matplotlib.pyplot"].close("all")
_gc.collect()
del _os, _gc, _sys, _w, _base
get_ipython().execution_count = 1
"""


_kept: list = []  # [(kernel manager, the folder it ran in)]: at most one, kept for the hand-in's next notebook


def enabled() -> bool:
    """``GEMM_LAB_SHARE_KERNEL=0`` turns sharing off (every notebook starts its own kernel)."""
    return os.environ.get("GEMM_LAB_SHARE_KERNEL", "1") != "0"


def take(path: str | None):
    """The kept kernel manager if it is alive and ran in ``path``; else None (and any kept one is shut)."""
    if not _kept:
        return None
    km, kept_path = _kept.pop()
    try:
        alive = run_sync(km.is_alive)()
    except Exception:  # noqa: BLE001 - a manager in a bad state is simply not reused
        alive = False
    if alive and kept_path == path:
        return km
    shut(km)
    return None


def keep(km, path: str | None) -> None:
    """Keep ``km`` for the next notebook (``take`` always empties the slot, so nothing is overwritten)."""
    _kept.append((km, path))


def shut(km) -> None:
    # graceful, as nbclient ends a kernel: the sandbox's supervisor outlives the kernel and writes
    # its outcome (the limits it hit), which an immediate kill of the supervisor would lose
    try:
        if run_sync(km.is_alive)():
            run_sync(km.shutdown_kernel)(now=False)
    except Exception:  # noqa: BLE001 - already gone
        pass
    try:
        run_sync(km.cleanup_resources)()
    except Exception:  # noqa: BLE001
        pass


@atexit.register
def close() -> None:
    while _kept:
        shut(_kept.pop()[0])
