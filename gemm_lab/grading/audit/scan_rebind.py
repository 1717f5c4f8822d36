"""Static scan rules for what a student's cell does to the notebook's given names and to IPython's history.

Two findings, used by ``integrity.scan_source``:

* ``LOCKED_REBIND``: the cell rebinds, deletes or mutates a *protected* name: a name the notebook's
  locked cells define (their imports such as ``calc``, ``rf``, ``sm``; functions such as a given
  ``launch``; helper values such as ``expected_table``, ``CONFIGS``, ``M``) or a ``gemm_lab`` calculator
  module name (``calc``, ``tiling``, ``roofline``, ...). Every way Python binds a global counts:
  assignment (also tuple targets and ``+=``), ``def``, ``class``, ``import``/``import ... as``,
  ``from ... import``, ``del``, ``global``, ``for`` targets, ``with ... as``, ``except ... as``, ``:=``,
  ``match`` captures; so do item/attribute writes and in-place methods on a given value
  (``CONFIGS[0] = ...``, ``ALIASES.update(...)``). Bindings local to a function or class body are
  ignored unless the function declares the name ``global``. Re-importing the same module under the same
  name (``import numpy as np`` again) is not a rebinding.
* ``INPUT_HISTORY``: the cell reads IPython's input/output history, where the source of hidden test
  cells that already ran is kept: ``In``, ``Out``, ``_ih``, ``_oh``, ``_i``/``_ii``/``_iii``,
  ``_i<N>``, ``_<N>``, ``%history`` (and the magics that replay or save history), ``history_manager``,
  ``IPython.core.history``, the ``history.sqlite`` file, and ``linecache`` (it holds the text of
  every cell that ran).
  A name the cell binds itself is its own variable, not history.
"""

from __future__ import annotations

import ast
import re

__all__ = ["default_protected", "protected_names", "merge_protected", "RebindScanner", "history_magic",
           "HISTORY_NAMES"]

HISTORY_NAMES = frozenset({"In", "Out", "_ih", "_oh", "_dh", "_i", "_ii", "_iii", "___"})
_HISTORY_RE = re.compile(r"^_i?\d+$")
_HISTORY_ATTRS = frozenset({"history_manager", "input_hist_parsed", "input_hist_raw", "output_hist",
                            "HistoryAccessor", "HistoryManager", "extract_hist_ranges"}) | HISTORY_NAMES
# linecache holds the text of every cell that ran, hidden tests included (the masters use
# inspect.getsource to show given code, so inspect is not on this list)
_SOURCE_READERS = frozenset({"getlines", "getline", "updatecache", "checkcache"})
_HISTORY_MAGICS = frozenset({"history", "hist", "recall", "rerun", "save", "macro", "pastebin", "notebook"})
_MUTATORS = frozenset({
    "append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "setdefault", "sort",
    "reverse", "add", "discard", "difference_update", "intersection_update", "symmetric_difference_update",
    "__setitem__", "__delitem__", "__setattr__", "__delattr__", "__init__", "fill_", "copy_", "zero_",
})


def is_history_name(name: str) -> bool:
    return name in HISTORY_NAMES or bool(_HISTORY_RE.match(name))


def history_magic(line: str) -> bool:
    """True for a ``%history``-like line magic (``%hist -g``, ``%recall 3``, ``%save f 1-5``)."""
    s = line.strip().lstrip("%")
    return bool(s) and s.split()[0] in _HISTORY_MAGICS


def default_protected() -> dict[str, frozenset]:
    """``gemm_lab``, ``calc``, ``grading`` and the calculator modules the notebooks import by their own
    name, with the module(s) each may legitimately be bound to by an import. (Not every calc module: a
    module named like a common variable, ``measured``, would flag honest code; a locked cell that
    imports any other calc module protects it through ``protected_names``.)"""
    out = {"gemm_lab": frozenset({"gemm_lab"}), "calc": frozenset({"gemm_lab.calc"}),
           "grading": frozenset({"gemm_lab.grading"})}
    for stem in _CALC_MODULE_ALIASES:
        out[stem] = frozenset({f"gemm_lab.calc.{stem}"})
    return out


_CALC_MODULE_ALIASES = ("autotune", "devices", "occupancy", "ordering", "roofline", "smem", "softmax",
                        "tiling", "waves")


def merge_protected(table: dict, name: str, origins) -> None:
    """Add ``name`` to ``table`` ({name: modules an import may bind it to}). No origins means a given
    value or function, which no import may replace, and wins over any module origins."""
    origins = frozenset(origins)
    prev = table.get(name)
    if not origins or prev == frozenset():
        table[name] = frozenset()
    else:
        table[name] = (prev or frozenset()) | origins


