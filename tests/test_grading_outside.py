"""Grades computed outside the student's process: the hand-out (claims as data), the grader's replay of a
test cell, kernels and functions taken from the notebook's source and run in a fresh worker."""

import math

import numpy as np
import pytest

from gemm_lab.grading import codec
from gemm_lab.grading.judge import gate, handout, remote, replay

ADD_KERNEL = '''
@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)
'''
IMPORTS = "import torch\nimport triton\nimport triton.language as tl\n"
VISIBLE_ADD = ('"""vector add on visible sizes."""\nfrom gemm_lab.grading import fresh\ng = fresh()\n'
               'g.check_vector_add(add_kernel)\n')


# --------------------------------------------------------------------------- hand-out: claims as data


class _Evil:
    def __str__(self):
        raise RuntimeError("no")

    def __eq__(self, other):
        return True


def _round_trip(value):
    import json

    return codec.decode(json.loads(json.dumps(codec.encode(value))))


def test_plain_values_survive_the_hand_out():
    for v in (0, -3, 2 ** 70, 1.5, "메모리", True, None, [1, 2.5, "x"], (1, 2), {3, 4}, {"a": 1, 2: [3]}):
        assert _round_trip(v) == v and type(_round_trip(v)) is type(v)
    assert math.isnan(_round_trip(float("nan")))
    assert _round_trip(float("-inf")) == float("-inf")


def test_arrays_tables_and_scalars_become_data():
    import pandas as pd
    import torch

    a = _round_trip(np.arange(6).reshape(2, 3))
    assert isinstance(a, np.ndarray) and a.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert _round_trip(torch.tensor([[1.5, 2.0]])).tolist() == [[1.5, 2.0]]
    assert _round_trip(np.float32(2.5)) == 2.5 and _round_trip(torch.tensor(7)) == 7
    df = pd.DataFrame({"grid": [20, 48]}, index=["c1", "c2"])
    back = _round_trip(df)
    assert back.equals(df)
    assert _round_trip(pd.Series([1, 2], name="s")).tolist() == [1, 2]


def test_objects_are_named_not_run():
    import triton

    @triton.jit
    def k(x_ptr):
        pass

    def f(x):
        return x

    assert codec.encode(k, name="k") == {"__kernel__": "k"}
    assert codec.encode(f, name="f") == {"__function__": "f"}
    odd = _round_trip(_Evil())
    assert isinstance(odd, codec.Unsupported) and odd.type_name == "_Evil" and odd != 1


def test_oversized_claims_are_refused_as_data():
    out = []
    import IPython.display

    real = IPython.display.display
    IPython.display.display = lambda obj, raw=False: out.append(obj)
    try:
        handout.emit({"big": list(range(codec.MAX_ITEMS + 1)), "ok": 3}, ["big", "ok", "gone"])
    finally:
        IPython.display.display = real
    payload = out[0][handout.MIME]
    assert payload["claims"] == {"ok": 3} and payload["missing"] == ["gone"] and "big" in payload["notes"]
    assert handout.claims_from_outputs([{"output_type": "display_data", "data": out[0]}]) == payload


def test_read_names_are_what_a_test_cell_takes_from_the_notebook():
    src = ('from gemm_lab.grading import fresh\ng = fresh()\n_tg = g.calc.tile_grid(1, 2, 3, 4, 5, 6)\n'
           'def _case(name, out, a, b, expected):\n    got = is_correct(out, a, b)\n'
           '    g.check_value(name, got, expected)\n'
           'g.check_value("grid", grid, _tg.grid)\nfor x in [1]:\n    print(len(x_list))\n')
    assert handout.read_names(src) == ["grid", "is_correct", "x_list"]
    assert handout.read_names("def (") == []


# --------------------------------------------------------------------------- the gate: a kernel may call only Triton


