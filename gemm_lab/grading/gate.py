"""Kernels and functions graded from their source alone: taken from the notebook's cells, never from the
process that ran them.

``kernel_module(cells, name)`` builds a small Python module holding the ``@triton.jit`` function ``name``
and every jit function it calls (the hand-in's or the given code's), the constexpr numbers they name and
the triton imports, and nothing else of the hand-in. A jit function may use only ``triton.language``,
``triton`` helpers, constexpr numbers, other jit functions and a few Python built-ins that Triton
compiles (``range``, ``min``, ``max``, ...); any other global (a Python function, a module, an object),
an attribute that starts with ``_``, ``.handle`` (the interpreter's raw data), a lambda or a nested
definition is refused with a Korean message naming it (:class:`Refused`).

``function_module(cells, name)`` builds the module for a plain Python function answer: the cells'
imports, top-level functions and classes, and assignments of literal values.
"""

from __future__ import annotations

import ast
import importlib
import types

__all__ = ["Refused", "cell_code", "jit_names", "kernel_module", "function_module", "ALLOWED_BUILTINS"]

# ``NotImplementedError``: the release's TODO stub raises it (the checks then say "not implemented yet").
ALLOWED_BUILTINS = frozenset({"range", "min", "max", "int", "float", "bool", "len", "print", "abs", "True",
                              "False", "None", "NotImplementedError"})
_TRITON_ROOTS = ("triton",)
_FORBIDDEN_ATTRS = frozenset({"handle", "fn", "data", "base", "ctypes", "builder"})
# Triton calls that newer releases removed: a kernel using them runs on the grader's triton but not on the
# student's own newer one, so the grade would not match what the student sees.
_REMOVED = {"make_block_ptr": "triton 3.9", "advance": "triton 3.9"}
_FORBIDDEN_NODES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                    ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await,
                    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)


class Refused(Exception):
    """The kernel's source uses something that is not Triton (the message is Korean, for the student)."""


def cell_code(source: str) -> ast.Module | None:
    """The cell's source as Python (IPython ``%``/``!`` lines made plain), or None when it does not parse."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - without IPython the cell is parsed as it is
        pass
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _decorator_name(node: ast.expr) -> str:
    """``triton.jit`` for ``@triton.jit`` and ``@triton.jit(...)``; '' for anything but a dotted name."""
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id
    return ".".join(_attr_path(target) or []) if isinstance(target, ast.Attribute) else ""


def _is_jit_def(node: ast.stmt, triton_aliases: dict) -> bool:
    if not isinstance(node, ast.FunctionDef):
        return False
    for dec in node.decorator_list:
        name = _decorator_name(dec)
        head, _, rest = name.partition(".")
        full = triton_aliases.get(head, head) + ("." + rest if rest else "")
        if full in ("triton.jit", "triton.runtime.jit.jit", "triton.autotune", "triton.heuristics"):
            return True
    return False


class _Defs:
    """What the notebook's code cells define at top level, later definitions winning."""

    def __init__(self, sources):
        self.triton_aliases: dict[str, str] = {"triton": "triton", "tl": "triton.language"}
        self.imports: dict[str, ast.stmt] = {}
        self.jit: dict[str, tuple[ast.FunctionDef, str]] = {}
        self.functions: dict[str, tuple[ast.stmt, str]] = {}
        self.constants: dict[str, tuple[ast.stmt, str]] = {}
        for src in sources:
            tree = cell_code(src)
            if tree is None:
                continue
            text = ast.unparse(tree)
            tree = ast.parse(text)
            for node in tree.body:
                self._add(node, text)

    def _add(self, node: ast.stmt, text: str) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if isinstance(node, ast.Import):
                    bound = a.asname or a.name.split(".")[0]
                    full = a.name if a.asname else a.name.split(".")[0]
                else:
                    bound = a.asname or a.name
                    full = f"{node.module}.{a.name}" if node.module else a.name
                if full.split(".")[0] in _TRITON_ROOTS:
                    self.triton_aliases[bound] = full
                self._forget(bound)
                self.imports[bound] = ast.Import(names=[a]) if isinstance(node, ast.Import) else \
                    ast.ImportFrom(module=node.module, names=[a], level=node.level)
            return
        if isinstance(node, ast.FunctionDef) and _is_jit_def(node, self.triton_aliases):
            self._forget(node.name)
            self.jit[node.name] = (node, ast.unparse(node))
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._forget(node.name)
            self.functions[node.name] = (node, ast.unparse(node))
            return
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        for n in names:
            self._forget(n)
        if names and len(names) == len(targets) and _literal(node.value, self.triton_aliases) is not None:
            for n in names:
                self.constants[n] = (node, ast.unparse(node))

    def _forget(self, name: str) -> None:
        for table in (self.imports, self.jit, self.functions, self.constants):
            table.pop(name, None)
        if name not in ("triton", "tl"):
            self.triton_aliases.pop(name, None)


