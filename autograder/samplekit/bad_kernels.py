"""Hand-in kernels that a grader running them only in the CPU interpreter would over-score: data for sample
hand-ins and for the tests.

Each entry of ``BAD_KERNELS`` is one student's answer to one kernel exercise: ``source`` replaces the
solution cell ``cell`` of ``notebook`` (the kernel keeps the exercise's name and arguments), and
``added_cell`` (optional) is a cell the student added right after the cell named by ``added_after``.

``kind``:

* ``"compile"`` — runs correctly under ``TRITON_INTERPRET=1`` (``interpreter_ok``) but triton 3.7.1's
  compiler refuses it for sm_75/sm_80/sm_90 (``reason``: why), or never finishes compiling it
  (``compiler_hangs``: recursion, which the grader refuses statically). A grader that only ran it in the interpreter
  would give it full marks on a CPU, and it fails on a Colab T4.
* ``"unmasked"`` — right answer in the interpreter (the out-of-bounds lanes are read but never stored), but
  a ``tl.load`` of a pointer block has no mask: on a GPU it reads out of bounds. Caught statically.
* ``"fake"`` — not a real kernel's work: the object passed, or a rebound name, tries to get the points
  without a working kernel.

The notebook, its kernel cell and its test cells come from the exercise record
(``gemm_lab.grading.kernels.exercises``). ``message`` is a fragment of the Korean feedback the check gives;
``tests_lost`` are the test cells (grade ids) that must score 0 in the sample, every other test cell of the
notebook keeps its points.
``tests/test_grading_kernels.py`` proves, for every entry, that the interpreter part holds and that the
check fails with ``message``.
"""

from __future__ import annotations

from gemm_lab.grading.kernels.exercises import EXERCISES

__all__ = ["BAD_KERNELS", "by_name"]

_MATMUL_HEAD = '''@triton.jit
def student_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
):
    """C[M, N] = A[M, K] @ B[K, N]; one program computes one [BLOCK_SIZE_M, BLOCK_SIZE_N] tile of C."""
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
'''
_MATMUL_STORE = '''    c = accumulator.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)
'''
_PERSISTENT_HEAD = '''@triton.jit
def student_persistent_kernel(
    a_ptr, b_ptr, c_ptr, visits_ptr, owner_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    NUM_PROGRAMS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """C[M, N] = A[M, K] @ B[K, N]; program pid computes tiles pid, pid + NUM_PROGRAMS, ..."""
'''
# The tile body of the blog's TODO 4 (as in the master), for a loop variable ``tile_id``, at 8 spaces.
_TILE_BODY = '''        num_n = tl.cdiv(N, BLOCK_N)
        rows = (tile_id // num_n) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = (tile_id % num_n) * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            ks = k + tl.arange(0, BLOCK_K)
            a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak,
                        mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
            b = tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn,
                        mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
                 mask=(rows[:, None] < M) & (cols[None, :] < N))
        record_tile(tile_id, visits_ptr, owner_ptr)
'''


def _entry(name, exercise, kind, reason, message, source, *, interpreter_ok=True, added_cell=None,
           added_after=None, tests_lost=None, compiler_hangs=False):
    ex = EXERCISES[exercise]
    return {
        "name": name, "exercise": exercise, "notebook": ex.notebook, "cell": ex.solution_cell, "kind": kind,
        "reason": reason, "message": message, "source": source, "interpreter_ok": interpreter_ok,
        "compiler_hangs": compiler_hangs,
        "added_cell": added_cell, "added_after": added_after,
        "tests_lost": tuple(tests_lost if tests_lost is not None else
                            [g for g in ex.tests() if g != "every_tile_once_by_its_program"]),
    }


