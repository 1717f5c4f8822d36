"""Hostile hand-ins against the kernel worker: Python hidden in the parts of a ``@triton.jit`` kernel that are
not its body, where an import of the kernel's text would evaluate it.

Each case keeps an empty kernel (a docstring and ``pass``) and puts one payload expression (``PAYLOAD``) in one
place (``PLACES``): the return annotation, a parameter's annotation (plain, positional-only, keyword-only), the
annotation of a module constant the kernel reads, the decorator, a ``@triton.jit`` keyword, a default, an
``@triton.autotune`` argument. Where it runs, the payload replaces Triton's launch with one that computes the
answer with torch, so an empty kernel would pass every output check. The gate writes the worker's module from
the checked syntax tree and refuses each of them: the kernel cells score 0 and the refusal is a review finding
(``KERNEL_NOT_TRITON``) that names the place.
"""

from __future__ import annotations

import ast

from .model import Notebook, function_def, on_kernel, payloads, set_answer

__all__ = ["PAYLOAD_SOURCE", "PLACES", "CASES", "REVIEW", "attack"]

# What the payload runs: every later launch computes the exercise's answer with torch instead of the kernel.
PAYLOAD_SOURCE = payloads("attacks_gate")["PAYLOAD_SOURCE"]
PAYLOAD = f"__import__('builtins').exec({PAYLOAD_SOURCE!r})"


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _return_annotation(tree, fn):
    fn.returns = _expr(PAYLOAD)


def _arg_annotation(tree, fn):
    fn.args.args[0].annotation = _expr(PAYLOAD)


def _posonly_annotation(tree, fn):
    fn.args.args[0].annotation = _expr(PAYLOAD)
    fn.args.posonlyargs, fn.args.args = fn.args.args[:1], fn.args.args[1:]


def _kwonly_annotation(tree, fn):
    fn.args.kwonlyargs.append(ast.arg("unused_hint", _expr(PAYLOAD)))
    fn.args.kw_defaults.append(ast.Constant(0))


def _constant_annotation(tree, fn):
    at = tree.body.index(fn)
    tree.body.insert(at, ast.AnnAssign(ast.Name("TILE_HINT", ast.Store()), _expr(PAYLOAD), ast.Constant(1), 1))
    fn.body.insert(len(fn.body) - 1, ast.parse("hint = TILE_HINT").body[0])


def _decorator(tree, fn):
    fn.decorator_list = [_expr(f"({PAYLOAD} or triton.jit)")]


def _jit_keyword(tree, fn):
    fn.decorator_list = [_expr(f"triton.jit(do_not_specialize={PAYLOAD} or [])")]


def _default(tree, fn):
    fn.args.defaults = [_expr(f"({PAYLOAD} or 16)")]


def _tuner_argument(tree, fn):
    fn.decorator_list.insert(0, _expr(f"triton.autotune(configs=[triton.Config({{}}, num_warps=4)], "
                                      f"key=[{PAYLOAD} or 'M'])"))


PLACES = {"return_annotation": _return_annotation, "arg_annotation": _arg_annotation,
          "posonly_annotation": _posonly_annotation, "kwonly_annotation": _kwonly_annotation,
          "constant_annotation": _constant_annotation, "decorator": _decorator, "jit_keyword": _jit_keyword,
          "default": _default, "tuner_argument": _tuner_argument}


def attack(source: str, name: str, place: str) -> str:
    """The kernel cell ``source`` with kernel ``name`` emptied and the payload put at ``place``."""
    tree = ast.parse(source)
    fn = function_def(tree, name)
    doc = fn.body[0] if fn.body and isinstance(fn.body[0], ast.Expr) else None
    fn.body = ([doc] if doc else []) + [ast.Pass()]
    PLACES[place](tree, fn)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _case(place: str):
    def case(nb: Notebook, _ex, gid, fn):
        out = set_answer(nb.full(), gid, attack(nb.solutions[gid], fn.name, place))
        return (f"an empty kernel with Python in its {place.replace('_', ' ')} that makes every launch compute the "
                "answer with torch", out, nb.full_except(nb.kernel_tests()))
    return on_kernel()(case)


CASES = {f"gate_{place}": _case(place) for place in PLACES}
REVIEW = set(CASES)  # the gate's refusal is a finding (KERNEL_NOT_TRITON)
