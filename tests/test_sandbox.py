"""The grading sandbox (autograder/sandbox/kernel.py and friends): every probe runs inside the real bwrap sandbox.

The grader's environment is not readable from a
hand-in, and memory, processes, disk and wall time are limited for the hand-in as a whole.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.sandbox import bwrap as sandbox
from autograder.sandbox import cgroup as cg_mod
from autograder.sandbox import kernel, seccomp
from autograder.sandbox import limits as lim

ROOT = Path(__file__).resolve().parent.parent

needs_bwrap = pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap not installed")
SECRET = "tok-d41d8cd98f00b204"


def _can_make_cgroups() -> bool:
    group, _ = cg_mod.create(64 << 20, 16)
    if group is None:
        return False
    group.destroy()
    return True


needs_cgroup = pytest.mark.skipif(os.geteuid() != 0 or not _can_make_cgroups(),
                                  reason="needs root and a writable cgroup hierarchy")


@pytest.fixture
def box(tmp_path):
    handin = tmp_path / "handin-host-path"
    handin.mkdir()
    (handin / "mine.txt").write_text("mine")
    rt = tmp_path / "rt"
    rt.mkdir()

    def run(code: str, **spec):
        return sandbox.run_sandboxed([sys.executable, "-c", code], str(handin), str(rt), spec,
                                     use_cgroup=spec.pop("cgroup", True), timeout=60)

    return run


# --- the seccomp program, checked instruction by instruction ------------------------------------------

def _bpf_run(prog: bytes, nr: int, arch: int, args=(0,) * 6) -> int:
    data = struct.pack("=iIQ6Q", nr, arch, 0, *args)
    insns = [struct.unpack("=HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == seccomp.LD_W_ABS:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == seccomp.RET_K:
            return k
        elif code in (seccomp.JEQ_K, seccomp.JGE_K, seccomp.JSET_K):
            hit = {seccomp.JEQ_K: acc == k, seccomp.JGE_K: acc >= k, seccomp.JSET_K: bool(acc & k)}[code]
            pc += jt if hit else jf
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
        pc += 1


@pytest.mark.parametrize("arch,col", [("x86_64", 0), ("aarch64", 1)])
def test_seccomp_program_decisions(arch, col):
    prog = seccomp.program(arch)
    audit = seccomp.AUDIT_ARCH[arch]
    nr = {n: v[col] for n, v in seccomp.SYSCALLS.items() if v[col] is not None}
    eperm, enosys = seccomp.ret_errno(errno.EPERM), seccomp.ret_errno(errno.ENOSYS)
    for name in ("ptrace", "unshare", "setns", "mount", "keyctl", "bpf", "perf_event_open", "process_vm_readv"):
        assert _bpf_run(prog, nr[name], audit) == eperm, name
    assert _bpf_run(prog, nr["clone3"], audit) == enosys
    assert _bpf_run(prog, nr["clone"], audit, (0x10000000, 0, 0, 0, 0, 0)) == eperm  # CLONE_NEWUSER
    assert _bpf_run(prog, nr["clone"], audit, (0x01200011, 0, 0, 0, 0, 0)) == seccomp.RET_ALLOW  # fork()
    assert _bpf_run(prog, 0, audit) == seccomp.RET_ALLOW  # read / io_setup: allowed
    other = seccomp.AUDIT_ARCH["aarch64" if arch == "x86_64" else "x86_64"]
    assert _bpf_run(prog, 0, other) == seccomp.RET_KILL_PROCESS  # any call of a foreign ABI
    assert _bpf_run(prog, 0x40000000 | 1, 0x40000003) == seccomp.RET_KILL_PROCESS  # i386 audit arch
    if arch == "x86_64":
        assert _bpf_run(prog, 0x40000000 | 101, audit) == enosys  # x32 ptrace
    with pytest.raises(ValueError, match="arch"):
        seccomp.program("mips")


# --- item 1: the grader's environment is not readable --------------------------------------------------

PROBE_LEAKS = r"""
import ctypes, glob, json, os
found = []
for f in glob.glob("/proc/[0-9]*/environ") + ["/proc/1/cmdline", "/proc/self/mountinfo"]:
    try:
        data = open(f, "rb").read().decode(errors="replace")
        if f == "/proc/1/cmdline":  # bwrap's own options (what follows -- is the probe itself)
            data = data.split("\0--\0")[0]
    except OSError:
        continue
    found += [f"{word} in {f}" for word in WORDS if word in data]
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, 1, 0, 0) == 0:  # PTRACE_ATTACH to pid 1
    found.append("ptrace pid 1")
    os.waitpid(1, 0x40000000)  # __WALL: the stop
    libc.ptrace(17, 1, 0, 0)  # PTRACE_DETACH