BAD_KERNELS = (
    # ------------------------------------------------------------------ interpreter-only kernels
    _entry("matmul_block_k_8", "matmul", "compile",
           "tl.dot on 16×8 @ 8×16 blocks: the K chunk is hard-coded to 8; tl.dot needs every dimension >= 16",
           "K >= 16", _MATMUL_HEAD + '''    STEP: tl.constexpr = 8  # K를 8씩: 해석기에서는 맞게 돈다
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, STEP)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, STEP)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * STEP, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * STEP, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += STEP * stride_ak
        b_ptrs += STEP * stride_bk
''' + _MATMUL_STORE),
    _entry("matmul_while_break", "matmul", "compile",
           "the K loop is a `while True` left with `break`: the compiler has no break",
           "AST node type: Break", _MATMUL_HEAD + '''    rows = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    cols = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    ks = tl.arange(0, BLOCK_SIZE_K)
    pa = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    pb = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    k0 = 0
    while True:
        if k0 >= K:
            break
        a = tl.load(pa, mask=ks[None, :] < K - k0, other=0.0)
        b = tl.load(pb, mask=ks[:, None] < K - k0, other=0.0)
        accumulator += tl.dot(a, b)
        pa += BLOCK_SIZE_K * stride_ak
        pb += BLOCK_SIZE_K * stride_bk
        k0 += BLOCK_SIZE_K
''' + _MATMUL_STORE),
    _entry("vector_add_dict", "vector_add", "compile",
           "a Python dict inside @triton.jit", "AST node type: Dict", '''@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    inputs = {"x": tl.load(x_ptr + offsets, mask=mask), "y": tl.load(y_ptr + offsets, mask=mask)}
    tl.store(output_ptr + offsets, inputs["x"] + inputs["y"], mask=mask)
'''),
    _entry("vector_add_fstring_print", "vector_add", "compile",
           "print() of an f-string with a tensor (pid): only constexpr values can be formatted",
           "f-string", '''@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    if pid == 0:
        print(f"debug: program {pid}, n = {n_elements}")
    start = pid * BLOCK_SIZE
    idx = start + tl.arange(0, BLOCK_SIZE)
    ok = idx < n_elements
    tl.store(output_ptr + idx, tl.load(x_ptr + idx, mask=ok) + tl.load(y_ptr + idx, mask=ok), mask=ok)
'''),
    _entry("vector_add_python_helper", "vector_add", "compile",
           "calls a plain Python function (not @triton.jit) from the kernel",
           "Unsupported function referenced", '''def combine(a, b):
    """Plain Python: fine in the interpreter, unknown to the compiler."""
    return a + b


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, combine(x, y), mask=mask)
'''),
    _entry("vector_add_recursive_helper", "vector_add", "compile",
           "a recursive @triton.jit helper: the interpreter runs it, triton 3.7.1's compiler never finishes "
           "(killed after 60 s for sm_80); the grader refuses recursion statically before compiling",
           "재귀 호출", '''@triton.jit
def add_times(x, y, times):
    if times == 0:
        return x
    return add_times(x + y, y, times - 1)


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, add_times(x, y, n_elements - n_elements + 1), mask=mask)
''', compiler_hangs=True),
    _entry("softmax_lambda", "softmax", "compile",
           "a lambda inside @triton.jit", "AST node type: Lambda", '''@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, input_col_stride,
                   output_col_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK_SIZE)
    inside = c < n_cols
    v = tl.load(input_ptr + r * input_row_stride + c * input_col_stride, mask=inside, other=-float("inf"))
    stable = lambda t: t - tl.max(t, axis=0)  # noqa: E731
    e = tl.exp(stable(v))
    tl.store(output_ptr + r * output_row_stride + c * output_col_stride, e / tl.sum(e, axis=0), mask=inside)
'''),
    _entry("softmax_loop_break", "softmax", "compile",
           "a row loop that `break`s after the first row", "AST node type: Break", '''@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, input_col_stride,
                   output_col_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr):
    first = tl.program_id(0)
    for row_idx in range(first, n_rows):
        cols = tl.arange(0, BLOCK_SIZE)
        m = cols < n_cols
        row = tl.load(input_ptr + row_idx * input_row_stride + cols * input_col_stride, mask=m,
                      other=-float("inf"))
        num = tl.exp(row - tl.max(row, axis=0))
        tl.store(output_ptr + row_idx * output_row_stride + cols * output_col_stride,
                 num / tl.sum(num, axis=0), mask=m)
        break
'''),
    _entry("softmax_dict_for_short_rows", "softmax", "compile",
           "a dict only in a branch taken for BLOCK_SIZE == 16 (rows of 9 to 16 columns): the compiler compiles "
           "the branch a constexpr takes, so only the launch with BLOCK_SIZE=16 fails", "AST node type: Dict",
           '''@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, input_col_stride,
                   output_col_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    keep = offs < n_cols
    x = tl.load(input_ptr + row_idx * input_row_stride + offs * input_col_stride, mask=keep, other=-float("inf"))
    if BLOCK_SIZE == 16:
        parts = {"max": tl.max(x, axis=0)}
        e = tl.exp(x - parts["max"])
    else:
        e = tl.exp(x - tl.max(x, axis=0))
    tl.store(output_ptr + row_idx * output_row_stride + offs * output_col_stride, e / tl.sum(e, axis=0), mask=keep)
'''),
    _entry("persistent_python_range_helper", "persistent", "compile",
           "the tile loop's range comes from a plain Python function", "Unsupported function referenced",
           '''def my_tiles(pid, num_tiles, step):
    return range(pid, num_tiles, step)


''' + _PERSISTENT_HEAD + '''    pid = tl.program_id(0)
    num_tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    for tile_id in my_tiles(pid, num_tiles, NUM_PROGRAMS):
''' + _TILE_BODY,
           tests_lost=["persistent_matches_torch_visible", "persistent_matches_torch_hidden",
                       "every_tile_once_by_its_program"]),
    _entry("persistent_while_break", "persistent", "compile",
           "the persistent loop is a `while` left with `break`", "AST node type: Break",
           _PERSISTENT_HEAD + '''    tile_id = tl.program_id(0)
    total = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    while True:
        if tile_id >= total:
            break
''' + _TILE_BODY + '''        tile_id += NUM_PROGRAMS
''',
           tests_lost=["persistent_matches_torch_visible", "persistent_matches_torch_hidden",
                       "every_tile_once_by_its_program"]),
    # ------------------------------------------------------------------ unmasked loads
    _entry("vector_add_unmasked_loads", "vector_add", "unmasked",
           "x and y are loaded without a mask; only the store is masked", "마스크 없는 로드", '''@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)
    y = tl.load(y_ptr + offsets)
    tl.store(output_ptr + offsets, x + y, mask=offsets < n_elements)
'''),
    _entry("vector_add_mask_none_alias", "vector_add", "unmasked",
           "triton.language under another alias, mask=None spelled out, offsets built in two steps",
           "마스크 없는 로드", '''import triton.language as language


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    lanes = language.arange(0, BLOCK_SIZE)
    where = language.program_id(axis=0) * BLOCK_SIZE + lanes
    keep = where < n_elements
    a = language.load(x_ptr + where, mask=keep)
    b = language.load(y_ptr + where, mask=None)
    language.store(output_ptr + where, a + b, mask=keep)
'''),
    # ------------------------------------------------------------------ fakes
    _entry("matmul_fake_jit_object", "matmul", "fake",
           "an object with [grid](...) that computes c with torch.matmul, named like the kernel",
           "진짜 Triton 커널이 아닙니다", '''class _Kernel:
    def __getitem__(self, grid):
        def run(a, b, c, *args, **kwargs):
            c.copy_(torch.matmul(a.float(), b.float()).to(c.dtype))
        return run


student_matmul_kernel = _Kernel()
''', interpreter_ok=False),
    _entry("vector_add_passes_launcher", "vector_add", "fake",
           "an added cell rebinds `launch` to torch and the old-style test passes it; the kernel is the stub",
           "아직 구현하지 않았습니다", '''@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    raise NotImplementedError()
''', interpreter_ok=False, added_after="ex4_launcher", added_cell='''def launch(x, y, out):
    out.copy_(x + y)
    return out
'''),
    # (named after an older given helper, compute_tile, that held the whole tile body)
    _entry("persistent_own_compute_tile", "persistent", "fake",
           "tiles in contiguous blocks per program (right values, wrong owners), and an added cell redefines "
           "the given record_tile to forge the owner records (tile % tl.num_programs); the grader uses its own "
           "record_tile", "program pid는",
           _PERSISTENT_HEAD + '''    pid = tl.program_id(0)
    num_tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    per = tl.cdiv(num_tiles, NUM_PROGRAMS)
    for tile_id in tl.range(pid * per, tl.minimum(pid * per + per, num_tiles)):
''' + _TILE_BODY,
           added_after="given_record_tile", added_cell='''@triton.jit
def record_tile(tile_id, visits_ptr, owner_ptr):
    tl.atomic_add(visits_ptr + tile_id, 1)
    tl.store(owner_ptr + tile_id, tile_id % tl.num_programs(0))
''',
           tests_lost=["every_tile_once_by_its_program"]),
)


def by_name(name: str) -> dict:
    """The entry called ``name``."""
    for entry in BAD_KERNELS:
        if entry["name"] == name:
            return entry
    raise KeyError(f"no bad kernel named {name!r}; known: {', '.join(e['name'] for e in BAD_KERNELS)}")

