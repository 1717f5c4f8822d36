"""Read-only grader modules: a notebook's ``g.check_value = lambda *a: True`` raises instead of working.

``seal(module_name, public)`` switches the module's class (a documented Python feature) to a subclass of
``ModuleType`` that refuses to rebind or delete any name the module already has, and serves the names in
``public`` from class-level properties, so even a write into the module's ``__dict__`` does not change
what ``from gemm_lab.grading import fresh`` returns. New names (a submodule imported later) may still be
added. This stops the plain monkeypatching a notebook can do in one line; it does not stop a notebook that
replaces ``sys.modules["gemm_lab.grading"]`` or uses ctypes (see ``integrity``: those are flagged by
``scan_source`` and left to the sandbox).
"""

from __future__ import annotations

import sys
import types

__all__ = ["seal", "SealedModule"]


class _SealedMeta(type):
    def __setattr__(cls, name, value):
        raise AttributeError(f"{cls.__name__} is read-only")

    def __delattr__(cls, name):
        raise AttributeError(f"{cls.__name__} is read-only")


class SealedModule(types.ModuleType, metaclass=_SealedMeta):
    """A module whose existing attributes cannot be rebound or deleted."""

    def __setattr__(self, name, value):
        if name == "__class__" or name in self.__dict__ or name in type(self).__dict__:
            raise AttributeError(
                f"{self.__name__}.{name} is read-only: a notebook cannot replace the grader "
                "(채점기는 바꿀 수 없습니다)"
            )
        types.ModuleType.__setattr__(self, name, value)

    def __delattr__(self, name):
        raise AttributeError(f"{self.__name__}.{name} cannot be deleted (채점기는 바꿀 수 없습니다)")


def seal(module_name: str, public=(), module=None) -> None:
    """Make a module read-only; ``public`` names are served from properties.

    ``module``: the module object (default ``sys.modules[module_name]``). A module whose class is already a
    ``ModuleType`` subclass (``gemm_lab.calc.roofline`` is callable) keeps that class as a base.
    """
    mod = sys.modules[module_name] if module is None else module
    ns = {"__module__": __name__}
    for name in public:
        value = mod.__dict__[name]
        ns[name] = property(lambda self, _v=value: _v)
    current = type(mod)
    bases = (SealedModule,)
    if current is not types.ModuleType and not isinstance(current, _SealedMeta):
        bases = (SealedModule, current)
    cls = _SealedMeta("SealedModule", bases, ns)
    types.ModuleType.__setattr__(mod, "__class__", cls)


seal(__name__)  # this module too: `g._seal.seal = ...` raises
