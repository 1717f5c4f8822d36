"""The grader's workers run in the same sandbox as a student's kernel, one fresh sandbox per job.

``SandboxRunner`` is what ``gemm_lab.grading.remote`` calls to run a job (a kernel's runs, a function's
calls): the job folder is the sandbox's working directory (nothing of the hand-in but the source the job
holds), and ``result.json`` comes back through the sandbox's copy-back. Same limits, same seccomp filter,
same NVIDIA nodes as the notebook's kernel (``bwrap.run_sandboxed``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from gemm_lab.grading import remote

from . import bwrap


class SandboxRunner:
    def __init__(self, spec_path: str, timeout: float):
        self.spec_path, self.timeout = spec_path, timeout

    def run(self, job: dict, arrays: dict | None = None) -> dict:
        spec = json.loads(Path(self.spec_path).read_text())
        with tempfile.TemporaryDirectory(prefix="glw-", dir="/tmp") as d:
            job_dir, out_dir = Path(d) / "job", Path(d) / "out"
            job_dir.mkdir()
            remote.write_job(job_dir, job, arrays)
            spec = dict(spec, copy_back_to=str(out_dir))
            spec.pop("report_dir", None)
            try:
                proc, outcome = bwrap.run_sandboxed([sys.executable, "-m", "gemm_lab.grading.worker"],
                                                    str(job_dir), d, spec, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                raise remote.WorkerFailed(f"채점 시간 제한({self.timeout:.0f}초)을 넘었습니다.") from None
            limit = bwrap.lim.limit_reason(outcome)
            if limit and not (out_dir / "result.json").is_file():
                raise remote.WorkerFailed(f"커널을 실행하던 프로세스가 자원 제한으로 종료되었습니다({limit}).")
            return remote.read_result(out_dir, proc.returncode, proc.stderr)
