"""The process jupyter starts as "the kernel": it runs bwrap for one notebook and watches it (outside the sandbox).

``python -c <bootstrap> PLAN_JSON -- KERNEL_CMD...`` (see :func:`autograder.sandbox.kernel.supervisor_argv`):

* puts itself's child in the kernel's cgroup before it execs bwrap, so every process of the hand-in is
  counted (memory, pids);
* execs bwrap with an **empty environment** (the sandbox's pid 1 is bwrap: its ``/proc/1/environ`` holds
  nothing of the grader's) and with every inherited fd closed but the four it hands over: the bwrap options
  (``--args``: host paths stay out of ``/proc/1/cmdline``), the seccomp program, the hand-in as a tar
  stream and the pipe of pid1's report;
* kills the sandbox when the grader that started it is gone (the grader's own deadlines bound its time);
* writes the outcome (exit status, limit hits) as JSON to ``plan["report"]``; exits with the sandbox's
  status.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import tarfile
from pathlib import Path

from autograder.sandbox import cgroup as cg_mod
from autograder.sandbox import limits as lim
from autograder.sandbox import seccomp

INIT_SOURCE = (Path(__file__).with_name("pid1.py")).read_text()


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, 0)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _handin_tar(src: str | None) -> int:
    """The hand-in folder as an uncompressed tar (regular files and folders; links are left out)."""
    fd = os.memfd_create("gemm-lab-handin", 0)
    with os.fdopen(os.dup(fd), "wb") as f, tarfile.open(fileobj=f, mode="w|") as tar:
        if src:
            for root, dirs, files in os.walk(src):
                dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(root, d)))
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if os.path.isfile(full) and not os.path.islink(full):
                        tar.add(full, arcname=os.path.relpath(full, src), recursive=False)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _read_report(fd: int) -> dict:
    """The JSON report pid1 wrote on the pipe before it ended (at most 1 MiB read; {} when there is none)."""
    chunks, got = [], 0
    while got < 1 << 20 and (chunk := os.read(fd, 1 << 16)):
        chunks.append(chunk)
        got += len(chunk)
    os.close(fd)
    try:
        report = json.loads(b"".join(chunks) or b"{}")
    except ValueError as exc:
        return {"errors": [f"sandbox report unreadable: {exc}"]}
    return report if isinstance(report, dict) else {}


def run(plan: dict, kernel_cmd: list[str]) -> int:
    outcome = lim.Outcome()
    group = cg_mod.Cgroup.from_json(plan["cgroup"]) if plan.get("cgroup") else None
    outcome.cgroup = group.version if group else ""
    if not group and plan.get("cgroup_note"):
        outcome.notes.append(plan["cgroup_note"])
    in_fd = _handin_tar(plan.get("handin"))
    sec_fd = _memfd("gemm-lab-seccomp", seccomp.program())  # for bwrap --seccomp FD
    r_fd, w_fd = os.pipe()
    init_cfg = dict(plan["init"], in_fd=in_fd, out_fd=w_fd)
    options = list(plan["bwrap_options"]) + ["--seccomp", str(sec_fd)]
    args_fd = _memfd("gemm-lab-bwrap-args", b"".join(a.encode() + b"\0" for a in options))
    argv = [plan["bwrap"], "--args", str(args_fd), "--", plan["python"], "-I", "-S", "-c", INIT_SOURCE,
            json.dumps(init_cfg)] + kernel_cmd
    keep = (in_fd, sec_fd, w_fd, args_fd)
    parent = os.getppid()
    pid = os.fork()
    if pid == 0:  # the child: into the cgroup, nothing of ours open, no environment, exec bwrap
        try:
            if group is not None:
                group.attach()
            for fd in keep:
                os.set_inheritable(fd, True)
            os.closerange(3, min(keep))
            for a, b in zip(sorted(keep), sorted(keep)[1:] + [os.sysconf("SC_OPEN_MAX")], strict=True):
                os.closerange(a + 1, b)
            os.execve(plan["bwrap"], argv, {})
        finally:
            os._exit(127)
    for fd in (in_fd, sec_fd, w_fd, args_fd):
        os.close(fd)
    stopped: list[int] = []

    def stop(signum, frame):
        if signum:
            outcome.notes.append(f"stopped by the grader (signal {signum})")
            stopped.append(signum)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    pidfd = os.pidfd_open(pid)
    while True:
        ready, _, _ = select.select([pidfd], [], [], 0.5)  # after a signal handler, goes on (PEP 475)
        if ready:
            break
        if parent and os.getppid() != parent:  # the grader is gone: nobody will read the results
            outcome.notes.append("the grader exited: sandbox killed")
            parent = 0
            stop(0, None)
    _, status = os.waitpid(pid, 0)
    os.close(pidfd)
    rc = os.waitstatus_to_exitcode(status)
    outcome.returncode = rc
    finish(outcome, group, _read_report(r_fd), killed_by_grader=bool(stopped))
    if plan.get("report"):
        Path(plan["report"]).write_text(json.dumps(outcome.to_json()))
    return rc


def finish(outcome: lim.Outcome, group: cg_mod.Cgroup | None, report: dict | None = None,
           killed_by_grader: bool = False) -> lim.Outcome:
    """Add the limit hits (cgroup events, full mounts) to ``outcome``; remove the cgroup.

    A signal is reported as a hit unless the grader itself stopped the sandbox (a shutdown)."""
    report = report or {}
    if group is not None:
        ev = group.events()
        if ev["oom_kill"]:  # reaching the limit alone (reclaim) is no hit: only a kill is
            outcome.hits.append(lim.memory_hit(group.memory_bytes, ev["oom_kill"]))
        if ev["pids_max"]:
            outcome.hits.append(lim.processes_hit(group.max_processes, ev["pids_max"]))
        if not group.destroy():
            outcome.notes.append(f"cgroup not removed: {sorted(map(str, group.dirs.values()))}")
    for path, size in report.get("full", []):
        outcome.hits.append(lim.disk_hit(path, size))
    outcome.notes += report.get("errors", [])
    sig = lim.signal_hit(outcome.returncode)
    if sig is not None and not killed_by_grader:
        outcome.hits.append(sig)
    return outcome


def main(argv: list[str]) -> int:
    if "--" not in argv:
        raise SystemExit("usage: supervise PLAN_JSON -- KERNEL_CMD...")
    i = argv.index("--")
    rc = run(json.loads(argv[0]), argv[i + 1:])
    if rc < 0:  # end the way the sandbox ended, so the grader sees the signal
        if -rc not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(-rc, signal.SIG_DFL)
        os.kill(os.getpid(), -rc)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
