"""The grader's workers run in the same sandbox as a student's kernel.

``SandboxRunner.start()`` is what ``gemm_lab.grading.judge.remote`` calls for a worker (one job: a compile, a
check's kernel runs, a cell's function calls): a fork of the runner's fork server (``python -m
gemm_lab.grading.judge.worker --fork-server``, one per hand-in), which runs under bwrap with the same limits,
seccomp filter, cgroup and NVIDIA nodes as the notebook's kernel (``bwrap.make_plan``), in an empty working
folder (nothing of the hand-in but the source each job carries). Jobs and answers travel on its
stdin/stdout; between workers the server kills every other process of the sandbox and empties every folder a
worker could write (the sized tmpfs mounts, the working folder, the socket folder), so each worker starts as
the first one did. The server's host folder sits in the hand-in's runtime folder (``glrt-*``, swept after a
killed run) and is read-only inside, but for the socket folder the kernel gets too (``bwrap.socket_dir``: a
1 MiB tmpfs where it can be mounted): its disk has the notebook kernel's caps.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from autograder.sandbox import bwrap, host
from autograder.sandbox import cgroup as cg_mod
from autograder.sandbox import limits as lim
from gemm_lab.grading.judge import remote


class SandboxRunner(remote.ForkingRunner):
    def __init__(self, spec_path: str, timeout: float):
        self.spec_path, self.timeout = spec_path, timeout

    def spawn(self) -> remote.Worker:
        spec = json.loads(Path(self.spec_path).read_text())
        folder = tempfile.mkdtemp(prefix="glw-", dir=os.environ.get("JUPYTER_RUNTIME_DIR") or "/tmp")
        (Path(folder) / "cwd").mkdir()
        sockets = bwrap.socket_dir(folder)
        limits = lim.Limits.from_spec(spec)
        group, note = cg_mod.create(limits.group_memory_bytes, limits.max_processes)
        plan = bwrap.make_plan(folder, str(Path(folder) / "cwd"), spec, group, note, sockets)

        def cleanup():
            if group is not None:
                group.destroy()
            host.remove_tree(folder)

        wipe = [*limits.mounts(), bwrap.SANDBOX_CWD, sockets]
        argv = bwrap.supervisor_argv(plan) + [sys.executable, "-m", "gemm_lab.grading.judge.worker", "--fork-server",
                                              "--sandboxed", *wipe]
        return remote.Worker(argv, self.timeout, on_close=cleanup)
