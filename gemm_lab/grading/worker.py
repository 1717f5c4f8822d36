"""The grader's worker: a fresh process that holds the course's given code and one hand-in's kernel or
function source, nothing else of the hand-in (``python -m gemm_lab.grading.worker``).

It reads a secret line, then one JSON job per line on stdin, and answers each on the real stdout as
``<secret> <result JSON>``; everything else the process prints goes to stderr, so nothing a job runs can
write an answer line. Jobs (``remote`` writes them):

* ``{"op": "kernel", "module": text, "kernel": name, "exercise", "dtype", "name", "runs", "ownership"}``:
  the module (built by ``extract.kernel_module``: only Triton) is imported from a file (Triton reads the
  source), the kernel goes through ``kernels.execute`` (static checks, cross-compile, launches through the
  grader's launcher); the result holds the raw output buffers: the grader judges them.
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


_KERNEL_READY: list[bool] = []


def _kernel_setup() -> None:
    """Once, before the first kernel job: the course's runtime decides TRITON_INTERPRET before Triton is
    imported (a function-only worker never imports torch or Triton)."""
    if not _KERNEL_READY:
        from gemm_lab import runtime

        if runtime.INTERPRET:
            _interpreter_without_overflow_sanitizer()
        _KERNEL_READY.append(True)


def _kernel(job: dict) -> dict:
    _kernel_setup()
    from gemm_lab.grading import kernel_compile, kernels

    kernel_compile.preload(job.get("compile_results"))
    mod = _load(job["module"])
    obj = getattr(mod, job["kernel"])
    try:
        out = kernels.execute(job["exercise"], obj, job["runs"], job["dtype"], job["name"], job["ownership"])
    except AssertionError as exc:
        return {"refused": str(exc), "compile_results": kernel_compile.export()}
    return dict(out, device=_device_name(), compile_results=kernel_compile.export())


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
        return _kernel(job) if job.get("op") == "kernel" else _calls(job, arrays)
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
