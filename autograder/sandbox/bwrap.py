"""The bwrap command line of the grading sandbox, and the plan the supervisor runs it from.

No jupyter import here (the kernel managers are in :mod:`autograder.sandbox.kernel`): :func:`run_sandboxed` runs
any command in the sandbox exactly as a kernel is run, e.g. on a GPU host to check the device binds.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import replace
from pathlib import Path

import psutil

from autograder.sandbox import cgroup as cg_mod
from autograder.sandbox import host
from autograder.sandbox import limits as lim

ENV_SPEC = "GEMM_LAB_SANDBOX"
GRADING_ENV = "GEMM_LAB_GRADING"  # gemm_lab.runtime.grading_mode() reads it
SANDBOX_HOME = "/home/student"
SANDBOX_CWD = SANDBOX_HOME + "/handin"
REPO_ROOT = Path(__file__).resolve().parents[2]

GPU_NODE = re.compile(r"^nvidia(\d+|ctl|-uvm|-uvm-tools)$")
GPU_LIBS = ("libcuda.so", "libnvidia-ptxjitcompiler.so", "libnvidia-ml.so", "libnvidia-nvvm.so")


def bwrap_path() -> str | None:
    """Path of the bwrap executable, or None when bubblewrap is not installed."""
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=4)
def bwrap_supports(option: str, bwrap: str | None = None) -> bool:
    """Whether this bwrap knows ``option`` (``--disable-userns`` needs bubblewrap >= 0.8)."""
    bw = bwrap or bwrap_path()
    if bw is None:
        return False
    try:
        out = subprocess.run([bw, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return option in (out.stdout + out.stderr).split()


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


def gpu_device_nodes(dev_root: str = "/dev") -> list[str]:
    """The NVIDIA device nodes a CUDA kernel needs: nvidia0..N, nvidiactl, nvidia-uvm(-tools); no others."""
    try:
        names = os.listdir(dev_root)
    except OSError:
        return []
    return sorted(os.path.join(dev_root, n) for n in names if GPU_NODE.match(n))


def has_gpu(dev_root: str = "/dev") -> bool:
    nodes = {os.path.basename(p) for p in gpu_device_nodes(dev_root)}
    return "nvidiactl" in nodes and any(n[6:].isdigit() for n in nodes)


def gpu_library_dirs(ldconfig_output: str | None = None) -> list[str]:
    """Folders outside /usr holding the NVIDIA driver's user-space libraries (from ``ldconfig -p``)."""
    if ldconfig_output is None:
        try:
            ldconfig_output = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True,
                                             timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            return []
    dirs = set()
    for line in ldconfig_output.splitlines():
        name, _, target = line.strip().partition(" => ")
        if target and name.split(" ")[0].startswith(GPU_LIBS):
            d = os.path.dirname(os.path.realpath(target)) if os.path.exists(target) else os.path.dirname(target)
            if not (d + "/").startswith(("/usr/", "/lib/", "/lib64/")):
                dirs.add(d)
    return sorted(dirs)


_ETC = ["ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf", "localtime",
        "alternatives", "ssl", "mime.types", "fonts", "matplotlibrc"]


def sandbox_env(env: dict[str, str] | None = None, gpu: bool = False) -> dict[str, str]:
    """The kernel's whole environment (nothing of the grader's but the few keys named here)."""
    base_env = {
        "PATH": f"{sys.prefix}/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME": SANDBOX_HOME,
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
        "TRITON_CACHE_DIR": "/tmp/triton-cache",
        "MPLCONFIGDIR": "/tmp/mpl",
        # no picture is drawn while grading: the given cells' figures are demonstrations (the feedback shows
        # each one's text line), and rasterizing them cost about a seventh of the notebook kernel's CPU time
        "MPLBACKEND": "agg",
        "PYTHONDONTWRITEBYTECODE": "1",
        "NBGRADER_EXECUTION": "autograde",
        GRADING_ENV: "1",
        # No on-disk cache of compile checks inside the sandbox: the hand-in could pre-write a forged
        # "compiles" entry for its own kernel's key before the test cell runs.
        "GEMM_LAB_COMPILE_CACHE": "off",
    }
    keep = ("CUDA_VISIBLE_DEVICES",) if gpu else ("TRITON_INTERPRET", "CUDA_VISIBLE_DEVICES")
    for k in keep:
        if k in os.environ:
            base_env[k] = os.environ[k]
    base_env.update(env or {})
    if gpu:
        base_env.pop("TRITON_INTERPRET", None)  # kernels run compiled on the GPU
    return base_env


