"""The grader's trusted launchers: each graded kernel runs through the grader's own copy of the notebook's
locked launcher cell, never through the notebook's ``launch``.

A check receives the student's ``@triton.jit`` kernel itself (``g.check_matmul(student_matmul_kernel)``).
``genuine(obj, exercise, name)`` accepts only an object whose type is exactly Triton's ``JITFunction`` (or
the interpreter's ``InterpretedFunction``) wrapping a plain Python function, under any ``@triton.autotune`` /
``@triton.heuristics`` (graded through the locked launcher, which sets the constexprs itself); a launcher or
an object whose ``[grid](...)`` calls torch is refused with a Korean message.

``rebuild(py, exercise, mode)`` makes a new kernel object from the student's function code with its own,
minimal globals: only the names the kernel refers to, ``triton``/``triton.language`` bound to the real
modules, the @jit helpers it calls (the notebook's given ones too: what they record is no evidence, the grader
watches what the programs write) rebuilt the same way. ``mode="run"`` gives what the current runtime launches (interpreter
function under ``TRITON_INTERPRET=1``, JITFunction on a GPU), ``mode="interpret"`` the interpreter's (the
grader watches what its programs write), ``mode="compile"`` a JITFunction for cross-compiling.
``EXERCISES[...]["launch"]`` are the locked launchers' copies (same arguments, grid and constexprs as the
masters' cells); ``signature`` and ``EXERCISES[...]["constexprs"](cases, extras)`` (every distinct set of
constexpr values the launcher passes in a check, smallest first) are what they make Triton compile.
"""

from __future__ import annotations

import types

__all__ = ["EXERCISES", "genuine", "rebuild", "fingerprint", "student_functions", "check_arguments",
           "signature", "runtime_params"]

_TYPE = (0).__class__.__class__


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


# --------------------------------------------------------------------------- the locked launchers' copies


def _launch_vector_add(kernel, x, y, out):
    """week06/01 ``launch(x, y, out)``: one program per 128 elements."""
    n_elements = out.numel()
    kernel[(_cdiv(n_elements, 128),)](x, y, out, n_elements, BLOCK_SIZE=128)


def _launch_softmax(kernel, x, out):
    """week06/02 ``launch(x, out)``: one program per row, BLOCK_SIZE = next_power_of_2(n_cols)."""
    n_rows, n_cols = x.shape
    kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), x.stride(1), out.stride(1), n_rows, n_cols,
                      BLOCK_SIZE=_next_pow2(n_cols))


def _launch_matmul(kernel, a, b, c):
    """week07/01 ``launch(a, b, c)``: 16×16×16 tiles, one program per C tile."""
    M, K = a.shape
    N = b.shape[1]
    kernel[(_cdiv(M, 16) * _cdiv(N, 16),)](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16)


def _launch_persistent(kernel, a, b, c, num_programs, visits, owner):
    """week07/06 ``launch(a, b, c, num_programs, visits=..., owner=...)``: 32×32×32 tiles."""
    M, K = a.shape
    N = b.shape[1]
    kernel[(num_programs,)](
        a, b, c, visits, owner, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        NUM_PROGRAMS=num_programs, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)


_MM_INTS = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")

