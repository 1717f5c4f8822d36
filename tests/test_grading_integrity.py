"""Tamper resistance of gemm_lab.grading: fresh(), the built-in guard, hostile launchers, scan_source()."""

import builtins
import sys

import numpy as np
import pytest

import gemm_lab.grading as grading
from gemm_lab.grading import fresh
from gemm_lab.grading.feedback import REAL_ASSERTION_ERROR
from gemm_lab.grading.integrity import FLAG_TEXT, scan_notebook, scan_source

ASSERTION_ERROR = AssertionError


@pytest.fixture(autouse=True)
def _restore_grading():
    """Every test leaves a freshly loaded, untampered grader behind."""
    saved_builtins = dict(vars(builtins))
    yield
    for k in list(vars(builtins)):
        if k not in saved_builtins:
            delattr(builtins, k)
    for k, v in saved_builtins.items():
        if getattr(builtins, k, None) is not v:
            setattr(builtins, k, v)
    sys.settrace(None)
    fresh()


def test_grader_modules_are_read_only():
    # the package as an import finds it now (an earlier fresh() in this worker may have replaced it)
    grading = sys.modules["gemm_lab.grading"]
    for target, name in [(grading, "check_value"), (grading, "fresh"), (grading, "check_matmul"),
                         (grading.answers_values, "_compare"), (grading.answers, "check_value"),
                         (grading.answers_tables, "check_table"), (grading.answers_choices, "check_pairs"),
                         (grading.answers_convert, "_plain"), (grading.kernels, "TOLERANCES"),
                         (grading.integrity, "fresh"), (grading._trusted, "guard")]:
        with pytest.raises(AttributeError, match="read-only"):
            setattr(target, name, lambda *a, **k: True)
        with pytest.raises(AttributeError):
            delattr(target, name)
    with pytest.raises(AttributeError):
        type(grading).fresh = property(lambda self: None)
    with pytest.raises(AttributeError):
        grading.__class__ = type(sys)
    # a write into the package's __dict__ does not change what an import returns
    saved = grading.__dict__["fresh"]
    try:
        grading.__dict__["fresh"] = lambda: grading
        from gemm_lab.grading import fresh as imported

        assert imported is saved
    finally:
        grading.__dict__["fresh"] = saved


def test_sample_tamper_hand_in_fails_in_its_own_cell():
    """autograder/make_samples.py's TAMPER_CHECKER: its first setattr raises, the checks stay intact."""
    code = (
        "import gemm_lab.grading as _g\n"
        "_yes = lambda *a, **k: True\n"
        "for _name in [n for n in dir(_g) if n.startswith('check_')]:\n"
        "    setattr(_g, _name, _yes)\n"
        "_g.fresh = lambda: _g\n"
    )
    with pytest.raises(AttributeError, match="read-only"):
        exec(code, {})
    from gemm_lab.grading import fresh as test_cell_fresh

    with pytest.raises(ASSERTION_ERROR, match="grid"):
        test_cell_fresh().check_value("grid", 4, 20)


def test_fresh_replaces_helpers_patched_through_the_module_dict():
    # module.__dict__ writes bypass the seal; the old module is fooled, a fresh copy is not
    saved = grading.answers_values.__dict__["_compare"]
    try:
        grading.answers_values.__dict__["_compare"] = lambda *a, **k: None
        grading.answers_values.check_value("unique_tiles", 90, 54)  # the tampered old module "passes"
        g = fresh()
        assert g is sys.modules["gemm_lab.grading"] and g is not grading
        with pytest.raises(ASSERTION_ERROR, match="unique_tiles"):
            g.check_value("unique_tiles", 90, 54)
        import gemm_lab

        assert gemm_lab.grading is g
    finally:
        grading.answers_values.__dict__["_compare"] = saved


