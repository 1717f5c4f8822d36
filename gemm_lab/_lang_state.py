"""A snapshot of ``triton.language`` taken before any kernel runs in the interpreter.

Triton's interpreter patches ``tl``'s builtins (``tl.load``, ``tl.tensor.__index__``, ``tl.range``,
``dtype.to_ir``, ...) while it runs a kernel, and a nested @jit call (``tl.cdiv``, a helper) patches
them again without restoring them (triton 3.7.1). Compiling for a GPU in the same process then fails
(``'ir.value' object has no attribute 'dtype'``). ``pristine_language()`` puts the snapshot back for
the duration of a compile and restores the current state afterwards.
"""

from __future__ import annotations

import contextlib

import triton.language as tl

_MISSING = object()


def _unwrap(val):
    # an interpreter patch keeps the original builtin as the keyword default ``member``
    for _ in range(64):
        code = getattr(val, "__code__", None)
        kw = getattr(val, "__kwdefaults__", None)
        if code is not None and code.co_filename.endswith("interpreter.py") and kw and "member" in kw:
            val = kw["member"]
        else:
            break
    return val


def _objects():
    objs = [tl, tl.core, tl.math, tl.tensor, tl.dtype, getattr(tl.core, "tensor_descriptor_base", None)]
    return [o for o in objs if o is not None]


_SNAPSHOT = [(obj, {k: _unwrap(val) for k, val in vars(obj).items()}) for obj in _objects()]


@contextlib.contextmanager
def pristine_language():
    saved = []
    try:
        for obj, snap in _SNAPSHOT:
            current = dict(vars(obj))
            for name, val in snap.items():
                cur = current.get(name, _MISSING)
                if cur is not val:
                    saved.append((obj, name, cur))
                    setattr(obj, name, val)
            for name in current.keys() - snap.keys():
                saved.append((obj, name, current[name]))
                delattr(obj, name)
        yield
    finally:
        for obj, name, val in reversed(saved):
            if val is _MISSING:
                with contextlib.suppress(AttributeError):
                    delattr(obj, name)
            else:
                setattr(obj, name, val)