EXERCISES = {
    "vector_add": {
        "kernel": "add_kernel", "check": "check_vector_add", "notebook": "week06/01_block_model",
        "params": ("x_ptr", "y_ptr", "output_ptr", "n_elements", "BLOCK_SIZE"),
        "pointers": ("x_ptr", "y_ptr", "output_ptr"), "int_pointers": (),
        "launch": _launch_vector_add,
        "constexprs": lambda cases, extras: [{"BLOCK_SIZE": 128}],
    },
    "softmax": {
        "kernel": "softmax_kernel", "check": "check_softmax", "notebook": "week06/02_fusion_softmax",
        "params": ("output_ptr", "input_ptr", "input_row_stride", "output_row_stride", "input_col_stride",
                   "output_col_stride", "n_rows", "n_cols", "BLOCK_SIZE"),
        "pointers": ("output_ptr", "input_ptr"), "int_pointers": (),
        "launch": _launch_softmax,
        "constexprs": lambda cases, extras: [
            {"BLOCK_SIZE": b} for b in sorted({_next_pow2(c["inputs"][0].shape[1]) for c in cases})],
    },
    "matmul": {
        "kernel": "student_matmul_kernel", "check": "check_matmul", "notebook": "week07/01_pointer_blocks",
        "params": ("a_ptr", "b_ptr", "c_ptr") + _MM_INTS + ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"),
        "pointers": ("a_ptr", "b_ptr", "c_ptr"), "int_pointers": (),
        "launch": _launch_matmul,
        "constexprs": lambda cases, extras: [{"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 16, "BLOCK_SIZE_K": 16}],
    },
    "persistent": {
        "kernel": "student_persistent_kernel", "check": "check_persistent", "notebook": "week07/06_persistent_loop",
        "params": ("a_ptr", "b_ptr", "c_ptr", "visits_ptr", "owner_ptr") + _MM_INTS
        + ("NUM_PROGRAMS", "BLOCK_M", "BLOCK_N", "BLOCK_K"),
        "pointers": ("a_ptr", "b_ptr", "c_ptr"), "int_pointers": ("visits_ptr", "owner_ptr"),
        "launch": _launch_persistent,
        "constexprs": lambda cases, extras: [
            {"NUM_PROGRAMS": p, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32} for p in sorted(set(extras))],
    },
}
_CONSTEXPR_PARAMS = {
    "vector_add": ("BLOCK_SIZE",), "softmax": ("BLOCK_SIZE",),
    "matmul": ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"),
    "persistent": ("NUM_PROGRAMS", "BLOCK_M", "BLOCK_N", "BLOCK_K"),
}
_SHORT = {"float16": "fp16", "float32": "fp32", "bfloat16": "bf16"}


def runtime_params(py, exercise: str) -> tuple:
    """The launcher's constexpr keywords that the student's kernel does not annotate ``tl.constexpr``: Triton
    then compiles them as runtime integers (and e.g. ``tl.arange(0, BLOCK_SIZE)`` fails), so the compile
    check must too."""
    ann = py.__annotations__
    out = []
    for name in _CONSTEXPR_PARAMS[exercise]:
        a = ann.get(name)
        if a is None:
            text = ""
        elif _TYPE(a) is "".__class__:  # postponed annotations: "tl.constexpr"
            text = a
        else:  # the class tl.constexpr itself, or an instance of it
            text = getattr(a, "__name__", "") if _TYPE(a) is _TYPE else _TYPE(a).__name__
        if "constexpr" not in text:
            out.append(name)
    return tuple(out)


def signature(exercise: str, arg_names, dtype_name: str, runtime=()) -> dict:
    """Triton signature (student's argument name -> type) of what the trusted launcher passes; ``runtime``:
    constexpr keywords the kernel takes as plain integers (see ``runtime_params``)."""
    ex = EXERCISES[exercise]
    out = {}
    for expected, actual in zip(ex["params"], arg_names, strict=True):
        if expected in _CONSTEXPR_PARAMS[exercise] and expected not in runtime:
            continue
        if expected in ex["pointers"]:
            out[actual] = "*" + _SHORT[dtype_name]
        elif expected in ex["int_pointers"]:
            out[actual] = "*i32"
        else:
            out[actual] = "i32"
    return out


# --------------------------------------------------------------------------- is it a real kernel?


def _classes():
    from triton.runtime.jit import JITFunction

    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover - every supported triton has it
        InterpretedFunction = None
    return JITFunction, InterpretedFunction


def _is_jit(obj) -> bool:
    jit, interp = _classes()
    t = _TYPE(obj)
    return t is jit or (interp is not None and t is interp)


def genuine(obj, exercise: str, name: str):
    """The student's kernel as a plain Python function, as the gate writes it for the cells that defined it
    (``gate.notebook_kernel``), or the AssertionError (Korean) when ``obj`` is not a genuine @triton.jit
    kernel or the gate refuses it."""
    ex = EXERCISES[exercise]
    call = f"g.{ex['check']}({ex['kernel']})"
    while _TYPE(obj).__name__ in ("Autotuner", "Heuristics") and _TYPE(obj).__module__ == "triton.runtime.autotuner":
        obj = obj.fn  # the locked launcher sets the constexprs: the tuner's configs are not what is graded
    if _is_jit(obj):
        py = obj.fn
        if _TYPE(py) is types.FunctionType:
            from . import gate

            return gate.notebook_kernel(py, name)
    elif _TYPE(obj) is types.FunctionType:
        params = obj.__code__.co_varnames[:obj.__code__.co_argcount]
        if obj.__name__ == ex["kernel"] or len(params) == len(ex["params"]):
            raise AssertionError(
                f"❌ {name}: {obj.__name__}에 @triton.jit 데코레이터가 없습니다. 커널 위에 @triton.jit을 붙이고 "
                f"{call}처럼 커널을 넘기세요.")
        raise AssertionError(
            f"❌ {name}: 채점기에는 launch 같은 실행 함수가 아니라 @triton.jit 커널 자체를 넘겨야 합니다: {call}. "
            "채점기는 노트북의 잠긴 launch 셀과 같은 인자·grid로 커널을 직접 실행합니다.")
    tname = _TYPE(obj).__name__
    raise AssertionError(
        f"❌ {name}: @triton.jit으로 정의한 진짜 Triton 커널이 아닙니다 (받은 객체의 타입: {tname}). 채점은 "
        "triton.jit이 만든 커널만 받습니다: 커널을 흉내 내는 객체나 torch 연산으로 만든 결과는 점수를 받을 수 "
        f"없습니다. {call}처럼 커널을 넘기세요.")


def check_arguments(py, exercise: str, name: str) -> tuple:
    """The kernel's argument names, checked against what the trusted launcher passes."""
    ex = EXERCISES[exercise]
    code = py.__code__
    names = code.co_varnames[:code.co_argcount]
    expected = ex["params"]
    ok = len(names) == len(expected) and not code.co_kwonlyargcount and not (code.co_flags & 0x0C)
    for c in _CONSTEXPR_PARAMS[exercise]:
        ok = ok and c in names and names.index(c) == expected.index(c)
    if not ok:
        raise AssertionError(
            f"❌ {name}: 커널의 인자가 노트북의 잠긴 launch 셀이 넘기는 인자와 다릅니다. 기대한 인자: "
            f"({', '.join(expected)}); 받은 커널: {py.__name__}({', '.join(names)}). 인자 목록은 처음 주어진 "
            "그대로 두세요.")
    return tuple(names)


# --------------------------------------------------------------------------- rebuilding with trusted globals


def _referenced(code) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if _TYPE(const) is types.CodeType:
            names |= _referenced(const)
    return names


def _real_module(mod):
    import importlib

    name = mod.__name__ if _TYPE(mod.__name__) is "".__class__ else ""
    if name == "triton" or name.startswith("triton."):
        try:
            return importlib.import_module(name)
        except ImportError:  # a module object that only calls itself triton.*: left as is, the compiler decides
            return mod
    return mod


def rebuild(py, exercise: str, mode: str, _memo=None):
    """A new kernel object from ``py``'s code with trusted globals (see the module docstring)."""
    import builtins

    from gemm_lab import runtime

    jit, interp = _classes()
    memo = {} if _memo is None else _memo
    if id(py) in memo:
        return memo[id(py)]
    glob = {"__builtins__": builtins}
    new = types.FunctionType(py.__code__, glob, py.__name__, py.__defaults__, py.__closure__)
    new.__module__, new.__qualname__, new.__doc__ = py.__module__, py.__qualname__, py.__doc__
    new.__kwdefaults__ = py.__kwdefaults__
    new.__annotations__ = dict(py.__annotations__)
    use_interp = (mode == "interpret" or mode == "run" and runtime.INTERPRET) and interp is not None
    out = interp(new) if use_interp else jit(new)
    memo[id(py)] = out  # before the globals are filled: a helper that calls back finds it
    source = py.__globals__
    for n in _referenced(py.__code__) | _names_in(_source(py)):  # the source: Triton reads annotations, defaults
        if n not in source:
            continue
        val = source[n]
        if _is_jit(val):
            val = rebuild(val.fn, exercise, mode, memo)
        elif _TYPE(val) is types.ModuleType:
            val = _real_module(val)
        glob[n] = val
    return out


def _source(py) -> str:
    import inspect
    import textwrap

    return textwrap.dedent(inspect.getsource(py))


def student_functions(py, exercise: str, _seen=None) -> list:
    """[(name, source, globals)] of the kernel and of the @jit helpers it calls."""
    seen = set() if _seen is None else _seen
    if id(py) in seen:
        return []
    seen.add(id(py))
    out = [(py.__name__, _source(py), py.__globals__)]
    for n in sorted(_referenced(py.__code__)):
        val = py.__globals__.get(n)
        if val is not None and _is_jit(val):
            out += student_functions(val.fn, exercise, seen)
    return out


def fingerprint(py, exercise: str) -> str:
    """Text that changes whenever what the compiler sees changes: the kernel's source, its @jit helpers'
    sources, and the values of the other globals it names."""
    parts = []
    for fname, src, glob in student_functions(py, exercise):
        parts.append(f"def {fname}\n{src}")
        for n in sorted(_names_in(src)):
            if n not in glob:
                continue
            val = glob[n]
            if _is_jit(val):
                parts.append(f"{n}=jit:{val.fn.__name__}")
            elif _TYPE(val) is types.ModuleType:
                parts.append(f"{n}=module:{val.__name__}")
            elif _TYPE(val) in (int, float, bool, str, _TYPE(None)):
                parts.append(f"{n}={val!r}")
            elif _TYPE(val) is types.FunctionType:
                parts.append(f"{n}=function:{val.__qualname__}")
            else:
                try:
                    text = "".__class__(val)
                except Exception:  # noqa: BLE001 - a value whose str() fails still gets a key
                    text = "?"
                parts.append(f"{n}={_TYPE(val).__name__}:{text[:200]}")
    return "\n".join(parts)


def _names_in(src: str) -> set:
    import ast

    try:
        tree = ast.parse(src)
    except SyntaxError:
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
