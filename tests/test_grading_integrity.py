"""The kernel checks launch only genuine kernels; hostile kernels are refused from their source; the\ninstructor's review scan (scan_source)."""


import pytest

from gemm_lab.grading import fresh
from gemm_lab.grading.audit.scan import FLAG_TEXT, scan_source

ASSERTION_ERROR = AssertionError


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
        with pytest.raises(AssertionError, match="@triton.jit"):
            g.check_vector_add(fake)
    assert ran == []


def test_hostile_kernels_are_refused_from_their_source():
    """What tests/hostile_kernels.py's kernels do beside their tl calls (rebinding len, exiting) is refused
    by the grader before any of it runs: a kernel may call only Triton."""
    import inspect

    import hostile_kernels as hostile  # tests/ is on sys.path (pytest prepend import mode)

    from gemm_lab.grading.judge import gate

    cells = ["import builtins\nimport os\nimport triton\nimport triton.language as tl\n"]
    for kernel in (hostile.copies_x_and_rebinds_len, hostile.exits):
        src = inspect.getsource(kernel.fn)
        with pytest.raises(gate.Refused, match="Lambda|SystemExit"):
            gate.module_for(cells + [src], kernel.fn.__name__)


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
        ("import gemm_lab.grading as g\ng.answers._within = lambda *a: True", "MODULE_ATTR"),
        ("setattr(np, 'allclose', None)", "MODULE_ATTR"),
        ("import sys\nsys.modules['gemm_lab.grading'] = None", "MODULE_ATTR"),
        ("import numpy as np\nnp.__dict__['allclose'] = 1", "MODULE_ATTR"),
        ("import builtins\nbuiltins.abs = max", "MODULE_ATTR"),
        ("import signal\nsignal.alarm(1)", "EXIT"),
        ("import cffi", "CTYPES"),
        ("import runpy", "DYNAMIC_CODE"),
        ("import importlib.util\nspec = importlib.util.spec_from_file_location('m', 'm.txt')", "DYNAMIC_CODE"),
        ("with open('helper.py', 'w') as f:\n    f.write('x = 1')", "WRITES_MODULE"),
        ("import os\nos._exit(0)", "EXIT"),
        ("import sys\nsys.exit()", "EXIT"),
        ("exit()", "EXIT"),
        ("raise SystemExit", "EXIT"),
        ("import ctypes", "CTYPES"),
        ("from ctypes import pythonapi", "CTYPES"),
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
    ],
)
def test_scan_flags_tampering(src, code):
    found = scan_source(src)
    assert code in codes(src), found
    assert all(f.split(" ", 1)[0] in FLAG_TEXT for f in found)
    item = next(f for f in found if f.startswith(code))
    assert "(줄 " in item and FLAG_TEXT[code] in item


@pytest.mark.parametrize("src", [
    # what a cell does to its own process: the checks that decide a grade never run there
    "import builtins",
    "__builtins__['abs'] = max",
    "import sys\nsys.settrace(print)\nsys.meta_path.insert(0, object())",
    "import sys\nf = sys._getframe(1).f_locals",
    "globals()['check_value'] = print",
    "from torch.overrides import TorchFunctionMode",
    "import threading",
])
def test_in_process_tampering_is_not_a_finding(src):
    assert scan_source(src) == []


@pytest.mark.parametrize("src", [
    "def check_shapes(x):\n    assert x.shape == (2, 2)",  # a helper of the student's own named check_*
    "def assert_close(a, b):\n    return abs(a - b) < 1e-6",
    "from mylib import ok as check_table",
    "!pip list\n%timeit sum(range(10))",  # shell lines and magics run in the sandbox like any code
    "import gc\ngc.collect()",
    "def f(:\n",  # code that does not parse is the student's mistake, not tampering
    "import triton\nimport triton.language as tlx\nBLOCK = 16\n@triton.autotune(configs=[triton.Config({}, "
    "num_warps=4)], key=['M'])\n@triton.jit\ndef my_kernel(a_ptr, M, B: tlx.constexpr = BLOCK):\n    pass\n"
    "student_matmul_kernel = my_kernel",
])
def test_honest_unusual_code_is_not_flagged(src):
    assert scan_source(src) == []


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


def test_the_review_scans_only_the_cells_a_student_wrote():
    from autograder.grade.review import review_notebook

    def cell(src, **nbgrader):
        meta = {"nbgrader": {"schema_version": 3, **nbgrader}} if nbgrader else {}
        return {"cell_type": "code", "metadata": meta, "source": src, "outputs": [], "execution_count": None}

    nb = {"cells": [
        cell("import ctypes\n", grade=False, grade_id="setup", locked=True, solution=False),       # ours
        cell("grid = 20\nimport ctypes\n", grade=False, grade_id="ex1_answer", locked=False, solution=True),
        cell(["g = fresh()\n", "g.check_value('grid', grid, 20)\n"], grade=True, grade_id="ex1_test",
             locked=True, solution=False, points=1),
        cell("import sys\nsys.exit()\n"),                                                        # added cell
        {"cell_type": "markdown", "metadata": {}, "source": "import ctypes"},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    assert review_notebook(nb) == [
        "셀 1 [ex1_answer]: CTYPES (줄 2): 메모리를 직접 건드리는 모듈(ctypes 등)을 씁니다 — import ctypes",
        "셀 3 [-]: EXIT (줄 2): 프로세스/커널을 종료합니다 — sys.exit()",
    ]
