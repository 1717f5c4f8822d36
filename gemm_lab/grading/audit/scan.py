"""Static scan of a hand-in's code for what neither the gate nor the sandbox reports: a review aid for the
instructor, never a defence the grade depends on (grades are computed outside the student's process).

``scan_source(code)`` lists findings for one cell as ``"CODE (줄 N): 한국어 설명 — detail"`` (the autograder
runs it over the cells a student could write: ``autograder/grade/review.py``). The codes and their Korean text are in
``.findings``. What a cell does to its own process (patching built-ins, sys hooks, frames, torch modes) is not
looked for: the checks that decide a grade never run there. Rebinding the notebook's given names or reading
IPython's history is not a finding either: the grader launches its own copies of the given code.
"""

from __future__ import annotations

import ast
import re

from .cell_audit import _python
from .findings import FLAG_TEXT

__all__ = ["scan_source", "FLAG_TEXT"]

# Names that are modules in a notebook even when the cell itself does not import them.
_WELL_KNOWN_MODULES = {
    "np", "numpy", "torch", "triton", "tl", "pd", "pandas", "math", "builtins", "sys", "os", "gemm_lab",
    "grading", "g", "answers", "kernels", "messages", "judge", "operator", "importlib", "random",
    "unittest", "pytest", "nbgrader", "functools", "inspect", "types", "gc", "runtime", "calc",
}
# An imported module (its top-level name) -> the finding.
_IMPORTS = {
    **dict.fromkeys(("ctypes", "cffi", "_ctypes"), "CTYPES"),
    **dict.fromkeys(("socket", "urllib", "requests", "http", "httpx", "aiohttp", "ftplib", "smtplib",
                     "subprocess", "multiprocessing", "pty"), "NETWORK"),
    **dict.fromkeys(("importlib", "imp", "runpy", "code", "codeop"), "DYNAMIC_CODE"),
    **dict.fromkeys(("signal", "atexit"), "EXIT"),
}
# A called (module, function) -> the finding.
_MODULE_CALLS = {
    **dict.fromkeys((("os", "_exit"), ("sys", "exit"), ("os", "abort"), ("os", "kill"), ("os", "killpg"),
                     ("signal", "signal"), ("atexit", "register"), ("os", "fork")), "EXIT"),
    **dict.fromkeys((("os", "system"), ("os", "popen"), ("os", "execv"), ("os", "execve"), ("os", "execl"),
                     ("os", "execvp"), ("os", "spawnl"), ("os", "posix_spawn")), "NETWORK"),
}
# A called built-in -> the finding.
_BUILTIN_CALLS = {"exit": "EXIT", "quit": "EXIT", **dict.fromkeys(("exec", "eval", "compile", "__import__"),
                                                                  "DYNAMIC_CODE")}
_LOADERS = {"import_module", "reload", "exec_module", "spec_from_file_location"}
_PATH_CALLS = {"open", "Path", "PurePath", "PosixPath"}
_FILE_METHODS = {"open", "write_text", "write_bytes", "unlink", "rmtree", "remove", "rename", "replace", "copy",
                 "copyfile", "move"}
# A file name of Python code (a module the notebook could write and import, where this scan never reads it).
_MODULE_FILE = re.compile(r"\.(py|pyc|pth|so)$")
# Module settings a notebook may legitimately change (display options, backends, environment).
_BENIGN_PREFIXES = (
    "os.environ", "torch.backends.", "pd.options.", "pandas.options.", "plt.rcParams", "mpl.rcParams",
    "matplotlib.rcParams", "np.set_printoptions", "torch.set_printoptions", "warnings.filters",
)


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


def _imports(node) -> list[tuple[str, str]]:
    out = []
    mod = (node.module or "") if isinstance(node, ast.ImportFrom) else None
    for a in node.names:
        if mod is None:
            top, what = a.name.split(".")[0], f"import {a.name}"
        else:
            top, what = mod.split(".")[0], f"from {mod} import {a.name}"
            top = top if top in _IMPORTS else a.name
        if top in _IMPORTS:
            out.append((_IMPORTS[top], what))
    return out


