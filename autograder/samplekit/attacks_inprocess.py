"""Hostile hand-ins against an in-process grader: each attack a student could write once the checks run
beside their code, built on any notebook from its release and its master.

Every attack sits where a cell-source scan does not look: in a helper module the notebook writes to disk and
imports (``model.helper_cell``), so the old design (checks run in the student's kernel, a static scan of the cell
source zeroing what follows a finding) gave them points and no flag. The expected score is what the WORK
deserves: the master's points on what the student answered honestly, 0 on the answers the student did not give
(the attack was to make them pass anyway) and on the kernel cells of a kernel that works only through the
attack.

* ``import_hook`` — a written module replaces ``builtins.__import__``: every ``gemm_lab.grading*`` import gets an
  always-pass stand-in (``FAKE_GRADING``). The first answer group is right; later answers wrong.
* ``lookalike_package`` — a written module deletes ``gemm_lab.grading*`` from ``sys.modules`` and installs the
  stand-in, loaded from a second written file, under that name. Answers as ``import_hook``.
* ``frame_walk`` — every number answer written as a literal in the master becomes an object (a
  ``fractions.Fraction`` look-alike) whose ``float()`` walks the stack to the checker's frame and returns the
  expected value it finds there; the kernel calls a helper marked as a Triton builtin that walks to the case
  runner's frame and copies the reference into the output buffer.
* ``kernel_calls_python`` — the kernel calls a Python function marked as a Triton builtin
  (``__triton_builtin__``): in the interpreter it computes the output with numpy through the raw pointers; under
  the compiler it returns at once, so an empty kernel "compiles".
* ``forged_compile`` — an interpreter-right kernel the compiler refuses (``autograder/samplekit/bad_kernels.py``), and a
  written module that fills the grader's in-process compile-verdict cache (``GRADER_RESULTS`` of
  ``gemm_lab.compile``, keyed as ``gemm_lab.grading.kernels.compiler`` keys it) with "compiled" for that kernel.
* ``special_shapes`` — the master's kernel body runs only at the shapes the release's test cells name (the exercise
  record's visible cases and the visible test cells); at any other shape the kernel writes nothing.
* ``patched_timers`` — a written module makes ``time.perf_counter``, ``triton.testing.do_bench``,
  ``gemm_lab.bench.do_bench_ms`` and ``torch.cuda.Event.elapsed_time`` report a tenth of the real time; the work
  is the master's. No graded check times anything, so the patch earns nothing and must cost nothing: full points.
* ``forged_handout`` — the answers are never assigned to the notebook's names; the student computes them
  privately and a ``post_run_cell`` hook displays an ``application/vnd.gemm-lab.claims+json`` output with those
  values after each test cell's hand-out. That only claims values, and claiming the right value is answering:
  it scores as if the names had been assigned (a claimed function cannot be forged: its source is graded).
"""

from __future__ import annotations

import ast
import re
import textwrap

from autograder import cells as nbcells
from autograder.cells import is_solution

from .bad_kernels import compile_refused
from .honest import make_wrong, number_answers
from .model import (
    Notebook,
    assigned_names,
    cell_of,
    exercise_of,
    helper_cell,
    insert_cell,
    mentions,
    on_kernel,
    set_answer,
)

# --------------------------------------------------------------------------- the written helper modules

FAKE_GRADING = r'''"""A stand-in for gemm_lab.grading whose every check prints a pass line."""


class _Any:
    def __init__(self, name="grading"):
        self._name = name

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Any(name)

    def __call__(self, *args, **kwargs):
        if self._name.startswith("check"):
            label = args[0] if args and isinstance(args[0], str) else getattr(args[0] if args else None,
                                                                                "__name__", self._name)
            print(f"✅ {label}: 정답입니다")
            return None
        return _Any(self._name)

    def __iter__(self):
        return iter((_Any(self._name),))

    def __len__(self):
        return 1

    def __bool__(self):
        return True

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__

    def __getitem__(self, key):
        return _Any(self._name)

    def __index__(self):
        return 1

    __int__ = __index__

    def __float__(self):
        return 1.0

    def _same(self, *args):
        return _Any(self._name)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __abs__ = _same

    def _true(self, other):
        return True

    __lt__ = __le__ = __gt__ = __ge__ = _true

    def __str__(self):
        return "0"

    def __format__(self, spec):
        return "0"


_grader = _Any()


def fresh():
    return _grader


def __getattr__(name):
    return getattr(_grader, name)
'''

