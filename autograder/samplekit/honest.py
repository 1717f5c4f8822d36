"""Hand-ins without an attack, built from the release and the master's answers: full, blank, all wrong, close
numbers (lose their tests), and the master's answers written otherwise (keep every point, no review flag,
because the student's own notebook grades them so).

* ``other_formats`` — every answer re-bound to another valid format (int/float, tuple/list, rows/array).
* ``iterable_answers`` — every set, list and dict answer the master writes as a literal handed in as another
  container of the same values: a set as a pandas ``Index``, a list as a ``deque``, a dict as an ``OrderedDict``
  (``VARIANT_FORMS`` lists the forms the tests try).
* The kernel variants rewrite the master's ``@triton.jit`` answer (any exercise) with ``ast``:
  ``kernel_alias`` (defined as ``my_<name>``, bound by assignment), ``constexpr_from_constant`` (the last
  constexpr parameter defaults to a module constant; the locked launcher passes it), ``triton_alias``
  (``import triton as trt``, ``import triton.language as tlx``), ``autotune_one_config`` (``@triton.autotune``
  with one config above the ``@triton.jit``: the locked launcher still sets every constexpr).
"""

from __future__ import annotations

import ast

from autograder import cells as nbcells
from autograder.cells import is_solution

from .model import Notebook, assigned_names, cell_of, code_cell, function_def, on_kernel, payloads, set_answer

WRONG_VALUE = -12345


def wrong_source(solution: str) -> str:
    names, funcs = assigned_names(solution)
    lines = [f"{n} = {WRONG_VALUE}" for n in names]
    lines += [f"def {f}(*args, **kwargs):\n    return {WRONG_VALUE}" for f in funcs]
    return "\n".join(lines) or "pass"


def make_wrong(out: dict, nb: Notebook, keep: str | None = None) -> dict:
    """Every code answer of ``out`` but ``keep`` replaced by ``WRONG_VALUE``s."""
    for cell in out["cells"]:
        gid = nbcells.meta(cell).get("grade_id")
        if cell["cell_type"] == "code" and is_solution(cell) and gid != keep and gid in nb.solutions:
            cell["source"] = wrong_source(nb.solutions[gid])
    return out


ALT_HELPER = payloads("honest")["ALT_HELPER"]


def full(nb: Notebook):
    return "all answers right", nb.full(), nb.full_points()


def blank(nb: Notebook):
    return "the untouched release", nb.copy(), nb.zero_points()


def all_wrong(nb: Notebook):
    return f"every answer replaced by {WRONG_VALUE}", make_wrong(nb.copy(), nb), nb.zero_points()


def other_formats(nb: Notebook):
    out = nb.full()
    offset = 0
    for i, cell in enumerate(list(out["cells"])):
        gid = nbcells.meta(cell).get("grade_id")
        if cell["cell_type"] == "code" and is_solution(cell) and gid in nb.solutions:
            names, _ = assigned_names(nb.solutions[gid])
            if names:
                out["cells"].insert(i + 1 + offset, code_cell(ALT_HELPER + "\n".join(f"{n} = _alt({n})" for n in names)))
                offset += 1
    return "right answers in other valid formats (int/float, tuple/list, rows/array)", out, nb.full_points()


def number_answers(nb: Notebook) -> list[tuple[str, str, int | float]]:
    """(answer grade_id, name, value) of every answer written as a plain number literal in the master."""
    return [(gid, name, v.value) for gid, name, v in nb.literal_answers()
            if isinstance(v, ast.Constant) and type(v.value) in (int, float)]


def _close_wrong(nb: Notebook, kind: str):
    """The first literal answer of type ``kind`` made slightly wrong; the tests that read it lose their points."""
    for gid, name, value in number_answers(nb):
        tests = nb.tests_reading(gid, name) if type(value).__name__ == kind else []
        if not tests:
            continue
        if kind == "int":
            new, desc = value + 1, f"{name} = {value + 1} (off by one, right: {value})"
        else:
            step = 10.0 ** -max(1, len(repr(value).split(".")[1]))  # one unit in the last written digit
            new = round(value + step, 12)
            desc = f"{name} = {new!r} (one unit off in the last digit, right: {value!r})"
        out = nb.full()
        set_answer(out, gid, nb.solutions[gid] + f"\n{name} = {new!r}")
        return desc, out, nb.full_except(tests)
    return None


def off_by_one(nb: Notebook):
    return _close_wrong(nb, "int")


def last_digit_off(nb: Notebook):
    return _close_wrong(nb, "float")


