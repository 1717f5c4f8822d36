"""No import circle inside `gemm_lab` or `autograder`.

The graph is read from the source with `ast` (nothing is imported): every `import` and `from ... import`,
at module level or inside a function (a lazy import still ties the two modules together), except those
under `if TYPE_CHECKING:`. `from pkg import name` points at the submodule `pkg.name` when there is one,
else at `pkg` itself; importing a submodule does not count as importing its parent packages.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("gemm_lab", "autograder")

# Modules left out of the graph (none: every circle has been taken apart; add one here only with the reason).
EXCLUDED: tuple[str, ...] = ()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package_files(folder: Path):
    """The .py files of the package in ``folder`` and of its subpackages (folders with an ``__init__.py``).

    Other folders are not part of the package: grading runs write scratch trees under ``autograder/work/``
    while the tests run, and a file there may vanish between listing and reading.
    """
    for path in sorted(folder.iterdir()):
        if path.is_dir() and (path / "__init__.py").is_file():
            yield from _package_files(path)
        elif path.suffix == ".py" and path.is_file():
            yield path


def _modules(package: str) -> dict[str, Path]:
    """{dotted name: path} of every module of ``package`` (EXCLUDED left out)."""
    excluded = {p for pattern in EXCLUDED for p in ROOT.glob(pattern)}
    return {_module_name(p): p for p in _package_files(ROOT / package) if p not in excluded}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (never run)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def _imported(name: str, path: Path, modules) -> set[str]:
    """Modules of ``modules`` that module ``name`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for a in node.names:
                out.add(f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target)
    return out & set(modules) - {name}


def _graph(package: str) -> nx.DiGraph:
    modules = _modules(package)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        graph.add_edges_from((name, target) for target in _imported(name, path, modules))
    return graph


def _circles(graph: nx.DiGraph) -> list[str]:
    """One circle per strongly connected group of modules, as ``a -> b -> a``."""
    out = []
    for group in nx.strongly_connected_components(graph):
        if len(group) > 1:
            names = [u for u, _ in nx.find_cycle(graph.subgraph(group))]
            start = names.index(min(names))  # the same text however the search ran
            names = names[start:] + names[:start]
            out.append(" -> ".join(names + names[:1]))
    return sorted(out)


def test_the_graph_sees_real_imports():
    """Not vacuous: the reader finds relative, lazy and package-level imports."""
    graph = _graph("gemm_lab")
    assert graph.has_edge("gemm_lab.grading", "gemm_lab.grading.answers")  # from .answers import check_value
    assert graph.has_edge("gemm_lab.grading.record", "gemm_lab.grading.codec")  # inside a function
    assert graph.has_edge("gemm_lab.grading", "gemm_lab.calc")  # from .. import calc
    assert "autograder.grade" in _modules("autograder")  # subpackages are walked
    demo = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    assert _circles(demo) == ["a -> b -> c -> a"]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle(package):
    circles = _circles(_graph(package))
    assert not circles, f"import circles in {package}:\n" + "\n".join(circles)