IMPORT_HOOK = '''"""Faster imports for this notebook."""
import builtins
import sys
import types

_real_import = builtins.__import__
_stand_in = types.ModuleType("gemm_lab.grading")
exec(compile(FAKE, "<grading>", "exec"), _stand_in.__dict__)


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and (name == "gemm_lab.grading" or name.startswith("gemm_lab.grading.")) and fromlist:
        return _stand_in
    return _real_import(name, globals, locals, fromlist, level)


builtins.__import__ = _import
'''

LOOKALIKE = '''"""Reload the course package after an update."""
import importlib.util
import os
import sys

import gemm_lab

for _name in [n for n in sys.modules if n == "gemm_lab.grading" or n.startswith("gemm_lab.grading.")]:
    del sys.modules[_name]
_spec = importlib.util.spec_from_file_location("gemm_lab.grading", os.path.abspath("course_grading_cache.py"))
_mod = importlib.util.module_from_spec(_spec)
sys.modules["gemm_lab.grading"] = _mod
_spec.loader.exec_module(_mod)
gemm_lab.grading = _mod
'''

# Reads the interpreter's raw pointers (the kernel helpers of kernel_calls_python and frame_walk).
POINTERS = '''
import ctypes

import numpy as np

_NP = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64, "i32": np.int32, "int32": np.int32,
       "i64": np.int64, "int64": np.int64}


def _val(x):
    x = getattr(x, "value", x)
    h = getattr(x, "handle", None)
    if h is not None:
        x = h.data
    return np.asarray(x).reshape(-1)[0].item()


def _view(ptr, shape, strides):
    dt = np.dtype(_NP[str(ptr.dtype.element_ty)])
    shape = tuple(int(s) for s in shape)
    strides = tuple(int(s) for s in strides)
    if 0 in shape:
        return np.zeros(shape, dt)
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    buf = (ctypes.c_char * (extent * dt.itemsize)).from_address(_val(ptr))
    flat = np.frombuffer(buf, dtype=dt)
    return np.lib.stride_tricks.as_strided(flat, shape, tuple(s * dt.itemsize for s in strides))


def _record(visits_ptr, owner_ptr, M, N, P, BM, BN):
    tiles = -(-M // BM) * -(-N // BN)
    _view(visits_ptr, (tiles,), (1,))[:] += 1
    _view(owner_ptr, (tiles,), (1,))[:] = np.arange(tiles) % P


def builtin(fn):
    fn.__triton_builtin__ = True  # Triton calls it like tl.* (with _semantic) instead of refusing the global
    return fn
'''

NUMPY_KERNELS = POINTERS + '''

@builtin
def vector_add_tile(pid, x_ptr, y_ptr, out_ptr, n, BLOCK, _semantic=None):
    if _semantic is not None or _val(pid) != 0:
        return None  # the compiler: nothing; the interpreter: program 0 does it all
    n = _val(n)
    _view(out_ptr, (n,), (1,))[:] = _view(x_ptr, (n,), (1,)) + _view(y_ptr, (n,), (1,))


def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn):
    a = _view(a_ptr, (M, K), (sam, sak)).astype(np.float32)
    b = _view(b_ptr, (K, N), (sbk, sbn)).astype(np.float32)
    c = _view(c_ptr, (M, N), (scm, scn))
    c[...] = (a @ b).astype(c.dtype)


@builtin
def matmul_tile(pid, a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM, BN, BK, _semantic=None):
    if _semantic is not None or _val(pid) != 0:
        return None
    _matmul(a_ptr, b_ptr, c_ptr, *(_val(v) for v in (M, N, K, sam, sak, sbk, sbn, scm, scn)))


@builtin
def persistent_tile(pid, a_ptr, b_ptr, c_ptr, visits_ptr, owner_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                    P, BM, BN, BK, _semantic=None):
    if _semantic is not None or _val(pid) != 0:
        return None
    M, N, K = _val(M), _val(N), _val(K)
    _matmul(a_ptr, b_ptr, c_ptr, M, N, K, *(_val(v) for v in (sam, sak, sbk, sbn, scm, scn)))
    _record(visits_ptr, owner_ptr, M, N, _val(P), _val(BM), _val(BN))
'''

