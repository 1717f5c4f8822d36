"""A release notebook with its master's solutions at hand, and the cell and kernel helpers the cases use."""

from __future__ import annotations

import ast
import copy
import functools
import re
from pathlib import Path

import tomllib

from autograder import cells as nbcells
from autograder.cells import is_autograded_test, is_grade, is_solution
from autograder.course import read_notebook
from gemm_lab.grading.kernels.exercises import for_notebook

SOLUTION_BEGIN = "### BEGIN SOLUTION"
SOLUTION_END = "### END SOLUTION"
HIDDEN_MARK = "BEGIN HIDDEN TESTS"


def strip_solution_markers(text: str) -> str:
    return "\n".join(line for line in text.splitlines()
                     if line.strip() not in (SOLUTION_BEGIN, SOLUTION_END)).strip("\n")


def code_cell(src: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": src}


def notebook(cells: list[dict]) -> dict:
    """A notebook (nbformat 4.5, a Python 3 kernel) of ``cells``."""
    return {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                        "name": "python3"}, "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def assigned_names(src: str) -> tuple[list[str], list[str]]:
    """Top-level names assigned (variables) and defined (functions/classes) by a solution."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return [], []
    names, funcs = [], []
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            funcs.append(node.name)
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and n.id not in names:
                    names.append(n.id)
    return names, funcs


def mentions(src: str, name: str) -> bool:
    """Whether ``name`` appears as a whole identifier in ``src``."""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", src) is not None


def kernel_def(src: str) -> ast.FunctionDef | None:
    """The (last) ``@triton.jit`` function of a cell."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    found = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
            found = node
    return found


def function_def(tree: ast.Module, name: str) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)


class Notebook:
    """A release notebook with the master's solutions at hand (matched by grade_id)."""

    def __init__(self, name: str, release: dict, master: dict, assignment: str = ""):
        self.name = name
        self.assignment = assignment
        self.release = release
        self.solutions = {nbcells.meta(c)["grade_id"]: strip_solution_markers(nbcells.source(c)) for c in master["cells"]
                          if nbcells.meta(c).get("grade_id") and is_solution(c)}

    @classmethod
    def load(cls, root, key: str, release: str = "release") -> Notebook:
        """``root/<release>/<key>.ipynb`` with its master ``root/source/<key>.ipynb`` (key: assignment/notebook);
        ``release="source"``: the master stands in for its release (the same graded cells, in the same order)."""
        assignment, name = key.split("/")
        master = read_notebook(Path(root) / "source" / f"{key}.ipynb")
        handed = master if release == "source" else read_notebook(Path(root) / release / f"{key}.ipynb")
        return cls(name, handed, master, assignment)

    @property
    def key(self) -> str:
        """``assignment/notebook``, as an exercise record names its notebook."""
        return f"{self.assignment}/{self.name}"

    def kernel_tests(self) -> list[str]:
        """Grade ids of the test cells of the kernel exercise this notebook holds ([] where it holds none)."""
        ex = for_notebook(self.key)
        return list(ex.tests()) if ex else []

    def kernel_cell(self) -> tuple[str, str, ast.FunctionDef] | None:
        """(exercise, grade_id of the kernel answer cell, the master's jit def) of the notebook's graded kernel."""
        ex = for_notebook(self.key)
        fn = kernel_def(self.solutions.get(ex.solution_cell, "")) if ex and self.kernel_tests() else None
        return None if fn is None else (ex.name, ex.solution_cell, fn)

    def copy(self) -> dict:
        return copy.deepcopy(self.release)

    def full(self) -> dict:
        nb = self.copy()
        for cell in nb["cells"]:
            gid = nbcells.meta(cell).get("grade_id")
            if is_solution(cell) and gid in self.solutions:
                cell["source"] = self.solutions[gid]
        return nb

    def graded_cells(self) -> list[tuple[str, float, bool]]:
        """(grade_id, points, auto) for every graded cell, in order."""
        return [(nbcells.meta(c)["grade_id"], float(nbcells.meta(c).get("points", 0)), is_autograded_test(c))
                for c in self.release["cells"] if is_grade(c)]

    def full_points(self) -> dict[str, float]:
        """Expected points of a right hand-in: every auto test's points; manual cells 0 (graded by hand)."""
        return {g: (p if auto else 0.0) for g, p, auto in self.graded_cells()}

    def zero_points(self) -> dict[str, float]:
        return {g: 0.0 for g, _, _ in self.graded_cells()}

    def full_except(self, lost) -> dict[str, float]:
        """Full points but 0 for the grade ids in ``lost``."""
        lost = set(lost)
        unknown = lost - {g for g, _, _ in self.graded_cells()}
        if unknown:
            raise ValueError(f"{self.key}: no graded cells {sorted(unknown)}")
        return {g: (0.0 if g in lost else p) for g, p in self.full_points().items()}

    def groups(self) -> list[tuple[int, list[str]]]:
        """(index of an answer code cell, grade_ids of the auto tests that follow it)."""
        out = []
        for i, cell in enumerate(self.release["cells"]):
            if cell["cell_type"] == "code" and is_solution(cell) and not is_grade(cell):
                out.append((i, []))
            elif is_autograded_test(cell) and out:
                out[-1][1].append(nbcells.meta(cell)["grade_id"])
        return out

    def group_of(self, answer_gid: str) -> list[str]:
        """The auto tests that follow the answer cell ``answer_gid``."""
        for i, tests in self.groups():
            if nbcells.meta(self.release["cells"][i]).get("grade_id") == answer_gid:
                return tests
        raise ValueError(f"{self.key}: no answer cell {answer_gid!r}")

    def tests_reading(self, answer_gid: str, name: str) -> list[str]:
        """The auto tests after the answer cell ``answer_gid`` whose source names ``name``."""
        return [t for t in self.group_of(answer_gid) if mentions(self.test_source(t), name)]

    def literal_answers(self) -> list[tuple[str, str, ast.expr]]:
        """(answer grade_id, name, value) of every ``name = <expression>`` statement of the masters' answers."""
        found = []
        for gid in self.answer_cells():
            try:
                body = ast.parse(self.solutions[gid]).body
            except SyntaxError:
                continue
            found += [(gid, n.targets[0].id, n.value) for n in body if isinstance(n, ast.Assign)
                      and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)]
        return found

    def test_source(self, gid: str) -> str:
        return nbcells.source(cell_of(self.release, gid))

    def index_of(self, gid: str) -> int:
        return next(i for i, c in enumerate(self.release["cells"]) if nbcells.meta(c).get("grade_id") == gid)

    def first_answer_index(self) -> int:
        groups = self.groups()
        if not groups:
            raise ValueError(f"{self.name}: no answer code cell")
        return groups[0][0]

    def after_first_test(self) -> tuple[int, str]:
        """Index just after the first auto test cell that follows the first answer, and its grade_id."""
        first = next((tests[0] for _, tests in self.groups() if tests), None)
        if first is None:
            raise ValueError(f"{self.name}: no test cell after the first answer")
        return self.index_of(first) + 1, first

    def answer_cells(self) -> list[str]:
        """Grade ids of the code answer cells with a master solution, in order."""
        return [nbcells.meta(c)["grade_id"] for c in self.release["cells"]
                if c["cell_type"] == "code" and is_solution(c) and nbcells.meta(c).get("grade_id") in self.solutions]