def _module_write(target, modules: set) -> str | None:
    """``np.allclose = ...`` / ``sys.modules[...] = ...``: the dotted target, when it changes a module."""
    if isinstance(target, ast.Subscript):
        target = target.value
        if not isinstance(target, ast.Attribute):
            return None
        shown = _dotted(target) + "[...]"
    elif isinstance(target, ast.Attribute):
        shown = _dotted(target)
    else:
        return None
    benign = _dotted(target).startswith(_BENIGN_PREFIXES)
    return shown if _root_name(target) in modules and not benign else None


def _call(node: ast.Call, modules: set) -> tuple[str, str] | None:
    f = node.func
    first = node.args[0] if node.args else None
    if isinstance(f, ast.Name):
        if f.id in _BUILTIN_CALLS:
            code = _BUILTIN_CALLS[f.id]
            return code, f"{f.id}()" if code == "EXIT" else f"{f.id}(...)"
        if f.id in ("setattr", "delattr") and first is not None and _root_name(first) in modules:
            return "MODULE_ATTR", f"{f.id}({_dotted(first)}, ...)"
        if f.id in _PATH_CALLS and first is not None and (path := _path_outside(first)) is not None:
            return "OPEN_OUTSIDE", f"{f.id}({path!r})"
    elif isinstance(f, ast.Attribute):
        pair = (f.value.id, f.attr) if isinstance(f.value, ast.Name) else None
        if pair in _MODULE_CALLS:
            return _MODULE_CALLS[pair], _dotted(f) + "()"
        if f.attr in _LOADERS:
            return "DYNAMIC_CODE", _dotted(f) + "()"
        if f.attr in _FILE_METHODS and first is not None and (path := _path_outside(first)) is not None:
            return "OPEN_OUTSIDE", f"{_dotted(f)}({path!r})"
    return None


def _findings(tree: ast.Module) -> list[tuple[str, int, str]]:
    # every imported name counts as a module, also where it is used before the import
    modules = set(_WELL_KNOWN_MODULES)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules.update(a.asname or a.name.split(".")[0] for a in node.names)
    flags = []
    for node in ast.walk(tree):
        found = []
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found = _imports(node)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            shown = _module_write(node, modules)
            found = [("MODULE_ATTR", shown)] if shown else []
        elif isinstance(node, ast.Call):
            found = [call] if (call := _call(node, modules)) else []
        elif isinstance(node, ast.Raise):
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in ("SystemExit", "KeyboardInterrupt"):
                found = [("EXIT", f"raise {exc.id}")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE_FILE.search(node.value.strip()):
            found = [("WRITES_MODULE", repr(node.value)[:60])]
        flags += [(code, getattr(node, "lineno", 0), detail) for code, detail in found]
    return flags


def scan_source(code: str) -> list[str]:
    """What a student's code does that a human should look at: ``"CODE (줄 N): 한국어 설명 — detail"`` per finding.

    Codes: MODULE_ATTR, EXIT, CTYPES, NETWORK, OPEN_OUTSIDE, DYNAMIC_CODE, WRITES_MODULE (``FLAG_TEXT`` maps
    each to its Korean text). Only what neither the gate (kernels) nor the sandbox (processes, files,
    network, limits) reports; shell lines, helpers named ``check_*``, reused given names and code that does
    not parse are a student's own business. An empty list means nothing was found; a flag means "a human
    should look", not proof of cheating.
    """
    if not isinstance(code, str):
        raise TypeError(f"scan_source expects the source text as str, got {type(code).__name__}")
    try:
        tree = ast.parse(_python(code))
    except SyntaxError:
        return []
    found = sorted(_findings(tree), key=lambda f: (f[1], f[0]))
    return list(dict.fromkeys(f"{c} (줄 {line}): {FLAG_TEXT[c]} — {detail}" for c, line, detail in found))
