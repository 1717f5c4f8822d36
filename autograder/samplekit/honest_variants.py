"""Honest hand-ins written differently from the master: each must get the master's points and no review flag,
because the student's own notebook grades them so.

The kernel variants rewrite the master's ``@triton.jit`` answer (any exercise) with ``ast``:

* ``kernel_alias`` — the kernel is defined as ``my_<name>`` and bound by assignment (``<name> = my_<name>``).
* ``constexpr_from_constant`` — the last constexpr parameter gets a default taken from a module constant
  (``BLOCK_DEFAULT = 16`` ... ``BLOCK_SIZE_K: tl.constexpr = BLOCK_DEFAULT``); the locked launcher passes it.
* ``triton_alias`` — Triton imported under other names (``import triton as trt``, ``import triton.language as
  tlx``) and used through them.
* ``autotune_one_config`` — ``@triton.autotune`` with one config (``num_warps`` only) above the ``@triton.jit``:
  the locked launcher still sets every constexpr.

``iterable_answers`` hands in every set, list and dict answer the master writes as a literal as another
container of the same values: a set as a pandas ``Index``, a list as a ``deque``, a dict as an ``OrderedDict``
(``VARIANT_FORMS`` lists the forms the tests try).
"""

from __future__ import annotations

import ast

from .hostile_v2 import kernel_cell
from .model import Notebook, mentions, set_answer

__all__ = ["KERNEL_VARIANTS", "CASES", "VARIANT_FORMS", "rewrite_kernel", "container_answers"]


def _jit_def(tree: ast.Module, name: str) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)


def _alias(tree: ast.Module, name: str) -> str:
    _jit_def(tree, name).name = f"my_{name}"
    tree.body.append(ast.parse(f"{name} = my_{name}").body[0])
    return "bound by assignment to a kernel defined as my_" + name


def _constant_default(tree: ast.Module, name: str) -> str:
    fn = _jit_def(tree, name)
    last = fn.args.args[-1]
    fn.args.defaults = [ast.Name("BLOCK_DEFAULT", ast.Load())]
    tree.body.insert(0, ast.parse("BLOCK_DEFAULT = 16").body[0])
    return f"{last.arg}: tl.constexpr = BLOCK_DEFAULT (a module constant)"


def _triton_alias(tree: ast.Module, name: str) -> str:
    fn = _jit_def(tree, name)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in ("tl", "triton"):
            node.id = {"tl": "tlx", "triton": "trt"}[node.id]
    tree.body[:0] = ast.parse("import triton as trt\nimport triton.language as tlx").body
    return "triton and triton.language imported as trt and tlx"


def _autotune(tree: ast.Module, name: str) -> str:
    fn = _jit_def(tree, name)
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
    def case(nb: Notebook):
        found = kernel_cell(nb)
        if found is None:
            return None
        _ex, gid, fn = found
        src, desc = rewrite_kernel(nb.solutions[gid], fn.name, variant)
        return f"honest: {fn.name} {desc}", set_answer(nb.full(), gid, src), nb.full_points()
    return case


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
    found = []
    for gid in nb.answer_cells():
        try:
            body = ast.parse(nb.solutions[gid]).body
        except SyntaxError:
            continue
        tests = nb.group_of(gid)
        for node in body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and type(node.value) in _KIND):
                name = node.targets[0].id
                if any(mentions(nb.test_source(t), name) for t in tests):
                    found.append((gid, name, _KIND[type(node.value)]))
    return found


def iterable_answers(nb: Notebook):
    found = container_answers(nb)
    if not found:
        return None
    out = nb.full()
    for gid, name, kind in found:
        imp, expr = VARIANT_FORMS[kind][0]
        src = next("".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in out["cells"]
                   if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == gid)
        set_answer(out, gid, src + "\n" + (imp + "\n" if imp else "") + f"{name} = {expr.format(v=name)}\n")
    forms = ", ".join(f"{name} as {VARIANT_FORMS[kind][0][1].split('(')[0]}" for _g, name, kind in found)
    return f"honest: answers handed in as other containers ({forms})", out, nb.full_points()


CASES = {**{v: _kernel_case(v) for v in KERNEL_VARIANTS}, "iterable_answers": iterable_answers}
