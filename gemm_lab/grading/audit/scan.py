"""Static scan of a hand-in's code for constructs that could subvert the checks: a review aid for the
instructor, never a defence the grade depends on (grades are computed outside the student's process).

``scan_source(code)`` lists findings for one cell as ``"CODE (줄 N): 한국어 설명 — detail"``;
``scan_notebook(nb)`` runs it over the cells a student could write. The codes, their Korean text and policy
are in ``.findings``. Rebinding the notebook's given names or reading IPython's history is not a finding:
the grader launches its own copies of the given code, and hidden tests never run in the student's kernel.
"""

from __future__ import annotations

import ast
import os
import re

from .cell_audit import _nbgrader, _python, _source
from .findings import FLAG_TEXT

__all__ = ["scan_source", "scan_notebook", "FLAG_TEXT"]

# --------------------------------------------------------------------------- static scan

_TORCH_HOOK_NAMES = {"TorchFunctionMode", "TorchDispatchMode", "__torch_function__", "__torch_dispatch__",
                     "_python_dispatch", "_push_on_torch_function_stack", "_push_on_torch_dispatch_stack",
                     "_set_torch_function_mode", "_set_torch_dispatch_mode"}

_WELL_KNOWN_MODULES = {
    "np", "numpy", "torch", "triton", "tl", "pd", "pandas", "math", "builtins", "sys", "os", "gemm_lab",
    "grading", "g", "answers", "kernels", "messages", "judge", "operator", "importlib", "random",
    "unittest", "pytest", "nbgrader", "functools", "inspect", "types", "gc", "runtime", "calc",
}
_SYS_HOOKS = {
    "modules", "meta_path", "path_hooks", "path_importer_cache", "settrace", "setprofile", "addaudithook",
    "_getframe", "excepthook", "displayhook", "setrecursionlimit", "set_asyncgen_hooks", "monitoring",
    "_current_frames", "call_tracing",
}
_FRAME_ATTRS = {"f_locals", "f_globals", "f_builtins", "f_back", "f_code", "tb_frame", "gi_frame",
                "cr_frame", "f_trace", "__code__", "__globals__", "__closure__", "__defaults__",
                "__kwdefaults__"}
_EXIT_CALLS = {("os", "_exit"), ("sys", "exit"), ("os", "abort"), ("os", "kill"), ("os", "killpg"),
               ("signal", "signal"), ("atexit", "register"), ("os", "fork")}
_DANGEROUS_MODULES = {"ctypes": "CTYPES", "cffi": "CTYPES", "_ctypes": "CTYPES",
                      "socket": "NETWORK", "urllib": "NETWORK", "requests": "NETWORK", "http": "NETWORK",
                      "httpx": "NETWORK", "aiohttp": "NETWORK", "ftplib": "NETWORK", "smtplib": "NETWORK",
                      "subprocess": "NETWORK", "multiprocessing": "NETWORK", "pty": "NETWORK",
                      "builtins": "IMPORT_BUILTINS", "__builtin__": "IMPORT_BUILTINS",
                      "importlib": "DYNAMIC_CODE", "imp": "DYNAMIC_CODE", "runpy": "DYNAMIC_CODE",
                      "code": "DYNAMIC_CODE", "codeop": "DYNAMIC_CODE", "threading": "SYS_HOOK",
                      "signal": "EXIT", "atexit": "EXIT"}
_SHELL_CALLS = {("os", "system"), ("os", "popen"), ("os", "execv"), ("os", "execve"), ("os", "execl"),
                ("os", "execvp"), ("os", "spawnl"), ("os", "posix_spawn")}


# A file name of Python code (a module the notebook could write and import, where this scan never reads it).
_MODULE_FILE = re.compile(r"\.(py|pyc|pth|so)$")


# Module settings a notebook may legitimately change (display options, backends, environment).
_BENIGN_PREFIXES = (
    "os.environ", "torch.backends.", "pd.options.", "pandas.options.", "plt.rcParams", "mpl.rcParams",
    "matplotlib.rcParams", "np.set_printoptions", "torch.set_printoptions", "warnings.filters",
)


def _benign(dotted: str) -> bool:
    return dotted.startswith(_BENIGN_PREFIXES)


def _root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(_dotted(node.func) + "()")
    else:
        parts.append("…")
    return ".".join(reversed(parts))


def _path_outside(node) -> str | None:
    """The literal (prefix) of a path argument when it points outside the working folder."""
    text = None
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        text = node.value.decode() if isinstance(node.value, bytes) else node.value
    elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        text = str(node.values[0].value)
    if text is None:
        return None
    t = text.strip()
    if t.startswith(("/", "~", "\\")) or ".." in t.replace("\\", "/").split("/") or (len(t) > 1 and t[1] == ":"):
        return text
    return None


