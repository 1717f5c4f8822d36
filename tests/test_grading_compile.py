"""The compile and static parts of the kernel checks: first-error extraction, CUBIN resources, the compile
cache (memory, disk, read-only, off, kept apart per source), and the unmasked-load analysis on kernels written
in several styles."""

import importlib.util
import time

import pytest

from gemm_lab import runtime  # noqa: F401  (before triton)

triton = pytest.importorskip("triton")

from gemm_lab import compile as gcompile  # noqa: E402
from gemm_lab.grading import cache  # noqa: E402
from gemm_lab.grading.kernels import compiler, launchers, static  # noqa: E402

HEADER = "import triton\nimport triton.language as tl\n\n"
ADD = '''@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(output_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)
'''
SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"}


def load(tmp_path, src: str, name: str = "k"):
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"{name}_{abs(hash(str(tmp_path)))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def functions(mod, name):
    py = launchers.genuine(getattr(mod, name), "vector_add", name)
    return launchers.student_functions(py)


# --------------------------------------------------------------------------- compile.first_error / resources


def test_first_error_names_the_line_and_message(tmp_path):
    mod = load(tmp_path, ADD.replace("mask = offsets < n_elements", "mask = {'m': offsets < n_elements}['m']"))
    with pytest.raises(Exception) as info:
        gcompile.compile_jit(mod.add_kernel, SIG, {"BLOCK_SIZE": 128}, "sm_80", cache=False)
    err = gcompile.first_error(info.value)
    assert err["kind"] == "UnsupportedLanguageConstruct"
    assert err["message"] == "unsupported AST node type: Dict"
    assert err["line"] == 4 and err["source"].startswith("mask = {")
    plain = gcompile.first_error(RuntimeError("\n\nPassManager::run failed\nmore text"))
    assert plain == {"kind": "RuntimeError", "message": "PassManager::run failed", "line": None, "source": None}


def test_resource_usage_reads_registers_from_the_cubin(tmp_path):
    mod = load(tmp_path, ADD)
    art = gcompile.compile_jit(mod.add_kernel, SIG, {"BLOCK_SIZE": 128}, "sm_80", cache=False)
    res = gcompile.resource_usage(art.cubin)
    assert 0 < res["regs"] <= 255 and res["local"] == 0
    assert gcompile.resource_usage(b"") == {}


# --------------------------------------------------------------------------- the cache


def _compile_check(mod, source):
    py = launchers.genuine(mod.add_kernel, "vector_add", "t")
    build = lambda: launchers.rebuild(py, "compile")  # noqa: E731
    found = compiler.cached((source,), [{"BLOCK_SIZE": 128}],
                            lambda todo: [compiler.results(build, SIG, c) for c in todo])
    return compiler.judge("vector_add", found)


def test_cache_memory_and_disk(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(folder))
    mod = load(tmp_path, ADD)
    source = f"test-cache-{time.time_ns()}"  # a key no other test has used
    t0 = time.perf_counter()
    line = _compile_check(mod, source)
    cold = time.perf_counter() - t0
    assert line.startswith("컴파일 sm_75(T4) 공유 메모리") and "sm_90(H100)" in line
    assert len(list(folder.glob("*.json"))) == 1  # one entry per constexpr set (every target in it)
    # in memory: nothing compiles again
    monkeypatch.setattr(gcompile, "compile_jit", lambda *a, **k: pytest.fail("compiled twice"))
    t0 = time.perf_counter()
    assert _compile_check(mod, source) == line
    warm = time.perf_counter() - t0
    assert warm < cold
    # on disk: a new process (empty memory) reads the files
    monkeypatch.setattr(cache, "_MEMORY", {})
    assert _compile_check(mod, source) == line


def test_cache_read_only_or_off(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(blocker / "cache"))  # cannot be created: read-only case
    mod = load(tmp_path, ADD)
    monkeypatch.setattr(cache, "_MEMORY", {})
    assert _compile_check(mod, f"ro-{time.time_ns()}").startswith("컴파일 ")
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", "off")
    assert cache.folder() is None
    assert _compile_check(mod, f"off-{time.time_ns()}").startswith("컴파일 ")