def test_numpy_torch_comparisons_are_not_used():
    torch = pytest.importorskip("torch")
    import hostile_kernels as hostile  # tests/ is on sys.path (pytest prepend import mode)
    saved = np.allclose, np.isclose, torch.allclose, torch.isclose, torch.equal
    try:
        np.allclose = np.isclose = torch.allclose = torch.isclose = torch.equal = lambda *a, **k: True
        g = fresh()
        with pytest.raises(ASSERTION_ERROR):
            g.check_value("t", np.float64(2.5), 2.0, rel=0.01)
        with pytest.raises(ASSERTION_ERROR, match="결과가 전혀 쓰이지 않았습니다"):
            g.check_vector_add(hostile.writes_nothing)
    finally:
        np.allclose, np.isclose, torch.allclose, torch.isclose, torch.equal = saved


def test_rebound_builtins_are_caught():
    g = fresh()  # earlier tests patched the module imported at the top
    real_abs = builtins.abs
    builtins.abs = lambda x: 0
    try:
        with pytest.raises(REAL_ASSERTION_ERROR, match="채점 환경이 바뀌었습니다.*abs"):
            g.check_value("grid", 4, 20)
        with pytest.raises(REAL_ASSERTION_ERROR, match="abs"):
            fresh()
    finally:
        builtins.abs = real_abs
    real_isinstance = builtins.isinstance
    caught = None
    builtins.isinstance = lambda *a: True  # pytest itself needs isinstance: restore before asserting
    try:
        g.check_table("t", None, None)
    except BaseException as exc:  # noqa: BLE001
        caught = exc
    finally:
        builtins.isinstance = real_isinstance
    assert type(caught) is REAL_ASSERTION_ERROR and "isinstance" in str(caught)


def test_rebinding_assertion_error_does_not_swallow_failures():
    class Harmless(Exception):
        pass

    g = fresh()
    builtins.AssertionError = Harmless
    try:
        with pytest.raises(REAL_ASSERTION_ERROR, match="AssertionError"):
            g.check_value("grid", 20, 20)
    finally:
        builtins.AssertionError = REAL_ASSERTION_ERROR
    # the genuine class is what the checks raise, whatever builtins says
    assert g.feedback.REAL_ASSERTION_ERROR is REAL_ASSERTION_ERROR
    with pytest.raises(REAL_ASSERTION_ERROR):
        g.check_value("grid", 4, 20)


def test_trace_function_and_notebook_import_hook_are_refused():
    sys.settrace(lambda *a: None)
    try:
        with pytest.raises(REAL_ASSERTION_ERROR, match="settrace"):
            fresh()
    finally:
        sys.settrace(None)

    class Finder:
        def find_spec(self, *a, **k):
            return None

    Finder.__module__ = "__main__"
    sys.meta_path.insert(0, Finder())
    try:
        with pytest.raises(REAL_ASSERTION_ERROR, match="import 훅"):
            fresh()
    finally:
        sys.meta_path.pop(0)


def test_fresh_ignores_a_fake_module_in_sys_modules():
    import types

    fake = types.ModuleType("gemm_lab.grading.answers_values")
    fake.check_value = lambda *a, **k: True
    sys.modules["gemm_lab.grading.answers_values"] = fake
    with pytest.raises(ASSERTION_ERROR):
        fresh().check_value("grid", 4, 20)


def test_a_notebook_launcher_is_never_run_by_the_kernel_checks():
    """The checks launch the student's @triton.jit kernel with their own launcher: a Python function that
    would patch the grader (the old hostile launcher) is refused before it runs."""
    pytest.importorskip("torch")
    g = fresh()
    ran = []

    def launch(x, y, out):
        ran.append(1)
        g.kernels.__dict__["_same_list"] = lambda a, b: True
        out.copy_(x + y)

    class FakeKernel:  # `kernel[grid](...)` that calls torch: not a JITFunction
        def __getitem__(self, grid):
            return launch

    for fake in (launch, FakeKernel()):
        with pytest.raises(REAL_ASSERTION_ERROR, match="@triton.jit"):
            g.check_vector_add(fake)
    assert ran == []


