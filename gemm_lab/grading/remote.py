"""The grader's side of a worker: kernels and functions held as source, run in a fresh process.

``KernelSource(name, module, run_seed)`` stands for a hand-in's ``@triton.jit`` kernel in the grader: the
kernel checks see it and send their prepared runs to a worker (``gemm_lab.grading.worker``) instead of
launching in-process; the outputs come back as data and are judged in the grader. ``FunctionSource`` does
the same for a plain Python function answer: calls are collected and run in one worker.

How a worker is started is the runner's business: :class:`SubprocessRunner` (a plain child process, for
tests and ``--allow-unsandboxed``) by default; the autograder installs its sandboxed runner with
:func:`set_runner`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["KernelSource", "FunctionSource", "WorkerFailed", "SubprocessRunner", "set_runner", "runner"]


class WorkerFailed(RuntimeError):
    """The worker did not give a result (crash, time limit); the message is Korean."""


class SubprocessRunner:
    """Run a job in a child process in a fresh temporary folder."""

    def __init__(self, timeout: float = 300.0):
        self.timeout = timeout

    def run(self, job: dict, arrays: dict | None = None) -> dict:
        with tempfile.TemporaryDirectory(prefix="gemm-lab-worker-") as d:
            folder = Path(d)
            write_job(folder, job, arrays)
            try:
                proc = subprocess.run([sys.executable, "-m", "gemm_lab.grading.worker"], cwd=folder,
                                      capture_output=True, text=True, timeout=self.timeout,
                                      env=dict(os.environ, PYTHONSAFEPATH="1"))
            except subprocess.TimeoutExpired:
                raise WorkerFailed(f"채점 시간 제한({self.timeout:.0f}초)을 넘었습니다.") from None
            return read_result(folder, proc.returncode, proc.stderr)


def write_job(folder: Path, job: dict, arrays: dict | None) -> None:
    (folder / "job.json").write_text(json.dumps(job))
    if arrays:
        import numpy as np

        np.savez(folder / "args.npz", **arrays)


def read_result(folder: Path, returncode: int | None, stderr: str = "") -> dict:
    path = folder / "result.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        tail = (stderr or "").strip().splitlines()[-1:] or [""]
        raise WorkerFailed(f"커널을 실행하던 프로세스가 결과 없이 끝났습니다 (종료 코드 {returncode}; {tail[0][:200]})."
                           ) from None


_RUNNER = [SubprocessRunner()]


def set_runner(new) -> None:
    """Install how workers are started (an object with ``run(job, arrays) -> dict``)."""
    _RUNNER[0] = new


def runner():
    return _RUNNER[0]


# Compile results of earlier workers, per kernel module text: the visible and hidden cells of a notebook, and
# hand-ins whose kernel source is the same, compile once. Kept by the grader (its own process and, with
# GEMM_LAB_WORKER_COMPILE_CACHE, a folder no sandbox sees); a worker runs only Triton source, so what it
# compiled is the compiler's verdict.
_COMPILED: dict[str, dict] = {}
COMPILE_CACHE_ENV = "GEMM_LAB_WORKER_COMPILE_CACHE"


def _module_key(module: str) -> str:
    import hashlib

    return hashlib.sha256(module.encode()).hexdigest()[:32]


def compile_results(module: str) -> dict:
    key = _module_key(module)
    if key not in _COMPILED and os.environ.get(COMPILE_CACHE_ENV):
        try:
            _COMPILED[key] = json.loads((Path(os.environ[COMPILE_CACHE_ENV]) / f"{key}.json").read_text())
        except (OSError, ValueError):
            pass
    return dict(_COMPILED.get(key) or {})


def keep_compile_results(module: str, entries) -> None:
    if not isinstance(entries, dict) or not entries:
        return
    key = _module_key(module)
    merged = dict(_COMPILED.get(key) or {}, **entries)
    _COMPILED[key] = merged
    folder = os.environ.get(COMPILE_CACHE_ENV)
    if folder:
        path = Path(folder) / f"{key}.json"
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(merged))
            os.replace(tmp, path)
        except OSError:
            pass


class KernelSource:
    """A hand-in's kernel as the grader holds it: its name and the module text ``extract`` built."""

    def __init__(self, name: str, module: str | None, run_seed: int = 0, refused: str | None = None):
        self.__name__ = name
        self.module, self.run_seed, self.refused = module, run_seed, refused

    def __repr__(self) -> str:
        return f"<kernel {self.__name__} (source)>"

    def execute(self, exercise, runs, dtype, name, ownership) -> dict:
        if self.refused is not None:
            raise AssertionError(f"❌ {name}: {self.refused}")
        job = {"op": "kernel", "module": self.module, "kernel": self.__name__, "exercise": exercise,
               "dtype": dtype, "name": name, "runs": runs, "ownership": ownership,
               "compile_results": compile_results(self.module)}
        result = runner().run(job)
        keep_compile_results(self.module, result.get("compile_results"))
        if "refused" in result:
            raise AssertionError(str(result["refused"]))
        if "crashed" in result:
            raise AssertionError(f"❌ {name}: 커널을 불러오지 못했습니다 ({result['crashed']}).")
        if not isinstance(result.get("results"), list) or len(result["results"]) != len(runs):
            raise WorkerFailed("커널 실행 결과가 온전하지 않습니다.")
        return result


