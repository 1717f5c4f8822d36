"""``nbgrader`` runs forked from a process that has already imported it (and torch; not Triton, which the course imports after its runtime settings).

Every hand-in is graded by its own ``nbgrader autograde`` process. Started from scratch, each one spends
seconds of CPU importing nbgrader, nbconvert, SQLAlchemy and torch before it grades anything. Here the
runs are children of one ``multiprocessing`` fork server that imported those modules once (and nothing
of the course, which reads its settings from the environment each run sets). A child still gets its own
process, working directory, environment, output files and exit status, so a run is the same as a
``python -m nbgrader`` subprocess: :func:`run` returns a ``subprocess.CompletedProcess``.

The fork server never runs student code (kernels are started by the child, in their sandbox) and never
touches a GPU (a child initialises CUDA itself, after the fork). ``GEMM_LAB_NBGRADER_FORK=0`` turns it off.
A killed grader takes every child with it at once (each child watches the grader's pid) and the server
(it ends when the grader's pipe closes), as a killed grader takes its subprocesses.
"""

from __future__ import annotations

import atexit
import ctypes
import multiprocessing
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ENV = "GEMM_LAB_NBGRADER_FORK"
PRELOAD = ["nbgrader.apps.nbgraderapp", "nbgrader.converters.autograde", "nbconvert", "nbclient",
           "jupyter_client", "sqlalchemy", "numpy", "torch"]

_lock = threading.Lock()
_ctx = None

_PR_SET_PDEATHSIG = 1
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before any fork
except (OSError, AttributeError):  # not Linux
    _prctl = None


def die_with_parent() -> None:
    """In a child: SIGKILL when the parent dies (a killed autograde leaves no nbgrader running on)."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


# entry points whose top level is guarded by ``if __name__ == "__main__":`` (run by ``python -m``)
SAFE_MAIN_PACKAGES = ("autograder", "tools", "gemm_lab", "pytest", "ipykernel_launcher")


def main_is_safe_to_import() -> bool:
    """multiprocessing imports the caller's ``__main__`` again in every child it starts this way. That is
    harmless for this project's entry points, pytest, a notebook kernel and an interpreter without a main
    file, but an instructor's own script without an ``if __name__ == "__main__":`` guard would run again in
    the child (and fail there): such callers get plain subprocesses."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name:
        return spec.name.split(".")[0] in SAFE_MAIN_PACKAGES
    return getattr(main, "__file__", None) is None


def enabled() -> bool:
    """Fork server on: Linux, not turned off, a process that may have children (a daemonic
    multiprocessing worker may not), and a ``__main__`` that may be imported again (see above)."""
    return (sys.platform.startswith("linux") and os.environ.get(ENV, "1") != "0"
            and not multiprocessing.current_process().daemon and main_is_safe_to_import())


def _context():
    global _ctx
    with _lock:
        if _ctx is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(PRELOAD)
            _ctx = ctx
        return _ctx


def _die_with(pid: int) -> None:
    """Kill this process the moment process ``pid`` (the grader) ends: a subprocess of the grader would die
    with it by its parent-death signal, but this process's parent is the fork server."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:  # already gone
        os.kill(os.getpid(), signal.SIGKILL)
        return

    def watch():
        select.select([fd], [], [])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="gemm-lab-die-with-grader", daemon=True).start()


def _child(args: list[str], cwd: str, env: dict, out: str, err: str, grader: int) -> None:
    """In the forked child: become ``python -m nbgrader ARGS`` in ``cwd`` with ``env``."""
    die_with_parent()
    _die_with(grader)
    # multiprocessing hands every child the grader's end of the pipe the server watches: a child holding
    # it keeps the server alive after the grader is killed (and so itself, as the server's child)
    from multiprocessing import forkserver

    alive = getattr(forkserver._forkserver, "_forkserver_alive_fd", None)
    if alive is not None:
        try:
            os.close(alive)
        except OSError:
            pass
    os.setsid()  # its own process group, as a subprocess's kill would reach
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.argv = ["nbgrader", *args]
    sys.stdout.flush()
    sys.stderr.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, out), (2, err)):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(f, fd)
        os.close(f)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    code = 0
    try:
        from nbgrader.apps.nbgraderapp import main

        main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported like an uncaught exception in a subprocess
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        # a subprocess would run these at exit (kernels shut down, workers closed, cgroups removed);
        # multiprocessing ends its children with os._exit, which skips them
        try:
            atexit._run_exitfuncs()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
    os._exit(code)


def run(args: list[str], cwd: Path, env: dict, timeout: float | None) -> subprocess.CompletedProcess:
    """``python -m nbgrader ARGS`` as a forked child; raises ``subprocess.TimeoutExpired`` like
    ``subprocess.run`` (the child is killed first)."""
    with tempfile.TemporaryDirectory(prefix="gl-nbgrader-") as tmp:
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        p = _context().Process(target=_child, args=(list(args), str(cwd), dict(env), out, err, os.getpid()),
                               daemon=False)
        p.start()
        p.join(timeout)
        timed_out = p.exitcode is None
        if timed_out:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.join()
        stdout = Path(out).read_text(errors="replace") if os.path.exists(out) else ""
        stderr = Path(err).read_text(errors="replace") if os.path.exists(err) else ""
        cmd = [sys.executable, "-m", "nbgrader", *args]
        if timed_out:
            raise subprocess.TimeoutExpired(cmd, timeout, output=stdout, stderr=stderr)
        return subprocess.CompletedProcess(cmd, p.exitcode, stdout, stderr)