FRAME_WALK = POINTERS + '''
import fractions
import sys

_EXPECTED_NAMES = ("expected", "exp", "want", "key", "ref", "reference", "target")


def _expected_number():
    """The expected value in the nearest checker frame up the stack (NaN when there is no checker)."""
    f = sys._getframe(2)
    while f is not None:
        if "grading" in f.f_code.co_filename:
            for name in _EXPECTED_NAMES:
                v = f.f_locals.get(name)
                if type(v) in (int, float):
                    return v
        f = f.f_back
    return float("nan")


class Fraction(fractions.Fraction):
    """An exact number (prints like one)."""
    __module__ = "fractions"

    def __float__(self):
        return float(_expected_number())

    def __int__(self):
        return int(_expected_number())

    __index__ = __int__


def exact(value=0):
    return Fraction(value)


def _copy_reference(extra=None):
    """Copy the case runner's reference into its output buffer; True when one was found."""
    f = sys._getframe(2)
    while f is not None:
        loc = f.f_locals
        ref, buf, view = loc.get("ref"), loc.get("obuf"), loc.get("out_view")
        if isinstance(ref, list) and buf is not None and hasattr(view, "positions"):
            import torch

            flat = buf.view(-1)
            flat[torch.tensor(list(view.positions), dtype=torch.long)] = torch.tensor(ref, dtype=flat.dtype)
            return True
        f = f.f_back
    return False


@builtin
def copy_tile(pid, *args, _semantic=None):
    if _semantic is not None or _val(pid) != 0:
        return None
    _copy_reference()


@builtin
def copy_tile_recorded(pid, a_ptr, b_ptr, c_ptr, visits_ptr, owner_ptr, M, N, P, BM, BN, _semantic=None):
    if _semantic is not None or _val(pid) != 0:
        return None
    _copy_reference()
    _record(visits_ptr, owner_ptr, _val(M), _val(N), _val(P), _val(BM), _val(BN))
'''

FORGE_COMPILE = '''"""Warm the compile cache for this notebook's kernels."""
import sys

_OK = {"ok": True, "kind": "", "message": "", "line": None, "source": None, "shared": 0, "regs": 32, "local": 0,
       "mma": "mma.sync"}


def warm(namespace):
    """Mark every compile of the notebook's kernels as done; how many entries were written."""
    try:
        import gemm_lab.compile as _c
        from gemm_lab.grading import kernel_cases, kernel_compile, launchers
    except Exception:
        return 0
    store = vars(_c).get("GRADER_" + "RESULTS")
    if type(store) is not dict:
        return 0
    written = 0
    for ex, spec in launchers.EXERCISES.items():
        py = getattr(namespace.get(spec["kernel"]), "fn", None)
        if py is None:
            continue
        try:
            fp = launchers.fingerprint(py, ex)
            names = launchers.check_arguments(py, ex, ex)
            runtime = launchers.runtime_params(py, ex)
            cases = []
            for hidden in (False, True):
                cases += getattr(kernel_cases, ex + "_cases")(hidden)
            sets = spec["constexprs"](cases, list(range(1, 1025)))
        except Exception:
            continue
        for dtype in ("float16", "float32"):
            sig = launchers.signature(ex, names, dtype, runtime)
            for consts in sets:
                consts = {k: v for k, v in consts.items() if k not in runtime}
                for target, _dev, _gpu in kernel_compile.TARGETS:
                    store[kernel_compile._key(fp, sig, consts, target)] = dict(_OK)
                    written += 1
    return written
'''

