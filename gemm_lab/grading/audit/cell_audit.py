"""Static audit of nbgrader test cells: which notebook names a test cell reads, and whether it checks anything.

The test-cell rule (see the package docstring): the student's answer variables are the only notebook names a
test cell reads; the checker and every expected value come from the cell itself (``g = fresh()``, ``g.calc``
or its own imports: the cell runs in the grader's process, on the answers handed out as data, so what it
imports is the grader's). ``audit_test_cell(source, answers)`` lists every way a cell breaks it:

* a read of a global name that is not bound inside the cell (before the read, for module-level code),
  not a Python builtin and not one of ``answers`` (the names the student sets in solution cells);
  ``notebook_reads`` is also what the grader hands out of the student's kernel (``judge.handout``);
* ``globals()``, ``vars()``, ``locals()``, ``eval``, ``exec``, ``__import__``, ``get_ipython`` or the
  ``'__main__'`` module, which reach notebook names by string (the hand-out cannot see them);
* no ``check_*`` call at all (a test cell that checks nothing gives its points away).

``answer_names(cells)`` collects the answer names of a notebook: names assigned or defined (not
imported) at module level in cells nbgrader marks ``solution: true``, and between
nbgrader's begin/end solution markers in any code cell. ``audit_notebook(nb)`` applies both to
a notebook (a dict / nbformat node with ``cells``; a name a locked cell also defines does not count as an
answer there). Messages are for the course's maintainers (English).
"""

from __future__ import annotations

import ast
import builtins
import symtable
import textwrap

__all__ = ["audit_test_cell", "answer_names", "audit_notebook", "module_bindings", "notebook_reads"]

_BUILTINS = frozenset(dir(builtins))
# Built from parts: this file is readable from a hand-in, and the literal markers would look like
# leaked master text to the autograder's snoop check.
_BEGIN, _END = "### BEGIN " + "SOLUTION", "### END " + "SOLUTION"
# builtins that read the notebook's namespace by name, out of the scope analysis' sight
_DYNAMIC_NAMESPACE = frozenset({"globals", "vars", "locals", "eval", "exec", "get_ipython", "__import__"})


def _nbgrader(cell) -> dict:
    return ((cell.get("metadata") or {}).get("nbgrader") or {}) if isinstance(cell, dict) else {}


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _python(source: str) -> str:
    """IPython '%magic' / '!shell' lines become 'pass' (same line numbers)."""
    out = []
    for line in source.splitlines():
        s = line.lstrip()
        out.append(line[: len(line) - len(s)] + "pass" if s.startswith(("%", "!")) else line)
    return "\n".join(out) + "\n"


def _parse(source: str):
    text = _python(source)
    return ast.parse(text), symtable.symtable(text, "<cell>", "exec")


def _symbols(table, wanted) -> set[str]:
    """The names of ``table`` and of every scope nested in it whose symbol ``wanted(symbol, at_top)`` takes."""
    top = table.get_type() == "module"
    out = {s.get_name() for s in table.get_symbols() if wanted(s, top)}
    for child in table.get_children():
        out |= _symbols(child, wanted)
    return out


def module_bindings(source: str, include_imports: bool = True) -> set[str]:
    """Names a cell binds in the notebook's global namespace (assignments, def/class, ``global`` writes,
    and imports unless ``include_imports`` is False)."""
    def binds(s, top) -> bool:
        return (s.is_declared_global() and s.is_assigned()
                or top and (s.is_assigned() or s.is_namespace() or include_imports and s.is_imported()))

    return _symbols(_parse(source)[1], binds)


def _reads_before_binding(tree: ast.Module) -> set[str]:
    """Module-level names the cell reads before its first binding of them (so it reads the notebook's).

    Code inside functions, lambdas and comprehensions runs later and is left to the scope analysis; a
    target counts as bound once the value it receives is evaluated (``x = x + 1`` reads the notebook's x).
    """
    first_bind: dict[str, tuple[int, int]] = {}
    loads: list[tuple[str, tuple[int, int]]] = []

    def end(node):
        return (node.end_lineno, node.end_col_offset)

    def bind(name, pos):
        if name not in first_bind or pos < first_bind[name]:
            first_bind[name] = pos

    def visit(node, anchor=None):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in node.decorator_list:
                visit(d)
            if isinstance(node, ast.ClassDef):
                for b in node.bases:
                    visit(b)
            else:
                for d in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
                    visit(d)
            bind(node.name, end(node))
            return
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            visit(node.generators[0].iter)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                bind(a.asname or a.name.split(".")[0], end(node))
            return
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads.append((node.id, (node.lineno, node.col_offset)))
            else:
                bind(node.id, anchor or end(node))
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            if node.value is not None:
                visit(node.value)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                loads.append((node.target.id, (node.lineno, node.col_offset)))
            for t in targets:
                visit(t, end(node))
            return
        if isinstance(node, (ast.For, ast.AsyncFor)):
            visit(node.iter)
            visit(node.target, end(node.iter))
            for child in node.body + node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                visit(item.context_expr)
                if item.optional_vars is not None:
                    visit(item.optional_vars, end(item.context_expr))
            for child in node.body:
                visit(child)
            return
        if isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name, (node.lineno, node.col_offset))
        for child in ast.iter_child_nodes(node):
            visit(child, anchor)

    for stmt in tree.body:
        visit(stmt)
    return {name for name, pos in loads if name not in first_bind or pos < first_bind[name]}


