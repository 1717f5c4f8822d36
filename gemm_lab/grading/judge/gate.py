"""The gate: what of a hand-in may run where kernels are judged, written out by the grader.

``module_for(sources, name)`` reads the notebook's code cells with ``ast`` and returns the text of a module
*generated* from their checked syntax tree: the ``@triton.jit`` function ``name`` (a def, or a name bound to
one: ``student_matmul_kernel = my_kernel``), every jit function it calls, the constexpr numbers they read
(written from their values) and the Triton imports they use (under the hand-in's aliases, written from the
resolved path). Nothing of the hand-in's text is copied through: every expression of a jit function (body,
defaults, decorators, every annotation) must be Triton — ``triton.language`` under any alias, ``triton.cdiv``
/ ``next_power_of_2``, constexpr numbers, other jit functions, a few built-ins Triton compiles. The module
starts with ``from __future__ import annotations``, so no annotation is evaluated (Triton and its interpreter
read them as text); the return annotation is checked and left out.
``@triton.autotune`` / ``@triton.heuristics`` above the jit are checked and left out: the grader launches
through the notebook's locked launcher, which sets the tile constexprs itself. Anything else is refused with
a Korean message naming it (:class:`Refused`; ``not_triton`` tells a refusal of non-Triton code from a
kernel that is missing or shaped wrong).

The kernel worker imports this text (``load``), and the student's own check goes through the same gate
(``notebook_kernel``), so the notebook and the grader say the same thing.

``function_module(cells, name)`` builds the module for a plain Python function answer: the cells'
imports, top-level functions and classes, and assignments of literal values (it runs in its own worker).
"""

from __future__ import annotations

import ast
import graphlib
import hashlib
import importlib
import sys
import tempfile
import types
from pathlib import Path

__all__ = ["Refused", "cell_code", "jit_names", "module_for", "function_module", "load", "notebook_kernel",
           "ALLOWED_BUILTINS"]

# ``NotImplementedError``: the release's TODO stub raises it (the checks then say "not implemented yet").
ALLOWED_BUILTINS = frozenset({"range", "min", "max", "int", "float", "bool", "len", "print", "abs", "True",
                              "False", "None", "NotImplementedError"})
_LANG = "triton.language"
_TRITON_HELPERS = frozenset({"triton.cdiv", "triton.next_power_of_2", "triton.Config"})
_JIT = frozenset({"triton.jit", "triton.runtime.jit.jit", "triton.runtime.jit"})
_TUNERS = frozenset({"triton.autotune", "triton.heuristics", "triton.runtime.autotune",
                     "triton.runtime.heuristics", "triton.runtime.autotuner.autotune",
                     "triton.runtime.autotuner.heuristics"})
_CONSTEXPR = frozenset({"triton.language.constexpr", "triton.language.core.constexpr"})
_PLAIN = (int, float, bool, str, type(None))
_FORBIDDEN_ATTRS = frozenset({"handle", "fn", "data", "base", "ctypes", "builder"})
# Triton calls that newer releases removed: a kernel using them runs on the grader's triton but not on the
# student's own newer one, so the grade would not match what the student sees.
_REMOVED = {"make_block_ptr": "triton 3.9", "advance": "triton 3.9"}
_FORBIDDEN_NODES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                    ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await,
                    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)


class Refused(Exception):
    """The gate refused the kernel (the message is Korean, for the student). ``not_triton``: it uses something
    that is not Triton (a review finding); False when the kernel is missing or shaped wrong."""

    def __init__(self, message: str, not_triton: bool = True):
        super().__init__(message)
        self.not_triton = not_triton


