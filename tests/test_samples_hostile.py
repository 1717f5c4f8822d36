"""The attacks first written against an in-process grader (autograder/samplekit/attacks_inprocess.py): each builds on
the notebooks a student is graded on, expects what the work deserves, hides from the cell-source scan where it says so,
and is real: the kernel that calls Python gives the right answer in the interpreter (the old grader's view) and
compiles to nothing, and the gate refuses what is not Triton.

No notebook runs (`make demo` grades the samples); the kernels run in the CPU interpreter on small shapes.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from autograder.cells import meta as _meta
from autograder.cells import source as _src
from autograder.grade.review import review_notebook
from autograder.samplekit import attacks_inprocess, plan
from autograder.samplekit.honest import number_answers
from autograder.samplekit.model import Notebook
from autograder.samplekit.plan import PLANS
from gemm_lab import runtime  # noqa: F401  (before triton: kernels run in the CPU interpreter)

ROOT = Path(__file__).resolve().parent.parent
KERNEL_CASES = ("kernel_calls_python", "special_shapes")


def _notebook(key: str) -> Notebook:
    return Notebook.load(ROOT, key, release="source")


@pytest.fixture(scope="module")
def notebooks() -> dict[str, Notebook]:
    return {key: _notebook(key) for key in attacks_inprocess.NOTEBOOKS}


@pytest.fixture(scope="module")
def built(notebooks):
    return {(case, key): make(nb) for case, make in attacks_inprocess.CASES.items() for key, nb in notebooks.items()}


def test_every_attack_builds_where_the_issue_names_and_is_planned(built, notebooks):
    for case in attacks_inprocess.CASES:
        assert case in plan.CASES and (case in plan.REVIEW) == (case in attacks_inprocess.REVIEW)
        where = {key for key in notebooks if built[case, key] is not None}
        kernels = {key for key in notebooks if notebooks[key].kernel_cell()}
        numbers = {key for key, nb in notebooks.items() if any(nb.tests_reading(g, n) for g, n, _ in number_answers(nb))}
        assert where == (kernels if case in KERNEL_CASES else numbers if case == "frame_walk" else set(notebooks)), case
        planned = {f"{a}/{nb}" for a in ("week06", "week07") for nb in PLANS[f"{a}-all"].get(case, ())}
        assert planned == where, case


def test_expected_points_are_what_the_work_deserves(built, notebooks):
    for (case, key), b in built.items():
        if b is None:
            continue
        nb, (_, handin, exp) = notebooks[key], b
        full = nb.full_points()
        lost = {g for g, v in exp.items() if v == 0 and full[g] > 0}
        assert all(v in (0.0, full[g]) for g, v in exp.items()), (case, key)
        kernel_tests = set(nb.kernel_tests())
        if case in KERNEL_CASES:
            assert lost == kernel_tests, (case, key)
        elif case == "frame_walk":
            assert lost and not lost & kernel_tests and lost != set(full), (case, key)
        else:  # a forged hand-out of the right values is an answer
            assert lost == set(), (case, key)
        assert [_meta(c).get("grade_id") for c in handin["cells"] if _meta(c).get("grade")] == \
            [g for g, _, _ in nb.graded_cells()], (case, key)


def test_the_review_scan_flags_the_written_modules_that_hold_the_attacks(built):
    """The attack code sits in a module the notebook writes and imports, where the cell scan cannot read it:
    writing Python code to a file is itself flagged (WRITES_MODULE); forged_handout's own cells use exec. The
    grader's verdicts add KERNEL_NOT_TRITON / KERNEL_SHAPE_SPECIAL after grading (tests/test_grading_outside.py)."""
    for (case, key), b in built.items():
        if b is None:
            continue
        findings = review_notebook(b[1])
        codes = {f.split(": ", 1)[1].split(" ")[0] for f in findings}
        if case == "forged_handout":
            assert "DYNAMIC_CODE" in codes or "SHELL" in codes, (case, key, findings)
        elif case != "special_shapes":
            assert "WRITES_MODULE" in codes, (case, key, findings)


def test_the_new_grader_refuses_the_kernels_that_call_python(built, notebooks):
    gate = pytest.importorskip("gemm_lab.grading.judge.gate")
    for key, nb in notebooks.items():
        found = nb.kernel_cell()
        if built["kernel_calls_python", key] is None:
            continue
        cells = [_src(c) for c in built["kernel_calls_python", key][1]["cells"] if c["cell_type"] == "code"]
        with pytest.raises(gate.Refused):
            gate.module_for(cells, found[2].name)


# --------------------------------------------------------------------------- the kernels, run for real


torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")


