"""The grader's side of a worker: kernels and functions held as source, run in a fresh process.

``KernelSource(name, module, run_seed)`` stands for a hand-in's ``@triton.jit`` kernel in the grader: the
kernel checks see it and send their prepared runs to a worker (``gemm_lab.grading.judge.worker``) instead of
launching in-process; the outputs come back as data and are judged in the grader. ``FunctionSource`` does
the same for a plain Python function answer: calls are collected and run in one worker.

Every job (a compile, a check's kernel runs, a cell's function calls) runs in a worker of its own: a fork of
the runner's fork server, which imported the course's code once and never runs a job, and which between two
workers kills whatever the last one left running and empties every folder it could write, so nothing one job
did reaches another (:class:`ForkingRunner`; :class:`SubprocessRunner`, a plain child process, for tests and
``--allow-unsandboxed``; the autograder installs its sandboxed runner, one server per hand-in, with
:func:`set_runner`). Every process that runs hand-in source is the student's machine: it hands back raw data
and the grader judges. The grader keeps compile results (``kernels.compiler.cached``; the autograder's
folder is one no sandbox sees) under a hash of everything the compile was given, so a hand-in's compile can
only ever be read back for the same source. A worker that dies mid-job is started again once (an incident
the verdict records); no job outlives the notebook's deadline (:func:`set_deadline`).
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile

from .. import codec
from ..kernels import compiler

__all__ = ["KernelSource", "FunctionSource", "WorkerFailed", "Worker", "Forked", "ForkingRunner",
           "SubprocessRunner", "set_runner", "runner",
           "set_deadline", "take_incidents"]


class WorkerFailed(RuntimeError):
    """The worker did not give a result (crash, time limit); the message is Korean. ``died``: the process
    ended without an answer (not a time limit)."""

    def __init__(self, message: str, died: bool = False):
        super().__init__(message)
        self.died = died


_DEADLINE: list = [None]  # time.monotonic() by which every job must be done (the notebook's deadline)
_INCIDENTS: list = []


def set_deadline(when: float | None) -> None:
    _DEADLINE[0] = when


def take_incidents() -> list:
    """What happened to workers since the last call (English, for the instructor's review)."""
    out = list(_INCIDENTS)
    _INCIDENTS.clear()
    return out


class Worker:
    """One process the grader talks to (a fork server, ``worker.fork_server``): control and job lines in on its
    stdin, answer lines out on its stdout."""

    def __init__(self, argv: list[str], timeout: float, cwd: str | None = None, env: dict | None = None,
                 on_close=None):
        import secrets

        self.timeout, self.on_close = timeout, on_close
        self.secret = secrets.token_hex(16)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=cwd, env=env)
        self._buf = b""
        self._send(self.secret + "\n")

    def _send(self, text: str) -> None:
        try:
            self.proc.stdin.write(text.encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerFailed("커널을 실행하던 프로세스가 끝났습니다.", died=True) from None

    def run(self, job: dict, arrays: dict | None = None) -> dict:
        import base64
        import io

        blob = None
        if arrays:
            import numpy as np

            out = io.BytesIO()
            np.savez(out, **arrays)
            blob = base64.b64encode(out.getvalue()).decode()
        self._send(json.dumps({"job": job, "npz": blob}) + "\n")
        return self._reply()

    def _reply(self) -> dict:
        import select
        import time

        deadline = time.monotonic() + self.timeout
        if _DEADLINE[0] is not None and _DEADLINE[0] < deadline:
            deadline = _DEADLINE[0]
        fd = self.proc.stdout.fileno()
        while True:
            while b"\n" in self._buf:
                line, self._buf = self._buf.split(b"\n", 1)
                head, _, body = line.decode(errors="replace").partition(" ")
                if head == self.secret:
                    try:
                        return json.loads(body)
                    except ValueError:
                        raise WorkerFailed("커널 실행 결과를 읽을 수 없습니다.") from None
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise WorkerFailed(f"채점 시간 제한({self.timeout:.0f}초, 또는 노트북 전체 시간)을 넘었습니다.")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    code = self.proc.poll()
                    self.close()
                    raise WorkerFailed(f"커널을 실행하던 프로세스가 결과 없이 끝났습니다 (종료 코드 {code}).",
                                       died=True)
                self._buf += chunk

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        if self.on_close is not None:
            self.on_close()
            self.on_close = None


class Forked:
    """One fresh worker: a fork of the runner's fork server (``worker.fork_server``), which imported the course's
    code once and never ran a job. Closing it ends the process; the server then kills what it left running
    and empties the folders it could write."""

    def __init__(self, server: Worker):
        self.server = server
        server._send("fork\n")  # a control line: the server answers with the new worker's pid
        answer = server._reply()
        if not isinstance(answer.get("forked"), int):
            server.close()
            raise WorkerFailed("채점용 프로세스를 시작하지 못했습니다.", died=True)
        self.pid, self.open = answer["forked"], True

    def run(self, job: dict, arrays: dict | None = None) -> dict:
        if not self.alive():
            raise WorkerFailed("커널을 실행하던 프로세스가 끝났습니다.", died=True)
        try:
            result = self.server.run(job, arrays)
        except WorkerFailed:
            self.open = False
            raise
        if isinstance(result, dict) and set(result) == {"ended"}:  # the server's word: it died mid-job
            self.open = False
            raise WorkerFailed(f"커널을 실행하던 프로세스가 결과 없이 끝났습니다 (종료 코드 {result['ended']}).",
                               died=True)
        return result

    def alive(self) -> bool:
        return self.open and self.server.alive()

    def close(self) -> None:
        if self.open and self.server.alive():
            try:
                self.server._send("end\n")
            except WorkerFailed:
                pass
        self.open = False


class ForkingRunner:
    """Starts each worker as a fork of one fork server, started on first use and again after it ended (a time
    limit closes it with the job it was running). The server has one worker at a time and, between two, kills
    what the last one left running and empties what it could write. Subclasses say how it starts (``spawn``)."""

    server: Worker | None = None

    def start(self) -> Forked:
        if self.server is None or not self.server.alive():
            if self.server is not None:
                self.server.close()
            self.server = self.spawn()
        return Forked(self.server)

    def spawn(self) -> Worker:
        raise NotImplementedError

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None


class SubprocessRunner(ForkingRunner):
    """The fork server as a plain child process (tests, ``--allow-unsandboxed``): no sandbox to kill leftovers
    in; its temporary folder is emptied between workers."""

    def __init__(self, timeout: float = 300.0):
        self.timeout = timeout

    def spawn(self) -> Worker:
        folder = tempfile.mkdtemp(prefix="gemm-lab-worker-")
        return Worker([sys.executable, "-m", "gemm_lab.grading.judge.worker", "--fork-server", folder], self.timeout,
                      cwd=folder, env=dict(os.environ, PYTHONSAFEPATH="1", TMPDIR=folder,
                                           GEMM_LAB_COMPILE_CACHE="off"),
                      on_close=functools.partial(shutil.rmtree, folder, ignore_errors=True))


_RUNNER = [SubprocessRunner()]


def set_runner(new) -> None:
    """Install how workers are started (an object with ``start()`` giving a worker: ``run``, ``alive``,
    ``close``); the old runner's fork server is closed."""
    old = _RUNNER[0]
    if old is not new and hasattr(old, "close"):
        old.close()
    _RUNNER[0] = new


def runner():
    return _RUNNER[0]


atexit.register(lambda: hasattr(_RUNNER[0], "close") and _RUNNER[0].close())


def _run_job(job: dict, arrays: dict | None = None) -> dict:
    """``job`` in a fresh worker; a worker that dies without an answer is started again once."""
    for attempt in (0, 1):
        w = runner().start()
        try:
            return w.run(job, arrays)
        except WorkerFailed as exc:
            if not exc.died or attempt:
                raise
            _INCIDENTS.append(f"grading worker died mid-check ({exc}); started again")
        finally:
            w.close()
    raise AssertionError("unreachable")


class KernelSource:
    """A hand-in's kernel as the grader holds it: its name and the module text the gate built."""

    def __init__(self, name: str, module: str | None, run_seed: int = 0, refused: str | None = None):
        self.__name__ = name
        self.module, self.run_seed, self.refused = module, run_seed, refused

    def __repr__(self) -> str:
        return f"<kernel {self.__name__} (source)>"

    def _job(self, op, exercise, dtype, name, **more) -> dict:
        if self.refused is not None:
            raise AssertionError(f"❌ {name}: {self.refused}")
        return dict(op=op, module=self.module, kernel=self.__name__, exercise=exercise, dtype=dtype, name=name,
                    **more)

    def compile(self, exercise, dtype, name, constexpr_sets) -> list:
        """The compiler's raw results for every constexpr set (``kernels.compiler.results`` entries): as the
        grader keeps them (``compiler.cached``), else from a fresh compile process. Raises AssertionError when
        the kernel is refused."""
        job = self._job("compile", exercise, dtype, name)

        def compile_missing(missing: list) -> list:
            result = _run_job(dict(job, constexpr_sets=missing))
            if "refused" in result:
                return [{"refused": str(result["refused"])}] * len(missing)
            if not isinstance(result.get("per_set"), list) or len(result["per_set"]) != len(missing):
                raise AssertionError(f"❌ {name}: 커널을 컴파일하지 못했습니다 ({result.get('crashed', '?')}).")
            return result["per_set"]

        # keyed on the whole job the worker is given (its refusal text names the check too), so a result is
        # read back only for the same job; on disk only in a folder the grader names (autograde's, in the
        # course): the user's default folder is also written by a student's own checks on that account
        return compiler.cached(("worker", *sorted(job.items())), constexpr_sets, compile_missing,
                               default_folder=False)

    def run(self, exercise, runs, dtype, name, ownership) -> dict:
        """Every prepared run launched in a fresh worker: raw buffers, judged by the grader."""
        result = _run_job(self._job("run", exercise, dtype, name, runs=runs, ownership=ownership))
        if "refused" in result:  # a worker's refusal can only cost its own hand-in
            raise AssertionError(str(result["refused"]))
        if "crashed" in result:
            raise AssertionError(f"❌ {name}: 커널을 불러오지 못했습니다 ({result['crashed']}).")
        if not isinstance(result.get("results"), list) or len(result["results"]) != len(runs):
            raise WorkerFailed("커널 실행 결과가 온전하지 않습니다.")
        for r in result["results"]:
            if isinstance(r, dict) and "out" in r:
                r["out"] = _floats(r["out"])
                r["inputs_after"] = [_floats(b) for b in r.get("inputs_after") or []]
        return result


def _floats(packed) -> list | None:
    """A buffer as the worker packed it (float32 bytes), as a list; None when it is not one (judged as no
    buffer)."""
    import array
    import base64
    import binascii

    if not (isinstance(packed, dict) and isinstance(packed.get("f32"), str)):
        return None
    values = array.array("f")
    try:
        values.frombytes(base64.b64decode(packed["f32"], validate=True))
    except (ValueError, binascii.Error):
        return None
    return values.tolist()


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
        return codec.encode(value)

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
        return codec.decode(result.get("value"))

    def run_calls(self) -> None:
        if self.refused is not None:
            self.results = [{"error": self.refused}] * len(self.calls)
            return
        job = {"op": "calls", "module": self.module, "function": self.__name__, "calls": self.calls}
        result = _run_job(job, self.arrays)
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