def _literal(node, aliases):
    """The number/bool a constexpr assignment gives (``8``, ``tl.constexpr(8)``), else None."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        name = _decorator_name(node.func)
        head, _, rest = name.partition(".")
        if aliases.get(head, head) + "." + rest in ("triton.language.constexpr", "triton.language.core.constexpr"):
            node = node.args[0]
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if type(value) in (int, float, bool) else None


def _resolve(path: list[str], aliases: dict):
    """Follow ``tl.x.y`` in the grader's own triton; refuse a step that leaves triton."""
    obj = _import_path(aliases[path[0]])
    if obj is None:
        return None
    for i, part in enumerate(path[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return None  # the compiler will name it
        if isinstance(obj, types.ModuleType):
            if not obj.__name__.startswith("triton"):
                raise Refused(f"`{'.'.join(path[:i + 1])}`은(는) Triton이 아닌 모듈({obj.__name__})입니다")
        elif callable(obj) and not isinstance(obj, type):
            mod = getattr(obj, "__module__", None) or ""
            if not mod.startswith("triton"):
                raise Refused(f"`{'.'.join(path[:i + 1])}`은(는) Triton 함수가 아닙니다 ({mod or '?'})")
    return obj


def _import_path(full: str):
    """The object a dotted triton path names (``triton.language.constexpr``), or None."""
    parts = full.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part, None)
        return obj
    return None


def _attr_path(node: ast.Attribute) -> list[str] | None:
    parts = []
    target = node
    while isinstance(target, ast.Attribute):
        parts.append(target.attr)
        target = target.value
    if isinstance(target, ast.Name):
        return [target.id, *reversed(parts)]
    return None


def _check_jit(fn: ast.FunctionDef, defs: _Defs) -> set[str]:
    """Refuse what a jit function may not use; return the jit functions it calls."""
    local = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    for extra in (fn.args.vararg, fn.args.kwarg):
        if extra is not None:
            raise Refused(f"@triton.jit 함수 `{fn.name}`에 *args/**kwargs가 있습니다")
    for node in fn.body:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                local.add(sub.id)
    calls: set[str] = set()
    for dec in fn.decorator_list:
        if isinstance(dec, ast.Call):
            for kw in dec.keywords:
                if _literal(kw.value, defs.triton_aliases) is None and not _plain_list(kw.value):
                    raise Refused(f"@triton.jit 함수 `{fn.name}`의 데코레이터 인자 `{kw.arg}`가 상수가 아닙니다")
            if dec.args:
                raise Refused(f"@triton.jit 함수 `{fn.name}`의 데코레이터에 위치 인자가 있습니다")
        name = _decorator_name(dec)
        head, _, rest = name.partition(".")
        if defs.triton_aliases.get(head, head) + ("." + rest if rest else "") not in ("triton.jit",
                                                                                    "triton.runtime.jit.jit"):
            raise Refused(f"@triton.jit 함수 `{fn.name}`에 @triton.jit이 아닌 데코레이터(`@{name}`)가 있습니다: "
                          "@triton.jit만 붙이세요")
    for default in fn.args.defaults + [d for d in fn.args.kw_defaults if d is not None]:
        if _literal(default, defs.triton_aliases) is None and not (isinstance(default, ast.Constant)):
            raise Refused(f"@triton.jit 함수 `{fn.name}`의 기본값이 상수가 아닙니다")
    scan = list(fn.body) + [a.annotation for a in fn.args.args + fn.args.kwonlyargs if a.annotation is not None]
    for root in scan:
        for sub in ast.walk(root):
            if isinstance(sub, _FORBIDDEN_NODES):
                raise Refused(f"@triton.jit 함수 `{fn.name}` 안에 {type(sub).__name__}(람다·중첩 함수·import·"
                              "컴프리헨션 등)가 있습니다: Triton 커널에서는 쓸 수 없습니다")
            if isinstance(sub, ast.Attribute):
                if sub.attr.startswith("_") or sub.attr in _FORBIDDEN_ATTRS:
                    raise Refused(f"@triton.jit 함수 `{fn.name}`가 속성 `.{sub.attr}`에 접근합니다: Triton 커널은 "
                                  "tl 연산만 쓸 수 있습니다")
                path = _attr_path(sub)
                if path and path[0] in defs.triton_aliases and path[0] not in local:
                    if path[-1] in _REMOVED:
                        raise Refused(f"@triton.jit 함수 `{fn.name}`가 `{'.'.join(path)}`을(를) 씁니다: 블록 포인터는 "
                                      f"{_REMOVED[path[-1]]}에서 없어졌습니다. 포인터 산술(base + offs * stride)로 "
                                      "바꾸세요")
                    if len(path) > 2 or defs.triton_aliases[path[0]] not in ("triton", "triton.language"):
                        # tl.x is triton's own; deeper paths (tl.core.builtins) are followed in the grader
                        _resolve(path, defs.triton_aliases)
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in local:
                n = sub.id
                if n.startswith("__"):
                    raise Refused(f"@triton.jit 함수 `{fn.name}`가 `{n}`을(를) 씁니다")
                if n in defs.jit:
                    calls.add(n)
                elif n in defs.triton_aliases:
                    if defs.triton_aliases[n] not in ("triton", "triton.language"):
                        _resolve([n], defs.triton_aliases)
                elif n in defs.constants or n in ALLOWED_BUILTINS:
                    continue
                else:
                    what = "파이썬 함수" if n in defs.functions else "모듈" if n in defs.imports else "이름"
                    raise Refused(f"@triton.jit 함수 `{fn.name}`가 Triton이 아닌 {what} `{n}`을(를) 씁니다. "
                                  "커널은 tl.* 연산, constexpr 숫자, 다른 @triton.jit 함수만 쓸 수 있습니다")
    return calls


def _plain_list(node) -> bool:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return isinstance(value, (list, tuple, str, int, float, bool)) or value is None


def jit_names(sources) -> set[str]:
    """The @triton.jit functions the cells define at top level (the last definition of each name)."""
    return set(_Defs(sources).jit)


def kernel_module(sources, name: str) -> str:
    """Module text holding jit function ``name`` and what it needs; raises :class:`Refused` (Korean)."""
    defs = _Defs(sources)
    if name not in defs.jit:
        if name in defs.functions:
            raise Refused(f"`{name}`에 @triton.jit 데코레이터가 없습니다: 커널 위에 @triton.jit을 붙이세요")
        raise Refused(f"노트북에서 @triton.jit 커널 `{name}`의 정의를 찾지 못했습니다")
    todo, seen = [name], []
    while todo:
        fn = todo.pop()
        if fn in seen:
            continue
        seen.append(fn)
        todo.extend(sorted(_check_jit(defs.jit[fn][0], defs) - set(seen)))
    used_constants = set()
    for fn in seen:
        used_constants |= {n.id for n in ast.walk(defs.jit[fn][0]) if isinstance(n, ast.Name)}
    lines = ["import triton", "import triton.language as tl"]
    for alias, full in sorted(defs.triton_aliases.items()):
        if alias in ("triton", "tl"):
            continue
        mod, _, attr = full.rpartition(".")
        lines.append(f"from {mod} import {attr} as {alias}" if mod else f"import {full} as {alias}")
    for n, (_node, text) in defs.constants.items():
        if n in used_constants:
            lines.append(text)
    lines += ["", ""]
    for fn in reversed(seen):
        lines += [defs.jit[fn][1], "", ""]
    return "\n".join(lines)


def function_module(sources, name: str) -> str:
    """Module text for a plain Python function answer ``name``: the function and, transitively, the
    functions, classes, literal constants, jit functions and imports it names (nothing else of the hand-in)."""
    defs = _Defs(sources)
    if name not in defs.functions:
        raise Refused(f"노트북에서 함수 `{name}`의 정의를 찾지 못했습니다")
    tables = (defs.functions, defs.jit, defs.constants)
    keep: dict[str, str] = {}
    imports: dict[str, ast.stmt] = {}
    todo = [name]
    while todo:
        n = todo.pop()
        if n in keep or n in imports:
            continue
        if n in defs.imports:
            imports[n] = defs.imports[n]
            continue
        for table in tables:
            if n in table:
                node, text = table[n]
                keep[n] = text
                todo.extend(sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name))
                break
    lines = [ast.unparse(node) for node in imports.values()]
    order = [n for table in (defs.constants, defs.jit, defs.functions) for n in table if n in keep]
    lines += [keep[n] for n in order]
    return "\n\n".join(lines) + "\n"