def bwrap_options(runtime_dir: str, env: dict[str, str] | None = None, ro_paths: list[str] | None = None,
                  limits: lim.Limits | None = None, gpu: bool | None = None, dev_root: str = "/dev",
                  gpu_lib_dirs: list[str] | None = None, sockets: str | None = None,
                  extra_ro_paths: list[str] | None = None) -> list[str]:
    """bwrap's options (no command, no ``--seccomp``: the supervisor adds it), for one kernel.

    ``runtime_dir`` holds the connection file, bound read-only when ``sockets`` (the folder of the ipc
    sockets, inside it: see :func:`socket_dir`) is given, else read-write; ``gpu`` None means "if this
    host has one"; ``extra_ro_paths`` are bound read-only too, beside ``ro_paths`` (e.g. the shared Triton
    cache of autograder/grade/triton_cache.py).
    """
    limits = limits or lim.Limits()
    gpu = has_gpu(dev_root) if gpu is None else bool(gpu)
    argv = ["--unshare-all", "--unshare-user"]
    if bwrap_supports("--disable-userns"):  # older bwrap: seccomp still refuses new user namespaces
        argv.append("--disable-userns")
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/lib32", "/sbin"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    for name in _ETC:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    if gpu:
        for dev in gpu_device_nodes(dev_root):
            argv += ["--dev-bind", dev, "/dev/" + os.path.basename(dev)]
        argv += ["--ro-bind", "/sys", "/sys"]  # the CUDA driver reads PCI topology from sysfs
        for d in gpu_lib_dirs if gpu_lib_dirs is not None else gpu_library_dirs():
            argv += ["--ro-bind", d, d]
    for path, size in limits.mounts().items():
        argv += ["--size", str(size), "--tmpfs", path]
    argv += ["--dir", SANDBOX_HOME, "--size", str(limits.cwd_bytes), "--tmpfs", SANDBOX_CWD]
    for p in ro_paths if ro_paths is not None else environment_paths():
        argv += ["--ro-bind", p, p]
    for p in extra_ro_paths or []:
        if not os.path.isabs(p) or not os.path.isdir(p):
            raise ValueError(f"extra_ro_paths: {p!r} is not an absolute path to a folder")
        argv += ["--ro-bind", p, p]
    if sockets:
        argv += ["--ro-bind", runtime_dir, runtime_dir, "--bind", sockets, sockets]
    else:
        argv += ["--bind", runtime_dir, runtime_dir]
    argv += ["--remount-ro", "/dev", "--remount-ro", "/",
             "--chdir", SANDBOX_CWD, "--clearenv"]
    for k, v in sorted(sandbox_env(env, gpu).items()):
        argv += ["--setenv", k, v]
    return argv


SOCKET_DIR_BYTES = 1 << 20
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_SOCKET_DIR = re.compile(r"^s(\d+)-[0-9a-f]{8}$")


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def socket_dir(runtime_dir: str) -> str:
    """A folder for one kernel's ipc sockets inside ``runtime_dir``: a 1 MiB tmpfs when this process may
    mount one (root), so the only host folder the kernel may write is capped; a plain folder otherwise."""
    d = os.path.join(runtime_dir, f"s{os.getpid()}-{uuid.uuid4().hex[:8]}")
    os.mkdir(d, 0o700)
    if os.geteuid() == 0:
        opts = f"size={SOCKET_DIR_BYTES},mode=0700".encode()
        _libc().mount(b"tmpfs", d.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, opts)
    return d


def remove_stale_socket_dirs() -> list[str]:
    """Unmount socket tmpfs left by a killed grader (``s<pid>-*`` whose process is gone); their paths."""
    gone = []
    for point, fstype, _ in host.mounts():
        m = _SOCKET_DIR.match(os.path.basename(point))
        if m and fstype == "tmpfs" and not host.pid_alive(int(m.group(1))):
            host.remove_tree(point)
            gone.append(point)
    return gone