def test_hostile_kernels_are_refused_and_change_nothing():
    pytest.importorskip("torch")
    import hostile_kernels as hostile  # tests/ is on sys.path (pytest prepend import mode)
    real_len = len
    g = fresh()
    try:
        for kernel in (hostile.copies_x_and_rebinds_len, hostile.exits):
            with pytest.raises(REAL_ASSERTION_ERROR, match="vector_add"):
                g.check_vector_add(kernel)
            assert builtins.len is real_len
    finally:
        builtins.len = real_len


# --------------------------------------------------------------------------- scan_source


def codes(src: str) -> set:
    return {f.split(" ", 1)[0] for f in scan_source(src)}


def test_scan_clean_notebook_code():
    src = """
import torch
import triton
import triton.language as tl
from gemm_lab import runtime
from gemm_lab.grading import check_value, fresh
from gemm_lab.calc import tiling

grid = tiling.cdiv(500, 128) * tiling.cdiv(600, 128)
cfg = {"BLOCK_M": 128}
cfg["BLOCK_M"] = 64
class Result: pass
r = Result(); r.value = grid
with open("results/my.csv", "w") as f:
    f.write("x")
def launch(a, b, c):
    c.copy_(a @ b)
"""
    assert scan_source(src) == []


@pytest.mark.parametrize(
    "src, code",
    [
        ("import numpy as np\nnp.allclose = lambda *a, **k: True", "MODULE_ATTR"),
        ("import torch\ntorch.Tensor.allclose = lambda *a: True", "MODULE_ATTR"),
        ("from gemm_lab import grading\ngrading.check_value = print", "REDEFINE_CHECK"),
        ("import gemm_lab.grading as g\ng.answers._within = lambda *a: True", "MODULE_ATTR"),
        ("setattr(np, 'allclose', None)", "MODULE_ATTR"),
        ("import builtins", "IMPORT_BUILTINS"),
        ("from builtins import abs", "IMPORT_BUILTINS"),
        ("__builtins__['abs'] = max", "DUNDER_BUILTINS"),
        ("import sys\nsys.modules['gemm_lab.grading'] = None", "SYS_HOOK"),
        ("import sys\nsys.meta_path.insert(0, object())", "SYS_HOOK"),
        ("import sys\nsys.settrace(print)", "SYS_HOOK"),
        ("import sys\nsys.setprofile(print)", "SYS_HOOK"),
        ("import sys\nf = sys._getframe(1).f_locals", "FRAME_ACCESS"),
        ("def check_value(*a, **k):\n    pass", "REDEFINE_CHECK"),
        ("check_matmul = lambda *a: None", "REDEFINE_CHECK"),
        ("def assert_close(*a):\n    pass", "REDEFINE_CHECK"),
        ("from mylib import ok as check_table", "REDEFINE_CHECK"),
        ("AssertionError = Exception", "ASSERTION_ERROR"),
        ("class AssertionError(Exception): pass", "ASSERTION_ERROR"),
        ("import os\nos._exit(0)", "EXIT"),
        ("import sys\nsys.exit()", "EXIT"),
        ("exit()", "EXIT"),
        ("raise SystemExit", "EXIT"),
        ("import ctypes", "CTYPES"),
        ("from ctypes import pythonapi", "CTYPES"),
        ("import gc\ngc.get_referents(object)", "CTYPES"),
        ("import socket", "NETWORK"),
        ("import subprocess", "NETWORK"),
        ("import os\nos.system('ls')", "NETWORK"),
        ("open('/etc/passwd')", "OPEN_OUTSIDE"),
        ("open('../release/x.ipynb', 'w')", "OPEN_OUTSIDE"),
        ("open(f'/home/{u}/x')", "OPEN_OUTSIDE"),
        ("from pathlib import Path\nPath('/autograder/x').write_text('1')", "OPEN_OUTSIDE"),
        ("exec('import os')", "DYNAMIC_CODE"),
        ("m = __import__('os')", "DYNAMIC_CODE"),
        ("import importlib\nimportlib.reload(np)", "DYNAMIC_CODE"),
        ("globals()['check_value'] = print", "GLOBALS_WRITE"),
        ("import numpy as np\nnp.__dict__['allclose'] = 1", "GLOBALS_WRITE"),
        ("f.__globals__['x'] = 1", "FRAME_ACCESS"),
        ("!rm -rf /", "SHELL"),
        ("get_ipython().run_cell('x')", "SHELL"),
        ("def f(:\n", "SYNTAX"),
        ("from torch.overrides import TorchFunctionMode", "TORCH_HOOK"),
        ("import torch\nlib = torch.library.Library('aten', 'IMPL')", "TORCH_HOOK"),
        ("class T(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, *a):\n        pass", "TORCH_HOOK"),
        ("from torch.utils._python_dispatch import TorchDispatchMode", "TORCH_HOOK"),
    ],
)
def test_scan_flags_tampering(src, code):
    found = scan_source(src)
    assert code in codes(src), found
    assert all(f.split(" ", 1)[0] in FLAG_TEXT for f in found)
    item = next(f for f in found if f.startswith(code))
    assert "(줄 " in item and FLAG_TEXT[code] in item