def _import_bindings(node) -> list[tuple[str, str]]:
    """(bound name, the module or object it is bound to) for an import statement."""
    out = []
    if isinstance(node, ast.Import):
        for a in node.names:
            out.append((a.asname, a.name) if a.asname else (a.name.split(".")[0], a.name.split(".")[0]))
    else:
        mod = "." * node.level + (node.module or "")
        for a in node.names:
            if a.name != "*":
                out.append((a.asname or a.name, mod + a.name if mod.endswith(".") else f"{mod}.{a.name}"))
    return out


def protected_names(source: str) -> dict[str, frozenset]:
    """The global names a (locked) cell defines: imports map to the module they name; ``def``/``class``
    names, assignment targets and ``global`` names map to an empty set (no import may rebind them).
    Loop, ``with``/``except`` and ``:=`` targets are the cell's temporaries and are not protected.
    Unparsable source gives an empty dict."""
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return {}
    out: dict[str, frozenset] = {}

    def add(name, origin=None):
        merge_protected(out, name, () if origin is None else (origin,))

    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name)
            for sub in ast.walk(node):  # `global x` inside a given function binds x too
                if isinstance(sub, ast.Global):
                    for n in sub.names:
                        add(n)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for name, origin in _import_bindings(node):
                add(name, origin)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                        add(sub.id)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _python(source: str) -> str:
    lines = []
    for line in source.splitlines():
        s = line.lstrip()
        lines.append(line[: len(line) - len(s)] + "pass" if s.startswith(("%", "!")) else line)
    return "\n".join(lines)