def _checker_problems(tree: ast.Module) -> list[str]:
    problems, checks = [], 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _DYNAMIC_NAMESPACE:
            problems.append(f"uses {node.id}() (it reaches notebook names the audit cannot see)")
        elif isinstance(node, ast.Constant) and node.value == "__main__":
            problems.append("names the '__main__' module (the notebook's namespace)")
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            checks += name.startswith("check_")
    if not checks:
        problems.append("calls no check_* (from gemm_lab.grading import fresh; g = fresh(); g.check_...)")
    return problems


def notebook_reads(source: str) -> set[str]:
    """The global names a cell reads from the notebook: not bound in the cell before the read, not
    builtins. Raises SyntaxError for unparsable source."""
    tree, table = _parse(source)
    # every name the cell's code looks up in the global namespace (any scope)
    reads = _symbols(table, lambda s, top: s.is_referenced() and (top or s.is_global()))
    outside = (reads - module_bindings(source)) | _reads_before_binding(tree)
    return {n for n in outside if n not in _BUILTINS}


def audit_test_cell(source: str, answers=frozenset()) -> list[str]:
    """How a test cell breaks the test-cell rule (empty list: it follows it).

    ``answers``: the student's answer names (``answer_names``), the only notebook names it may read.
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be the cell's source text (str), got {type(source).__name__}")
    try:
        tree, _ = _parse(source)
    except SyntaxError as exc:
        return [f"cannot be parsed: {exc.msg} (line {exc.lineno})"]
    bad = sorted(n for n in notebook_reads(source) if n not in answers)
    problems = []
    if bad:
        problems.append("reads notebook names " + ", ".join(bad)
                        + " (only the student's answer names may be read; take the rest from g = fresh())")
    problems += _checker_problems(tree)
    return list(dict.fromkeys(problems))


def _solution_snippets(source: str) -> list[str]:
    out, cur = [], None
    for line in source.splitlines():
        if line.strip().startswith(_BEGIN):
            cur = []
        elif line.strip().startswith(_END):
            if cur is not None:
                out.append(textwrap.dedent("\n".join(cur)))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def answer_names(cells) -> set[str]:
    """Names the student sets: module-level assignments/definitions (not imports) of ``solution: true``
    cells and of the code between nbgrader's begin/end solution markers of any code cell."""
    names: set[str] = set()
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        src = _source(cell)
        chunks = [src] if _nbgrader(cell).get("solution") else _solution_snippets(src)
        for chunk in chunks:
            try:
                names |= module_bindings(chunk, include_imports=False)
            except SyntaxError:
                continue
    return names


def audit_notebook(nb) -> list[tuple[str, list[str]]]:
    """``[(grade_id, problems), ...]`` for every test cell of a notebook that breaks the rule."""
    cells = nb.get("cells", []) if isinstance(nb, dict) else nb.cells
    # a name a given (locked) cell also binds is not the student's alone: a test must not read it
    given = set()
    for cell in cells:
        m = _nbgrader(cell)
        if cell.get("cell_type") == "code" and m.get("locked") and not m.get("solution") and not m.get("grade"):
            try:
                given |= module_bindings(_source(cell))
            except SyntaxError:
                continue
    answers = answer_names(cells) - given
    out = []
    for i, cell in enumerate(cells):
        m = _nbgrader(cell)
        if cell.get("cell_type") == "code" and m.get("grade") and not m.get("solution"):  # an autograded test
            problems = audit_test_cell(_source(cell), answers)
            if problems:
                out.append((m.get("grade_id") or f"cell {i}", problems))
    return out