def test_the_kernel_module_holds_only_the_kernel_and_what_it_calls():
    cells = [IMPORTS + "import numpy as np\nBLOCK = 128\nSCALE: tl.constexpr = tl.constexpr(2)\n",
             "@triton.jit\ndef helper(x):\n    return x * SCALE\n",
             ADD_KERNEL.replace("x + y", "helper(x) + y"),
             "secret = 42\nprint('student code that must not run')\n"]
    text = gate.module_for(cells, "add_kernel")
    assert "def helper" in text and "SCALE" in text and "secret" not in text and "print(" not in text
    assert "import numpy" not in text and "BLOCK = 128" not in text


def test_later_definitions_win_and_a_rebinding_removes_the_kernel():
    cells = [IMPORTS, ADD_KERNEL, ADD_KERNEL.replace("x + y", "x - y")]
    assert "x - y" in gate.module_for(cells, "add_kernel")
    with pytest.raises(gate.Refused, match="@triton.jit"):
        gate.module_for(cells + ["def add_kernel(*a):\n    pass\n"], "add_kernel")
    with pytest.raises(gate.Refused, match="찾지 못했습니다"):
        gate.module_for(cells + ["add_kernel = None\n"], "add_kernel")


@pytest.mark.parametrize("body, named", [
    ("    np.matmul(x_ptr, y_ptr)\n", "np"),
    ("    compute(x_ptr)\n", "compute"),
    ("    builtins.len = 0\n", "builtins"),
    ("    x = tl.core.builtins.eval('1')\n", "builtins"),
    ("    x = x_ptr.handle\n", ".handle"),
    ("    x = x_ptr.__class__\n", "__class__"),
    ("    f = lambda v: v\n", "Lambda"),
    ("    x = getattr(tl, 'load')\n", "getattr"),
    ("    x = [i for i in range(3)]\n", "ListComp"),
    ("    p = tl.make_block_ptr(x_ptr, (4,), (1,), (0,), (4,), (0,))\n", "3.9"),
    ("    p = tl.advance(x_ptr, (4,))\n", "3.9"),
])
def test_anything_but_triton_inside_a_kernel_is_refused(body, named):
    cells = [IMPORTS + "import numpy as np\nimport builtins\ndef compute(x):\n    return x\n",
             "@triton.jit\ndef k(x_ptr, y_ptr):\n" + body]
    with pytest.raises(gate.Refused) as info:
        gate.module_for(cells, "k")
    assert named in str(info.value)


def test_decorators_and_defaults_must_be_plain():
    base = [IMPORTS + "def deco(f):\n    return f\n"]
    with pytest.raises(gate.Refused, match="데코레이터"):
        gate.module_for(base + ["@deco\n@triton.jit\ndef k(x):\n    pass\n"], "k")
    with pytest.raises(gate.Refused, match="기본값"):
        gate.module_for(base + ["@triton.jit\ndef k(x, B=deco(1)):\n    pass\n"], "k")
    with pytest.raises(gate.Refused, match="데코레이터"):
        gate.module_for(base + ["@triton.jit(repr=deco)\ndef k(x):\n    pass\n"], "k")


def test_function_module_keeps_defs_imports_and_literals_only():
    cells = ["import torch\nTOL = 0.01\nx = torch.randn(3)\n", "def f(a):\n    return a * TOL\n",
             "open('/etc/passwd')\n"]
    text = gate.function_module(cells, "f")
    assert "TOL = 0.01" in text and "def f" in text and "randn" not in text and "open(" not in text


# --------------------------------------------------------------------------- replay: the verdict is the grader's


