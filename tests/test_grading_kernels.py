"""gemm_lab.grading kernel checks: the masters' kernels pass; typical bugs, interpreter-only kernels, unmasked
loads and fakes are rejected with Korean feedback.

The kernels are the masters' own solution cells (read from source/), loaded as modules the way a notebook
defines them; the buggy ones are the master's source with one bug edited in, or the hand-ins of
``autograder/samplekit/bad_kernels.py``. Compile results are cached on disk (``GEMM_LAB_COMPILE_CACHE``), so a second
run of this file compiles nothing.
"""

import importlib.util
import re
from pathlib import Path

import pytest

from gemm_lab import runtime  # before triton

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

from autograder.samplekit import bad_kernels  # noqa: E402
from gemm_lab.grading import (  # noqa: E402
    check_matmul,
    check_persistent,
    check_softmax,
    check_vector_add,
)
from gemm_lab.grading.judge import gate  # noqa: E402
from gemm_lab.grading.kernels import compiler, launchers  # noqa: E402
from gemm_lab.grading.kernels.exercises import EXERCISES  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HEADER = "import torch\nimport triton\nimport triton.language as tl\n\n"
CHECKS = {"vector_add": check_vector_add, "softmax": check_softmax, "matmul": check_matmul,
          "persistent": check_persistent}


def master_cell(path: str, grade_id: str) -> str:
    """The source of the master's cell with this grade_id (jupytext percent format)."""
    text = (ROOT / path).read_text(encoding="utf-8")
    heads = re.findall(r"^# %%.*$", text, flags=re.M)
    bodies = re.split(r"^# %%.*$", text, flags=re.M)[1:]
    for head, body in zip(heads, bodies, strict=True):
        if f'"grade_id": "{grade_id}"' in head:
            return body.strip("\n") + "\n"
    raise KeyError(grade_id)


_COUNT = [0]


def load(tmp_path: Path, *cells: str):
    """Define the cells in a fresh module, as a notebook would (source on disk: Triton reads it)."""
    _COUNT[0] += 1
    name = f"hand_in_{_COUNT[0]}"
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + "\n\n".join(cells), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def master_source(exercise: str) -> str:
    ex = EXERCISES[exercise]
    return master_cell(f"source/{ex.notebook}.py", ex.solution_cell)


def given(exercise: str) -> list[str]:
    return [master_cell(f"source/{EXERCISES['persistent'].notebook}.py", "given_record_tile")] if exercise == "persistent" else []


def kernel(tmp_path, exercise: str, source: str | None = None, *extra_cells: str):
    mod = load(tmp_path, *given(exercise), source if source is not None else master_source(exercise), *extra_cells)
    return getattr(mod, EXERCISES[exercise].kernel)


def edited(exercise: str, *pairs) -> str:
    """The master's kernel with each (old, new) replacement made (each old text must be there)."""
    src = master_source(exercise)
    for old, new in pairs:
        assert old in src, old
        src = src.replace(old, new)
    return src


def rejects(fn, *args, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        fn(*args, **kwargs)
    msg = str(info.value)
    assert msg.startswith("❌ "), msg
    return msg


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    # one on-disk compile cache for the whole test session (a fresh clone compiles each kernel once)
    d = tmp_path_factory.getbasetemp() / "compile_cache"
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(d))


# --------------------------------------------------------------------------- the masters pass


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_masters_kernels_pass_visible_and_hidden(tmp_path, capsys, exercise):
    k = kernel(tmp_path, exercise)
    kw = {"num_programs": [1, 3, 40]} if exercise == "persistent" else {}
    assert CHECKS[exercise](k, **kw) is None
    if exercise != "persistent":  # the persistent hidden cases are covered by the ownership test below
        CHECKS[exercise](k, hidden=True, seed=1)
    out = capsys.readouterr().out
    assert out.count("✅") == (1 if exercise == "persistent" else 2)
    for target, gpu in (("sm_75", "T4"), ("sm_80", "A100"), ("sm_90", "H100")):
        assert f"{target}({gpu}) 공유 메모리" in out
    if exercise in ("matmul", "persistent"):  # tl.dot: tensor cores from sm_80 on (T4 falls back to FMA here)
        assert "mma.sync(텐서 코어)" in out and "레지스터" in out


