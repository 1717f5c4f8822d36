"""Load a package straight from its files: every ``*.py`` of its folder, dependencies first.

``fresh()`` uses it for ``gemm_lab.grading`` itself, and the grading package uses it for its private,
sealed copy of ``gemm_lab.calc`` (``g.calc``). Each file's code object comes from its file
(``SourceFileLoader.get_code``: the cached bytecode when current, else compiled once) and is executed
here into a module made by ``spec_from_file_location``, so neither ``sys.modules`` entries left by a
notebook nor ``sys.meta_path`` finders decide what runs. The submodules are discovered (every ``*.py``
of the folder except ``__init__.py``) and ordered by the imports their module-level code makes (its
IMPORT_NAME instructions), so a new module needs no list to be edited.

Cost of one ``fresh()`` (17 grading modules + 11 calculator files, 2-core CPU): about 35 ms with
bytecode caches, 55 ms without (``PYTHONDONTWRITEBYTECODE``).
"""

from __future__ import annotations

import dis
import os
import sys
import types

from . import _seal

__all__ = ["load_package", "load_calc", "module_files", "dependency_order"]

# Taken when gemm_lab.grading is first imported and handed on to every copy fresh() loads: a notebook
# that later rebinds builtins.exec/compile does not reach the loading (and _trusted.guard reports it).
_EXEC = exec
_COMPILE = compile
_OWN_FILE = os.path.abspath(sys._getframe().f_code.co_filename)


def module_files(directory: str) -> list[str]:
    """Names of the submodules (``*.py`` files other than ``__init__.py``) in ``directory``, sorted."""
    names = []
    for entry in os.listdir(directory):
        stem, ext = os.path.splitext(entry)
        if ext == ".py" and stem != "__init__" and stem.isidentifier():
            names.append(stem)
    return sorted(names)


def _module_level_imports(code, package: str) -> set[str]:
    """Sibling module names a module imports while it executes: the IMPORT_NAME instructions of its
    module-level code (function bodies are separate code objects and run later)."""
    found: set[str] = set()
    ins = list(dis.get_instructions(code))
    for i, op in enumerate(ins):
        if op.opname != "IMPORT_NAME" or i < 2:
            continue
        level, fromlist, module = ins[i - 2].argval, ins[i - 1].argval or (), op.argval or ""
        if level == 1:
            if module:
                found.add(module.split(".")[0])
            else:
                found.update(fromlist)
        elif level == 0 and module == package:
            found.update(fromlist)
        elif level == 0 and module.startswith(package + "."):
            found.add(module[len(package) + 1:].split(".")[0])
    return found


def _module_codes(directory: str) -> dict:
    """{submodule: code object}: the cached bytecode when importlib's own rules say it is current, else
    compiled from the source (so each file is compiled at most once per load)."""
    from importlib.machinery import SourceFileLoader

    codes = {}
    for name in module_files(directory):
        codes[name] = SourceFileLoader(name, os.path.join(directory, name + ".py")).get_code(name)
    return codes


def _order(codes: dict, package: str) -> list[str]:
    names = sorted(codes)
    deps = {n: {d for d in _module_level_imports(codes[n], package) if d in codes and d != n} for n in names}
    order: list[str] = []
    placed: set[str] = set()
    while len(order) < len(names):
        ready = [n for n in names if n not in placed and deps[n] <= placed]
        if not ready:  # a cycle: take the first remaining module and let Python's import sort it out
            ready = [next(n for n in names if n not in placed)]
        for n in ready:
            order.append(n)
            placed.add(n)
    return order


def dependency_order(directory: str, package: str) -> list[str]:
    """The submodules of ``directory`` in an order where each comes after the siblings it imports.

    Ties (and modules caught in an import cycle) keep alphabetical order.
    """
    return _order(_module_codes(directory), package)


def _drop(name: str) -> None:
    for key in list(sys.modules):
        if key == name or key.startswith(name + "."):
            del sys.modules[key]


def load_package(name: str, directory: str, seal_all: bool = False) -> types.ModuleType:
    """Execute ``directory``'s files as the package ``name`` (registered in ``sys.modules``) and return it.

    Existing ``sys.modules`` entries under ``name`` are dropped first. ``seal_all``: seal the package and
    every submodule afterwards (``_seal``: public names served from properties), for code that does not
    seal itself.
    """
    import importlib.util

    init = os.path.join(directory, "__init__.py")
    if not os.path.isfile(init):
        raise ValueError(f"directory {directory!r} has no __init__.py: not a package")
    _drop(name)
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[directory])
    pkg = importlib.util.module_from_spec(spec)
    sys.modules[name] = pkg
    loaded = []
    try:
        codes = _module_codes(directory)
        for sub in _order(codes, name):
            full = f"{name}.{sub}"
            if full not in sys.modules:  # not already imported by a sibling caught in an import cycle
                path = os.path.join(directory, sub + ".py")
                mod = importlib.util.module_from_spec(importlib.util.spec_from_file_location(full, path))
                sys.modules[full] = mod
                _EXEC(codes[sub], mod.__dict__)  # the code object the order was read from
                if os.path.abspath(path) == _OWN_FILE:
                    # the new loader keeps this one's exec/compile (genuine since the first import),
                    # not what builtins holds now
                    mod.__dict__["_EXEC"], mod.__dict__["_COMPILE"] = _EXEC, _COMPILE
            types.ModuleType.__setattr__(pkg, sub, sys.modules[full])
            loaded.append(full)
        with open(init, encoding="utf-8") as f:
            _EXEC(_COMPILE(f.read(), init, "exec"), pkg.__dict__)
    except BaseException:
        _drop(name)
        raise
    if seal_all:
        for mod_name in loaded + [name]:
            mod = sys.modules[mod_name]
            public = [k for k in mod.__dict__ if not k.startswith("_")]
            _seal.seal(mod_name, public, module=mod)
    return pkg


def load_calc(parent: str) -> types.ModuleType:
    """A private, sealed copy of ``gemm_lab.calc`` loaded from its files as ``<parent>.calc``.

    Test cells reach it as ``fresh().calc``: a notebook's own ``calc`` name, a patched
    ``gemm_lab.calc`` in ``sys.modules`` or an import hook never reach it. (The calculators import
    each other only relatively, which ``tests/test_grading_integrity.py`` checks.)
    """
    here = os.path.dirname(os.path.abspath(sys._getframe().f_code.co_filename))
    calc_dir = os.path.join(os.path.dirname(here), "calc")
    return load_package(parent + ".calc", calc_dir, seal_all=True)


_seal.seal(__name__)
