"""The gate (gemm_lab/grading/judge/gate.py): the module a kernel worker imports is written by the grader from the
checked syntax tree, the student's own check goes through the same gate, and honest variants grade as the
notebook grades them.

Hostile: every payload form in every place outside a kernel's body (autograder/samplekit/attacks_gate.py) is
refused as not Triton, on every graded kernel of the masters. Honest: every kernel variant
(autograder/samplekit/honest.py) is accepted, and the student's check and the grader's verdict agree;
set/list/dict answers in other containers pass both in the notebook and through the hand-out.
"""

from __future__ import annotations

import ast
import collections
import itertools
import types
from pathlib import Path

import pytest

from autograder.grade.review import review_notebook
from autograder.samplekit import attacks_gate, honest
from autograder.samplekit.expected import refuses_a_kernel
from autograder.samplekit.model import Notebook
from gemm_lab import runtime  # noqa: F401  (before triton: kernels run in the CPU interpreter)
from gemm_lab.grading import codec
from gemm_lab.grading.answers import check_choice, check_value
from gemm_lab.grading.judge import gate

ROOT = Path(__file__).resolve().parent.parent
KERNEL_NOTEBOOKS = ("week06/01_block_model", "week06/02_fusion_softmax", "week07/01_pointer_blocks",
                    "week07/06_persistent_loop")
IMPORTS = "import torch\nimport triton\nimport triton.language as tl\n"


@pytest.fixture(autouse=True)
def _compile_cache(tmp_path_factory, monkeypatch):
    # this module's own compile cache: a verdict cached by an older grader never answers for today's
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(tmp_path_factory.getbasetemp() / "compile_cache"))


def _notebook(key: str) -> Notebook:
    return Notebook.load(ROOT, key, release="source")


@pytest.fixture(scope="module")
def kernels() -> dict:
    """{notebook: (notebook, kernel name, kernel cell source, given cells before it)}."""
    out = {}
    for key in KERNEL_NOTEBOOKS:
        nb = _notebook(key)
        _ex, gid, fn = nb.kernel_cell()
        given = [ast.unparse(n) for c in _code_cells(nb.full())[:nb.index_of(gid)] if "@triton.jit" in c
                 for n in ast.parse(c).body if isinstance(n, ast.FunctionDef)]  # the given @jit helpers
        out[key] = (nb, fn.name, nb.solutions[gid], given)
    return out


def _code_cells(nb_json: dict) -> list[str]:
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb_json["cells"] if c["cell_type"] == "code"]


# --------------------------------------------------------------------------- the module the worker imports


def _only_what_the_gate_writes(text: str) -> None:
    """Every statement is one the gate writes; no annotation or default is more than a name or a literal."""
    tree = ast.parse(text)
    assert isinstance(tree.body[0], ast.ImportFrom) and tree.body[0].module == "__future__"
    for node in tree.body[1:]:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            assert all((getattr(node, "module", None) or a.name).startswith("triton") for a in node.names), node
        elif isinstance(node, ast.Assign):
            assert isinstance(node.value, (ast.Constant, ast.Name, ast.Call)), ast.unparse(node)
        else:
            assert isinstance(node, ast.FunctionDef), ast.unparse(node)
            assert [ast.unparse(d).split("(")[0] for d in node.decorator_list] == ["triton.jit"]
            assert node.returns is None
            a = node.args
            for arg in a.posonlyargs + a.args + a.kwonlyargs:
                assert arg.annotation is None or isinstance(arg.annotation, (ast.Attribute, ast.Name, ast.Constant))
            for d in a.defaults + [d for d in a.kw_defaults if d is not None]:
                assert isinstance(d, (ast.Constant, ast.Name, ast.Call)), ast.unparse(d)


def test_masters_kernels_pass_the_gate_and_its_module_is_a_fixed_point(kernels):
    for key, (_nb, name, src, given) in kernels.items():
        text = gate.module_for([IMPORTS, *given, src], name)
        _only_what_the_gate_writes(text)
        assert gate.module_for([text], name) == text, key