class _Scanner(ast.NodeVisitor):
    def __init__(self):
        self.flags: list[tuple[str, int, str]] = []
        self.modules = set(_WELL_KNOWN_MODULES)

    def flag(self, code, node, detail):
        self.flags.append((code, getattr(node, "lineno", 0), detail))

    # imports ---------------------------------------------------------------
    def _torch_hook(self, node, full):
        parts = set(full.split("."))
        if parts & _TORCH_HOOK_NAMES or full.startswith(("torch.library", "torch.overrides")):
            self.flag("TORCH_HOOK", node, full)

    def _imported(self, node, full, bound):
        self._torch_hook(node, full)
        top = full.split(".")[0]
        if top in _DANGEROUS_MODULES:
            self.flag(_DANGEROUS_MODULES[top], node, f"import {full}")
        self.modules.add(bound)

    def visit_Import(self, node):
        for a in node.names:
            self._imported(node, a.name, a.asname or a.name.split(".")[0])
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        mod = node.module or ""
        for a in node.names:
            full = f"{mod}.{a.name}" if mod else a.name
            bound = a.asname or a.name
            top = mod.split(".")[0]
            self._torch_hook(node, full)
            if top in _DANGEROUS_MODULES:
                self.flag(_DANGEROUS_MODULES[top], node, f"from {mod} import {a.name}")
            elif a.name in _DANGEROUS_MODULES:
                self.flag(_DANGEROUS_MODULES[a.name], node, f"from {mod} import {a.name}")
            self.modules.add(bound)
            if a.name == "*" and top in ("builtins", "sys"):
                self.flag("SYS_HOOK", node, full)
        self.generic_visit(node)

    # names and assignments -------------------------------------------------
    def _check_target(self, target, node):
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._check_target(t, node)
            return
        if isinstance(target, ast.Starred):
            self._check_target(target.value, node)
            return
        if isinstance(target, ast.Name):
            if target.id == "__builtins__":
                self.flag("DUNDER_BUILTINS", node, "__builtins__ = ...")
            return
        if isinstance(target, ast.Attribute):
            root = _root_name(target)
            if target.attr in _FRAME_ATTRS:
                self.flag("FRAME_ACCESS", node, _dotted(target))
            elif root in self.modules and not _benign(_dotted(target)):
                self.flag("MODULE_ATTR", node, _dotted(target))
            return
        if isinstance(target, ast.Subscript):
            base = target.value
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id in (
                "globals", "vars", "locals"
            ):
                self.flag("GLOBALS_WRITE", node, f"{base.func.id}()[...]")
            elif isinstance(base, ast.Attribute) and base.attr == "__dict__":
                self.flag("GLOBALS_WRITE", node, _dotted(base))
            elif _root_name(target) in self.modules and isinstance(base, ast.Attribute) and not _benign(
                _dotted(base)
            ):
                self.flag("MODULE_ATTR", node, _dotted(base) + "[...]")

    def visit_Assign(self, node):
        for t in node.targets:
            self._check_target(t, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._check_target(node.target, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self._check_target(node.target, node)
        self.generic_visit(node)

    def visit_Delete(self, node):
        for t in node.targets:
            self._check_target(t, node)
        self.generic_visit(node)

    def visit_NamedExpr(self, node):
        self._check_target(node.target, node)
        self.generic_visit(node)

    def visit_For(self, node):
        self._check_target(node.target, node)
        self.generic_visit(node)

    def visit_With(self, node):
        for item in node.items:
            if item.optional_vars is not None:
                self._check_target(item.optional_vars, node)
        self.generic_visit(node)

    def _def(self, node):
        if node.name in _TORCH_HOOK_NAMES:
            self.flag("TORCH_HOOK", node, f"def {node.name}")
        self.generic_visit(node)

    visit_FunctionDef = _def
    visit_AsyncFunctionDef = _def
    visit_ClassDef = _def

    def visit_Constant(self, node):
        if isinstance(node.value, str) and _MODULE_FILE.search(node.value.strip()):
            self.flag("WRITES_MODULE", node, repr(node.value)[:60])
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in _TORCH_HOOK_NAMES:
            self.flag("TORCH_HOOK", node, node.id)
        if node.id == "__builtins__":
            self.flag("DUNDER_BUILTINS", node, "__builtins__")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        root = _root_name(node)
        if node.attr in _TORCH_HOOK_NAMES or (root == "torch" and node.attr in ("library", "overrides")):
            self.flag("TORCH_HOOK", node, _dotted(node))
        if node.attr == "__builtins__":
            self.flag("DUNDER_BUILTINS", node, _dotted(node))
        elif root == "sys" and isinstance(node.value, ast.Name) and node.attr in _SYS_HOOKS:
            self.flag("SYS_HOOK", node, _dotted(node))
        elif node.attr in _FRAME_ATTRS and isinstance(node.ctx, ast.Load):
            self.flag("FRAME_ACCESS", node, _dotted(node))
        elif node.attr in ("currentframe", "stack", "getouterframes", "trace") and root == "inspect":
            self.flag("FRAME_ACCESS", node, _dotted(node))
        elif node.attr == "__dict__" and root in self.modules:
            self.flag("GLOBALS_WRITE", node, _dotted(node))
        self.generic_visit(node)

    def visit_Raise(self, node):
        exc = node.exc
        name = None
        if isinstance(exc, ast.Call):
            exc = exc.func
        if isinstance(exc, ast.Name):
            name = exc.id
        if name in ("SystemExit", "KeyboardInterrupt"):
            self.flag("EXIT", node, f"raise {name}")
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name):
            if f.id in ("exit", "quit"):
                self.flag("EXIT", node, f"{f.id}()")
            elif f.id in ("exec", "eval", "compile", "__import__"):
                self.flag("DYNAMIC_CODE", node, f"{f.id}(...)")
            elif f.id in ("setattr", "delattr") and node.args:
                root = _root_name(node.args[0])
                if root in self.modules:
                    self.flag("MODULE_ATTR", node, f"{f.id}({_dotted(node.args[0])}, ...)")
            elif f.id == "open" and node.args:
                p = _path_outside(node.args[0])
                if p is not None:
                    self.flag("OPEN_OUTSIDE", node, f"open({p!r})")
            elif f.id in ("Path", "PurePath", "PosixPath") and node.args:
                p = _path_outside(node.args[0])
                if p is not None:
                    self.flag("OPEN_OUTSIDE", node, f"{f.id}({p!r})")
        elif isinstance(f, ast.Attribute):
            root = _root_name(f)
            pair = (root, f.attr) if isinstance(f.value, ast.Name) else (None, f.attr)
            if pair in _EXIT_CALLS:
                self.flag("EXIT", node, _dotted(f) + "()")
            elif pair in _SHELL_CALLS:
                self.flag("NETWORK", node, _dotted(f) + "()")
            elif f.attr in ("import_module", "reload", "exec_module", "spec_from_file_location"):
                self.flag("DYNAMIC_CODE", node, _dotted(f) + "()")
            elif f.attr in ("open", "write_text", "write_bytes", "unlink", "rmtree", "remove", "rename",
                            "replace", "copy", "copyfile", "move") and node.args:
                p = _path_outside(node.args[0])
                if p is not None:
                    self.flag("OPEN_OUTSIDE", node, f"{_dotted(f)}({p!r})")
            elif f.attr in ("setattr", "update", "__setitem__", "__setattr__", "pop", "clear") and root in (
                "builtins", "sys"
            ):
                self.flag("MODULE_ATTR", node, _dotted(f) + "()")
        self.generic_visit(node)


def scan_source(code: str) -> list[str]:
    """Constructs in a student's code that could subvert a check: ``"CODE (줄 N): 한국어 설명 — detail"`` per finding.

    Codes: MODULE_ATTR, IMPORT_BUILTINS, DUNDER_BUILTINS, SYS_HOOK, FRAME_ACCESS, EXIT, CTYPES, NETWORK,
    OPEN_OUTSIDE, DYNAMIC_CODE, GLOBALS_WRITE, TORCH_HOOK, WRITES_MODULE (``FLAG_TEXT`` maps each to its Korean
    text). Only what a student's own process does that neither the gate (kernels) nor the sandbox
    (processes, files, network, limits) reports; shell lines, helpers named ``check_*``, reused given names
    and code that does not parse are a student's own business. An empty list means nothing was found; a
    flag means "a human should look", not proof of cheating.
    """
    if not isinstance(code, str):
        raise TypeError(f"scan_source expects the source text as str, got {type(code).__name__}")
    try:
        tree = ast.parse(_python(code))
    except SyntaxError:
        return []
    scanner = _Scanner()
    # First pass: collect every imported name, so an assignment before the import is still seen.
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            scanner.modules.update(a.asname or a.name.split(".")[0] for a in node.names)
    scanner.visit(tree)
    out, seen = [], set()
    for code_, line, detail in sorted(scanner.flags, key=lambda f: (f[1], f[0])):
        item = f"{code_} (줄 {line}): {FLAG_TEXT[code_]} — {detail}"
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def scan_notebook(notebook) -> list[str]:
    """``scan_source`` over the code cells a student could write in a notebook: "셀 N (grade_id): finding".

    ``notebook``: a path to an .ipynb, or its JSON as a dict (an nbformat NotebookNode works too).
    Cells nbgrader marks as locked (given code, test cells) are skipped: nbgrader's autograde puts
    their master source back before running, so what runs there is ours, not the student's.
    """
    import json

    if isinstance(notebook, (str, os.PathLike)):
        with open(notebook, encoding="utf-8") as f:
            notebook = json.load(f)
    out = []
    cells = notebook.get("cells", [])
    for i, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        meta = _nbgrader(cell)
        if meta.get("locked") and not meta.get("solution"):
            continue
        label = f"셀 {i}" + (f" ({meta['grade_id']})" if meta.get("grade_id") else "")
        found = scan_source(_source(cell))
        out.extend(f"{label}: {finding}" for finding in found)
    return out
