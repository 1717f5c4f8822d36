"""The grader's worker: a fresh process that holds the course's given code and one hand-in's kernel or
function source, nothing else of the hand-in (run as ``python -m gemm_lab.grading.worker`` in a folder
holding ``job.json``; it writes ``result.json`` there).

Jobs (``remote`` writes them):

* ``{"op": "kernel", "module": text, "kernel": name, "exercise", "dtype", "name", "runs", "ownership"}``:
  the module (built by ``extract.kernel_module``: only Triton) is imported from a file (Triton reads the
  source), the kernel goes through ``kernels.execute`` (static checks, cross-compile, launches through the
  grader's launcher); the result holds the raw output buffers: the grader judges them.
* ``{"op": "calls", "module": text, "function": name, "calls": [...]}``: a Python function answer is called
  with the grader's arguments (arrays from ``args.npz``); each result is encoded as plain data (a claim).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

MODULE = "gemm_lab_handin"


def _load(text: str):
    path = Path.cwd() / f"{MODULE}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(MODULE, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[MODULE] = mod
    spec.loader.exec_module(mod)
    return mod


def _kernel(job: dict) -> dict:
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


def _calls(job: dict) -> dict:
    import numpy as np

    from gemm_lab.grading.handout import encode

    arrays = dict(np.load("args.npz", allow_pickle=False)) if Path("args.npz").exists() else {}
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


def main() -> int:
    from gemm_lab import runtime  # noqa: F401 - decides TRITON_INTERPRET before triton is imported

    job = json.loads(Path("job.json").read_text())
    try:
        result = _kernel(job) if job["op"] == "kernel" else _calls(job)
    except Exception as exc:  # noqa: BLE001 - reported to the grader, which decides
        result = {"crashed": f"{type(exc).__name__}: {str(exc).strip()[:500]}"}
    Path("result.json").write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