def supervisor_argv(plan: dict) -> list[str]:
    """The command jupyter starts in place of the kernel (the kernel command is appended after it)."""
    boot = (f"import sys; sys.path.insert(0, {str(REPO_ROOT)!r}); from autograder.sandbox.supervise import main; "
            "sys.exit(main(sys.argv[1:]))")
    return [sys.executable, "-I", "-S", "-c", boot, json.dumps(plan), "--"]  # stdlib only: no site


def make_plan(runtime_dir: str, kernel_cwd_source: str | None, spec: dict | None = None,
              cgroup: cg_mod.Cgroup | None = None, cgroup_note: str = "", sockets: str | None = None) -> dict:
    """Everything the supervisor needs for one kernel (host paths stay outside the sandbox)."""
    spec = spec or {}
    bw = bwrap_path()
    if bw is None:
        raise RuntimeError("bwrap is not installed")
    gpu = spec.get("gpu")
    gpu = has_gpu() if gpu is None else bool(gpu)
    limits = lim.Limits.from_spec(spec)
    if gpu and limits.memory_bytes:
        limits = replace(limits, memory_bytes=0)  # an address-space limit breaks CUDA
    mounts = dict(limits.mounts(), **{SANDBOX_CWD: limits.cwd_bytes})
    if sockets and os.path.ismount(sockets):
        mounts[sockets] = SOCKET_DIR_BYTES
    nproc = 0
    if cgroup is None and os.geteuid() != 0:  # RLIMIT_NPROC counts the uid's processes; root is exempt
        nproc = _processes_of(os.geteuid()) + limits.max_processes
    return {
        "bwrap": bw, "python": sys.executable, "handin": kernel_cwd_source,
        "report": spec.get("report_file"),
        "cgroup": cgroup.to_json() if cgroup else None, "cgroup_note": cgroup_note,
        "bwrap_options": bwrap_options(runtime_dir, spec.get("env"), spec.get("ro_paths"), limits, gpu,
                                       sockets=sockets, extra_ro_paths=spec.get("extra_ro_paths")),
        "init": {"cwd": SANDBOX_CWD, "memory_bytes": limits.memory_bytes, "file_bytes": limits.file_bytes,
                 "nproc": nproc, "mounts": mounts},
    }


def _processes_of(uid: int) -> int:
    return sum(p.info["uids"] is not None and p.info["uids"].real == uid for p in psutil.process_iter(["uids"]))


def read_outcomes(report_dir: str | os.PathLike) -> list[lim.Outcome]:
    """The outcomes the kernels of one hand-in wrote into ``report_dir`` (kernel.OUTCOME_DIR), oldest first."""
    files = sorted(Path(report_dir).glob("outcome-*.json"), key=lambda p: p.stat().st_mtime) \
        if Path(report_dir).is_dir() else []
    out = []
    for f in files:
        try:
            out.append(lim.Outcome.from_json(json.loads(f.read_text())))
        except (OSError, ValueError):
            continue
    return out


def run_sandboxed(cmd: list[str], handin: str | None, runtime_dir: str, spec: dict | None = None,
                  use_cgroup: bool = True, timeout: float | None = None,
                  ) -> tuple[subprocess.CompletedProcess, lim.Outcome]:
    """Run ``cmd`` in the sandbox exactly as a kernel is run (cgroup included where one can be made).

    ``spec`` as in $GEMM_LAB_SANDBOX (limits, ``env``, ``gpu``); returns the finished
    process (stdout/stderr captured as text) and the sandbox's outcome.
    """
    spec = dict(spec or {})
    limits = lim.Limits.from_spec(spec)
    group, note = cg_mod.create(limits.group_memory_bytes, limits.max_processes) if use_cgroup else (None, "")
    fd, report = tempfile.mkstemp(prefix="gemm-lab-outcome-", suffix=".json")
    os.close(fd)
    try:
        plan = make_plan(runtime_dir, handin, dict(spec, report_file=report), group, note)
        proc = subprocess.run(supervisor_argv(plan) + list(cmd), capture_output=True, text=True, timeout=timeout)
        text = Path(report).read_text()
        outcome = lim.Outcome.from_json(json.loads(text)) if text else lim.Outcome(proc.returncode)
    finally:
        if group is not None:
            group.destroy()
        os.unlink(report)
    return proc, outcome