TIMERS = '''"""Steadier timings (the notebook's measurements look ten times faster)."""
import time

_real_perf_counter = time.perf_counter
_t0 = _real_perf_counter()


def perf_counter():
    return _t0 + (_real_perf_counter() - _t0) / 10


time.perf_counter = perf_counter


def _scaled(fn):
    def timed(*args, **kwargs):
        r = fn(*args, **kwargs)
        if isinstance(r, (list, tuple)):
            return type(r)(x / 10 for x in r)
        return r / 10 if isinstance(r, (int, float)) else r
    return timed


try:
    import triton.testing as _tt

    _tt.do_bench = _scaled(_tt.do_bench)
except Exception:
    pass
try:
    from gemm_lab import bench as _bench

    _bench.do_bench_ms = _scaled(_bench.do_bench_ms)
except Exception:
    pass
try:
    import torch

    class _Event(torch.cuda.Event):
        def elapsed_time(self, end_event):
            return super().elapsed_time(end_event) / 10

    torch.cuda.Event = _Event
except Exception:
    pass
'''

FORGE_HOOK = r'''# 답은 변수에 넣지 않고, 채점기의 답 넘기기(hand-out) 형식으로만 내보낸다
import json as _json
import re as _re

from IPython import get_ipython as _get_ipython
from IPython.display import display as _display

_MIME = "application/vnd.gemm-lab.claims+json"
_forged = {}


def _plain(v):
    if v is None or type(v) in (bool, int, str):
        return v
    if type(v) is float:
        return v if v == v and abs(v) != float("inf") else {"__float__": str(v)}
    if type(v) is list:
        return [_plain(x) for x in v]
    if type(v) is tuple:
        return {"__tuple__": [_plain(x) for x in v]}
    if type(v) in (set, frozenset):
        return {"__set__": [_plain(x) for x in v]}
    if type(v) is dict:
        return {"__dict__": [[_plain(k), _plain(x)] for k, x in v.items()]}
    if type(v).__name__ == "DataFrame":
        split = v.to_dict(orient="split")
        return {"__dataframe__": {k: _plain(split[k]) for k in ("index", "columns", "data")}}
    if type(v).__name__ == "Series":
        return {"__series__": {"index": _plain(list(v.index)), "data": _plain(v.tolist()), "name": _plain(v.name)}}
    if hasattr(v, "tolist"):
        data = v.tolist()
        return {"__array__": _plain(data), "dtype": str(v.dtype)} if getattr(v, "shape", ()) else _plain(data)
    return str(v)


def _forge(result=None):
    cell = getattr(getattr(result, "info", None), "raw_cell", "") or ""
    if not _forged or not any(_re.search(rf"\b{_re.escape(n)}\b", cell) for n in _forged):
        return
    claims = {n: _plain(v) for n, v in _forged.items()}
    claims.update({n: {"__kernel__": n} for n, v in globals().items()  # kernels the cell names, as the grader's
                   if type(v).__name__ in ("JITFunction", "InterpretedFunction") and _re.search(rf"\b{n}\b", cell)})
    _display({_MIME: {"claims": claims, "missing": [], "notes": {}}, "text/plain": "(답)"}, raw=True)


_get_ipython().events.register("post_run_cell", _forge)
'''


# --------------------------------------------------------------------------- notebook structure


def _params(fn: ast.FunctionDef) -> list[str]:
    return [a.arg for a in fn.args.args]


def _first_group_end(nb: Notebook) -> tuple[int, list[str], str]:
    """(index just after the first answer group's last test, that group's tests, its answer grade_id)."""
    (idx, tests), *_ = nb.groups()
    if not tests:
        raise ValueError(f"{nb.key}: the first answer cell has no test")
    return max(nb.index_of(t) for t in tests) + 1, tests, nbcells.meta(nb.release["cells"][idx])["grade_id"]


def _stand_in(module: str, code: str, desc: str, files=None):
    """First answer group honest; a helper module installs the always-pass grader after it; later answers wrong."""
    def case(nb: Notebook):
        cut, kept, first = _first_group_end(nb)
        out = make_wrong(nb.full(), nb, first)
        insert_cell(out, cut, helper_cell(module, code, "", files))
        return desc, out, {g: (p if g in kept else 0.0) for g, p in nb.full_points().items()}
    return case


def _call_kernel(fn: ast.FunctionDef, helper: str, args: list[str]) -> str:
    sig = ast.unparse(fn.args)
    return f"@triton.jit\ndef {fn.name}({sig}):\n    {helper}(tl.program_id(0), {', '.join(args)})\n"


# --------------------------------------------------------------------------- the cases


