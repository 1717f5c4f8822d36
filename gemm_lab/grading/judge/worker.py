"""The grader's worker: a fresh process that holds the course's given code and one hand-in's kernel or
function source, nothing else of the hand-in. Each is a fork of a fork server (``python -m
gemm_lab.grading.judge.worker --fork-server``, :func:`fork_server`) that imported the course's code once and
never runs a job; a worker reads one JSON job per line from a pipe of its own and answers each with one
result line on another, which the server frames for the grader; everything a job prints goes to stderr.
Jobs (``remote`` writes them):

* ``{"op": "compile", "module", "kernel", "exercise", "dtype", "name", "constexpr_sets"}``: static checks and
  the cross-compile (``kernels.compile_results``); never launches the kernel.
* ``{"op": "run", "module", "kernel", "exercise", "dtype", "name", "runs", "ownership"}``: every run launched
  through the grader's launcher (``kernels.run``): the raw output buffers and, with ``ownership``, which
  program changed which element (observed in the interpreter). The grader judges all of it.

A kernel module (the gate's) is imported under ``from __future__ import annotations`` (``_as_text``): no
annotation is ever evaluated, whatever the module holds (Triton reads them as text).
* ``{"op": "calls", "module": text, "function": name, "calls": [...]}``: a Python function answer is called
  with the grader's arguments (arrays sent as an ``.npz``); each result is encoded as plain data (a claim).
"""

from __future__ import annotations

import base64
import io
import json
import os
import sys


def _kernel(job: dict) -> dict:
    from gemm_lab import runtime  # decides TRITON_INTERPRET before Triton is imported
    from gemm_lab.grading import kernels
    from gemm_lab.grading.judge import gate

    if runtime.INTERPRET:
        _interpreter_without_overflow_sanitizer()

    obj = gate.load(_as_text(job["module"]), job["kernel"])
    try:
        if job["op"] == "compile":
            return {"per_set": [kernels.compile_results(job["exercise"], obj, job["dtype"], job["name"], c)
                                for c in job["constexpr_sets"]]}
        results = kernels.run_kernel(job["exercise"], obj, job["runs"], job["name"], job["ownership"])
    except AssertionError as exc:
        return {"refused": str(exc)}
    for r in results:  # buffers as float32 bytes: a JSON list of floats costs the grader seconds to read
        r["out"] = _packed(r["out"])
        r["inputs_after"] = [_packed(b) for b in r["inputs_after"]]
    return {"results": results, "device": _device_name()}


def _packed(values: list) -> dict:
    import array

    return {"f32": base64.b64encode(array.array("f", values).tobytes()).decode()}


def _as_text(module: str) -> str:
    """``module`` under ``from __future__ import annotations``, each annotation written as an expression:
    nothing in one is evaluated at import, and Triton, whose interpreter compiles the kernel's source under
    the same flag, reads ``"tl.constexpr"`` (an annotation that is a string constant would reach it quoted)."""
    import ast

    tree = ast.parse(module)
    for node in ast.walk(tree):
        for attr in ("returns", "annotation"):
            ann = getattr(node, attr, None)
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                try:
                    setattr(node, attr, ast.parse(ann.value, mode="eval").body)
                except SyntaxError:
                    pass
    return "from __future__ import annotations\n" + ast.unparse(tree)


def _device_name() -> str:
    from gemm_lab import runtime

    if runtime.INTERPRET:
        return "cpu (TRITON_INTERPRET=1)"
    import torch

    return f"cuda ({torch.cuda.get_device_name()})"


def _arg(value, arrays):
    if isinstance(value, dict) and "__npz__" in value:
        import torch

        arr = arrays[value["__npz__"]]
        t = torch.from_numpy(arr.copy())
        dtype = value.get("dtype", "")
        return t.to(getattr(torch, dtype.replace("torch.", ""))) if dtype else t
    if isinstance(value, list):
        return [_arg(v, arrays) for v in value]
    from gemm_lab.grading.codec import decode

    return decode(value)


def _calls(job: dict, arrays: dict) -> dict:
    from gemm_lab.grading.codec import encode
    from gemm_lab.grading.judge import gate

    fn = gate.load(job["module"], job["function"])
    results = []
    for call in job["calls"]:
        args = [_arg(a, arrays) for a in call["args"]]
        try:
            value = fn(*args)
            results.append({"value": encode(value)})
        except Exception as exc:  # noqa: BLE001 - the student's function raising is its answer
            results.append({"error": f"{type(exc).__name__}: {str(exc)[:300]}"})
    return {"results": results}


def _arrays(blob: str | None) -> dict:
    if not blob:
        return {}
    import numpy as np

    return dict(np.load(io.BytesIO(base64.b64decode(blob)), allow_pickle=False))


def run_job(job: dict, arrays: dict) -> dict:
    try:
        return _kernel(job) if job.get("op") in ("compile", "run") else _calls(job, arrays)
    except Exception as exc:  # noqa: BLE001 - reported to the grader, which decides
        return {"crashed": f"{type(exc).__name__}: {str(exc).strip()[:500]}"}


def _interpreter_without_overflow_sanitizer() -> None:
    """Triton's interpreter re-does every 32-bit integer operation in 64 bits and asserts it did not
    overflow (a debugging aid, on by default); the grader's runs go without it: integers wrap as they do on
    a GPU, and the runs take about a third less time. The student's own notebook keeps Triton's default."""
    import dataclasses

    try:
        from triton.runtime import interpreter
    except ImportError:
        return
    builder = getattr(interpreter, "interpreter_builder", None)
    options = getattr(builder, "options", None)
    if options is not None and hasattr(options, "sanitize_overflow"):
        builder.options = dataclasses.replace(options, sanitize_overflow=False)