def test_corrupt_disk_entry_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(tmp_path / "cache"))
    mod = load(tmp_path, ADD)
    source = f"corrupt-{time.time_ns()}"
    line = _compile_check(mod, source)
    for kept in (tmp_path / "cache").glob("*.json"):
        kept.write_text('[{"ok": true}]')  # lacks the fields: not trusted, compiled again
    monkeypatch.setattr(cache, "_MEMORY", {})
    assert _compile_check(mod, source) == line


OK = {"ok": True, "kind": "", "message": "", "line": None, "source": None, "shared": 0, "regs": 8, "local": 0,
      "mma": "none"}


def test_kept_results_serve_only_their_own_source(tmp_path, monkeypatch):
    """What one source compiled (a student's own check, one hand-in's worker) is never read for another,
    nor by the grader's check of a held kernel for a result its own process kept; a refusal is kept too."""
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "_MEMORY", {})
    forged = [dict(OK, constexprs={}, target=t[0]) for t in compiler.TARGETS]
    asked = []

    def compile_missing(todo):
        asked.append(todo)
        return [forged] * len(todo)

    sources = [("in-process", "add_kernel\nsrc", "vector_add", "float32"),
               ("worker", "src", "add_kernel", "vector_add", "float32"),
               ("worker", "src2", "add_kernel", "vector_add", "float32"),
               ("worker", "src", "add_kernel", "vector_add", "float16")]
    for source in sources:
        assert compiler.cached(source, [{}], compile_missing) == forged
    assert asked == [[{}]] * len(sources)  # each one compiled on its own
    monkeypatch.setattr(cache, "_MEMORY", {})
    assert compiler.cached(sources[1], [{}], compile_missing) == forged and len(asked) == len(sources)
    refused = ("worker", "refused", "add_kernel", "vector_add", "float32")
    with pytest.raises(AssertionError, match="^no$"):
        compiler.cached(refused, [{}], lambda todo: [{"refused": "no"}])
    with pytest.raises(AssertionError, match="^no$"):
        compiler.cached(refused, [{}], lambda todo: pytest.fail("compiled again"))


def test_results_go_to_the_users_folder_only_where_the_caller_allows(tmp_path, monkeypatch):
    """With no folder named, a student's own checks keep results in the user's cache folder; the grader's
    worker results (``default_folder=False``) stay in its memory: that folder is the student's to write."""
    monkeypatch.delenv("GEMM_LAB_COMPILE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(cache, "_MEMORY", {})
    kept = [dict(OK, constexprs={}, target=t[0]) for t in compiler.TARGETS]
    where = tmp_path / "gemm_lab" / "compile_checks"
    compiler.cached(("worker", "src", "add_kernel", "vector_add", "float32"), [{}], lambda todo: [kept],
                    default_folder=False)
    assert not where.exists()
    compiler.cached(("in-process", "src", "vector_add", "float32"), [{}], lambda todo: [kept])
    assert len(list(where.glob("*.json"))) == 1
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(tmp_path / "named"))
    compiler.cached(("worker", "src3", "add_kernel", "vector_add", "float32"), [{}], lambda todo: [kept],
                    default_folder=False)
    assert len(list((tmp_path / "named").glob("*.json"))) == 1


def test_fingerprint_changes_with_source_and_globals(tmp_path):
    a = load(tmp_path, ADD, "a")
    b = load(tmp_path, ADD.replace("x_ptr + offsets, mask=mask) +", "x_ptr + offsets, mask=mask) * 1.0 +"), "b")
    fa = launchers.fingerprint(launchers.genuine(a.add_kernel, "vector_add", "t"))
    fb = launchers.fingerprint(launchers.genuine(b.add_kernel, "vector_add", "t"))
    assert fa != fb
    c = load(tmp_path, "SCALE = 2\n" + ADD.replace("+ tl.load(y_ptr", "* SCALE + tl.load(y_ptr"), "c")
    f2 = launchers.fingerprint(launchers.genuine(c.add_kernel, "vector_add", "t"))
    d = load(tmp_path, "SCALE = 3\n" + ADD.replace("+ tl.load(y_ptr", "* SCALE + tl.load(y_ptr"), "d")
    f3 = launchers.fingerprint(launchers.genuine(d.add_kernel, "vector_add", "t"))
    c.SCALE = 4  # the kernel is graded from its source (the gate), never from a value changed afterwards
    assert "SCALE = 2" in f2 and f2 != f3
    assert launchers.fingerprint(launchers.genuine(c.add_kernel, "vector_add", "t")) == f2


