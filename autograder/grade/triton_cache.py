"""The Triton cache shared read-only by every hand-in of one grading run.

Every sandboxed kernel starts with an empty ``TRITON_CACHE_DIR`` (a tmpfs), so each hand-in used to
recompile the same library kernels (week 7 notebook 04's signature cell alone: ~5 s on 2 cores). Before
grading, :func:`warm` runs the assignment's **release** notebooks (the student versions: no solutions, no
hidden tests) once, outside the sandbox, in grading mode, with ``TRITON_CACHE_DIR`` set to a folder under
``autograder/work/triton-cache/``; :func:`sandbox_spec` then binds that folder read-only into every
sandbox at the same path and points Triton at it through :class:`gemm_lab.triton_cache.LayeredCacheManager`
(the kernel still writes only its own cache). A student's kernel is never in the shared cache (the release
holds only the TODO stub), so it is compiled in the sandbox as before; nothing a hand-in does reaches the
shared folder.

The folder's name holds the release notebooks' hash, the Triton version and cpu/gpu, so it is
content-addressed: it lives in the repository's own ``autograder/work/triton-cache/`` and is shared by
every course graded from this checkout (the demo's and the tests' scratch courses too); a changed
notebook or environment gets a new one (folders of the same assignment unused for a day are removed).
Two runs warming the same folder at once take turns (a file lock). ``GEMM_LAB_SHARED_TRITON_CACHE=0``
turns it off.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.course import REPO_ROOT, Course
from autograder.sandbox.bwrap import has_gpu

STALE_SECONDS = 24 * 3600

__all__ = ["ENV_SWITCH", "cache_dir", "warm", "sandbox_spec"]

ENV_SWITCH = "GEMM_LAB_SHARED_TRITON_CACHE"
COMPLETE = ".complete"
WARM_CELL_TIMEOUT = 300


def _triton_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("triton")
    except PackageNotFoundError:
        return "none"


def cache_dir(assignment: str, release_dir: Path) -> Path:
    """``<repo>/autograder/work/triton-cache/<assignment>-<release hash>-triton<ver>-<cpu|gpu>``."""
    h = hashlib.sha256()
    for nb in sorted(release_dir.glob("*.ipynb")):
        h.update(nb.name.encode() + b"\0" + nb.read_bytes() + b"\0")
    name = f"{assignment}-{h.hexdigest()[:12]}-triton{_triton_version()}-{'gpu' if has_gpu() else 'cpu'}"
    return Course.at(REPO_ROOT).work / "triton-cache" / name


def warm(course: Course, assignment: str, release_dir: Path, log=print) -> Path | None:
    """Fill (once) and return the shared cache for ``release_dir``'s notebooks; None when turned off or
    when the release has no notebook. A failed warm-up is reported and grading goes on without it."""
    if os.environ.get(ENV_SWITCH, "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    notebooks = sorted(release_dir.glob("*.ipynb"))
    if not notebooks:
        return None
    target = cache_dir(assignment, release_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / COMPLETE).is_file():
            os.utime(target)
            return target
        return _warm_locked(course, assignment, notebooks, release_dir, target, log)


def _warm_locked(course, assignment, notebooks, release_dir, target, log):
    now = time.time()
    for old in target.parent.glob(f"{assignment}-*"):
        if old.is_dir() and old != target and now - old.stat().st_mtime > STALE_SECONDS:
            shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True)  # a warm-up cut short
    target.mkdir(parents=True)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="warm-", dir=course.work) as tmp:
        for f in release_dir.iterdir():  # the public files beside the notebooks, as a student has them
            (shutil.copytree if f.is_dir() else shutil.copy)(f, Path(tmp) / f.name)
        env = dict(os.environ, TRITON_CACHE_DIR=str(target), GEMM_LAB_GRADING="1",
                   GEMM_LAB_COMPILE_CACHE="off", PYTHONPATH=os.pathsep.join(
                       [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
        env.pop("TRITON_CACHE_MANAGER", None)
        # every notebook top to bottom, in its folder; errors in the TODO cells are expected, not a failure
        cmd = [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", "--inplace", "--allow-errors",
               f"--ExecutePreprocessor.timeout={WARM_CELL_TIMEOUT}", "--ExecutePreprocessor.kernel_name=python3",
               *[str(Path(tmp) / nb.name) for nb in notebooks]]
        try:
            proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                                  timeout=len(notebooks) * WARM_CELL_TIMEOUT * 2)
            ok = proc.returncode == 0
            why = (proc.stderr or proc.stdout).strip().splitlines()[-1:] if not ok else []
        except subprocess.TimeoutExpired:
            ok, why = False, ["timed out"]
    if not ok:
        shutil.rmtree(target, ignore_errors=True)
        log(f"autograde: shared Triton cache not built ({'; '.join(why)}); grading without it")
        return None
    files = sum(1 for p in target.rglob("*") if p.is_file())
    (target / COMPLETE).write_text(f"{files} files, {time.monotonic() - t0:.1f} s\n")
    log(f"autograde: shared Triton cache {target.name}: {files} files from {len(notebooks)} release "
        f"notebook(s) in {time.monotonic() - t0:.1f} s")
    return target


def sandbox_spec(shared: Path | None) -> dict:
    """The sandbox spec keys that bind ``shared`` read-only and point Triton at it ({} for None)."""
    if shared is None:
        return {}
    from gemm_lab.triton_cache import env_for  # imports triton: only when there is a cache

    return {"env": env_for(str(shared)), "extra_ro_paths": [str(shared)]}