PAYLOADS = [
    "__import__('os').getpid()",
    "tl.core.builtins.exec('1')",
    "globals()['x']",
    "(lambda: 0)()",
    "open('/etc/passwd')",
    "tl.load.__globals__",
    "triton.runtime.driver",
    attacks_gate.PAYLOAD,
]


@pytest.mark.parametrize("place", sorted(attacks_gate.PLACES))
def test_python_outside_a_kernels_body_is_refused_in_every_place_and_form(kernels, place, monkeypatch):
    for (key, (_nb, name, src, given)), payload in itertools.product(kernels.items(), PAYLOADS):
        monkeypatch.setattr(attacks_gate, "PAYLOAD", payload)
        cell = attacks_gate.attack(src, name, place)
        with pytest.raises(gate.Refused) as info:
            gate.module_for([IMPORTS, *given, cell], name)
        assert info.value.not_triton, (key, place, payload, str(info.value))


def test_annotations_are_never_evaluated_where_the_module_is_imported(tmp_path):
    cell = IMPORTS + "@triton.jit\ndef k(x_ptr, B: tl.constexpr) -> None:\n    pass\n"
    text = gate.module_for([cell], "k")
    assert "from __future__ import annotations" in text.splitlines()[0]
    assert gate.load(text, "k").fn.__annotations__ == {"B": "tl.constexpr"}


@pytest.mark.parametrize("cell, name, piece", [
    ("import triton.language as tl2\n@triton.jit\ndef k(x):\n    tl2.store(x, tl2.program_id(0))\n", "k",
     "from triton import language as tl2"),
    ("from triton.language.extra import libdevice\n@triton.jit\ndef k(x):\n    tl.store(x, libdevice.exp(1.0))\n",
     "k", "from triton.language.extra import libdevice"),
    ("from triton import language as L\n@triton.jit\ndef k(x, B: L.constexpr):\n    pass\n", "k", "B: tl.constexpr"),
    ("BLOCK = 128\n@triton.jit\ndef k(x, B: tl.constexpr = BLOCK):\n    pass\n", "k", "BLOCK = 128"),
    ("S = tl.constexpr(2)\n@triton.jit\ndef k(x):\n    tl.store(x, S)\n", "k", "S = tl.constexpr(2)"),
    ("@triton.jit\ndef mine(x):\n    pass\nstudent_matmul_kernel = mine\nalias2 = student_matmul_kernel\n",
     "alias2", "alias2 = mine"),
    ("@triton.autotune(configs=[triton.Config({}, num_warps=4)], key=['n'])\n@triton.jit\ndef k(x, n):\n    pass\n",
     "k", "@triton.jit\ndef k"),
    ("@triton.heuristics({'E': lambda args: args['n'] % 2 == 0})\n@triton.jit\ndef k(x, n, E: tl.constexpr):\n"
     "    pass\n", "k", "E: tl.constexpr"),
    ("@triton.jit(do_not_specialize=['n'])\ndef k(x, n):\n    pass\n", "k", "do_not_specialize=['n']"),
])
def test_honest_forms_are_written_from_their_checked_tree(cell, name, piece):
    text = gate.module_for([IMPORTS, cell], name)
    _only_what_the_gate_writes(text)
    assert piece in text, text
    assert gate.load(text, name) is not None


@pytest.mark.parametrize("cell, why", [
    ("@triton.jit\ndef k(x):\n    raise NotImplementedError()\n", "NotImplementedError"),
    ("@triton.jit\ndef k(x):\n    k(x)\n", "재귀"),
    ("@triton.jit\ndef k(*x):\n    pass\n", "*args"),
    ("def k(x):\n    pass\n", "데코레이터"),
    ("x = 1\n", "찾지 못했습니다"),
])
def test_a_kernel_missing_or_shaped_wrong_is_refused_without_a_finding(cell, why):
    with pytest.raises(gate.Refused) as info:
        gate.module_for([IMPORTS, cell], "k")
    assert why in str(info.value) and not info.value.not_triton


