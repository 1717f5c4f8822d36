"""Load a package straight from its files: every ``*.py`` of its folder, dependencies first.

``fresh()`` uses it for ``gemm_lab.grading`` itself, and the grading package uses it for its private,
sealed copy of ``gemm_lab.calc`` (``g.calc``). Modules are created with ``spec_from_file_location``
and executed by their file loader, so neither ``sys.modules`` entries left by a notebook nor
``sys.meta_path`` finders decide what runs. The submodules are discovered (every ``*.py`` of the folder
except ``__init__.py``) and ordered by the relative imports each one makes at module level, so a new
module needs no list to be edited.
"""

from __future__ import annotations

import ast
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


def _module_level_imports(tree: ast.Module, package: str) -> set[str]:
    """Sibling module names imported while the module executes (function bodies are skipped)."""
    found: set[str] = set()
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1:
                if module:
                    found.add(module.split(".")[0])
                else:
                    found.update(a.name for a in node.names)
            elif node.level == 0 and module == package:
                found.update(a.name for a in node.names)
            elif node.level == 0 and module.startswith(package + "."):
                found.add(module[len(package) + 1:].split(".")[0])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(package + "."):
                    found.add(a.name[len(package) + 1:].split(".")[0])
        todo.extend(ast.iter_child_nodes(node))
    return found


def _read_trees(directory: str) -> dict[str, ast.Module]:
    trees = {}
    for name in module_files(directory):
        path = os.path.join(directory, name + ".py")
        with open(path, encoding="utf-8") as f:
            trees[name] = ast.parse(f.read(), filename=path)
    return trees


def _order(trees: dict[str, ast.Module], package: str) -> list[str]:
    names = sorted(trees)
    deps = {n: {d for d in _module_level_imports(trees[n], package) if d in trees and d != n} for n in names}
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
    return _order(_read_trees(directory), package)


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
        trees = _read_trees(directory)
        for sub in _order(trees, name):
            full = f"{name}.{sub}"
            if full not in sys.modules:  # not already imported by a sibling caught in an import cycle
                path = os.path.join(directory, sub + ".py")
                mod = importlib.util.module_from_spec(importlib.util.spec_from_file_location(full, path))
                sys.modules[full] = mod
                # the tree parsed for the order is compiled once (no second read or parse of the file)
                _EXEC(_COMPILE(trees[sub], path, "exec"), mod.__dict__)
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