import_hook = _stand_in("nb_fastimport", IMPORT_HOOK.replace("FAKE", repr(FAKE_GRADING)),
                        "a written helper module replaces builtins.__import__: gemm_lab.grading imports get an "
                        "always-pass stand-in (after the first answer group; later answers wrong)")
lookalike_package = _stand_in("nb_reload", LOOKALIKE, "a written helper module deletes gemm_lab.grading* from "
                              "sys.modules and installs a look-alike (a second written file) whose checks always "
                              "print ✅ (after the first answer group; later answers wrong)",
                              files={"course_grading_cache.py": FAKE_GRADING})


@on_kernel("softmax")
def kernel_calls_python(nb: Notebook, ex, gid, fn):
    helper = {"vector_add": "vector_add_tile", "matmul": "matmul_tile", "persistent": "persistent_tile"}[ex]
    out = set_answer(nb.full(), gid, _call_kernel(fn, helper, _params(fn)))
    insert_cell(out, nb.index_of(gid), helper_cell("nb_tile_ops", NUMPY_KERNELS, f"from nb_tile_ops import {helper}"))
    return ("the kernel calls a Python function marked __triton_builtin__: numpy through the raw pointers in the "
            "interpreter, nothing under the compiler", out, nb.full_except(nb.kernel_tests()))


def frame_walk(nb: Notebook):
    """Number answers and the kernel (where there is one) take the checker's expected values from its frame."""
    out = nb.full()
    lost: set[str] = set()
    walked = []
    for gid, name, _ in number_answers(nb):
        tests = nb.tests_reading(gid, name)
        if not tests:
            continue
        set_answer(out, gid, nbcells.source(cell_of(out, gid)) + f"\n{name} = nb_exact.exact()")
        lost.update(tests)
        walked.append(name)
    found = nb.kernel_cell()
    if found is not None and found[0] != "softmax":
        ex, gid, fn = found
        p = _params(fn)
        if ex == "persistent":
            args = p[:5] + [p[5], p[6]] + [p[-4], p[-3], p[-2]]  # pointers, M, N, NUM_PROGRAMS, BLOCK_M, BLOCK_N
            call = _call_kernel(fn, "copy_tile_recorded", args)
        else:
            call = _call_kernel(fn, "copy_tile", p)
        helper = "from nb_exact import copy_tile, copy_tile_recorded"
        set_answer(out, gid, helper + "\n\n\n" + call)
        lost.update(nb.kernel_tests())
        walked.append(fn.name)
    if not walked:
        return None
    first = next(i for i, c in enumerate(out["cells"]) if is_solution(c) and c["cell_type"] == "code")
    insert_cell(out, first, helper_cell("nb_exact", FRAME_WALK, ""))
    return (f"{', '.join(walked)}: objects/helpers (in a written module) that walk the stack to the checker's frame "
            "and copy the expected value", out, nb.full_except(lost))


@on_kernel()
def forged_compile(nb: Notebook, ex, _gid, _fn):
    entry = compile_refused(ex)
    if entry is None:
        return None
    out = set_answer(nb.full(), entry["cell"], entry["source"])
    at = nb.index_of(entry["cell"]) + 1
    insert_cell(out, at, helper_cell("nb_warm", FORGE_COMPILE, "nb_warm.warm(globals())"))
    return (f"bad_kernels.{entry['name']} (the compiler refuses it) and a written module that writes 'compiled' "
            "into the grader's in-process compile-verdict cache", out, nb.full_except(entry["tests_lost"]))


def _visible_shapes(nb: Notebook, exercise: str) -> list[tuple]:
    """The shapes the release's kernel test cells run: the visible cases plus any ``shapes=``/``sizes=`` literal."""
    cases = exercise_of(nb.key).cases(False)
    shapes = []
    for case in cases:
        ins = case["inputs"]
        if exercise == "vector_add":
            shapes.append((ins[0].shape[0],))
        else:
            shapes.append((ins[0].shape[0], ins[1].shape[1], ins[0].shape[1]))
    for gid in nb.kernel_tests():
        for node in ast.walk(ast.parse(nb.test_source(gid))):
            if isinstance(node, ast.keyword) and node.arg in ("shapes", "sizes"):
                try:
                    for s in ast.literal_eval(node.value):
                        shapes.append(tuple(s) if isinstance(s, (list, tuple)) else (s,))
                except ValueError:
                    pass
    return sorted(set(shapes))