# --------------------------------------------------------------------------- the master's answers written otherwise

def _alias(tree: ast.Module, name: str) -> str:
    function_def(tree, name).name = f"my_{name}"
    tree.body.append(ast.parse(f"{name} = my_{name}").body[0])
    return "bound by assignment to a kernel defined as my_" + name


def _constant_default(tree: ast.Module, name: str) -> str:
    fn = function_def(tree, name)
    last = fn.args.args[-1]
    fn.args.defaults = [ast.Name("BLOCK_DEFAULT", ast.Load())]
    tree.body.insert(0, ast.parse("BLOCK_DEFAULT = 16").body[0])
    return f"{last.arg}: tl.constexpr = BLOCK_DEFAULT (a module constant)"


def _triton_alias(tree: ast.Module, name: str) -> str:
    fn = function_def(tree, name)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in ("tl", "triton"):
            node.id = {"tl": "tlx", "triton": "trt"}[node.id]
    tree.body[:0] = ast.parse("import triton as trt\nimport triton.language as tlx").body
    return "triton and triton.language imported as trt and tlx"


def _autotune(tree: ast.Module, name: str) -> str:
    fn = function_def(tree, name)
    key = next(a.arg for a in fn.args.args if not a.arg.endswith("_ptr") and a.annotation is None)
    fn.decorator_list.insert(0, ast.parse(f"triton.autotune(configs=[triton.Config({{}}, num_warps=4)], "
                                          f"key=[{key!r}])", mode="eval").body)
    return f"@triton.autotune with one config (key={key!r}) above @triton.jit"


KERNEL_VARIANTS = {"kernel_alias": _alias, "constexpr_from_constant": _constant_default,
                   "triton_alias": _triton_alias, "autotune_one_config": _autotune}


def rewrite_kernel(source: str, name: str, variant: str) -> tuple[str, str]:
    """(the kernel cell ``source`` rewritten as ``variant``, what changed)."""
    tree = ast.parse(source)
    desc = KERNEL_VARIANTS[variant](tree, name)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n", desc


def _kernel_case(variant: str):
    def case(nb: Notebook, _ex, gid, fn):
        src, desc = rewrite_kernel(nb.solutions[gid], fn.name, variant)
        return f"honest: {fn.name} {desc}", set_answer(nb.full(), gid, src), nb.full_points()
    return on_kernel()(case)


# set / list / dict answers: (import line, expression over the master's value ``{v}``) per form
VARIANT_FORMS = {
    "set": [("import pandas as pd", "pd.Index(sorted({v}))"), ("", "tuple(sorted({v}))"), ("", "frozenset({v})"),
            ("", "list({v})"), ("", "{{x: True for x in {v}}}.keys()")],
    "list": [("import collections", "collections.deque({v})"), ("", "tuple({v})"), ("", "iter({v})")],
    "dict": [("import collections", "collections.OrderedDict({v})"), ("import types", "types.MappingProxyType({v})"),
             ("import collections", "collections.defaultdict(int, {v})")],
}
_KIND = {ast.Set: "set", ast.List: "list", ast.Dict: "dict"}


def container_answers(nb: Notebook) -> list[tuple[str, str, str]]:
    """(answer grade_id, name, kind) of every set/list/dict literal answer a test cell reads."""
    return [(gid, name, _KIND[type(v)]) for gid, name, v in nb.literal_answers()
            if type(v) in _KIND and nb.tests_reading(gid, name)]


def iterable_answers(nb: Notebook):
    found = container_answers(nb)
    if not found:
        return None
    out = nb.full()
    for gid, name, kind in found:
        imp, expr = VARIANT_FORMS[kind][0]
        src = nbcells.source(cell_of(out, gid))
        set_answer(out, gid, src + "\n" + (imp + "\n" if imp else "") + f"{name} = {expr.format(v=name)}\n")
    forms = ", ".join(f"{name} as {VARIANT_FORMS[kind][0][1].split('(')[0]}" for _g, name, kind in found)
    return f"honest: answers handed in as other containers ({forms})", out, nb.full_points()


# the master's answers written otherwise: every point, no review flag
VARIANTS = {**{v: _kernel_case(v) for v in KERNEL_VARIANTS}, "iterable_answers": iterable_answers}
CASES = {"full_marks": full, "blank": blank, "all_wrong": all_wrong, "other_formats": other_formats,
         "off_by_one": off_by_one, "last_digit_off": last_digit_off, **VARIANTS}
