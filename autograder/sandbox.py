"""Run a student's notebook kernel inside bubblewrap.

The grader (nbgrader, trusted code) runs outside the sandbox; only the kernel process is wrapped.
Inside the sandbox the kernel sees:

* the installed environment read-only: /usr, the Python installation, the virtual environment and the
  ``gemm_lab`` package (plus ``results/``, which is public);
* its working directory, which is a *copy of the student's own hand-in* bound over the path nbgrader
  uses as the kernel's cwd (the real autograded directory holds the sanitized notebook with the hidden
  tests restored, so it is never bound);
* the per-kernel runtime directory (the connection file and the ZMQ ``ipc`` sockets: the kernel has no
  network at all, ``--unshare-net``), a private ``/tmp`` and ``$HOME`` (tmpfs).

Nothing else of the repository (``source/`` masters, ``release/``, the gradebook, other hand-ins) exists
inside the sandbox. The spec is handed from the grading driver to the kernel manager through the
``GEMM_LAB_SANDBOX`` environment variable (a JSON file).
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

ENV_SPEC = "GEMM_LAB_SANDBOX"
SANDBOX_HOME = "/home/student"
TMPFS_BYTES = 512 << 20  # private /tmp and $HOME (RAM-backed)
DEFAULT_MEMORY_BYTES = 4 << 30  # address-space limit of the kernel (CPU only: CUDA needs more)
DEFAULT_FILE_BYTES = 256 << 20  # largest file the kernel may write

# Runs inside the sandbox before the kernel: resource limits, then exec the kernel command.
_PRELUDE = (
    "import os, resource, sys\n"
    "mem, fsize = int(sys.argv[1]), int(sys.argv[2])\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))\n"
    "if mem > 0:\n"
    "    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)


def limits_prefix(memory_bytes: int | None = None, file_bytes: int | None = None) -> list[str]:
    """Command prefix that applies the resource limits and then execs the rest of the command line."""
    mem = DEFAULT_MEMORY_BYTES if memory_bytes is None else int(memory_bytes)
    if glob.glob("/dev/nvidia*"):
        mem = 0  # an address-space limit breaks CUDA's initialisation
    fsize = DEFAULT_FILE_BYTES if file_bytes is None else int(file_bytes)
    return [sys.executable, "-c", _PRELUDE, str(mem), str(fsize)]


def bwrap_path() -> str | None:
    """Path of the bwrap executable, or None when bubblewrap is not installed."""
    return shutil.which("bwrap")


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parent


def environment_paths() -> list[str]:
    """Read-only paths that make up the installed environment (Python, venv, gemm_lab)."""
    paths = {sys.base_prefix, sys.prefix, os.path.realpath(sys.base_prefix)}
    pkg = _package_dir("gemm_lab")
    if pkg is not None:
        paths.add(str(pkg))
        results = pkg.parent / "results"
        if results.is_dir():
            paths.add(str(results))
    # never expose the repository root itself (it holds source/ and the gradebook)
    return sorted(p for p in paths if p and os.path.isdir(p) and p not in ("/", "/usr"))


_ETC = ["ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf", "localtime",
        "alternatives", "ssl", "mime.types", "fonts", "matplotlibrc"]


def bwrap_argv(cwd: str, runtime_dir: str, kernel_cwd_source: str, env: dict[str, str] | None = None,
               ro_paths: list[str] | None = None) -> list[str]:
    """The bwrap command line (without the wrapped command).

    ``cwd`` is where nbgrader starts the kernel; ``kernel_cwd_source`` is the directory bound there
    (a copy of the hand-in). ``runtime_dir`` holds the connection file and ipc sockets.
    """
    bw = bwrap_path()
    if bw is None:
        raise RuntimeError("bwrap is not installed")
    argv = [bw, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/lib32", "/sbin"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    for name in _ETC:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    tmp_size = str(TMPFS_BYTES)
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", tmp_size, "--tmpfs", "/tmp",
             "--size", tmp_size, "--tmpfs", "/home", "--dir", SANDBOX_HOME, "--tmpfs", "/run"]
    gpu_devs = sorted(glob.glob("/dev/nvidia*"))
    for dev in gpu_devs:  # a GPU, where there is one (untested on a GPU host so far)
        argv += ["--dev-bind", dev, dev]
    if gpu_devs:
        argv += ["--ro-bind", "/sys", "/sys"]  # the CUDA driver reads PCI topology from sysfs
    for p in ro_paths if ro_paths is not None else environment_paths():
        argv += ["--ro-bind", p, p]
    argv += ["--bind", runtime_dir, runtime_dir, "--bind", kernel_cwd_source, cwd, "--chdir", cwd]
    base_env = {
        "PATH": f"{sys.prefix}/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME": SANDBOX_HOME,
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
        "TRITON_CACHE_DIR": "/tmp/triton-cache",
        "MPLCONFIGDIR": "/tmp/mpl",
        "PYTHONDONTWRITEBYTECODE": "1",
        "NBGRADER_EXECUTION": "autograde",
    }
    for keep in ("TRITON_INTERPRET", "CUDA_VISIBLE_DEVICES"):
        if keep in os.environ:
            base_env[keep] = os.environ[keep]
    base_env.update(env or {})
    argv.append("--clearenv")
    for k, v in sorted(base_env.items()):
        argv += ["--setenv", k, v]
    return argv + ["--"]


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
    interrupts are sent as messages (signals to bwrap would not reach the kernel in its pid namespace).
    """

    def _wrap(self, kernel_cmd, kw):
        spec_path = os.environ.get(ENV_SPEC)
        if not spec_path:
            raise RuntimeError(f"{ENV_SPEC} is not set: refusing to run student code unsandboxed")
        spec = json.loads(Path(spec_path).read_text())
        if not spec.get("kernel_cwd"):
            raise RuntimeError("sandbox spec has no kernel_cwd")
        cwd = os.path.abspath(kw.get("cwd") or os.getcwd())
        runtime_dir = os.path.dirname(os.path.abspath(self.connection_file))
        argv = bwrap_argv(cwd, runtime_dir, spec["kernel_cwd"], env=spec.get("env"),
                          ro_paths=spec.get("ro_paths"))
        return argv + limits_prefix(spec.get("memory_bytes"), spec.get("file_bytes")) + kernel_cmd


class PlainIpcKernelManager(_IpcKernelManager):
    """Unsandboxed (only with an explicit override): same ipc transport and message interrupts."""
