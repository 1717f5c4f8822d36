"""What the grader launches: the student's kernel, checked against its exercise record (``exercises``) and
rebuilt, run through the grader's own copy of the notebook's locked launcher cell, never through the
notebook's ``launch``.

A check receives the student's ``@triton.jit`` kernel itself (``g.check_matmul(student_matmul_kernel)``).
``genuine(obj, exercise, name)`` takes Triton's ``JITFunction`` (or the interpreter's ``InterpretedFunction``)
of a plain Python function, under any ``@triton.autotune`` / ``@triton.heuristics`` (the locked launcher sets
the constexprs itself), and gives the function the gate writes for the cells that defined it; a launcher or
any other object is refused with a Korean message.

``rebuild(py, mode)`` makes a new kernel object from that function's code with only the globals it names, the
@jit helpers it calls rebuilt the same way: ``mode="run"`` gives what the current runtime launches
(interpreter function under ``TRITON_INTERPRET=1``, JITFunction on a GPU), ``mode="interpret"`` the
interpreter's (the grader watches what its programs write), ``mode="compile"`` a JITFunction for
cross-compiling. ``signature`` and the record's ``constexprs(shapes, extras)`` (every distinct set of constexpr
values the launcher passes in a check, smallest first) are what the launcher makes Triton compile.
"""

from __future__ import annotations

import ast
import types

from .exercises import EXERCISES
from .static import _names

__all__ = ["genuine", "rebuild", "fingerprint", "student_functions", "check_arguments", "signature",
           "runtime_params"]


_SHORT = {"float16": "fp16", "float32": "fp32", "bfloat16": "bf16"}


def runtime_params(py, exercise: str) -> tuple:
    """The launcher's constexpr keywords that the student's kernel does not annotate ``tl.constexpr``: Triton
    then compiles them as runtime integers (and e.g. ``tl.arange(0, BLOCK_SIZE)`` fails), so the compile
    check must too. ``py`` is the gate's function, whose module postpones annotations: each is its text."""
    ann = py.__annotations__
    return tuple(n for n in EXERCISES[exercise].constexpr_params if "constexpr" not in str(ann.get(n, "")))


def signature(exercise: str, arg_names, dtype_name: str, runtime=()) -> dict:
    """Triton signature (student's argument name -> type) of what the locked launcher passes; ``runtime``:
    constexpr keywords the kernel takes as plain integers (see ``runtime_params``)."""
    ex = EXERCISES[exercise]
    out = {}
    for expected, actual in zip(ex.params, arg_names, strict=True):
        if expected in ex.constexpr_params and expected not in runtime:
            continue
        if expected in ex.pointers:
            out[actual] = "*" + _SHORT[dtype_name]
        elif expected in ex.int_pointers:
            out[actual] = "*i32"
        else:
            out[actual] = "i32"
    return out


# --------------------------------------------------------------------------- is it a real kernel?


def _classes():
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    return JITFunction, InterpretedFunction


def _is_jit(obj) -> bool:
    return type(obj) in _classes()


def genuine(obj, exercise: str, name: str):
    """The student's kernel as a plain Python function, as the gate writes it for the cells that defined it
    (``gate.notebook_kernel``), or the AssertionError (Korean) when ``obj`` is not a genuine @triton.jit
    kernel or the gate refuses it."""
    ex = EXERCISES[exercise]
    call = f"g.{ex.check}({ex.kernel})"
    while type(obj).__name__ in ("Autotuner", "Heuristics") and type(obj).__module__ == "triton.runtime.autotuner":
        obj = obj.fn  # the locked launcher sets the constexprs: the tuner's configs are not what is graded
    if _is_jit(obj):
        py = obj.fn
        if type(py) is types.FunctionType:
            from ..judge import gate

            return gate.notebook_kernel(py, name)
    elif type(obj) is types.FunctionType:
        params = obj.__code__.co_varnames[:obj.__code__.co_argcount]
        if obj.__name__ == ex.kernel or len(params) == len(ex.params):
            raise AssertionError(
                f"❌ {name}: {obj.__name__}에 @triton.jit 데코레이터가 없습니다. 커널 위에 @triton.jit을 붙이고 "
                f"{call}처럼 커널을 넘기세요.")
        raise AssertionError(
            f"❌ {name}: 채점기에는 launch 같은 실행 함수가 아니라 @triton.jit 커널 자체를 넘겨야 합니다: {call}. "
            "채점기는 노트북의 잠긴 launch 셀과 같은 인자·grid로 커널을 직접 실행합니다.")
    tname = type(obj).__name__
    raise AssertionError(
        f"❌ {name}: @triton.jit으로 정의한 진짜 Triton 커널이 아닙니다 (받은 객체의 타입: {tname}). 채점은 "
        "triton.jit이 만든 커널만 받습니다: 커널을 흉내 내는 객체나 torch 연산으로 만든 결과는 점수를 받을 수 "
        f"없습니다. {call}처럼 커널을 넘기세요.")


def check_arguments(py, exercise: str, name: str) -> tuple:
    """The kernel's argument names, checked against what the locked launcher passes."""
    ex = EXERCISES[exercise]
    code = py.__code__
    names = code.co_varnames[:code.co_argcount]
    expected = ex.params
    if not (len(names) == len(expected) and not code.co_kwonlyargcount and not (code.co_flags & 0x0C)
            and all(c in names and names.index(c) == expected.index(c) for c in ex.constexpr_params)):
        raise AssertionError(
            f"❌ {name}: 커널의 인자가 노트북의 잠긴 launch 셀이 넘기는 인자와 다릅니다. 기대한 인자: "
            f"({', '.join(expected)}); 받은 커널: {py.__name__}({', '.join(names)}). 인자 목록은 처음 주어진 "
            "그대로 두세요.")
    return tuple(names)


# --------------------------------------------------------------------------- rebuilding with its own globals


def _referenced(code) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if type(const) is types.CodeType:
            names |= _referenced(const)
    return names


def rebuild(py, mode: str, _memo=None):
    """A new kernel object from ``py``'s code with its own globals (see the module docstring)."""
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
    out = interp(new) if mode == "interpret" or mode == "run" and runtime.INTERPRET else jit(new)
    memo[id(py)] = out  # before the globals are filled: a helper that calls back finds it
    source = py.__globals__
    for n in _referenced(py.__code__) | _names_in(_source(py)):  # the source: Triton reads annotations, defaults
        if n not in source:
            continue
        val = source[n]
        glob[n] = rebuild(val.fn, mode, memo) if _is_jit(val) else val
    return out


def _source(py) -> str:
    import inspect
    import textwrap

    return textwrap.dedent(inspect.getsource(py))


def student_functions(py, _seen=None) -> list:
    """[(name, source, globals)] of the kernel and of the @jit helpers it calls."""
    seen = set() if _seen is None else _seen
    if id(py) in seen:
        return []
    seen.add(id(py))
    out = [(py.__name__, _source(py), py.__globals__)]
    for n in sorted(_referenced(py.__code__)):
        val = py.__globals__.get(n)
        if val is not None and _is_jit(val):
            out += student_functions(val.fn, seen)
    return out


def fingerprint(py) -> str:
    """Text that changes whenever what the compiler sees changes: the kernel's name and the module the gate
    wrote for it (``genuine``), which holds every @jit helper, constant and import the kernel reads."""
    import linecache

    return f"{py.__name__}\n" + "".join(linecache.getlines(py.__code__.co_filename))


def _names_in(src: str) -> set:
    try:
        return _names(ast.parse(src))
    except SyntaxError:
        return set()