def _serve(jobs, answers) -> None:
    """Answer every job line of ``jobs`` with one result line on ``answers``."""
    for line in jobs:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            result = run_job(request["job"], _arrays(request.get("npz")))
        except (ValueError, KeyError, TypeError) as exc:
            result = {"crashed": f"bad request ({type(exc).__name__})"}
        answers.write(json.dumps(result) + "\n")
        answers.flush()


def _answers_apart():
    """The real stdout as a file of its own; fd 1 and ``sys.stdout`` go to stderr, so nothing a job prints
    can write an answer line."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return answers


# --------------------------------------------------------------------------- the fork server


def fork_server(wipe: list[str], sandboxed: bool) -> int:
    """Start each worker as a fork of this process, which imports the course's code once and never runs a
    job itself (``--fork-server``; ``remote`` talks to it).

    Control lines on stdin: ``fork`` starts a worker (answered ``{"forked": pid}``), a job line is passed to
    it and its one result line passed back, ``end`` ends it. A worker never sees the control stream: it reads
    its jobs from a pipe of its own and writes results to another, which only this process frames as answer
    lines (it cannot end itself in the grader's eyes, nor speak for the next worker). When a worker ends or
    dies, whatever it left running is killed (``sandboxed``: every process of the sandbox but its first and
    this one) and the folders it could write (``wipe``) are emptied, so the next worker finds what the first
    one found. A worker that dies mid-job is answered ``{"ended": status}``.
    """
    _preload()
    _not_dumpable()
    answers = _answers_apart()
    control = sys.stdin
    secret = control.readline().strip()
    child = None  # (pid, job pipe, answer pipe)

    def say(result: dict) -> None:
        answers.write(f"{secret} {json.dumps(result)}\n")
        answers.flush()

    def finish() -> int:
        nonlocal child
        pid, jobs, replies = child
        child = None
        for f in (jobs, replies):
            try:
                f.close()
            except OSError:
                pass
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        _clean_up(wipe, sandboxed)
        return status

    for line in control:
        command = line.strip()
        if not command:
            continue
        if command in ("fork", "end") and child is not None:
            finish()
        if command == "fork":
            child = _fork(answers)
            say({"forked": child[0]})
        elif command == "end":
            continue
        elif child is None:
            say({"crashed": "no worker is running"})
        else:
            try:
                child[1].write(line if line.endswith("\n") else line + "\n")
                child[1].flush()
                reply = child[2].readline()
            except OSError:
                reply = ""
            if reply.endswith("\n"):
                answers.write(f"{secret} {reply}")
                answers.flush()
            else:
                say({"ended": finish()})
    if child is not None:
        finish()
    return 0


def _fork(answers):
    job_r, job_w = os.pipe()
    ans_r, ans_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: no control stream, no answer stream of the server's
        code = 1
        try:
            os.close(job_w)
            os.close(ans_r)
            os.close(answers.fileno())
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            sys.stdin = open(os.devnull)
            with os.fdopen(job_r) as jobs, os.fdopen(ans_w, "w") as out:
                _serve(jobs, out)
            code = 0
        finally:
            os._exit(code)
    os.close(job_r)
    os.close(ans_w)
    return pid, os.fdopen(job_w, "w"), os.fdopen(ans_r)


def _clean_up(wipe: list[str], sandboxed: bool) -> None:
    import shutil

    if sandboxed:
        _kill_others()
    for top in wipe:
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    shutil.rmtree(e.path, ignore_errors=True)
                else:
                    os.unlink(e.path)
            except OSError:  # a mount point, or a file the sandbox made read-only
                pass


def _kill_others() -> None:
    """Kill every process of the sandbox's pid namespace but this one and its ancestors (the sandbox's
    first processes), until none is left."""
    import time

    import psutil

    me = psutil.Process()
    keep = {1, me.pid, *(p.pid for p in me.parents())}
    for _ in range(50):
        others = [p for p in psutil.process_iter(["status"])
                  if p.pid not in keep and p.info["status"] != psutil.STATUS_ZOMBIE]
        if not others:
            return
        for p in others:
            try:
                p.kill()
            except psutil.Error:
                pass
        while True:  # reap what was ours; the rest is reaped by the sandbox's first process
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        time.sleep(0.01)


def _preload() -> None:
    """The modules jobs import, imported once here (the server runs no job). On a GPU host, CUDA is not
    touched before a fork: ``gemm_lab.runtime`` asks torch for a device only where TRITON_INTERPRET is unset."""
    import numpy  # noqa: F401
    import torch  # noqa: F401
    import triton  # noqa: F401
    import triton.language  # noqa: F401

    if os.environ.get("TRITON_INTERPRET", "").strip():
        from gemm_lab import runtime  # noqa: F401
        from gemm_lab.grading import codec, kernels  # noqa: F401


def _not_dumpable() -> None:
    """No worker may read this process's memory or descriptors (``/proc/<pid>/fd``, ptrace)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


if __name__ == "__main__":
    if sys.argv[1:2] != ["--fork-server"]:
        sys.exit("usage: python -m gemm_lab.grading.judge.worker --fork-server [--sandboxed] [FOLDER ...]")
    rest = sys.argv[2:]
    sys.exit(fork_server([a for a in rest if a != "--sandboxed"], "--sandboxed" in rest))