def test_persistent_ownership_and_hidden(tmp_path, capsys):
    k = kernel(tmp_path, "persistent")
    check_persistent(k, hidden=True, num_programs=[1, 2, 5, 40])
    check_persistent(k, num_programs=[1, 3, 7, 20], ownership=True)
    assert capsys.readouterr().out.count("✅ persistent_matmul") == 2



def test_the_given_helper_only_records():
    # the student writes the tile body (the blog's TODO 4): the given helper only records, it computes nothing
    master = master_cell(f"source/{EXERCISES['persistent'].notebook}.py", "given_record_tile")
    assert "tl.dot" not in master and "tl.zeros" not in master
    for part in ("tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)", "tl.dot(", "tl.store(c_ptr", "record_tile("):
        assert part in master_source("persistent"), part

def test_trusted_launchers_match_the_locked_cells():
    # the grader's copies pass the same constexprs as the masters' locked launcher cells
    cells = {
        "vector_add": ("source/week06/01_block_model.py", "ex4_launcher", "BLOCK_SIZE=128"),
        "softmax": ("source/week06/02_fusion_softmax.py", "ex4_launcher", "BLOCK_SIZE=BLOCK_SIZE"),
        "matmul": ("source/week07/01_pointer_blocks.py", "given_launcher", "BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16"),
        "persistent": ("source/week07/06_persistent_loop.py", "given_launcher", "BLOCK_M=32, BLOCK_N=32, BLOCK_K=32"),
    }
    for exercise, (path, gid, text) in cells.items():
        assert text in master_cell(path, gid), exercise
        src = master_cell(path, gid)
        kname = EXERCISES[exercise].kernel
        assert f"{kname}[" in src


# --------------------------------------------------------------------------- typical bugs (dynamic checks)


def test_vector_add_missing_store_mask(tmp_path):
    k = kernel(tmp_path, "vector_add", edited("vector_add", ("x + y, mask=mask)", "x + y)")))
    msg = rejects(check_vector_add, k)
    assert "마스크가 빠진 것 같습니다: 출력 바깥 여백(margin)에 값이 써졌습니다" in msg and "경우 1/" in msg


def test_vector_add_no_store_and_input_overwrite(tmp_path):
    k = kernel(tmp_path, "vector_add", edited("vector_add", ("tl.store(output_ptr + offsets", "tl.store(x_ptr + offsets")))
    assert "입력 x을(를) 덮어썼습니다" in rejects(check_vector_add, k)


def test_softmax_other_zero(tmp_path):
    k = kernel(tmp_path, "softmax", edited("softmax", ('other=-float("inf")', "other=0.0")))
    msg = rejects(check_softmax, k)
    assert "-inf가 아닌 값(0.0 등)으로 읽은 것 같습니다" in msg and "x[5, 10]" in msg


def test_softmax_assumes_contiguous_rows(tmp_path):
    k = kernel(tmp_path, "softmax", edited("softmax", ("row_idx * input_row_stride", "row_idx * n_cols"),
                                           ("row_idx * output_row_stride", "row_idx * n_cols")))
    msg = rejects(check_softmax, k)
    assert "경우 2/" in msg and "행 사이 여백" in msg and "stride" in msg


def test_matmul_other_one(tmp_path):
    k = kernel(tmp_path, "matmul", edited("matmul", ("other=0.0", "other=1.0")))
    msg = rejects(check_matmul, k)
    assert "K축 마스크의 other 값이 0.0이 아닌 것 같습니다" in msg
    assert "약 14만큼" in msg  # cdiv(50, 16) * 16 - 50 = 14 padded slots, each adds 1 × 1


def test_matmul_missing_store_mask(tmp_path):
    k = kernel(tmp_path, "matmul", edited("matmul", ("tl.store(c_ptrs, c, mask=c_mask)", "tl.store(c_ptrs, c)")))
    assert "출력 바깥 여백(margin)에 값이 써졌습니다" in rejects(check_matmul, k)


def test_matmul_assumes_contiguous_output(tmp_path):
    k = kernel(tmp_path, "matmul", edited("matmul", ("stride_cm * offs_cm", "N * offs_cm")))
    msg = rejects(check_matmul, k)
    assert "경우 3/" in msg and "연속 배치(contiguous)에서는 맞았습니다" in msg


