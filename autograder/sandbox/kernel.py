"""Run a student's notebook kernel inside bubblewrap.

The grader (nbgrader, trusted code) runs outside the sandbox; only the kernel is wrapped, by a small
supervisor process (:mod:`autograder.sandbox.supervise`) that jupyter starts in the kernel's place. Inside the
sandbox the kernel sees:

* the installed environment read-only: /usr, the Python installation, the virtual environment and the
  ``gemm_lab`` package (plus ``results/``, which is public); on a GPU host the NVIDIA device nodes;
* its working directory ``/home/student/handin``: a size-capped tmpfs holding a *copy of the student's own
  hand-in* (plus the release's data files); nothing written there leaves the sandbox;
* the per-kernel runtime directory (the connection file and the ZMQ ``ipc`` sockets: the kernel has no
  network at all), and sized tmpfs for ``/tmp``, ``$HOME``, ``/dev/shm``, ``/run``; ``/`` and ``/dev``
  are read-only.

It runs in new user/pid/ipc/net/uts/cgroup namespaces with no capabilities, under a seccomp filter
(:mod:`autograder.sandbox.seccomp`), with user namespaces disabled, in its own cgroup (memory and process limits
for all its processes: :mod:`autograder.sandbox.cgroup`) where the grader may create one. Limits:
:class:`autograder.sandbox.limits.Limits`; what was hit: :meth:`SandboxKernelManager.sandbox_outcome`.

Nothing else of the repository (``source/`` masters, ``release/``, the gradebook, other hand-ins) exists
inside the sandbox. The spec is handed from the grading driver to the kernel manager through the
``GEMM_LAB_SANDBOX`` environment variable (a JSON file): ``kernel_cwd`` (required), optional ``env``,
``ro_paths``, ``extra_ro_paths`` (bound read-only beside ``ro_paths``), ``gpu`` (None: auto) and any
:class:`Limits` field. Each kernel's outcome JSON goes to ``sandbox-outcomes/`` beside the spec file
(:func:`autograder.sandbox.bwrap.read_outcomes`).
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from autograder.sandbox import cgroup as cg_mod
from autograder.sandbox import host, supervise
from autograder.sandbox import limits as lim
from autograder.sandbox.bwrap import (
    ENV_SPEC,
    make_plan,
    remove_stale_socket_dirs,
    socket_dir,
    supervisor_argv,
)

OUTCOME_DIR = "sandbox-outcomes"  # beside the spec file (the hand-in's scratch folder)


class _IpcKernelManager(AsyncKernelManager):
    """ipc transport with the connection file and sockets in one private runtime directory."""

    def __init__(self, **kw):
        kw.setdefault("transport", "ipc")
        super().__init__(**kw)

    def _use_private_runtime_dir(self):
        rt = os.environ.get("JUPYTER_RUNTIME_DIR") or tempfile.mkdtemp(prefix="glrt-", dir="/tmp")
        os.makedirs(rt, exist_ok=True)
        self.connection_file = os.path.join(rt, f"kernel-{uuid.uuid4().hex[:8]}.json")
        self.ip = os.path.join(rt, "k")  # ipc socket path prefix (socket paths must stay < 108 bytes)

    async def _async_pre_start_kernel(self, **kw):
        self._use_private_runtime_dir()
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        self.kernel_spec.interrupt_mode = "message"
        return await super()._async_launch_kernel(self._wrap(list(kernel_cmd), kw), **kw)

    def _wrap(self, kernel_cmd, kw):
        return kernel_cmd


class SandboxKernelManager(_IpcKernelManager):
    """A kernel manager that starts the kernel under bwrap (spec from $GEMM_LAB_SANDBOX).

    Transport is ``ipc`` (unix sockets in the runtime directory, which is bound into the sandbox);
    interrupts are sent as messages (signals would not reach the kernel in its pid namespace). One cgroup
    per kernel (when the grader may create one), removed in :meth:`cleanup_resources`.
    """

    _cgroup: cg_mod.Cgroup | None = None
    _report: str | None = None
    _outcome: lim.Outcome | None = None
    _socket_dir: str | None = None

    def _use_private_runtime_dir(self):
        super()._use_private_runtime_dir()
        self._socket_dir = socket_dir(os.path.dirname(self.connection_file))
        self.ip = os.path.join(self._socket_dir, "k")

    def _wrap(self, kernel_cmd, kw):
        spec_path = os.environ.get(ENV_SPEC)
        if not spec_path:
            raise RuntimeError(f"{ENV_SPEC} is not set: refusing to run student code unsandboxed")
        spec = json.loads(Path(spec_path).read_text())
        if not spec.get("kernel_cwd"):
            raise RuntimeError("sandbox spec has no kernel_cwd")
        runtime_dir = os.path.dirname(os.path.abspath(self.connection_file))
        limits = lim.Limits.from_spec(spec)
        remove_stale_socket_dirs()
        self._cgroup, note = cg_mod.create(limits.group_memory_bytes, limits.max_processes)
        name = f"outcome-{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
        report_dir = os.path.join(os.path.dirname(os.path.abspath(spec_path)), OUTCOME_DIR)
        os.makedirs(report_dir, exist_ok=True)
        self._report = os.path.join(report_dir, name)
        self._outcome = None
        spec = dict(spec, report_file=self._report)
        plan = make_plan(runtime_dir, spec["kernel_cwd"], spec, self._cgroup, note, self._socket_dir)
        kw["env"] = {k: v for k, v in (kw.get("env") or os.environ).items() if k in ("PATH", "LANG")}
        return supervisor_argv(plan) + kernel_cmd

    def sandbox_outcome(self) -> lim.Outcome | None:
        """What the sandbox saw (exit status, limits hit), once the kernel has ended; None before."""
        if self._outcome is None and self._report and os.path.exists(self._report):
            try:
                self._outcome = lim.Outcome.from_json(json.loads(Path(self._report).read_text()))
            except (OSError, ValueError):
                self._outcome = None
        return self._outcome

    def limit_reason(self) -> str:
        """One English line naming every limit hit by this kernel ('' when none)."""
        return lim.limit_reason(self.sandbox_outcome())

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        self._finish_sandbox()
        await super()._async_cleanup_resources(restart=restart)

    cleanup_resources = _async_cleanup_resources

    def _finish_sandbox(self) -> None:
        if self._socket_dir is not None:
            host.remove_tree(self._socket_dir)
            self._socket_dir = None
        if self._cgroup is None:
            return
        if self.sandbox_outcome() is None:  # the supervisor was killed: read the group's counters here
            proc = getattr(self.provisioner, "process", None)
            rc = proc.poll() if proc is not None else None
            self._outcome = supervise.finish(lim.Outcome(returncode=rc, cgroup=self._cgroup.version),
                                             self._cgroup, killed_by_grader=True)
            self._outcome.notes.append("the supervisor was killed: limits read from the cgroup")
        self._cgroup.destroy()
        self._cgroup = None


class PlainIpcKernelManager(_IpcKernelManager):
    """Unsandboxed (only with an explicit override): same ipc transport and message interrupts."""