def _own_bindings(tree) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def _scope_names(scope_node) -> tuple[set[str], set[str]]:
    """(names declared ``global``, local names) of a function/class/lambda body, nested scopes excluded."""
    glob, local = set(), set()
    args = scope_node.args if not isinstance(scope_node, ast.ClassDef) else None
    if args is not None:
        for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if a is not None:
                local.add(a.arg)
    body = scope_node.body if isinstance(scope_node.body, list) else [scope_node.body]
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Global):
            glob.update(node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            local.update(name for name, _ in _import_bindings(node))
        elif not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                local.add(node.id)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                local.add(node.name)
            todo.extend(ast.iter_child_nodes(node))
    return glob, local - glob


def _root_id(node):
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


class RebindScanner(ast.NodeVisitor):
    """Collects ``(code, line, detail)`` for LOCKED_REBIND and INPUT_HISTORY findings of one cell."""

    def __init__(self, protected: dict[str, frozenset], tree: ast.AST):
        self.protected = protected
        self.flags: list[tuple[str, int, str]] = []
        # None: module scope; else (names declared global, local names) of the function/class being visited
        self.scopes: list[tuple[set, set] | None] = [None]
        self.own = _own_bindings(tree)
        self.rebound: set[str] = set()  # the protected names rebound or mutated (LOCKED_REBIND)

    # helpers ------------------------------------------------------------------
    def _flag(self, code, node, detail, name=None):
        self.flags.append((code, getattr(node, "lineno", 0), detail))
        if name is not None:
            self.rebound.add(name)

    def _global_scope(self, name) -> bool:
        """True when binding ``name`` here binds the notebook's global."""
        top = self.scopes[-1]
        return top is None or name in top[0]

    def _refers_to_global(self, name) -> bool:
        """True when reading ``name`` here reads the notebook's global (not a local of an enclosing scope)."""
        for scope in reversed(self.scopes):
            if scope is None or name in scope[0]:
                return True
            if name in scope[1]:
                return False
        return True

    def _bind(self, name, node, how):
        if name in self.protected and self._global_scope(name):
            self._flag("LOCKED_REBIND", node, how.format(name), name)

    def _is_given_value(self, node) -> bool:
        """The node reads (through items and attributes) a protected, non-module global value."""
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        return (isinstance(node, ast.Name) and node.id in self.protected and not self.protected[node.id]
                and self._refers_to_global(node.id))

    def _target(self, t, node, how):
        if isinstance(t, ast.Name):
            self._bind(t.id, node, how)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self._target(e, node, how)
        elif isinstance(t, ast.Starred):
            self._target(t.value, node, how)
        elif isinstance(t, (ast.Subscript, ast.Attribute)) and self._is_given_value(t):
            self._flag("LOCKED_REBIND", node, f"{ast.unparse(t)} (주어진 값을 고칩니다)", _root_id(t))

    # bindings ------------------------------------------------------------------
    def visit_Assign(self, node):
        for t in node.targets:
            self._target(t, node, "{} = ...")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._target(node.target, node, "{} " + type(node.op).__name__ + "= ...")
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self._target(node.target, node, "{}: ... = ...")
        self.generic_visit(node)

    def visit_Delete(self, node):
        for t in node.targets:
            self._target(t, node, "del {}")
        self.generic_visit(node)

    def visit_For(self, node):
        self._target(node.target, node, "for {} in ...")
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_With(self, node):
        for item in node.items:
            if item.optional_vars is not None:
                self._target(item.optional_vars, node, "with ... as {}")
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_NamedExpr(self, node):
        self._target(node.target, node, "({} := ...)")
        self.generic_visit(node)

    def visit_ExceptHandler(self, node):
        if node.name:
            self._bind(node.name, node, "except ... as {}")
        self.generic_visit(node)

    def visit_MatchAs(self, node):
        if node.name:
            self._bind(node.name, node, "case ... as {}")
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        if node.name:
            self._bind(node.name, node, "case *{}")
        self.generic_visit(node)

    def visit_Global(self, node):
        for name in node.names:
            if name in self.protected:
                self._flag("LOCKED_REBIND", node, f"global {name}", name)

    def _scope(self, node, kind):
        if kind != "lambda":
            self._bind(node.name, node, ("class {}" if kind == "class" else "def {}"))
            for d in node.decorator_list:
                self.visit(d)
        if kind == "class":
            for b in node.bases + [k.value for k in node.keywords]:
                self.visit(b)
        else:
            self.visit(node.args)
        self.scopes.append(_scope_names(node))
        for stmt in (node.body if kind != "lambda" else [node.body]):
            self.visit(stmt)
        self.scopes.pop()

    def visit_FunctionDef(self, node):
        self._scope(node, "def")

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self._scope(node, "class")

    def visit_Lambda(self, node):
        self._scope(node, "lambda")

    def visit_Import(self, node):
        for name, origin in _import_bindings(node):
            allowed = self.protected.get(name)
            if allowed is not None and origin not in allowed and self._global_scope(name):
                how = "import" if isinstance(node, ast.Import) else "from ... import"
                self._flag("LOCKED_REBIND", node, f"{how} {origin} → {name}", name)
            if (origin.split(".")[:3] == ["IPython", "core", "history"] or origin.split(".")[0] == "linecache"
                    or origin.rsplit(".", 1)[-1] in _HISTORY_ATTRS):
                self._flag("INPUT_HISTORY", node, f"import {origin}")

    visit_ImportFrom = visit_Import

    # mutation through calls, history reads ------------------------------------------------
    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Attribute) and self._is_given_value(f.value) and (
            f.attr in _MUTATORS or any(k.arg == "inplace" for k in node.keywords)
        ):
            self._flag("LOCKED_REBIND", node, f"{ast.unparse(f)}(...)", _root_id(f))
        if isinstance(f, ast.Name) and f.id in ("setattr", "delattr", "getattr", "hasattr") and node.args:
            if f.id in ("setattr", "delattr") and self._is_given_value(node.args[0]):
                self._flag("LOCKED_REBIND", node, f"{f.id}({ast.unparse(node.args[0])}, ...)", _root_id(node.args[0]))
            if len(node.args) > 1 and self._history_literal(node.args[1]):
                self._flag("INPUT_HISTORY", node, f"{f.id}(..., {node.args[1].value!r})")
        if isinstance(f, ast.Attribute) and f.attr == "get" and node.args and self._history_literal(node.args[0]):
            self._flag("INPUT_HISTORY", node, f"….get({node.args[0].value!r})")
        if isinstance(f, ast.Attribute) and f.attr in ("run_line_magic", "magic", "run_cell_magic") and node.args:
            a = node.args[0]
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and history_magic(a.value):
                self._flag("INPUT_HISTORY", node, f"{f.attr}({a.value!r})")
        self.generic_visit(node)

    @staticmethod
    def _history_literal(node) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and is_history_name(node.value)

    def visit_Subscript(self, node):
        if self._history_literal(node.slice):
            self._flag("INPUT_HISTORY", node, f"[{node.slice.value!r}]")
        self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and is_history_name(node.id) and node.id not in self.own:
            self._flag("INPUT_HISTORY", node, node.id)

    def visit_Attribute(self, node):
        root = _root_id(node)
        if node.attr in _HISTORY_ATTRS or _HISTORY_RE.match(node.attr):
            self._flag("INPUT_HISTORY", node, "…." + node.attr)
        elif root == "linecache" and node.attr in _SOURCE_READERS | {"cache"}:
            self._flag("INPUT_HISTORY", node, f"{root}.{node.attr}")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and "history.sqlite" in node.value:
            self._flag("INPUT_HISTORY", node, "history.sqlite")