def _load(tmp_path, monkeypatch, handin: dict, kernel_name: str):
    """Run the hand-in's code cells up to its kernel (helper modules are written to tmp_path) and return it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    ns = {"__name__": "handin"}
    exec("import torch\nimport triton\nimport triton.language as tl", ns)
    for i, cell in enumerate(handin["cells"]):
        src = _src(cell)
        if cell["cell_type"] != "code" or not src.strip() or _meta(cell).get("grade"):
            continue
        tree = ast.parse(src)
        given_jit = _meta(cell).get("locked") and "@triton.jit" in src  # record_tile
        if any(isinstance(n, ast.FunctionDef) and n.name == kernel_name for n in tree.body) or given_jit or \
                "open(" in src and "import nb_" in src:
            path = tmp_path / f"cell_{i}.py"  # Triton reads a kernel's source from its file
            path.write_text(src, encoding="utf-8")
            if given_jit:  # only its definitions (it also runs a demo)
                tree.body = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
            exec(compile(tree, str(path), "exec"), ns)
        if kernel_name in ns:
            return ns[kernel_name]
    raise AssertionError(f"no kernel {kernel_name}")


def _launch(exercise, kernel, a, b, out, programs=3):
    """The notebooks' locked launchers (grid, block sizes) for the three kernels the attacks replace."""
    if exercise == "vector_add":
        n = out.numel()
        kernel[(triton.cdiv(n, 128),)](a, b, out, n, BLOCK_SIZE=128)
        return None
    M, K = a.shape
    N = b.shape[1]
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))
    if exercise == "matmul":
        kernel[(triton.cdiv(M, 16) * triton.cdiv(N, 16),)](a, b, out, M, N, K, *strides, BLOCK_SIZE_M=16,
                                                           BLOCK_SIZE_N=16, BLOCK_SIZE_K=16)
        return None
    tiles = triton.cdiv(M, 32) * triton.cdiv(N, 32)
    visits, owner = torch.zeros(tiles, dtype=torch.int32), torch.full((tiles,), -1, dtype=torch.int32)
    kernel[(programs,)](a, b, out, visits, owner, M, N, K, *strides, NUM_PROGRAMS=programs, BLOCK_M=32, BLOCK_N=32,
                        BLOCK_K=32)
    return visits, owner


def _inputs(exercise, shape, gen):
    if exercise == "vector_add":
        (n,) = shape
        return torch.randn(n, generator=gen), torch.randn(n, generator=gen), torch.zeros(n), None
    M, N, K = shape
    a = torch.randn(M, K, generator=gen).half()
    b = torch.randn(N, K, generator=gen).half().t()  # a transposed (non-contiguous) view
    return a, b, torch.zeros(M, N, dtype=torch.float16), a.float() @ b.float()


def _right(exercise, a, b, out, ref) -> bool:
    if exercise == "vector_add":
        return torch.equal(out, a + b)
    return torch.allclose(out.float(), ref, atol=2e-2, rtol=1e-2)


KERNEL_NOTEBOOKS = ["week06/01_block_model", "week07/01_pointer_blocks", "week07/06_persistent_loop"]


@pytest.mark.parametrize("key", KERNEL_NOTEBOOKS)
def test_kernel_calling_python_is_right_in_the_interpreter(tmp_path, monkeypatch, notebooks, key):
    if not runtime.INTERPRET:
        pytest.skip("the numpy helper runs only in the interpreter")
    nb = notebooks[key]
    exercise, _, fn = nb.kernel_cell()
    k = _load(tmp_path, monkeypatch, attacks_inprocess.kernel_calls_python(nb)[1], fn.name)
    gen = torch.Generator().manual_seed(0)
    shape = (1000,) if exercise == "vector_add" else (37, 45, 50)
    a, b, out, ref = _inputs(exercise, shape, gen)
    rec = _launch(exercise, k, a, b, out)
    assert _right(exercise, a, b, out, ref)
    if rec is not None:  # every tile recorded once, by program tile % 3
        tiles = rec[0].numel()
        assert rec[0].tolist() == [1] * tiles and rec[1].tolist() == [t % 3 for t in range(tiles)]


def test_kernel_calling_python_compiles_to_nothing(tmp_path, monkeypatch, notebooks):
    """Under the compiler the helper returns at once: the kernel cross-compiles, and its PTX stores nothing."""
    from gemm_lab import compile as gcompile

    nb = notebooks["week07/01_pointer_blocks"]
    _, _, fn = nb.kernel_cell()
    k = _load(tmp_path, monkeypatch, attacks_inprocess.kernel_calls_python(nb)[1], fn.name)
    py = getattr(k, "fn", k)
    sig = {n: ("*fp16" if n.endswith("_ptr") else "i32") for n in [a.arg for a in fn.args.args][:12]}
    art = gcompile.compile_jit(triton.jit(py), sig, {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 16, "BLOCK_SIZE_K": 16},
                               "sm_80", num_warps=4, num_stages=3, cache=False)
    assert "st.global" not in art.ptx and "ld.global" not in art.ptx


@pytest.mark.parametrize("key", KERNEL_NOTEBOOKS)
def test_special_shapes_kernel_is_right_only_at_the_visible_shapes(tmp_path, monkeypatch, notebooks, key):
    nb = notebooks[key]
    exercise, _, fn = nb.kernel_cell()
    k = _load(tmp_path, monkeypatch, attacks_inprocess.special_shapes(nb)[1], fn.name)
    visible = attacks_inprocess._visible_shapes(nb, exercise)
    gen = torch.Generator().manual_seed(0)
    small = min(visible, key=lambda s: eval("*".join(map(str, s))))  # the cheapest visible shape
    a, b, out, ref = _inputs(exercise, small, gen)
    _launch(exercise, k, a, b, out)
    assert _right(exercise, a, b, out, ref), small
    other = (1001,) if exercise == "vector_add" else (19, 23, 29)
    assert other not in visible
    a, b, out, ref = _inputs(exercise, other, gen)
    _launch(exercise, k, a, b, out)
    assert not out.any(), "the kernel must write nothing away from the visible shapes"


def test_frame_walking_number_takes_the_expected_value_from_the_checker(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "nb_exact.py").write_text(attacks_inprocess.FRAME_WALK, encoding="utf-8")
    sys.modules.pop("nb_exact", None)
    import nb_exact

    checker = {}
    exec(compile("def check_value(name, got, expected):\n    return float(got)\n", "/x/gemm_lab/grading/v.py", "exec"),
         checker)
    answer = nb_exact.exact()
    assert checker["check_value"]("grid", answer, 986) == 986.0
    assert float(answer) != float(answer)  # no checker up the stack: NaN, a wrong answer
    sys.modules.pop("nb_exact", None)