def insert_cell(nb: dict, index: int, src: str) -> dict:
    nb["cells"].insert(index, code_cell(src))
    return nb


def cell_of(nb: dict, gid: str) -> dict:
    """The cell of notebook json ``nb`` whose grade_id is ``gid``."""
    for cell in nb["cells"]:
        if nbcells.meta(cell).get("grade_id") == gid:
            return cell
    raise ValueError(f"no cell {gid!r}")


def set_answer(nb: dict, gid: str, src: str) -> dict:
    """Replace the source of the cell ``gid``."""
    cell_of(nb, gid)["source"] = src
    return nb


def on_kernel(*skip: str):
    """Decorator: a case built on the notebook's graded kernel, ``build(nb, exercise, grade_id, jit def)``; the
    case is None where the notebook has no graded kernel or its exercise is one of ``skip``."""
    def wrap(build):
        @functools.wraps(build)
        def case(nb: Notebook):
            found = nb.kernel_cell()
            return None if found is None or found[0] in skip else build(nb, *found)
        return case
    return wrap


def helper_cell(module: str, code: str, after: str, files: dict | None = None) -> str:
    """A cell that writes ``code`` (and ``files``: {file name: text}) to disk, imports it and runs ``after``."""
    lines = ["# 노트북 도우미: 파일로 저장해 import"]
    for name, text in {**(files or {}), f"{module}.py": code}.items():
        var = "_" + re.sub(r"\W", "_", name)
        lines += [f"{var} = {text!r}", f"with open({name!r}, 'w', encoding='utf-8') as _f:", f"    _f.write({var})"]
    lines += [f"import {module}", after]
    return "\n".join(lines).rstrip() + "\n"


def payloads(module: str) -> dict[str, str]:
    """The cell texts of samplekit module ``module`` in ``payloads.toml`` (what a student would paste into a cell
    or write to a module file), by constant name."""
    with (Path(__file__).parent / "payloads.toml").open("rb") as f:
        return tomllib.load(f)[module]
