"""Write docs/CONTRACTS.md from the code: each public module's names and the autograder's commands.

    .venv/bin/python -m tools.contracts            # rewrite docs/CONTRACTS.md (from the repository root)
    .venv/bin/python -m tools.contracts --check    # exit 1 when the committed file differs

A module's public names are its ``__all__`` (or, without one, the functions, classes and UPPER_CASE
constants it defines itself); each is listed with its signature and the first line of its docstring, read
with ``ast`` (nothing of gemm_lab is imported, so torch and triton are not needed). The autograder's
commands come from its argparse parser (``python -m autograder VERB``). tests/test_contracts.py fails when
the committed file is not what this writes.
"""

from __future__ import annotations

import argparse
import ast
import functools
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "CONTRACTS.md"

# (section title, modules) in the order the file lists them
SECTIONS = [
    ("Calculators (pure Python: no torch, no triton)", [
        "gemm_lab.calc", "gemm_lab.calc.tiling", "gemm_lab.calc.ordering", "gemm_lab.calc.roofline",
        "gemm_lab.calc.smem", "gemm_lab.calc.occupancy", "gemm_lab.calc.waves", "gemm_lab.calc.autotune",
        "gemm_lab.calc.softmax", "gemm_lab.calc.devices",
    ]),
    ("Runtime and measurements", ["gemm_lab.runtime", "gemm_lab.device_limits", "gemm_lab.results"]),
    ("Kernels (triton; launchers validate their input)", ["gemm_lab.kernels", "gemm_lab.kernels.check"]),
    ("Compile pipeline", ["gemm_lab.compile", "gemm_lab.compile.hints"]),
    ("Pictures (matplotlib, ipywidgets)", [
        "gemm_lab.viz.pointers", "gemm_lab.viz.blocks", "gemm_lab.viz.ordering", "gemm_lab.viz.roofline",
        "gemm_lab.viz.occupancy", "gemm_lab.viz.waves", "gemm_lab.viz.pipeline", "gemm_lab.viz.bench_plots",
        "gemm_lab.viz.live", "gemm_lab.viz.fonts",
    ]),
    ("Grading (what test cells call, and how the autograder judges)", [
        "gemm_lab.grading", "gemm_lab.grading.codec", "gemm_lab.grading.record", "gemm_lab.grading.audit.findings",
        "gemm_lab.grading.kernels.exercises", "gemm_lab.grading.judge.handout", "gemm_lab.grading.judge.replay",
        "gemm_lab.grading.judge.gate", "gemm_lab.grading.judge.remote",
    ]),
]

HEADER = """\
# GEMM Lab — module contracts

<!-- Written by tools/contracts.py from the code; do not edit by hand. After changing a public name or
its docstring: .venv/bin/python -m tools.contracts (tests/test_contracts.py checks this file). -->

The public names of each `gemm_lab` module and the autograder's commands. A module may add names; it
must not rename or remove these without updating every caller. Sizes are in elements, bytes are bytes,
times are milliseconds (`_ms`), rates are TFLOP/s or GB/s (10^12 / 10^9) unless a name says otherwise.

Repository conventions

* `gemm_lab/__init__.py` imports nothing heavy: `import gemm_lab.calc` must not import torch or triton.
* Anything that imports triton imports `gemm_lab.runtime` first (it sets `TRITON_INTERPRET=1` when
  there is no CUDA device, before triton is loaded).
* Library errors are English `ValueError`/`TypeError`; grader feedback printed to students is Korean.
* Names follow STYLE.md: `M, N, K`, `BLOCK_M/BLOCK_N/BLOCK_K`, `GROUP_M`, `num_warps`, `num_stages`,
  `pid_m/pid_n`.
* Notebooks: masters are jupytext percent scripts `source/weekNN/NN_name.py`; `make notebooks` builds
  the `.ipynb` beside them (no outputs); `make release` runs nbgrader into `release/`. Ungraded labs
  are `notebooks/NAME.py` → `notebooks/NAME.ipynb`.
"""


# --------------------------------------------------------------------------- reading modules (ast)

def _path(module: str) -> Path:
    base = ROOT.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _tree(module: str) -> ast.Module:
    return ast.parse(_path(module).read_text(encoding="utf-8"))


def _first_line(doc: str | None) -> str:
    """The first sentence-line of a docstring (its first line, or the first paragraph joined)."""
    if not doc:
        return ""
    para = doc.strip().split("\n\n")[0]
    return " ".join(line.strip() for line in para.splitlines())


def _all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                return [ast.literal_eval(e) for e in node.value.elts]
    return None