def test_matmul_row_major_only_fails_hidden_transposed_case(tmp_path):
    k = kernel(tmp_path, "matmul", edited("matmul", ("offs_k[None, :] * stride_ak", "offs_k[None, :]"),
                                          ("offs_bn[None, :] * stride_bn", "offs_bn[None, :]")))
    check_matmul(k)
    assert "전치(transposed) 뷰" in rejects(check_matmul, k, hidden=True)


def test_persistent_one_tile_per_program(tmp_path):
    src = master_source("persistent").replace("tl.range(pid, num_tiles, NUM_PROGRAMS)", "tl.range(pid, pid + 1)")
    msg = rejects(check_persistent, kernel(tmp_path, "persistent", src), num_programs=[1, 3, 40])
    assert "num_programs=1" in msg and "for tile_id in range(pid, num_tiles, NUM_PROGRAMS)" in msg


def test_persistent_accumulator_not_reset_per_tile(tmp_path):
    # acc made once before the tile loop: right while every program owns one tile, wrong from a program's second
    src = edited("persistent", ("        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n", ""),
                 ("    for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS):\n",
                  "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
                  "    for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS):\n"))
    k = kernel(tmp_path, "persistent", src)
    check_persistent(k, num_programs=[40])  # one tile per program: the mistake does not show
    for counts in ([1], [3], [1, 3, 40]):  # a program with two tiles or more: it does
        msg = rejects(check_persistent, k, num_programs=counts)
        assert f"num_programs={counts[0]}" in msg and "값이 다릅니다" in msg, msg
        assert "누산기(acc)를 tile마다 0으로 다시 만들지 않은 것 같습니다" in msg, msg
    assert "누산기(acc)를 tile마다" in rejects(check_persistent, k, hidden=True, num_programs=[1, 2, 5, 40], seed=1)


def test_persistent_loop_off_by_one(tmp_path):
    short = edited("persistent", ("tl.range(pid, num_tiles, NUM_PROGRAMS)", "tl.range(pid, num_tiles - 1, NUM_PROGRAMS)"))
    msg = rejects(check_persistent, kernel(tmp_path, "persistent", short), num_programs=[1, 3, 40])
    assert "num_programs=1" in msg and "쓰이지 않았습니다" in msg, msg
    # one tile past the end: the store is masked out (right values) but the records show the extra tile
    long = edited("persistent", ("tl.range(pid, num_tiles, NUM_PROGRAMS)", "tl.range(pid, num_tiles + 1, NUM_PROGRAMS)"))
    k = kernel(tmp_path, "persistent", long)
    check_persistent(k, num_programs=[1, 3, 40])
    msg = rejects(check_persistent, k, num_programs=[1, 3, 7, 1000], ownership=True)
    assert "tile 번호 15까지 계산했습니다" in msg and "num_tiles를 넘었습니다" in msg, msg


def test_persistent_without_record_tile(tmp_path):
    # record_tile is a teaching aid: ownership is what the grader sees the programs write
    k = kernel(tmp_path, "persistent", edited("persistent", ("        record_tile(tile_id, visits_ptr, owner_ptr)\n", "")))
    check_persistent(k, num_programs=[1, 3, 7, 1000], ownership=True)


_RECORDS_ONLY = "    for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS):\n        record_tile(tile_id, visits_ptr, owner_ptr)\n"


@pytest.mark.parametrize("restore", [False, True])
def test_persistent_self_reported_ownership_is_not_believed(tmp_path, restore):
    """Program 0 computes every tile while each program records the tiles it should have computed (and,
    ``restore``, stores them again from what program 0 wrote): right values, right records, wrong work."""
    own = ("        c = tl.load(c_ptr + offsets_m[:, None] * stride_cm + offsets_n[None, :] * stride_cn, "
           "mask=mask_m & mask_n)\n        tl.store(c_ptr + offsets_m[:, None] * stride_cm + offsets_n[None, :] * "
           "stride_cn, c, mask=mask_m & mask_n)\n") if restore else ""
    src = edited("persistent", ("for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS):",
                                "for tile_id in tl.range(0, num_tiles * (pid == 0).to(tl.int32)):"),
                 ("        record_tile(tile_id, visits_ptr, owner_ptr)\n", ""),
                 ("    ### END SOLUTION", _RECORDS_ONLY.replace("        record_tile", own.replace(
                     "offsets_m", "om").replace("offsets_n", "on").replace("mask_m & mask_n", "(om < M) & (on < N)")
                     .replace("        c = tl.load", "        om = (tile_id // num_n_tiles) * BLOCK_M + "
                              "tl.arange(0, BLOCK_M)[:, None]\n        on = (tile_id % num_n_tiles) * BLOCK_N + "
                              "tl.arange(0, BLOCK_N)[None, :]\n        c = tl.load").replace("om[:, None]", "om")
                     .replace("on[None, :]", "on") + "        record_tile", 1) + "    ### END SOLUTION"))
    k = kernel(tmp_path, "persistent", src)
    check_persistent(k, num_programs=[1, 3, 40])  # the values are right
    msg = rejects(check_persistent, k, num_programs=[1, 3], ownership=True)
    assert "program 0이(가) 썼습니다 (기대: program 1" in msg and "num_programs=3" in msg, msg