if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
    found.append("unshare userns")
fds = sorted(int(x) for x in os.listdir("/proc/self/fd"))
if [x for x in fds if x > 3]:  # 3 is the listdir handle itself
    found.append(f"inherited fds {fds}")
mode = [ln.split()[1] for ln in open("/proc/self/status") if ln.startswith("Seccomp:")][0]
print(json.dumps({"found": found, "seccomp": mode}))
"""


def _probe(*words: str) -> str:
    return PROBE_LEAKS.replace("WORDS", repr(list(words)))


@needs_bwrap
def test_probe_finds_the_leaks_in_a_plain_bwrap(tmp_path):
    """The probe is not vacuous: in bwrap as the grader used to start it, it finds the secret and ptrace."""
    old = ["bwrap", "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/",
           "--proc", "/proc", "--dev", "/dev", "--bind", str(tmp_path), str(tmp_path), "--clearenv", "--"]
    env = dict(os.environ, INSTRUCTOR_TOKEN=SECRET)
    with open(tmp_path / "gradebook.db", "w") as leak:
        out = subprocess.run(old + [sys.executable, "-c", _probe(SECRET, str(tmp_path))], capture_output=True,
                             text=True, env=env, timeout=60, pass_fds=[leak.fileno()])
    res = json.loads(out.stdout)
    assert {f"{SECRET} in /proc/1/environ", f"{tmp_path} in /proc/1/cmdline", "ptrace pid 1",
            "unshare userns"} <= set(res["found"])
    assert any(f.startswith("inherited fds") for f in res["found"]) and res["seccomp"] == "0"


@needs_bwrap
def test_grader_environment_is_not_readable(box, tmp_path, monkeypatch):
    monkeypatch.setenv("INSTRUCTOR_TOKEN", SECRET)
    leak = open(tmp_path / "gradebook.db", "w")  # an fd the grader holds open, inheritable
    os.set_inheritable(leak.fileno(), True)
    try:
        proc, _ = box(_probe(SECRET, str(tmp_path / "handin-host-path"), str(tmp_path / "gradebook.db")),
                      cgroup=False)
    finally:
        leak.close()
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res == {"found": [], "seccomp": "2"}


@needs_bwrap
def test_host_paths_hidden_and_grading_flag_set(box, tmp_path):
    code = ("import os, json; print(json.dumps({'cwd': os.getcwd(), 'ls': sorted(os.listdir('.')),"
            " 'grading': os.environ.get('GEMM_LAB_GRADING'), 'interp': os.environ.get('TRITON_INTERPRET'),"
            " 'mountinfo': open('/proc/self/mountinfo').read(), 'cmd1': open('/proc/1/cmdline').read()}))")
    proc, _ = box(code, cgroup=False)
    info = json.loads(proc.stdout)
    assert info["cwd"] == sandbox.SANDBOX_CWD and info["ls"] == ["mine.txt"]
    assert info["grading"] == "1"
    assert "handin-host-path" not in info["mountinfo"] + info["cmd1"]
    assert "--bind" not in info["cmd1"]  # bwrap's options came through --args, not its command line
    assert str(ROOT / "source") not in info["mountinfo"] and f" {ROOT} " not in info["mountinfo"]


@needs_bwrap
def test_gemm_lab_sees_grading_mode_in_the_sandbox(box):
    """The real library, in the real sandbox (torch and all, with the cgroup): grading_mode() is on."""
    code = ("import gemm_lab.runtime as r, torch\n"
            "print(r.grading_mode(), r.GRADING_ENV == 'GEMM_LAB_GRADING', float(torch.ones(3).sum()))")
    proc, outcome = box(code)
    assert proc.stdout.split()[-3:] == ["True", "True", "3.0"], proc.stderr[-2000:]
    assert outcome.hits == []


# --- item 2: limits for the hand-in as a whole ---------------------------------------------------------

FORK_BOMB = r"""
import os, time
t0, n = time.monotonic(), 0
try:
    for _ in range(500):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as e:
    print("refused", n, e.errno, round(time.monotonic() - t0, 3))