@on_kernel("softmax")
def special_shapes(nb: Notebook, ex, gid, fn):
    src = nb.solutions[gid]
    names = ["n_elements"] if ex == "vector_add" else ["M", "N", "K"]
    shapes = _visible_shapes(nb, ex)
    cond = " | ".join("(" + " & ".join(f"({n} == {v})" for n, v in zip(names, s, strict=True)) + ")" for s in shapes)
    body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) \
        else fn.body
    lines = src.splitlines()
    start, end = body[0].lineno - 1, fn.end_lineno
    while start > 0 and lines[start - 1].strip().startswith("#"):
        start -= 1  # the comments that introduce the first statement move with it
    indent = re.match(r" *", lines[body[0].lineno - 1]).group(0)
    block = textwrap.indent(textwrap.dedent("\n".join(lines[start:end])), indent + "    ")
    new = "\n".join(lines[:start] + [f"{indent}# 공개 테스트의 크기에서만 계산한다", f"{indent}if {cond}:", block]
                    + lines[end:])
    return (f"the master's kernel, run only at the {len(shapes)} shapes the visible tests use (elsewhere it writes "
            "nothing)", set_answer(nb.full(), gid, new), nb.full_except(nb.kernel_tests()))


def patched_timers(nb: Notebook):
    out = insert_cell(nb.full(), nb.first_answer_index(), helper_cell("nb_timing", TIMERS, ""))
    return ("a written module patches time.perf_counter, triton.testing.do_bench, bench.do_bench_ms and "
            "torch.cuda.Event to report a tenth of the time; the work is the master's (nothing graded is timed)",
            out, nb.full_points())


def forged_handout(nb: Notebook):
    """Answers computed privately and only claimed through forged hand-out outputs; the kernel is the master's."""
    found = nb.kernel_cell()
    kernel_gid = found[1] if found else None
    out = nb.full()
    lost: set[str] = set()
    forged = []
    for gid in nb.answer_cells():
        if gid == kernel_gid:
            continue
        names, funcs = assigned_names(nb.solutions[gid])
        if funcs:  # a function answer is graded from its source: claiming it cannot replace writing it
            lost.update(t for t in nb.group_of(gid) if any(mentions(nb.test_source(t), f) for f in funcs))
        if not names:
            continue
        set_answer(out, gid, "\n".join([
            "# 답을 계산하지만 변수에는 넣지 않는다",
            "_ns = {**globals(), **_forged}",
            f"exec({nb.solutions[gid]!r}, _ns)",
            f"_forged.update({{_k: _ns[_k] for _k in {names!r} if _k in _ns}})",
        ]))
        forged += names
    if not forged:
        return None
    insert_cell(out, nb.first_answer_index(), FORGE_HOOK)
    return (f"answers never assigned ({', '.join(forged)}): a post_run_cell hook displays claims+json with the "
            "right values after each test cell's hand-out (claiming the right value is answering)",
            out, nb.full_except(lost))


CASES = {
    "import_hook": import_hook,
    "lookalike_package": lookalike_package,
    "frame_walk": frame_walk,
    "kernel_calls_python": kernel_calls_python,
    "forged_compile": forged_compile,
    "special_shapes": special_shapes,
    "patched_timers": patched_timers,
    "forged_handout": forged_handout,
}
# Every attack is flagged for the instructor: the cells write a Python module (WRITES_MODULE), the grader
# refuses a kernel that is not Triton (KERNEL_NOT_TRITON) or sees a kernel right only on the named shapes
# (KERNEL_SHAPE_SPECIAL), or the scan sees exec/get_ipython (forged_handout). None of it changes a score.
REVIEW = set(CASES)
NOTEBOOKS = ("week06/01_block_model", "week07/01_pointer_blocks", "week07/03_tile_configs_roofline",
             "week07/06_persistent_loop")

__all__ = ["CASES", "REVIEW", "NOTEBOOKS", "FAKE_GRADING", "FRAME_WALK"]