def test_persistent_wrong_owner_is_an_ownership_failure(tmp_path):
    # every tile once, but in blocks of tiles per program instead of striding by NUM_PROGRAMS
    src = master_source("persistent").replace(
        "for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS):",
        "per = tl.cdiv(num_tiles, NUM_PROGRAMS)\n    for tile_id in tl.range(pid * per, tl.minimum(pid * per + per, num_tiles)):")
    k = kernel(tmp_path, "persistent", src)
    check_persistent(k, num_programs=[1, 3, 40])  # the values are right
    msg = rejects(check_persistent, k, num_programs=[1, 3], ownership=True)
    assert "program pid는" in msg and "num_programs=3" in msg


_INDEX_AS_TRITON_36 = """
from triton.runtime import interpreter as _interp
_patch = _interp._patch_lang_tensor
def _as_36(tensor, scope):  # Triton 3.6.0: int() of the scalar's one-element array, refused by NumPy 2.4
    _patch(tensor, scope)
    scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data))
_interp._patch_lang_tensor = _as_36
"""

_PROGRAM_0_COMPUTES_ALL = ("for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS):",
                           "for tile_id in tl.range(0, num_tiles * (pid == 0).to(tl.int32)):")


@pytest.mark.skipif(not runtime.INTERPRET, reason="the interpreter's scalars (on a GPU the first run is compiled)")
def test_persistent_ownership_where_the_interpreter_reads_scalars_as_triton_36(tmp_path, monkeypatch):
    """Triton 3.6's interpreter turns ``tl.range(pid, num_tiles, P)``'s scalars into ints with ``int(array)``:
    a plain launch fails under NumPy 2.4, the grader's launches still read them (and still judge ownership)."""
    import warnings

    from triton.runtime import interpreter

    monkeypatch.setattr(interpreter, "_patch_lang_tensor", interpreter._patch_lang_tensor)
    exec(_INDEX_AS_TRITON_36, {})
    k = kernel(tmp_path, "persistent")
    with warnings.catch_warnings(), pytest.raises(Exception, match="0-dimensional|ndim > 0"):
        warnings.simplefilter("error", DeprecationWarning)  # NumPy before 2.4 only warns
        assert _interpreter_answer_is_right("persistent", k)
    check_persistent(k, num_programs=[1, 3, 20], ownership=True)
    msg = rejects(check_persistent, kernel(tmp_path, "persistent", edited("persistent", _PROGRAM_0_COMPUTES_ALL)),
                  num_programs=[3], ownership=True, noncontiguous=False)
    assert "program 0이(가) 썼습니다 (기대: program 1" in msg, msg