# --------------------------------------------------------------------------- samples


@pytest.mark.parametrize("case", sorted(attacks_gate.CASES))
def test_gate_attack_samples_lose_the_kernel_cells_and_are_flagged(case):
    for key in KERNEL_NOTEBOOKS:
        nb = _notebook(key)
        desc, nb_json, expected = attacks_gate.CASES[case](nb)
        lost = {g for g, p in expected.items() if p == 0 and nb.full_points()[g] > 0}
        assert lost == {g for g in nb.kernel_tests() if nb.full_points()[g] > 0}, (case, key)
        assert refuses_a_kernel(nb_json), (case, key, desc)


@pytest.mark.parametrize("case", sorted(honest.VARIANTS))
def test_honest_variant_samples_expect_full_marks_and_no_finding(case):
    built = 0
    for key in (*KERNEL_NOTEBOOKS, "week06/03_check_benchmark", "week07/03_tile_configs_roofline",
                "week07/04_compile_pipeline", "week07/05_artifacts_benchmarks"):
        nb = _notebook(key)
        out = honest.VARIANTS[case](nb)
        if out is None:
            continue
        built += 1
        _desc, nb_json, expected = out
        assert expected == nb.full_points()
        assert not refuses_a_kernel(nb_json), (case, key)
        assert review_notebook(nb_json) == [], (case, key)
    assert built >= 2, case


# --------------------------------------------------------------------------- the notebook and the grader agree