def test_answers_are_judged_in_the_grader_from_claims():
    src = ('from gemm_lab.grading import fresh\ng = fresh()\n'
           'g.check_value("grid", grid, g.calc.tile_grid(500, 600, 300, 128, 128, 64).grid)\n')
    outs, v = replay.grade_cell(src, {"claims": {"grid": 20}}, [])
    assert v["status"] == "pass" and outs[0]["text"].startswith("✅")
    assert v["checks"][0]["claimed"] == 20 and v["checks"][0]["expected"] == 20
    outs, v = replay.grade_cell(src, {"claims": {"grid": 19}}, [])
    assert v["status"] == "fail" and outs[-1]["output_type"] == "error" and v["checks"][0]["ok"] is False
    outs, v = replay.grade_cell(src, {"claims": {}, "missing": ["grid"]}, [])
    assert v["status"] == "fail" and "`grid`" in v["message"]
    outs, v = replay.grade_cell(src, None, [], handout_error="ModuleNotFoundError: gemm_lab")
    assert v["status"] == "fail" and "ModuleNotFoundError" in v["message"]
    outs, v = replay.grade_cell(src, {"claims": {"grid": {"__unsupported__": "Evil", "text": ""}}}, [])
    assert v["status"] == "fail"


def test_a_grader_import_error_is_the_graders_not_the_students():
    _outs, v = replay.grade_cell("import gemm_lab_missing_module\n", {"claims": {}}, [])
    assert v["status"] == "grader_error"