def cell_code(source: str) -> ast.Module | None:
    """The cell's source as Python (IPython ``%``/``!`` lines made plain), or None when it does not parse."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - without IPython the cell is parsed as it is
        pass
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _attr_path(node) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


class _Defs:
    """What the notebook's code cells define at top level, later definitions winning."""

    def __init__(self, sources):
        self.triton: dict[str, str] = {"triton": "triton", "tl": _LANG}  # alias -> dotted triton path
        self.imports: dict[str, ast.stmt] = {}
        self.jit: dict[str, ast.FunctionDef] = {}
        self.aliases: dict[str, str] = {}  # a name bound to a jit function -> that function's def name
        self.functions: dict[str, ast.stmt] = {}
        self.constants: dict[str, ast.stmt] = {}
        for src in sources:
            tree = cell_code(src)
            for node in tree.body if tree is not None else ():
                self._add(node)

    def full(self, path: list[str]) -> str:
        """``tl2.load`` -> ``triton.language.load`` (the dotted path a name's alias stands for), or ''."""
        head = self.triton.get(path[0])
        return ".".join([head, *path[1:]]) if head else ""

    def dotted(self, node) -> str:
        path = _attr_path(node.func if isinstance(node, ast.Call) else node)
        return self.full(path) if path else ""

    def _add(self, node: ast.stmt) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if isinstance(node, ast.Import):
                    bound = a.asname or a.name.split(".")[0]
                    full = a.name if a.asname else a.name.split(".")[0]
                else:
                    bound = a.asname or a.name
                    full = f"{node.module}.{a.name}" if node.module and not node.level else ""
                self._forget(bound)
                if full.split(".")[0] == "triton":
                    self.triton[bound] = full
                self.imports[bound] = ast.Import(names=[a]) if isinstance(node, ast.Import) else \
                    ast.ImportFrom(module=node.module, names=[a], level=node.level)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._forget(node.name)
            jit = isinstance(node, ast.FunctionDef) and any(
                self.dotted(d) in _JIT | _TUNERS for d in node.decorator_list)
            (self.jit if jit else self.functions)[node.name] = node
            return
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        for n in names:
            self._forget(n)
        if not names or len(names) != len(targets):
            return
        value = node.value
        if isinstance(value, ast.Name) and (value.id in self.jit or value.id in self.aliases):
            for n in names:
                self.aliases[n] = self.aliases.get(value.id, value.id)
        elif self._constant(value) is not None:
            for n in names:
                self.constants[n] = node

    def _constant(self, node):
        """``(value, wrapped)`` of a constexpr number (``8``, ``tl.constexpr(8)``), else None."""
        wrapped = isinstance(node, ast.Call) and self.dotted(node) in _CONSTEXPR and len(node.args) == 1 \
            and not node.keywords
        value = _literal(node.args[0] if wrapped else node)
        return None if value is None or type(value) not in (int, float, bool) else (value, wrapped)

    def _forget(self, name: str) -> None:
        for table in (self.imports, self.jit, self.aliases, self.functions, self.constants):
            table.pop(name, None)
        if name not in ("triton", "tl"):
            self.triton.pop(name, None)


_NOT_LITERAL = object()


def _literal(node, otherwise=None):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return otherwise


def _resolve(full: str, shown: str, value: bool = False):
    """Follow a dotted triton path in the grader's own triton and return what it names; refuse a path that is
    not triton.language (or a triton helper), a step that leaves triton, or (``value``) a module used as a
    value (a kernel may only name what is inside one)."""
    if not (full == _LANG or full.startswith(_LANG + ".") or full in _TRITON_HELPERS or full == "triton"):
        raise Refused(f"`{shown}`({full})은(는) triton.language의 연산이 아닙니다")
    parts = full.split(".")
    obj = importlib.import_module("triton")
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return None  # the compiler will name it
        # a class or an instance is judged by where its class was written too: ``tl.core.partial`` (functools)
        # is reachable through a triton module but is no Triton
        mod = obj.__name__ if isinstance(obj, types.ModuleType) else "triton" if isinstance(obj, _PLAIN) else \
            getattr(obj, "__module__", None) or "" if callable(obj) else type(obj).__module__
        if not mod.startswith(_LANG if isinstance(obj, types.ModuleType) else "triton"):  # not tl.core.knobs/ir
            raise Refused(f"`{'.'.join(parts[:i + 1])}`은(는) Triton이 아닙니다 ({mod or '?'})")
    if value and isinstance(obj, types.ModuleType):
        raise Refused(f"`{shown}`: 모듈을 값으로 쓸 수 없습니다 (`{shown}.함수(...)`처럼 그 안의 것만 쓰세요)")
    return obj