def _student_check(tmp_path, cells: list[str], test_source: str) -> tuple[bool, str]:
    """The test cell as the student's notebook runs it: the cells defined in a module (the gate reads its
    file, as it reads IPython's history in a notebook), then the check on the live kernel."""
    path = tmp_path / f"nb_{abs(hash(tuple(cells)))}.py"
    path.write_text("\n\n".join(cells), encoding="utf-8")
    glob = {"__name__": path.stem, "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), glob)  # noqa: S102 - the test's own cells
    try:
        exec(compile(test_source, "<test cell>", "exec"), glob)  # noqa: S102
    except AssertionError as exc:
        return False, str(exc)
    return True, ""


def _grader_check(cells: list[str], test_source: str, name: str) -> tuple[bool, str]:
    from gemm_lab.grading.judge import replay

    claim = {"claims": {name: {"__kernel__": name}}}
    _outs, verdict = replay.grade_cell(test_source, claim, cells, run_seed=0)
    return verdict["status"] == "pass", verdict["message"] if verdict["status"] != "pass" else ""


def _visible_test(nb: Notebook, key: str) -> str:
    return nb.test_source(nb.kernel_tests()[0])


@pytest.mark.parametrize("variant", sorted(honest.KERNEL_VARIANTS))
@pytest.mark.parametrize("key", [pytest.param(k, marks=[] if k == KERNEL_NOTEBOOKS[0] else [pytest.mark.slow])
                                 for k in KERNEL_NOTEBOOKS])
def test_the_students_check_and_the_grader_agree_on_honest_variants(kernels, tmp_path, key, variant):
    nb, name, src, given = kernels[key]
    cell, _ = honest.rewrite_kernel(src, name, variant)
    cells = [IMPORTS, *given, cell]
    test = _visible_test(nb, key)
    mine = _student_check(tmp_path, cells, test)
    graders = _grader_check(cells, test, name)
    assert mine == (True, "") and graders == (True, ""), (mine, graders)


@pytest.mark.parametrize("place", ["return_annotation", "constant_annotation", "default"])
def test_the_students_check_and_the_grader_agree_on_a_refusal(kernels, tmp_path, place):
    nb, name, src, given = kernels[KERNEL_NOTEBOOKS[0]]
    cell = attacks_gate.attack(src, name, place).replace(attacks_gate.PAYLOAD, "print('payload')")
    cells = [IMPORTS, *given, cell]
    test = _visible_test(nb, KERNEL_NOTEBOOKS[0])
    mine = _student_check(tmp_path, cells, test)
    graders = _grader_check(cells, test, name)
    assert not mine[0] and not graders[0]
    reason = str(pytest.raises(gate.Refused, gate.module_for, cells, name).value)
    assert reason in mine[1] and reason in graders[1], (reason, mine, graders)


# --------------------------------------------------------------------------- containers where a set/list/dict is asked


def _forms(kind: str, value) -> list:
    out = []
    for imp, expr in honest.VARIANT_FORMS[kind]:
        glob: dict = {"v": value}
        if imp:
            exec(imp, glob)  # noqa: S102 - the forms' own imports
        out.append(lambda e=expr, g=glob: eval(e.format(v="v"), g))  # noqa: S307 - a fresh value per use
    return out


@pytest.mark.parametrize("kind, expected, check", [
    ("set", {2, 3, 6}, check_choice),
    ("set", {"ttir", "llir"}, check_choice),
    ("list", [[0, 1, 2, 3], [4, 5, 6, 7]], check_value),
    ("list", [1.5, 2.5], check_value),
    ("dict", {"A": "ast", "B": "ttir"}, check_value),
    ("dict", {"M": 3, "N": 4}, check_value),
])
def test_other_containers_pass_in_the_notebook_and_through_the_hand_out(kind, expected, check, capsys):
    value = sorted(expected) if kind == "set" else expected
    for make in _forms(kind, value):
        check("q", make(), expected)  # the student's notebook: the live value
        check("q", codec.decode(codec.encode(make())), expected)  # the grader: the hand-out's data
    assert capsys.readouterr().out.count("✅") == 2 * len(honest.VARIANT_FORMS[kind])


def test_more_containers_and_the_limits_of_the_hand_out():
    cases = [range(1, 4), (x for x in (1, 2, 3)), collections.deque([1, 2, 3]), {1: 0, 2: 0, 3: 0}.keys(),
             types.MappingProxyType({1: True, 2: True, 3: True})]
    for value in cases:
        check_choice("q", codec.decode(codec.encode(value)), {1, 2, 3})
    with pytest.raises(ValueError, match="items"):  # an endless iterable is too large to grade, not a hang
        codec.encode(itertools.count())
    assert codec.decode(codec.encode(collections.OrderedDict(a=1))) == {"a": 1}


# --------------------------------------------------------------------------- the class report


def test_class_report_shows_refused_kernels_and_expected_values_as_written(tmp_path):
    from autograder.reporting.class_report import _canon, analyze
    from autograder.reporting.class_report_model import show
    from autograder.samplekit.synthetic_class import make_class

    shown = {show(_canon(codec.encode(v))) for v in ({3, 1, 2}, (1, 2.5), {"a": 1}, set(), (7,))}
    assert shown == {"{1, 2, 3}", "(1, 2.5)", '{"a": 1}', "set()", "(7,)"}
    report = analyze(make_class(tmp_path / "class", 20), "week07")
    kernel_cell = next(c for c in report.cells if c.kernel)
    check = kernel_cell.checks["matmul"]
    refused = [w for w in check.wrong.values() if str(w.value).startswith("거부됨: ")]
    assert not check.blank and refused and all("Triton" in str(w.value) for w in refused)
    assert sum(len(w.students) for w in refused) == len(kernel_cell.kernel.failed["compile_refused"])


def test_in_a_notebook_the_check_reads_the_cells_that_ran(kernels, capsys):
    """Inside IPython the student's check takes the kernel's cells from the session's input history (the
    notebook's executed cells), as the grader takes them from the hand-in."""
    from IPython.core.interactiveshell import InteractiveShell

    nb, name, src, given = kernels[KERNEL_NOTEBOOKS[0]]
    shell = InteractiveShell.instance()
    try:
        for cell in (IMPORTS, *given, honest.rewrite_kernel(src, name, "kernel_alias")[0]):
            assert shell.run_cell(cell, store_history=True).success
        assert shell.run_cell(_visible_test(nb, KERNEL_NOTEBOOKS[0]), store_history=True).success
        assert "✅" in capsys.readouterr().out
        bad = attacks_gate.attack(src, name, "return_annotation").replace(attacks_gate.PAYLOAD, "print('payload')")
        assert shell.run_cell(bad, store_history=True).success  # the notebook itself runs it
        result = shell.run_cell(_visible_test(nb, KERNEL_NOTEBOOKS[0]), store_history=True)
        assert isinstance(result.error_in_exec, AssertionError) and "타입 표기" in str(result.error_in_exec)
    finally:
        InteractiveShell.clear_instance()


def test_findings_name_what_the_gate_refused_and_nothing_else(kernels):
    from autograder.grade.review import verdict_findings
    from gemm_lab.grading.judge import replay

    nb, name, src, given = kernels[KERNEL_NOTEBOOKS[0]]
    test = _visible_test(nb, KERNEL_NOTEBOOKS[0])
    tree = ast.parse(src)
    next(n for n in tree.body if isinstance(n, ast.FunctionDef)).body = ast.parse("raise NotImplementedError()").body
    stub = ast.unparse(tree)
    for cell, flagged in [(attacks_gate.attack(src, name, "return_annotation"), True),
                          (attacks_gate.attack(src, name, "default"), True), (stub, False), (f"{name} = None\n", False)]:
        cells = [IMPORTS, *given, cell]
        _outs, verdict = replay.grade_cell(test, {"claims": {name: {"__kernel__": name}}}, cells)
        found = verdict_findings({"metadata": {"gemm_lab": {"verdict": verdict}}})
        assert verdict["status"] == "fail", (cell, verdict)
        if flagged:
            reason = str(pytest.raises(gate.Refused, gate.module_for, cells, name).value)
            assert len(found) == 1 and found[0].startswith("KERNEL_NOT_TRITON: ") and reason[:80] in found[0], found
        else:
            assert found == [], found


def _reachable_from_triton_language():
    """(path, object) for every public name reachable through triton.language's own modules."""
    import triton.language as tl

    seen, out = set(), []

    def walk(mod, path, depth):
        if id(mod) in seen or depth > 4:
            return
        seen.add(id(mod))
        for k, v in sorted(vars(mod).items()):
            if k.startswith("_"):
                continue
            out.append((f"{path}.{k}", v))
            if isinstance(v, types.ModuleType) and v.__name__.startswith("triton"):
                walk(v, f"{path}.{k}", depth + 1)
    walk(tl, "tl", 0)
    return out


def test_names_that_triton_language_merely_imports_are_refused():
    """A path through triton.language may reach what its modules import (functools.partial, enum.Enum,
    typing, triton.knobs, the C++ IR module): none of it is Triton a kernel may name, whatever it is."""
    foreign = [(p, v) for p, v in _reachable_from_triton_language()
               if isinstance(v, types.ModuleType) and not v.__name__.startswith("triton.language")
               or not isinstance(v, (types.ModuleType, int, float, bool, str, type(None)))
               and not (getattr(v, "__module__", None) if callable(v) else type(v).__module__ or "").startswith("triton")]
    assert len(foreign) >= 5  # partial, Enum, TypeVar, cached_property, knobs, ir, math, builtins, ...
    for path, _ in foreign:
        cell = f"{IMPORTS}@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n    y = {path}\n"
        with pytest.raises(gate.Refused) as err:
            gate.module_for([cell], "k")
        assert err.value.not_triton, path


@pytest.mark.parametrize("expr", ["tl.exp(tl.load(x_ptr))", "tl.math.exp(tl.load(x_ptr))", "tl.float32",
                                  "tl.extra.cuda.libdevice.fast_expf(tl.load(x_ptr))", "triton.cdiv(3, 2)",
                                  "tl.core.TRITON_MAX_TENSOR_NUMEL"])
def test_triton_language_paths_stay_open(expr):
    cell = f"{IMPORTS}@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n    y = {expr}\n"
    assert "def k(" in gate.module_for([cell], "k")
