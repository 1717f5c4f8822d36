"""The grader's workers run in the same sandbox as a student's kernel.

``SandboxRunner.start()`` is what ``gemm_lab.grading.remote`` calls for a worker (a notebook's kernel checks,
or its function answers): ``python -m gemm_lab.grading.worker`` under bwrap with the same limits, seccomp
filter, cgroup and NVIDIA nodes as the notebook's kernel (``bwrap.make_plan``), in an empty working folder
(nothing of the hand-in but the source each job carries). Jobs and answers travel on its stdin/stdout.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from autograder.sandbox import bwrap
from autograder.sandbox import cgroup as cg_mod
from autograder.sandbox import limits as lim
from gemm_lab.grading import remote


class SandboxRunner:
    def __init__(self, spec_path: str, timeout: float):
        self.spec_path, self.timeout = spec_path, timeout

    def start(self) -> remote.Worker:
        spec = json.loads(Path(self.spec_path).read_text())
        spec = dict(spec, copy_back_to=None)
        spec.pop("report_dir", None)
        folder = tempfile.mkdtemp(prefix="glw-", dir="/tmp")
        (Path(folder) / "cwd").mkdir()
        limits = lim.Limits.from_spec(spec)
        group, note = cg_mod.create(limits.group_memory_bytes, limits.max_processes)
        plan = bwrap.make_plan(folder, str(Path(folder) / "cwd"), spec, group, note)

        def cleanup():
            if group is not None:
                group.destroy()
            shutil.rmtree(folder, ignore_errors=True)

        argv = bwrap.supervisor_argv(plan) + [sys.executable, "-m", "gemm_lab.grading.worker"]
        return remote.Worker(argv, self.timeout, on_close=cleanup)