class FunctionSource:
    """A hand-in's Python function as the grader holds it. The test cell runs twice in the grader: first
    every call is collected (``collect``), then the calls run in one worker and the second pass gets each
    call's result in the same order (``answer``)."""

    def __init__(self, name: str, module: str | None, refused: str | None = None):
        self.__name__ = name
        self.module, self.refused = module, refused
        self.calls: list = []
        self.arrays: dict = {}
        self.results: list | None = None
        self.position = 0

    def __repr__(self) -> str:
        return f"<function {self.__name__} (source)>"

    def _encode_arg(self, value):
        mod = type(value).__module__ or ""
        if mod.startswith("torch") and type(value).__name__ in ("Tensor", "Parameter"):
            key = f"a{len(self.arrays)}"
            t = value.detach().cpu()
            self.arrays[key] = (t.float() if str(t.dtype) == "torch.bfloat16" else t).numpy()
            return {"__npz__": key, "dtype": str(t.dtype)}
        if mod.startswith("numpy") and hasattr(value, "shape"):
            key = f"a{len(self.arrays)}"
            self.arrays[key] = value
            return {"__npz__": key, "dtype": ""}
        from .handout import encode

        return encode(value)

    def __call__(self, *args):
        if self.results is None:
            self.calls.append({"args": [self._encode_arg(a) for a in args]})
            return _PENDING
        if self.position >= len(self.results):
            raise WorkerFailed("채점 셀이 두 번째 실행에서 다른 호출을 했습니다.")
        result = self.results[self.position]
        self.position += 1
        if "error" in result:
            raise _StudentError(result["error"])
        from .handout import decode

        return decode(result.get("value"))

    def run_calls(self) -> None:
        if self.refused is not None:
            self.results = [{"error": self.refused}] * len(self.calls)
            return
        job = {"op": "calls", "module": self.module, "function": self.__name__, "calls": self.calls}
        result = runner().run(job, self.arrays)
        results = result.get("results")
        if not isinstance(results, list) or len(results) != len(self.calls):
            crashed = result.get("crashed", "결과가 온전하지 않습니다")
            results = [{"error": f"함수를 실행하지 못했습니다 ({crashed})"}] * len(self.calls)
        self.results = [r if isinstance(r, dict) else {"error": "?"} for r in results]
        self.position = 0


class _StudentError(Exception):
    """The student's function raised (re-raised in the grader with its type and message as text)."""


class _Pending:
    """What a collected call returns in the first pass (the checks do not judge in that pass)."""

    def __bool__(self):
        return False

    def __repr__(self):
        return "<pending>"


_PENDING = _Pending()