def test_shared_memory_over_the_t4_limit_fails(monkeypatch):
    class Fake:  # what compile_jit returns, with 80 KiB of shared memory
        cubin = b""
        shared = 80 * 1024

        def summary(self):
            return {"mma": "mma.sync"}

    monkeypatch.setattr(gcompile, "compile_jit", lambda *a, **k: Fake())
    with pytest.raises(AssertionError, match=r"sm_75\(T4\)에서 공유 메모리 80 KiB가 한도 64 KiB를 넘습니다"):
        compiler.judge("matmul", compiler.results(lambda: None, {}, {}))


# --------------------------------------------------------------------------- static: unmasked loads


def test_masked_styles_pass(tmp_path):
    styles = {
        "two_step": ADD,
        "positional_mask": ADD.replace("mask=mask) +", "mask) +"),
        "scalar_load": '''@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    scale = tl.load(y_ptr)  # one element: no block, no mask needed
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(output_ptr + offs, tl.load(x_ptr + offs, mask=offs < n_elements) * scale, mask=offs < n_elements)
''',
    }
    for name, src in styles.items():
        mod = load(tmp_path, src, name)
        assert static.unmasked_loads(functions(mod, "add_kernel")) == [], name


def test_unmasked_styles_are_found(tmp_path):
    styles = {
        "direct_arange": '''@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    base = tl.program_id(0) * BLOCK_SIZE
    v = tl.load(x_ptr + base + tl.arange(0, BLOCK_SIZE))
    tl.store(output_ptr + base + tl.arange(0, BLOCK_SIZE), v, mask=base + tl.arange(0, BLOCK_SIZE) < n_elements)
''',
        "pointer_advanced_in_loop": '''@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    p = x_ptr
    for i in range(0, 4):
        acc += tl.load(p)
        p += BLOCK_SIZE
        p = p + 0 * q
        q = tl.arange(0, BLOCK_SIZE)
    tl.store(output_ptr + tl.arange(0, BLOCK_SIZE), acc, mask=tl.arange(0, BLOCK_SIZE) < n_elements)
''',
        "in_a_helper": '''@triton.jit
def read(ptrs):
    return tl.load(ptrs)


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(output_ptr + offs, read(x_ptr + offs) + read(y_ptr + offs), mask=offs < n_elements)
''',
    }
    for name, src in styles.items():
        mod = load(tmp_path, src, name)
        found = static.unmasked_loads(functions(mod, "add_kernel"))
        assert found, name
    text = static.describe(found, "add_kernel")
    assert "@triton.jit 함수 read" in text and "tl.load(ptrs)" in text


def test_unfinished_stub(tmp_path):
    mod = load(tmp_path, '''@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # YOUR CODE HERE
    raise NotImplementedError()
''')
    with pytest.raises(AssertionError, match="아직 구현하지 않았습니다"):  # the gate, as in the grader
        functions(mod, "add_kernel")
    assert functions(load(tmp_path, ADD, "done"), "add_kernel")


def test_missing_compiler_tools_are_a_grader_problem_not_cached(monkeypatch, tmp_path):
    def no_ptxas(*a, **k):
        raise FileNotFoundError(2, "No such file or directory", "ptxas")

    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "_MEMORY", {})
    monkeypatch.setattr(gcompile, "compile_jit", no_ptxas)
    found = compiler.cached(("env",), [{}], lambda todo: [compiler.results(lambda: None, {}, c) for c in todo])
    with pytest.raises(AssertionError, match="채점 환경 문제로 sm_75\\(T4\\) 컴파일러를 실행하지 못했습니다"):
        compiler.judge("matmul", found)
    assert cache._MEMORY == {} and not list(tmp_path.iterdir())
