"""The grader's worker: a fresh process that holds the course's given code and one hand-in's kernel or
function source, nothing else of the hand-in (``python -m gemm_lab.grading.worker``).

It reads a secret line, then one JSON job per line on stdin, and answers each on the real stdout as
``<secret> <result JSON>``; everything else the process prints goes to stderr, so nothing a job runs can
write an answer line. Jobs (``remote`` writes them):

* ``{"op": "compile", "module", "kernel", "exercise", "dtype", "name", "constexpr_sets"}``: static checks and
  the cross-compile (``kernels.compile_results``); never launches the kernel. The grader starts a process of
  its own for each compile job.
* ``{"op": "run", "module", "kernel", "exercise", "dtype", "name", "runs", "ownership"}``: every run launched
  through the grader's launcher (``kernels.run``): the raw output buffers and, with ``ownership``, which
  program changed which element (observed in the interpreter). The grader judges all of it.

A kernel module (the gate's) is imported under ``from __future__ import annotations`` (``_as_text``): no
annotation is ever evaluated, whatever the module holds (Triton reads them as text).
* ``{"op": "calls", "module": text, "function": name, "calls": [...]}``: a Python function answer is called
  with the grader's arguments (arrays sent as an ``.npz``); each result is encoded as plain data (a claim).
  The grader never sends a kernel job to a worker that ran a function job.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path

MODULE = "gemm_lab_handin"
_COUNT = itertools.count()


def _load(text: str):
    name = f"{MODULE}_{next(_COUNT)}"
    path = Path(tempfile.mkdtemp(prefix="job-")) / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _kernel(job: dict) -> dict:
    from gemm_lab import runtime  # decides TRITON_INTERPRET before Triton is imported
    from gemm_lab.grading import kernels

    if runtime.INTERPRET:
        _interpreter_without_overflow_sanitizer()

    mod = _load(_as_text(job["module"]))
    obj = getattr(mod, job["kernel"])
    try:
        if job["op"] == "compile":
            return {"per_set": [kernels.compile_results(job["exercise"], obj, job["dtype"], job["name"], c)
                                for c in job["constexpr_sets"]]}
        results = kernels.run_kernel(job["exercise"], obj, job["runs"], job["name"], job["ownership"])
    except AssertionError as exc:
        return {"refused": str(exc)}
    return {"results": results, "device": _device_name()}


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
    from gemm_lab.grading.handout import decode

    return decode(value)


def _calls(job: dict, arrays: dict) -> dict:
    from gemm_lab.grading.handout import encode

    mod = _load(job["module"])
    fn = getattr(mod, job["function"])
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


def main() -> int:

    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what jobs print goes to stderr: only this loop writes answer lines
    sys.stdout = sys.stderr
    secret = sys.stdin.readline().strip()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            result = run_job(request["job"], _arrays(request.get("npz")))
        except (ValueError, KeyError, TypeError) as exc:
            result = {"crashed": f"bad request ({type(exc).__name__})"}
        answers.write(f"{secret} {json.dumps(result)}\n")
        answers.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