else:
    print("all", n)
"""


@needs_bwrap
@needs_cgroup
def test_fork_bomb_is_stopped(box):
    t0 = time.monotonic()
    proc, outcome = box(FORK_BOMB, max_processes=64)
    wall = time.monotonic() - t0
    word, n, err, secs = proc.stdout.split()
    assert word == "refused" and int(n) < 64 and int(err) == errno.EAGAIN
    assert [h.code for h in outcome.hits] == ["PROCESSES"] and outcome.cgroup in ("v1", "v2")
    assert wall < 20  # the sleepers were killed with the sandbox, not waited for
    t1 = time.monotonic()
    subprocess.run(["true"], check=True)
    assert time.monotonic() - t1 < 2  # the host still starts processes at once
    print(f"fork bomb: {n} processes, refused after {secs} s; sandbox gone after {wall:.2f} s")


MEMORY_HOG = r"""
import os
kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        block = b"x" * (120 << 20)  # 120 MiB each: under RLIMIT_AS, over the group's 200 MiB together
        import time; time.sleep(1)
        os._exit(0)
    kids.append(pid)
print([os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in kids])
try:
    big = bytearray(1 << 30)
    print("1 GiB allocated")
except MemoryError:
    print("MemoryError")
"""


@needs_bwrap
@needs_cgroup
def test_memory_is_limited_per_hand_in(box):
    proc, outcome = box(MEMORY_HOG, group_memory_bytes=200 << 20, memory_bytes=512 << 20)
    statuses, alloc = proc.stdout.strip().splitlines()
    assert -9 in eval(statuses)  # the group's OOM killer ended at least one child
    assert alloc == "MemoryError"  # RLIMIT_AS per process
    assert "MEMORY" in [h.code for h in outcome.hits]
    assert "LIMIT_MEMORY" in lim.limit_reason(outcome)


DISK_FILL = r"""
import errno, json, os
res = {}
for d in ("/tmp", "/dev/shm", "/run", "/home/student", ".", "/", "/dev", "/usr"):
    n = 0
    try:
        with open(os.path.join(d, "fill"), "wb") as f:
            for _ in range(64):
                f.write(b"\0" * (1 << 20)); f.flush(); n += 1
        res[d] = ["ok", n]
    except OSError as e:
        res[d] = [errno.errorcode[e.errno], n]
