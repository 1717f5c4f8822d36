"""Genuine references to the few built-ins the checks use, and a guard that they were not rebound.

A check calls ``guard()`` on entry (and the kernel checks again after the student's launcher has run):
if a notebook rebound ``builtins.abs``, ``builtins.isinstance``, ``builtins.AssertionError`` or any
other name the grader's code looks up, the check fails with a Korean message instead of trusting it.
The references are obtained without looking the names up in builtins (from literals, ``__class__``
and the interpreter's own ``assert``), so a rebinding made before the grader was imported is caught too.
"""

from __future__ import annotations

from types import MappingProxyType as _MappingProxy

from . import _seal
from .feedback import REAL_ASSERTION_ERROR

__all__ = ["guard", "guard_torch", "torch_modes_active", "problems", "GENUINE", "REAL_BASE_EXCEPTION", "REAL_EXCEPTION"]

REAL_EXCEPTION = REAL_ASSERTION_ERROR.__mro__[1]
REAL_BASE_EXCEPTION = REAL_ASSERTION_ERROR.__mro__[2]
_TYPE = (0).__class__.__class__
_BUILTIN_FN = [].append.__class__

# Classes: compared by identity with the class of a literal.
GENUINE = _MappingProxy({
    "int": (0).__class__,
    "float": (0.0).__class__,
    "str": "".__class__,
    "bool": (0 == 0).__class__,
    "tuple": ().__class__,
    "list": [].__class__,
    "dict": {}.__class__,
    "set": {0}.__class__,
    "type": _TYPE,
    "object": (0).__class__.__mro__[-1],
    "AssertionError": REAL_ASSERTION_ERROR,
    "Exception": REAL_EXCEPTION,
    "BaseException": REAL_BASE_EXCEPTION,
})
# Functions: must be C built-ins of the builtins module with their own name.
_FUNCTIONS = (
    "abs", "all", "any", "callable", "enumerate", "getattr", "hasattr", "isinstance", "iter", "len",
    "max", "min", "next", "print", "range", "repr", "round", "sorted", "sum", "zip", "__import__",
    "exec", "compile",  # fresh() loads the grader and the calculators with them (_loader)
)
# range, enumerate and zip are classes, not functions.
_CLASSES_BY_NAME = ("range", "enumerate", "zip")


def problems(namespace=None) -> list[str]:
    """Names of built-ins that are not the genuine ones (empty list when all is well)."""
    if namespace is None:
        namespace = globals()["__builtins__"]
    if _TYPE(namespace) is not {}.__class__:
        namespace = namespace.__dict__
    bad = []
    for name, real in GENUINE.items():
        if real is None:
            continue
        if namespace.get(name, None) is not real:
            bad.append(name)
    for name in _FUNCTIONS:
        f = namespace.get(name, None)
        if name in _CLASSES_BY_NAME:
            ok = _TYPE(f) is _TYPE and f.__module__ == "builtins" and f.__name__ == name
        else:
            ok = (
                _TYPE(f) is _BUILTIN_FN
                and f.__name__ == name
                and getattr(f, "__self__", None) is not None
                and f.__self__.__name__ == "builtins"
            )
        if not ok:
            bad.append(name)
    return bad


def guard(name: str = "채점") -> None:
    """Fail (genuine AssertionError, Korean message) when the built-ins the grader uses were rebound."""
    bad = problems()
    if bad:
        raise REAL_ASSERTION_ERROR(
            f"❌ {name}: 채점 환경이 바뀌었습니다 — 내장 이름 {', '.join(bad)}이(가) 다른 객체로 "
            "바뀌어 있습니다. 노트북에서 builtins를 바꾸는 코드를 지우고 커널을 재시작한 뒤 다시 실행하세요."
        )


def torch_modes_active(torch) -> bool:
    """True when a TorchFunctionMode / TorchDispatchMode is active (it could make ``tolist`` lie), or when
    the functions that tell are not torch's own C functions."""
    C = torch._C
    for name in ("_len_torch_function_stack", "_len_torch_dispatch_stack"):
        f = getattr(C, name, None)
        if f is None:
            continue  # an older torch without the stack (then there is no mode to check)
        if _TYPE(f) is not _BUILTIN_FN or f.__name__ != name or getattr(f.__self__, "__name__", "") != "torch._C":
            return True
        if f() != 0:
            return True
    return False


def guard_torch(torch, name: str = "채점") -> None:
    """Fail when a torch function/dispatch mode is active (it can intercept every tensor read)."""
    if torch_modes_active(torch):
        raise REAL_ASSERTION_ERROR(
            f"❌ {name}: 채점 환경이 바뀌었습니다 — torch의 TorchFunctionMode/TorchDispatchMode가 켜져 있습니다. "
            "모드를 끄고(with 블록 밖에서) 커널을 재시작한 뒤 다시 실행하세요."
        )


_seal.seal(__name__)