def test_persistent_ownership_on_a_gpu_host(tmp_path):
    """A GPU host's path on this CPU (TRITON_INTERPRET=0, a device that is not "cpu", the "GPU" run done by the
    interpreter): the ownership run is interpreted with Triton's own @jit library interpreted too, also where
    the interpreter reads scalars as Triton 3.6 does. The master passes; program 0 computing every tile fails."""
    import os
    import subprocess
    import sys

    good = load(tmp_path, *given("persistent"), master_source("persistent")).__file__
    bad = load(tmp_path, *given("persistent"), edited("persistent", _PROGRAM_0_COMPUTES_ALL)).__file__
    code = f"""import importlib.util, torch
from gemm_lab import runtime
from gemm_lab.grading import check_persistent
from gemm_lab.grading.kernels import launchers
from triton.runtime.interpreter import InterpretedFunction
from triton.runtime.jit import JITFunction
{_INDEX_AS_TRITON_36}
assert not runtime.INTERPRET
runtime.device = lambda: "cpu:0"
torch.cuda.synchronize = lambda: None
JITFunction.__call__ = lambda self, *a, **k: InterpretedFunction(self.fn)(*a, **k)
_rebuild = launchers.rebuild
launchers.rebuild = lambda py, mode, _memo=None: _rebuild(py, "interpret" if mode == "run" else mode, _memo)
def kernel(path):
    spec = importlib.util.spec_from_file_location("hand_in_" + str(abs(hash(path))), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.student_persistent_kernel
check_persistent(kernel({good!r}), num_programs=[1, 3, 20], ownership=True)
try:
    check_persistent(kernel({bad!r}), num_programs=[3], ownership=True, noncontiguous=False)
except AssertionError as exc:
    print("REJECTED", exc)
"""
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0 and "✅ persistent_matmul" in out.stdout, (out.stdout, out.stderr[-3000:])
    assert "REJECTED ❌" in out.stdout and "program 0이(가) 썼습니다 (기대: program 1" in out.stdout, out.stdout


def test_hint_and_name_are_shown(tmp_path):
    k = kernel(tmp_path, "vector_add", edited("vector_add", ("tl.store(output_ptr + offsets, x + y, mask=mask)",
                                                              "pass")))
    msg = rejects(check_vector_add, k, name="내 vector_add", hint="tl.store를 잊지 마세요")
    assert msg.startswith("❌ 내 vector_add (경우 1/2") and msg.endswith("(힌트: tl.store를 잊지 마세요)")
    assert "결과가 전혀 쓰이지 않았습니다" in msg


# --------------------------------------------------------------------------- contract: the kernel itself


def test_plain_launcher_gets_a_pass_the_kernel_message(tmp_path):
    k = kernel(tmp_path, "vector_add")

    def launch(x, y, out):
        k[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK_SIZE=128)

    msg = rejects(check_vector_add, launch)
    assert "launch 같은 실행 함수가 아니라 @triton.jit 커널 자체" in msg and "g.check_vector_add(add_kernel)" in msg


def test_missing_decorator_and_wrong_arguments(tmp_path):
    mod = load(tmp_path, master_source("vector_add").replace("@triton.jit\n", ""))
    assert "@triton.jit 데코레이터가 없습니다" in rejects(check_vector_add, mod.add_kernel)
    src = master_source("vector_add").replace("n_elements,  # 원소 수", "n_elements, extra,")
    msg = rejects(check_vector_add, kernel(tmp_path, "vector_add", src))
    assert "잠긴 launch 셀이 넘기는 인자와 다릅니다" in msg


def test_library_and_autotuned_kernels_are_not_the_exercise(tmp_path):
    kernels = pytest.importorskip("gemm_lab.kernels")
    msg = rejects(check_vector_add, kernels.add_kernel)  # the library's kernel takes strides: other arguments
    assert "인자와 다릅니다" in msg
    msg = rejects(check_matmul, 42)
    assert "진짜 Triton 커널이 아닙니다" in msg and "int" in msg


def test_redefined_launch_gains_nothing(tmp_path):
    # the stub kernel plus an added cell whose launch fills the output with torch: the grader never calls it
    entry = bad_kernels.by_name("vector_add_passes_launcher")
    mod = load(tmp_path, entry["source"], entry["added_cell"])
    torch_launch_works = torch.zeros(4)
    mod.launch(torch.ones(4), torch.ones(4), torch_launch_works)
    assert torch_launch_works.tolist() == [2.0] * 4
    assert "아직 구현하지 않았습니다" in rejects(check_vector_add, mod.add_kernel)


# --------------------------------------------------------------------------- autograder/samplekit/bad_kernels.py