def _defined(tree: ast.Module) -> dict[str, ast.AST]:
    """Top-level names a module defines itself: def, class, assignment (the last one wins)."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
    return out


def _imports(module: str, tree: ast.Module) -> dict[str, tuple[str, str]]:
    """{local name: (module, name there)} of the module-level ``from X import name`` statements
    (``name`` empty when the local name is a module)."""
    package = module if _path(module).name == "__init__.py" else module.rpartition(".")[0]
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module
            for a in node.names:
                sub = f"{base}.{a.name}"
                is_module = sub.startswith("gemm_lab") and (_path(sub).exists())
                out[a.asname or a.name] = (sub, "") if is_module else (base, a.name)
    return out


def _public(module: str) -> list[str]:
    tree = _tree(module)
    names = _all(tree)
    if names is not None:
        return names
    return [n for n, node in _defined(tree).items()
            if not n.startswith("_") and (not isinstance(node, (ast.Assign, ast.AnnAssign)) or n.isupper())]


def _resolve(module: str, name: str, depth: int = 0) -> tuple[str, ast.AST | None]:
    """(module that defines ``name``, its definition node); a module re-exported gives (module, None)."""
    tree = _tree(module)
    defined = _defined(tree)
    if name in defined:
        return module, defined[name]
    origin = _imports(module, tree).get(name)
    if origin is None or depth > 5 or not origin[0].startswith("gemm_lab"):
        return module, None
    if not origin[1]:
        return origin[0], None
    return _resolve(origin[0], origin[1], depth + 1)


def _signature(fn: ast.FunctionDef | ast.AsyncFunctionDef, drop_self: bool = False) -> str:
    args = fn.args
    if drop_self and args.args and args.args[0].arg in ("self", "cls"):
        rest = args.args[1:]
        defaults = args.defaults[len(args.defaults) - len(rest):] if len(args.defaults) > len(rest) else args.defaults
        args = ast.arguments(posonlyargs=args.posonlyargs, args=rest, vararg=args.vararg,
                             kwonlyargs=args.kwonlyargs, kw_defaults=args.kw_defaults, kwarg=args.kwarg,
                             defaults=defaults)
    ret = f" -> {ast.unparse(fn.returns)}" if fn.returns is not None else ""
    return f"({ast.unparse(args)}){ret}"


def _class_line(node: ast.ClassDef) -> str:
    decos = [ast.unparse(d) for d in node.decorator_list]
    bases = [ast.unparse(b) for b in node.bases]
    fields = [f"{ast.unparse(s.target)}" + (f"={ast.unparse(s.value)}" if s.value is not None else "")
              for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is not None:
        head = f"`{node.name}{_signature(init, drop_self=True).split(' -> ')[0]}`"
    elif fields and (any(d.startswith("dataclass") or ".dataclass" in d for d in decos) or "NamedTuple" in bases):
        head = f"`{node.name}({', '.join(fields)})`"
    else:
        head = f"`{node.name}`" + (f" ({', '.join(bases)})" if bases else "")
    methods = [s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
               and not s.name.startswith("_")]
    doc = _first_line(ast.get_docstring(node))
    members = f"Members: {', '.join(f'`{m}`' for m in methods)}." if methods else ""
    text = " ".join(t for t in (doc, members) if t)
    return head + (f" — {text}" if text else "")


def _value_line(name: str, node: ast.Assign | ast.AnnAssign) -> str:
    text = ast.unparse(node.value) if node.value is not None else ""
    ann = f": {ast.unparse(node.annotation)}" if isinstance(node, ast.AnnAssign) else ""
    if text and len(text) <= 70:
        return f"`{name}{ann} = {text}`"
    if isinstance(node.value, ast.Call):
        return f"`{name}{ann} = {ast.unparse(node.value.func)}(…)`"
    kinds = {ast.Dict: "dict", ast.List: "list", ast.Tuple: "tuple", ast.Set: "set", ast.Constant: "constant"}
    return f"`{name}{ann}` ({kinds.get(type(node.value), 'value')})"


def _wrapped(where: str, node: ast.AST) -> tuple[str, ast.AST] | None:
    """``name = decorator(...)(module.fn)``: (module, def of fn), so the entry shows fn's signature."""
    value = getattr(node, "value", None)
    if not (isinstance(value, ast.Call) and len(value.args) == 1):
        return None
    arg = value.args[0]
    if isinstance(arg, ast.Name):
        found = _resolve(where, arg.id)
    elif isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
        origin = _imports(where, _tree(where)).get(arg.value.id)
        found = _resolve(origin[0], arg.attr) if origin and not origin[1] else None
    else:
        return None
    if found and isinstance(found[1], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return found
    return None


def _entry(module: str, name: str) -> str:
    where, node = _resolve(module, name)
    inner = _wrapped(where, node) if isinstance(node, ast.Assign) else None
    if inner is not None:
        where, node = inner
    note = f" (`{where}`)" if where != module else ""
    if node is None:
        return f"* `{name}`{note} — module" if where != module else f"* `{name}`"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        decos = [ast.unparse(d) for d in node.decorator_list]
        jit = " `@triton.jit`" if any("jit" in d for d in decos) else ""
        doc = _first_line(ast.get_docstring(node))
        return f"* `{name}{_signature(node)}`{jit}{note}" + (f" — {doc}" if doc else "")

    if isinstance(node, ast.ClassDef):
        line = _class_line(node)
        return f"* {line}" if not note else f"* {line.replace(f'`{node.name}', f'`{name}', 1)}{note}"
    return f"* {_value_line(name, node)}{note}"


def module_section(module: str, listed: set[str]) -> str:
    """One module's heading, docstring line and names; names it re-exports from another module of
    ``listed`` are one line per origin (their entries are under that module's own heading)."""
    tree = _tree(module)
    doc = _first_line(ast.get_docstring(tree))
    lines = [f"### `{module}`", ""]
    if doc:
        lines += [doc, ""]
    again: dict[str, list[str]] = {}
    for name in _public(module):
        where, node = _resolve(module, name)
        if where != module and node is None:
            again.setdefault("submodules", []).append(name)
        elif where != module and where in listed:
            again.setdefault(where, []).append(name)
        else:
            lines.append(_entry(module, name))
    for where, names in again.items():
        what = "Submodules" if where == "submodules" else f"From `{where}`"
        lines.append(f"* {what}: " + ", ".join(f"`{n}`" for n in names))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the autograder's commands

class _Parser(Exception):
    def __init__(self, parser):
        super().__init__("parser")
        self.parser = parser


def _autograder_parser() -> argparse.ArgumentParser:
    """The parser `python -m autograder` builds (caught before it parses anything)."""
    from autograder import __main__ as cli

    def catch(self, *args, **kwargs):
        raise _Parser(self)

    saved = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = catch
    try:
        with warnings.catch_warnings():  # main() sets warning filters of its own
            cli.main([])
    except _Parser as got:
        return got.parser
    finally:
        argparse.ArgumentParser.parse_args = saved
    raise RuntimeError("python -m autograder did not build its parser")


def _verb_lines(doc: str) -> dict[str, str]:
    """{verb: description} from the CLI docstring's ``python -m autograder VERB [args]   description`` lines."""
    out = {}
    for line in doc.splitlines():
        m = re.match(r"\s*python -m autograder (\w+)\s+(.*)$", line)
        if m:
            pieces = re.split(r"\s{2,}", m.group(2).strip())
            if len(pieces) > 1:
                out[m.group(1)] = pieces[-1]
    return out


def commands_section() -> str:
    parser = _autograder_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    from autograder import __main__ as cli

    described = _verb_lines(cli.__doc__ or "")

    lines = ["## Instructor commands: `python -m autograder VERB`", "",
             _first_line(cli.__doc__).rstrip(":") + ". The Makefile's targets call these (`make help`).", ""]
    common = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    if common:
        lines += ["Options before VERB: " + ", ".join(f"`{' '.join(a.option_strings)}`" for a in common), ""]
    for verb, p in sub.choices.items():
        fn = p.get_default("fn")
        doc = _first_line(getattr(fn, "__doc__", None)) or described.get(verb, "")
        usage = " ".join(p.format_usage().replace("usage:", "").split())
        lines += [f"### `{verb}`", "", f"`{usage}`" + (f" — {doc}" if doc else ""), ""]
        opts = [a for a in p._actions if a.option_strings and a.dest != "help" and a.help]
        lines += [f"* `{', '.join(a.option_strings)}`: {' '.join(a.help.split())}" for a in opts]
        if opts:
            lines.append("")
    return "\n".join(lines)


@functools.lru_cache(maxsize=1)
def render() -> str:
    """The whole file (read once per process: the code does not change under a running tool)."""
    parts = [HEADER]
    listed = {m for _, modules in SECTIONS for m in modules}
    for title, modules in SECTIONS:
        parts.append(f"## {title}\n")
        parts += [module_section(m, listed) for m in modules]
    parts.append(commands_section())
    return "\n".join(parts).rstrip() + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.contracts", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/CONTRACTS.md is not current")
    args = ap.parse_args(argv)
    try:
        text = render()
    except ModuleNotFoundError as exc:
        print(f"error: {exc}: run from the repository root as .venv/bin/python -m tools.contracts", file=sys.stderr)
        return 2
    shown = OUT.relative_to(ROOT) if OUT.is_relative_to(ROOT) else OUT
    if args.check:
        if not OUT.is_file() or OUT.read_text(encoding="utf-8") != text:
            print(f"{shown} is out of date: run .venv/bin/python -m tools.contracts", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