@pytest.fixture()
def interp(monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", "off")
    remote.set_runner(remote.SubprocessRunner(timeout=240))
    yield
    remote.set_runner(remote.SubprocessRunner())  # closes the test's fork server


def test_a_kernel_is_graded_from_its_source_in_a_worker(interp):
    claim = {"claims": {"add_kernel": {"__kernel__": "add_kernel"}}}
    outs, v = replay.grade_cell(VISIBLE_ADD, claim, [IMPORTS, ADD_KERNEL], run_seed=7)
    assert v["status"] == "pass", v["message"]
    cases = v["checks"][0]["kernel"]["cases"]
    assert len(cases) == 3 and all(c["ok"] for c in cases) and cases[-1]["drawn"]  # + one size drawn per run


def test_a_kernel_right_only_on_the_visible_sizes_fails_the_visible_cell(interp):
    # the mask written for the visible sizes (1000 and 1): right there, wrong past them
    special = ADD_KERNEL.replace("mask = offsets < n_elements", "mask = offsets < tl.minimum(n_elements, 1000)")
    claim = {"claims": {"add_kernel": {"__kernel__": "add_kernel"}}}
    _outs, v = replay.grade_cell(VISIBLE_ADD, claim, [IMPORTS, special], run_seed=11)
    assert v["status"] == "fail"


def test_a_kernel_calling_python_scores_zero_with_the_name(interp):
    cells = [IMPORTS + "import numpy as np\ndef cheat(*a):\n    return 0\ncheat.__triton_builtin__ = True\n",
             ADD_KERNEL.replace("x + y", "cheat(x, y)")]
    claim = {"claims": {"add_kernel": {"__kernel__": "add_kernel"}}}
    _outs, v = replay.grade_cell(VISIBLE_ADD, claim, cells)
    assert v["status"] == "fail" and "cheat" in v["message"]
    assert v["checks"][0]["kernel"]["refused"]


FP16_CELL = '''from gemm_lab.grading import fresh
import torch
g = fresh()
def _case(name, out, a, b, expected):
    got = is_correct(out, a, b)
    g.check_value(name, bool(got) if isinstance(got, bool) else got, expected)
_g = torch.Generator().manual_seed(3)
_a = torch.randn((8, 5), generator=_g).half()
_b = torch.randn((5, 6), generator=_g).half()
_ref = _a.float() @ _b.float()
_case("right", _ref.half(), _a, _b, True)
_case("wrong", (_ref + 1).half(), _a, _b, False)
'''


def test_a_function_answer_runs_in_a_worker_and_cannot_see_the_expected_value(interp):
    honest = "import torch\ndef is_correct(out, a, b):\n    return bool(torch.allclose(out.float(), a.float() @ b.float(), rtol=1e-2, atol=1e-2))\n"
    claim = {"claims": {"is_correct": {"__function__": "is_correct"}}}
    _outs, v = replay.grade_cell(FP16_CELL, claim, [honest])
    assert v["status"] == "pass", v["message"]
    snoop = ("import sys\ndef is_correct(out, a, b):\n    f = sys._getframe(1)\n    while f is not None:\n"
             "        if 'expected' in f.f_locals:\n            return f.f_locals['expected']\n"
             "        f = f.f_back\n    return True\n")
    _outs, v = replay.grade_cell(FP16_CELL, claim, [snoop])
    assert v["status"] == "fail"  # the worker's frames hold the arguments, never the expected value


def test_names_the_given_cells_import_come_from_the_grader_not_the_hand_out():
    src = 'g = fresh()\ng.check_value("grid", grid, 20)\n'
    forged = {"claims": {"grid": 20, "fresh": {"__function__": "fresh"}}}
    given = ["from gemm_lab.grading import fresh\nimport torch\nprint('not run')\n"]
    _outs, v = replay.grade_cell(src, forged, ["def fresh():\n    return None\n"], given_sources=given)
    assert v["status"] == "pass", v["message"]
    assert replay.given_imports(given)["fresh"].__module__ == "gemm_lab.grading"


def test_function_module_takes_only_what_the_function_names():
    cells = ["import torch\nimport student_helper_file\nTOL = 0.01\nSHAPES = make_shapes()\n",
             "def helper(a):\n    return a * TOL\n", "def f(a):\n    return helper(torch.as_tensor(a))\n",
             "def unrelated(x=SHAPES):\n    return x\n"]
    text = gate.function_module(cells, "f")
    assert "import torch" in text and "def helper" in text and "TOL = 0.01" in text
    assert "student_helper_file" not in text and "unrelated" not in text and "SHAPES" not in text


def test_the_verdict_tells_the_instructor_about_refused_and_shape_special_kernels(interp):
    from autograder.grade import review

    claim = {"claims": {"add_kernel": {"__kernel__": "add_kernel"}}}
    special = ADD_KERNEL.replace("mask = offsets < n_elements", "mask = offsets < tl.minimum(n_elements, 1000)")
    calls_python = [IMPORTS + "def cheat(*a):\n    return 0\n", ADD_KERNEL.replace("x + y", "cheat(x, y)")]
    for cells, code in (([IMPORTS, special], "KERNEL_SHAPE_SPECIAL"), (calls_python, "KERNEL_NOT_TRITON"),
                        ([IMPORTS, ADD_KERNEL], None)):
        _o, v = replay.grade_cell(VISIBLE_ADD, claim, cells, run_seed=3)
        found = review.verdict_findings({"metadata": {"gemm_lab": {"verdict": v}}})
        assert [f.split(":")[0] for f in found] == ([code] if code else [])


def test_a_job_that_outlives_its_time_limit_fails_the_cell(interp):
    remote.set_runner(remote.SubprocessRunner(timeout=0.001))
    claim = {"claims": {"add_kernel": {"__kernel__": "add_kernel"}}}
    _o, v = replay.grade_cell(VISIBLE_ADD, claim, [IMPORTS, ADD_KERNEL])
    assert v["status"] == "fail" and "시간 제한" in v["message"], v["message"]


def test_the_workers_interpreter_runs_without_the_overflow_sanitizer():
    """The grader's worker turns Triton's int32-overflow sanitizer off (integers wrap as on a GPU)."""
    import subprocess
    import sys

    code = ("from gemm_lab.grading.judge import worker\nworker._interpreter_without_overflow_sanitizer()\n"
            "from triton.runtime import interpreter\nprint(interpreter.interpreter_builder.options.sanitize_overflow)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "TRITON_INTERPRET": "1"})
    assert out.returncode == 0 and out.stdout.strip().splitlines()[-1] == "False", out.stderr