def _interpreter_answer_is_right(exercise, k) -> bool:
    """Run the raw kernel through the trusted launcher's copy on plain tensors and compare with torch."""
    gen = torch.Generator().manual_seed(0)
    launch = EXERCISES[exercise].launch
    if exercise == "vector_add":
        x, y = torch.randn(1000, generator=gen), torch.randn(1000, generator=gen)
        out = torch.zeros(1000)
        launch(k, x, y, out)
        return torch.allclose(out, x + y)
    if exercise == "softmax":
        x = torch.randn(17, 33, generator=gen)
        out = torch.zeros(17, 33)
        launch(k, x, out)
        return torch.allclose(out, torch.softmax(x, dim=1), atol=1e-6)
    a = torch.randn(37, 50, generator=gen).half()
    b = torch.randn(50, 45, generator=gen).half()
    c = torch.zeros(37, 45, dtype=torch.float16)
    if exercise == "matmul":
        launch(k, a, b, c)
    else:
        tiles = triton.cdiv(37, 32) * triton.cdiv(45, 32)
        launch(k, a, b, c, 3, torch.zeros(tiles, dtype=torch.int32), torch.full((tiles,), -1, dtype=torch.int32))
    return torch.allclose(c.float(), a.float() @ b.float(), atol=2e-2, rtol=1e-2)


def test_bad_kernels_table_is_complete():
    entries = bad_kernels.BAD_KERNELS
    compile_only = [e for e in entries if e["kind"] == "compile"]
    assert len(compile_only) >= 6
    reasons = {e["message"] for e in compile_only}
    assert len(reasons) >= 4 and "K >= 16" in reasons
    assert {e["exercise"] for e in compile_only} == set(EXERCISES)
    assert any(e["kind"] == "unmasked" for e in entries) and any(e["kind"] == "fake" for e in entries)
    for e in entries:
        tests = EXERCISES[e["exercise"]].tests()
        assert e["notebook"] == EXERCISES[e["exercise"]].notebook and tests
        assert set(e["tests_lost"]) <= set(tests)
        assert master_cell(f"source/{EXERCISES[e['exercise']].notebook}.py", e["cell"])  # the cell it replaces exists
        if e["added_after"]:
            assert master_cell(f"source/{EXERCISES[e['exercise']].notebook}.py", e["added_after"])


@pytest.mark.parametrize("name", [e["name"] for e in bad_kernels.BAD_KERNELS])
def test_bad_kernel_is_rejected_with_its_message(tmp_path, name):
    e = bad_kernels.by_name(name)
    cells = [e["source"]] + ([e["added_cell"]] if e["added_cell"] else [])
    mod = load(tmp_path, *given(e["exercise"]), *cells)
    k = getattr(mod, EXERCISES[e["exercise"]].kernel)
    if e["interpreter_ok"] and runtime.INTERPRET:  # what the CPU grader used to see: a right answer
        assert _interpreter_answer_is_right(e["exercise"], k), name
    if e["kind"] == "compile" and not e["compiler_hangs"]:  # what triton's compiler says, straight (no cache)
        py = k.fn
        ex = e["exercise"]
        dtype = "float16" if ex in ("matmul", "persistent") else "float32"
        sig = launchers.signature(ex, launchers.check_arguments(py, ex, name), dtype)
        shapes = [[v.shape for v in c["inputs"]] for c in EXERCISES[ex].cases(False)]
        results = [compiler.compile_one(lambda: launchers.rebuild(py, "compile"), sig, consts, "sm_80")
                   for consts in EXERCISES[ex].constexprs(shapes, [3])]
        assert any(not r["ok"] and e["message"] in r["message"] for r in results), results
    kw = {"num_programs": [1, 3, 40], "ownership": True} if e["exercise"] == "persistent" else {}
    msg = rejects(CHECKS[e["exercise"]], k, hidden=True, **kw)
    try:  # a jit kernel the gate refuses gets the gate's message, in the notebook as in the grader
        gate.module_for([HEADER, *given(e["exercise"]), *cells], EXERCISES[e["exercise"]].kernel)
    except gate.Refused as exc:
        if str(exc) in msg:
            return
    assert e["message"] in msg, msg
    if e["kind"] == "compile":
        assert "컴파일되지 않습니다" in msg and "Traceback" not in msg
        assert e["compiler_hangs"] or "sm_75(T4)" in msg


def test_missing_constexpr_annotation_is_compiled_as_a_runtime_int(tmp_path):
    src = edited("vector_add", ("BLOCK_SIZE: tl.constexpr,", "BLOCK_SIZE,"))
    msg = rejects(check_vector_add, kernel(tmp_path, "vector_add", src))
    assert "arange's arguments must be of type tl.constexpr" in msg and "BLOCK_SIZE: tl.constexpr" in msg