class _Gate:
    """Checks jit functions and writes the module (see the module docstring)."""

    def __init__(self, defs: _Defs):
        self.defs = defs
        self.used: set[str] = set()  # aliases, constants and jit aliases the written functions read

    def name(self, n: str, fn: str, local: set) -> str | None:
        """Check a global name a jit function reads; the jit function it calls, else None."""
        d = self.defs
        if n in local or n in ALLOWED_BUILTINS:
            return None
        if n.startswith("__"):
            raise Refused(f"@triton.jit 함수 `{fn}`가 `{n}`을(를) 씁니다")
        if n in d.jit or n in d.aliases:
            if n in d.aliases:
                self.used.add(n)
            return d.aliases.get(n, n)
        if n in d.triton:
            _resolve(d.triton[n], n, value=True)
        elif n not in d.constants:
            what = "파이썬 함수" if n in d.functions else "모듈" if n in d.imports else "이름"
            raise Refused(f"@triton.jit 함수 `{fn}`가 Triton이 아닌 {what} `{n}`을(를) 씁니다. 커널은 tl.* 연산, "
                          "constexpr 숫자, 다른 @triton.jit 함수만 쓸 수 있습니다")
        self.used.add(n)
        return None

    def expr(self, root, fn: str, local: set, calls: set) -> None:
        """Every node under ``root`` must be Triton (see the module docstring)."""
        heads: set[int] = set()  # nodes that are the object of an attribute (ast.walk visits parents first)
        for sub in ast.walk(root):
            if isinstance(sub, _FORBIDDEN_NODES):
                raise Refused(f"@triton.jit 함수 `{fn}` 안에 {type(sub).__name__}(람다·중첩 함수·import·"
                              "컴프리헨션 등)가 있습니다: Triton 커널에서는 쓸 수 없습니다")
            if isinstance(sub, ast.Call) and not isinstance(sub.func, (ast.Name, ast.Attribute)):
                raise Refused(f"@triton.jit 함수 `{fn}`가 `{ast.unparse(sub.func)[:60]}`의 결과를 호출합니다: Triton "
                              "커널은 tl 연산과 @triton.jit 함수만 호출할 수 있습니다")
            if isinstance(sub, ast.Attribute):
                heads.add(id(sub.value))
                if sub.attr.startswith("_") or sub.attr in _FORBIDDEN_ATTRS or isinstance(sub.value, ast.Constant):
                    raise Refused(f"@triton.jit 함수 `{fn}`가 속성 `.{sub.attr}`에 접근합니다: Triton 커널은 "
                                  "tl 연산만 쓸 수 있습니다")
                path = _attr_path(sub)
                if id(sub) in heads or not path or path[0] in local or path[0] not in self.defs.triton:
                    continue
                if path[-1] in _REMOVED:
                    raise Refused(f"@triton.jit 함수 `{fn}`가 `{'.'.join(path)}`을(를) 씁니다: 블록 포인터는 "
                                  f"{_REMOVED[path[-1]]}에서 없어졌습니다. 포인터 산술(base + offs * stride)로 "
                                  "바꾸세요", not_triton=False)
                _resolve(self.defs.full(path), ".".join(path), value=True)
                self.used.add(path[0])
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                if id(sub) in heads and sub.id in self.defs.triton and sub.id not in local:
                    continue  # checked with its whole path above
                callee = self.name(sub.id, fn, local)
                if callee:
                    calls.add(callee)

    def annotation(self, node, fn: str):
        """The annotation as written into the module (``tl.constexpr``; the module's ``from __future__ import
        annotations`` keeps it text, which is how Triton and its interpreter read it), or refused."""
        if node is None or isinstance(node, ast.Constant) and node.value is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 64:
            return ast.Constant(node.value)
        if isinstance(node, ast.Name) and node.id in ("int", "float", "bool"):
            return ast.Name(node.id, ast.Load())
        path = _attr_path(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        full = self.defs.full(path) if path and not any(p.startswith("_") for p in path) else ""
        if not full:
            raise Refused(f"@triton.jit 함수 `{fn}`의 타입 표기 `{ast.unparse(node)[:60]}`이(가) Triton 타입이 아닙니다")
        _resolve(full, ".".join(path))
        for prefix in (_LANG + ".core.", _LANG + "."):
            if full.startswith(prefix):
                full = "tl." + full[len(prefix):]
        return ast.parse(full, mode="eval").body

    def default(self, node, fn: str):
        """A default as written into the module: a literal, ``tl.constexpr(literal)`` or a constant's name."""
        if isinstance(node, ast.Name) and node.id in self.defs.constants:
            self.used.add(node.id)
            return ast.Name(node.id, ast.Load())
        found = self.defs._constant(node)
        if found is not None:
            return _constant_node(*found)
        value = _literal(node)
        if isinstance(node, ast.Constant) and (value is None or isinstance(value, str)):
            return ast.Constant(value)
        raise Refused(f"@triton.jit 함수 `{fn}`의 기본값 `{ast.unparse(node)[:60]}`이(가) 상수가 아닙니다")

    def decorator(self, dec, fn: str, tuner_allowed: bool) -> ast.expr | None:
        """The jit decorator as written into the module, None for a tuner (left out), or refused."""
        full = self.defs.dotted(dec)
        call = isinstance(dec, ast.Call)
        if full in _TUNERS and tuner_allowed:
            # left out of the module (the locked launcher sets the constexprs): only checked, never run
            for arg in (dec.args + [k.value for k in dec.keywords]) if call else ():
                lam = {a.arg for n in ast.walk(arg) if isinstance(n, ast.Lambda) for a in n.args.args}
                self.expr(_no_lambdas(arg), fn, lam, set())
            return None
        if full not in _JIT:
            raise Refused(f"@triton.jit 함수 `{fn}`에 @triton.jit이 아닌 데코레이터(`@{ast.unparse(dec)[:60]}`)가 "
                          "있습니다: @triton.jit만 붙이세요")
        if not call:
            return ast.Attribute(ast.Name("triton", ast.Load()), "jit", ast.Load())
        if dec.args or not all(k.arg and _literal(k.value, _NOT_LITERAL) is not _NOT_LITERAL for k in dec.keywords):
            raise Refused(f"@triton.jit 함수 `{fn}`의 데코레이터 인자가 상수가 아닙니다")
        return ast.Call(ast.Attribute(ast.Name("triton", ast.Load()), "jit", ast.Load()), [],
                        [ast.keyword(k.arg, _plain_node(_literal(k.value))) for k in dec.keywords])

    def function(self, fn: ast.FunctionDef) -> tuple[ast.FunctionDef, set]:
        """The jit function as written into the module, and the jit functions it calls."""
        a = fn.args
        if a.vararg is not None or a.kwarg is not None:
            raise Refused(f"@triton.jit 함수 `{fn.name}`에 *args/**kwargs가 있습니다", not_triton=False)
        params = a.posonlyargs + a.args + a.kwonlyargs
        local = {p.arg for p in params}
        for node in fn.body:
            local |= {s.id for s in ast.walk(node) if isinstance(s, ast.Name) and isinstance(s.ctx, ast.Store)}
        decs = []
        for i, dec in enumerate(fn.decorator_list):
            out = self.decorator(dec, fn.name, tuner_allowed=not decs and i < len(fn.decorator_list) - 1)
            if out is not None:
                decs.append(out)
        self.annotation(fn.returns, fn.name)  # checked, then left out: Triton does not read it
        args = ast.arguments(
            posonlyargs=[ast.arg(p.arg, self.annotation(p.annotation, fn.name)) for p in a.posonlyargs],
            args=[ast.arg(p.arg, self.annotation(p.annotation, fn.name)) for p in a.args],
            kwonlyargs=[ast.arg(p.arg, self.annotation(p.annotation, fn.name)) for p in a.kwonlyargs],
            kw_defaults=[None if d is None else self.default(d, fn.name) for d in a.kw_defaults],
            defaults=[self.default(d, fn.name) for d in a.defaults], vararg=None, kwarg=None)
        if any(isinstance(n, ast.Raise) and isinstance(n.exc, (ast.Name, ast.Call)) and "NotImplementedError" ==
               getattr(n.exc.func if isinstance(n.exc, ast.Call) else n.exc, "id", "") for n in ast.walk(fn)):
            raise Refused("아직 구현하지 않았습니다 (NotImplementedError). 커널의 TODO를 채우세요.", not_triton=False)
        calls: set = set()
        for node in fn.body:
            self.expr(node, fn.name, local, calls)
        return ast.FunctionDef(name=fn.name, args=args, body=fn.body, decorator_list=decs), calls


def _no_lambdas(node):
    """A tuner argument with each lambda replaced by its body (the body is checked like a kernel's)."""

    class Strip(ast.NodeTransformer):
        def visit_Lambda(self, lam):
            return self.visit(lam.body)

    import copy

    return Strip().visit(copy.deepcopy(node))


def _plain_node(value):
    return ast.parse(repr(value), mode="eval").body


def _constant_node(value, wrapped: bool):
    node = ast.Constant(value)
    if not wrapped:
        return node
    return ast.Call(ast.Attribute(ast.Name("tl", ast.Load()), "constexpr", ast.Load()), [node], [])


def jit_names(sources) -> set[str]:
    """The names the cells bind at top level to what may be a kernel: @triton.jit functions (the last
    definition of each name), names bound to them, and functions under any other decorator."""
    defs = _Defs(sources)
    return set(defs.jit) | set(defs.aliases) | {n for n, f in defs.functions.items() if getattr(f, "decorator_list", 0)}


def module_for(sources, name: str) -> str:
    """The module text holding jit function ``name`` and what it needs; raises :class:`Refused` (Korean)."""
    defs = _Defs(sources)
    target = defs.aliases.get(name, name)
    if target not in defs.jit:
        if target in defs.functions and getattr(defs.functions[target], "decorator_list", None):
            _Gate(defs).function(defs.functions[target])  # a decorator that is not Triton's: refused as such
        if target in defs.functions:
            raise Refused(f"`{name}`에 @triton.jit 데코레이터가 없습니다: 커널 위에 @triton.jit을 붙이세요",
                          not_triton=False)
        raise Refused(f"노트북에서 @triton.jit 커널 `{name}`의 정의를 찾지 못했습니다", not_triton=False)
    gate = _Gate(defs)
    todo, written, calls = [target], {}, {}
    while todo:
        fn = todo.pop()
        if fn not in written:
            written[fn], calls[fn] = gate.function(defs.jit[fn])
            todo.extend(sorted(calls[fn] - set(written)))
    try:
        graphlib.TopologicalSorter(calls).prepare()
    except graphlib.CycleError as exc:
        raise Refused(f"@triton.jit 함수의 재귀 호출({' → '.join(reversed(exc.args[1]))})은 GPU용으로 컴파일되지 "
                      "않습니다 (Triton 컴파일러가 끝나지 않습니다; 해석기만 실행합니다). 반복문(for ... in range)으로 "
                      "바꾸세요.", not_triton=False) from None
    body: list[ast.stmt] = [ast.ImportFrom("__future__", [ast.alias("annotations")], 0),
                             ast.Import([ast.alias("triton")]), ast.Import([ast.alias(_LANG, "tl")])]
    for alias in sorted(gate.used & set(defs.triton) - {"triton", "tl"}):
        mod, _, attr = defs.triton[alias].rpartition(".")
        body.append(ast.ImportFrom(mod, [ast.alias(attr, alias)], 0) if mod else
                    ast.Import([ast.alias(defs.triton[alias], alias)]))
    for n in sorted(gate.used & set(defs.constants)):
        node = defs.constants[n]
        if isinstance(node, ast.AnnAssign):  # the kernel reads it: its annotation is checked, then left out
            gate.annotation(node.annotation, n)
        body.append(ast.Assign([ast.Name(n, ast.Store())], _constant_node(*defs._constant(node.value))))
    body += [written[fn] for fn in reversed(list(written))]
    body += [ast.Assign([ast.Name(n, ast.Store())], ast.Name(defs.aliases[n], ast.Load()))
             for n in sorted(gate.used & set(defs.aliases) | ({name} if name != target else set()))]
    return ast.unparse(ast.fix_missing_locations(ast.Module(body, []))) + "\n"


_LOADED: dict[str, types.ModuleType] = {}


def load(text: str, name: str):
    """Import module ``text`` from a file (Triton reads a kernel's source from its file) and return its
    attribute ``name``; the same text is imported once per process."""
    key = hashlib.sha256(text.encode()).hexdigest()[:24]
    mod = _LOADED.get(key)
    if mod is None:
        import importlib.util

        folder = Path(tempfile.gettempdir()) / "gemm_lab_gate"
        folder.mkdir(exist_ok=True)
        path = folder / f"gemm_lab_kernel_{key}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = mod
        spec.loader.exec_module(mod)
        _LOADED[key] = mod
    return getattr(mod, name)


def _session_sources(py) -> list[str]:
    """The code the kernel was defined by: the notebook's executed cells (IPython's input history) inside
    IPython, else the file of the kernel's module."""
    try:
        ip = get_ipython()  # noqa: F821 - IPython's builtin, present only inside IPython
    except NameError:
        ip = None
    if ip is not None and getattr(ip, "history_manager", None) is not None:
        return list(ip.history_manager.input_hist_raw)
    import linecache

    return ["".join(linecache.getlines(py.__code__.co_filename))]


def notebook_kernel(py, label: str):
    """The student's own check: the kernel's plain function ``py`` (of a genuine jit object) replaced by the
    one in the module the gate writes for the cells that defined it, as the grader's worker gets it;
    AssertionError with the gate's message when refused. A kernel already from such a module is kept."""
    sources = _session_sources(py)
    try:
        text = module_for(sources, py.__name__)
    except Refused as exc:
        raise AssertionError(f"❌ {label}: {exc}") from None
    return py if sources == [text] else load(text, py.__name__).fn


def function_module(sources, name: str) -> str:
    """Module text for a plain Python function answer ``name``: the function and, transitively, the
    functions, classes, literal constants, jit functions and imports it names (nothing else of the hand-in)."""
    defs = _Defs(sources)
    if name not in defs.functions:
        raise Refused(f"노트북에서 함수 `{name}`의 정의를 찾지 못했습니다", not_triton=False)
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
                node = table[n]
                keep[n] = ast.unparse(node)
                todo.extend(sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name))
                break
    lines = [ast.unparse(node) for node in imports.values()]
    order = [n for table in (defs.constants, defs.jit, defs.functions) for n in table if n in keep]
    lines += [keep[n] for n in order]
    return "\n\n".join(lines) + "\n"