def test_scan_reports_line_numbers_and_rejects_non_text():
    found = scan_source("x = 1\nimport ctypes\n")
    assert found == ["CTYPES (줄 2): 메모리를 직접 건드리는 모듈(ctypes 등)을 씁니다 — import ctypes"]
    with pytest.raises(TypeError):
        scan_source(b"import os")


def test_scan_allows_ordinary_settings():
    src = """
import os
import torch
import matplotlib.pyplot as plt
import pandas as pd
os.environ["TRITON_INTERPRET"] = "1"
torch.backends.cuda.matmul.allow_tf32 = False
plt.rcParams["figure.figsize"] = (6, 4)
pd.options.display.max_rows = 20
"""
    assert scan_source(src) == []


def test_torch_function_mode_cannot_make_tensors_lie():
    torch = pytest.importorskip("torch")
    import hostile_kernels as hostile  # tests/ is on sys.path (pytest prepend import mode)
    from torch.overrides import TorchFunctionMode

    class Liar(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", "") == "tolist":
                return 20
            return func(*args, **(kwargs or {}))

    g = fresh()
    with Liar():
        with pytest.raises(REAL_ASSERTION_ERROR, match="TorchFunctionMode"):
            g.check_value("grid", torch.tensor(4), 20)
        with pytest.raises(REAL_ASSERTION_ERROR, match="TorchFunctionMode"):
            g.check_vector_add(hostile.writes_nothing)
    try:
        Liar().__enter__()  # a student cell that left a mode on: every later tensor read would go through it
        with pytest.raises(REAL_ASSERTION_ERROR, match="TorchFunctionMode"):
            g.check_vector_add(hostile.writes_nothing)
    finally:
        while torch._C._len_torch_function_stack():
            torch._C._pop_torch_function_stack()


def test_scan_notebook_skips_locked_cells(tmp_path):
    import json

    def cell(src, **nbgrader):
        meta = {"nbgrader": {"schema_version": 3, **nbgrader}} if nbgrader else {}
        return {"cell_type": "code", "metadata": meta, "source": src, "outputs": [], "execution_count": None}

    nb = {"cells": [
        cell("import builtins\n", grade=False, grade_id="setup", locked=True, solution=False),     # ours
        cell("grid = 20\nimport ctypes\n", grade=False, grade_id="ex1_answer", locked=False, solution=True),
        cell(["g = fresh()\n", "g.check_value('grid', grid, 20)\n"], grade=True, grade_id="ex1_test",
             locked=True, solution=False, points=1),
        cell("import sys\nsys.settrace(print)\n"),                                                 # added cell
        {"cell_type": "markdown", "metadata": {}, "source": "import ctypes"},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "hand_in.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    found = scan_notebook(str(path))
    assert found == [
        "셀 1 (ex1_answer): CTYPES (줄 2): 메모리를 직접 건드리는 모듈(ctypes 등)을 씁니다 — import ctypes",
        "셀 3: SYS_HOOK (줄 2): sys의 import/추적 장치를 건드립니다 — sys.settrace",
    ]
    assert scan_notebook(nb) == found