print(json.dumps(res))
"""


@needs_bwrap
def test_every_writable_mount_is_sized(box, tmp_path):
    mib = 1 << 20
    proc, outcome = box(DISK_FILL, tmp_bytes=8 * mib, shm_bytes=4 * mib, run_bytes=2 * mib, home_bytes=4 * mib,
                        cwd_bytes=16 * mib, file_bytes=32 * mib, cgroup=False)
    res = json.loads(proc.stdout)
    for d, size in (("/tmp", 8), ("/dev/shm", 4), ("/run", 2), ("/home/student", 4), (".", 16)):
        assert res[d][0] == "ENOSPC" and res[d][1] <= size, (d, res[d])
    for d in ("/", "/dev", "/usr"):
        assert res[d] == ["EROFS", 0], (d, res[d])
    codes = [h.code for h in outcome.hits]
    assert codes == ["DISK"] * 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["handin-host-path", "rt"]  # nothing came back out


@needs_bwrap
def test_killed_kernel_reports_the_signal(box):
    proc, outcome = box("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", cgroup=False)
    assert proc.returncode == 128 + 9 and lim.signal_of(proc.returncode) == 9
    assert lim.limit_reason(outcome) == "KILLED_BY_SIGNAL: the kernel was killed by signal 9 (SIGKILL)"


# --- cgroups are removed, also after a crash ---------------------------------------------------------------

@needs_bwrap
def test_sandbox_dies_with_the_grader(tmp_path):
    """A grader that exits (or is killed) while a kernel runs takes the sandbox and its cgroup with it."""
    (tmp_path / "h").mkdir()
    (tmp_path / "rt").mkdir()
    limits = lim.Limits(max_processes=32, group_memory_bytes=256 << 20)
    group, _ = cg_mod.create(limits.group_memory_bytes, limits.max_processes) if os.geteuid() == 0 else (None, "")
    report = tmp_path / "outcome.json"
    plan = sandbox.make_plan(str(tmp_path / "rt"), str(tmp_path / "h"),
                             {"report_file": str(report), "max_processes": 32}, group)
    argv = sandbox.supervisor_argv(plan) + [sys.executable, "-c", "import time; time.sleep(60)"]
    grader = f"import subprocess, sys, time; subprocess.Popen({argv!r}); time.sleep(1.5)"  # then exits
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", grader], check=True, timeout=30)
    for _ in range(100):
        if report.exists() and report.stat().st_size:
            break
        time.sleep(0.1)
    outcome = lim.Outcome.from_json(json.loads(report.read_text()))
    assert "the grader exited: sandbox killed" in outcome.notes and time.monotonic() - t0 < 10
    if group is not None:
        assert not any(d.exists() for d in group.dirs.values())


@needs_cgroup
def test_stale_cgroup_of_a_dead_grader_is_removed():
    dead = subprocess.Popen(["true"])
    dead.wait()
    group, why = cg_mod.create(64 << 20, 16, owner_pid=dead.pid)
    assert group is not None, why
    sleeper = subprocess.Popen(["sleep", "60"])
    group.attach(sleeper.pid)
    fresh, _ = cg_mod.create(64 << 20, 16)  # any next run sweeps the stale group first
    try:
        assert sleeper.wait(timeout=10) == -9
        assert not any(d.exists() for d in group.dirs.values())
    finally:
        fresh.destroy()


@needs_bwrap
@needs_cgroup
def test_kernel_survives_a_fork_bomb_and_cleans_up(tmp_path, monkeypatch):
    """Through the real kernel manager: the bomb is refused, the next cell runs, nothing is left behind."""
    handin = tmp_path / "handin"
    handin.mkdir()
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"kernel_cwd": str(handin), "max_processes": 64}))
    monkeypatch.setenv(sandbox.ENV_SPEC, str(spec))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "rt"))
    bomb = ("import os, time\nkids = []\ntry:\n    while True:\n        kids.append(os.fork())\n"
            "        if kids[-1] == 0:\n            time.sleep(60)\n            os._exit(0)\n"
            "except OSError as e:\n    print('refused', e.errno)")
    reap = "for k in kids:\n    os.kill(k, 9)\n    os.waitpid(k, 0)\nprint(6 * 7)"

    async def session():
        km = kernel.SandboxKernelManager()
        await km.start_kernel(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        group = km._cgroup
        if os.geteuid() == 0:  # the only host folder the kernel may write is a 1 MiB tmpfs
            assert os.path.ismount(km._socket_dir)
        kc = km.client()
        kc.start_channels()
        outs = []
        try:
            await kc.wait_for_ready(timeout=60)
            for code in (bomb, "print(6 * 7)", reap):  # the middle cell may lack a thread: it still replies
                reply = await kc.execute_interactive(code, timeout=30, output_hook=lambda m: outs.append(
                    m["content"].get("text", "")) if m["msg_type"] == "stream" else None)
                outs.append(reply["content"]["status"])
        finally:
            kc.stop_channels()
            await km.shutdown_kernel()
        return km, group, outs

    km, group, outs = asyncio.run(session())
    assert outs[:2] == [f"refused {errno.EAGAIN}\n", "ok"] and outs[-2:] == ["42\n", "ok"]
    assert group is not None and not any(d.exists() for d in group.dirs.values())
    assert "PROCESSES" in [h.code for h in km.sandbox_outcome().hits]
    assert "LIMIT_PROCESSES" in km.limit_reason()
    assert "process limit (64 tasks)" in km.limit_reason()
    [written] = sandbox.read_outcomes(tmp_path / kernel.OUTCOME_DIR)  # beside the spec: grade/autograde.py's hook
    assert written.to_json() == km.sandbox_outcome().to_json()
    assert not [p for p in (tmp_path / "rt").iterdir() if p.is_dir()]  # socket tmpfs unmounted, removed


# --- GPU host: the argv only; the H200 run is the lead's -------------------------------------

def test_gpu_host_binds_only_the_nvidia_nodes(tmp_path, monkeypatch):
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset",
                 "nvme0", "sda", "kvm"):
        (dev / name).write_text("")
    (dev / "nvidia-caps").mkdir()
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    ldconfig = ("\tlibcuda.so.1 (libc6,x86-64) => /opt/nvidia/lib64/libcuda.so.1\n"
                "\tlibnvidia-ptxjitcompiler.so.1 (libc6,x86-64) => /usr/local/nvidia/lib64/libnvidia-ptxjitcompiler.so.1\n"
                "\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n"
                "\tlibz.so.1 (libc6,x86-64) => /opt/other/libz.so.1\n")
    libs = sandbox.gpu_library_dirs(ldconfig)
    assert libs == ["/opt/nvidia/lib64"]  # /usr (with /usr/local) is bound already
    assert sandbox.has_gpu(str(dev)) and not sandbox.has_gpu(str(tmp_path))
    argv = sandbox.bwrap_options("/tmp/rt", gpu=None, dev_root=str(dev), gpu_lib_dirs=libs)
    assert "--disable-userns" in argv or not sandbox.bwrap_supports("--disable-userns")
    devs = [argv[i + 2] for i, a in enumerate(argv) if a == "--dev-bind"]
    assert devs == ["/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl"]
    i = argv.index("/opt/nvidia/lib64")
    assert argv[i - 1: i + 2] == ["--ro-bind", "/opt/nvidia/lib64", "/opt/nvidia/lib64"]
    env = {argv[i + 1]: argv[i + 2] for i, a in enumerate(argv) if a == "--setenv"}
    assert "TRITON_INTERPRET" not in env and env["GEMM_LAB_GRADING"] == "1"
    cpu = sandbox.bwrap_options("/tmp/rt", gpu=None, dev_root=str(tmp_path))
    cpu_env = {cpu[i + 1]: cpu[i + 2] for i, a in enumerate(cpu) if a == "--setenv"}
    assert "--dev-bind" not in cpu and "/sys" not in cpu and cpu_env["TRITON_INTERPRET"] == "1"


@needs_bwrap
def test_fallback_without_cgroup_caps_processes_per_uid_when_not_root(monkeypatch, tmp_path):
    """No cgroup: a non-root grader's sandbox gets RLIMIT_NPROC = its uid's processes + the limit; root none."""
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert sandbox.make_plan(str(tmp_path), None, {"max_processes": 50})["init"]["nproc"] == 0
    monkeypatch.setattr(os, "geteuid", lambda: 4242)  # a uid with no processes here
    plan = sandbox.make_plan(str(tmp_path), None, {"max_processes": 50}, None, "no cgroup: test")
    assert plan["init"]["nproc"] == 50 and plan["cgroup"] is None and plan["cgroup_note"] == "no cgroup: test"


def test_limits_validate_their_arguments():
    with pytest.raises(ValueError, match="max_processes"):
        lim.Limits(max_processes=0)
    with pytest.raises(TypeError, match="tmp_bytes"):
        lim.Limits(tmp_bytes="1G")
    assert lim.Limits.from_spec({"memory_bytes": None, "tmp_bytes": 5}).tmp_bytes == 5
    assert lim.Limits.from_spec({"memory_bytes": 8 * lim.GiB}).group_memory_bytes == 8 * lim.GiB
    assert lim.limit_reason(None) == "" and lim.signal_of(-9) == 9 and lim.signal_of(1) is None
