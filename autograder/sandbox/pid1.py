"""The first process inside the sandbox (its source is run with ``python -c``; stdlib only).

1. makes itself non-dumpable (no other process of the hand-in may read its memory or fds);
2. unpacks the hand-in (a tar stream on ``in_fd``) into the kernel's working directory, a sized tmpfs;
3. applies per-process limits (no core files, RLIMIT_FSIZE, RLIMIT_AS, RLIMIT_NPROC where asked);
4. forks the kernel and waits for it; when it ends, kills whatever the hand-in left running;
5. writes a JSON report on ``out_fd``: which sized mounts the hand-in filled (nothing of the working
   directory leaves the sandbox: no grading step reads files a kernel wrote);
6. exits with the kernel's status (128 + N when a signal N ended it).
"""

import ctypes
import json
import os
import resource
import signal
import sys
import tarfile


def _unpack(fd, dest):
    with os.fdopen(fd, "rb") as f, tarfile.open(fileobj=f, mode="r|") as tar:
        for m in tar:
            if m.isdir() or m.isfile():
                try:
                    tar.extract(m, dest, filter="data")
                except (tarfile.FilterError, OSError) as exc:
                    print(f"gemm-lab sandbox: {m.name} not unpacked: {exc}", file=sys.stderr)


def _limits(cfg):
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (cfg["file_bytes"], cfg["file_bytes"]))
    if cfg["memory_bytes"] > 0:
        resource.setrlimit(resource.RLIMIT_AS, (cfg["memory_bytes"], cfg["memory_bytes"]))
    if cfg.get("nproc"):
        resource.setrlimit(resource.RLIMIT_NPROC, (cfg["nproc"], cfg["nproc"]))


def _kill_rest():
    try:
        os.kill(-1, signal.SIGKILL)  # every process of the namespace but pid 1 and this one
    except ProcessLookupError:
        pass
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _report(fd, mounts):
    """The sized mounts the hand-in filled (less than 64 KiB left), as JSON on ``fd``."""
    full = []
    for path, size in mounts.items():
        try:
            st = os.statvfs(path)
        except OSError:
            continue
        if st.f_bavail * st.f_frsize < 64 * 1024:
            full.append([path, size])
    with os.fdopen(fd, "w") as f:
        json.dump({"full": full}, f)


def main(argv):
    cfg, cmd = json.loads(argv[0]), argv[1:]
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    cwd = cfg["cwd"]
    _unpack(cfg["in_fd"], cwd)
    _limits(cfg)
    pid = os.fork()
    if pid == 0:
        os.close(cfg["out_fd"])
        os.chdir(cwd)
        os.execv(cmd[0], cmd)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    _, status = os.waitpid(pid, 0)  # retried by Python when a signal interrupts it (PEP 475)
    _kill_rest()
    try:
        _report(cfg["out_fd"], cfg["mounts"])
    except OSError as exc:
        print(f"gemm-lab sandbox: no report: {exc}", file=sys.stderr)
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main(sys.argv[1:])
