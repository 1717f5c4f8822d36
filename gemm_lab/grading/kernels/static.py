"""Static checks of a student's kernel source (its AST), before anything runs.

``unmasked_loads(functions)`` finds the ``tl.load`` calls that read a *block* of addresses without a
``mask=``: a pointer expression that depends on ``tl.arange`` (directly or through names assigned from it,
in any order, loops included) may point past the end of a tensor on the last block, and an unmasked load
there reads out of bounds on a GPU even when the store is masked (the output checks cannot see such a
read: the value is never stored). Tensor descriptors (``desc.load``) check bounds in hardware and are not
flagged; block pointers never get here (the gate refuses them, as it refuses the release stub and
recursion). In a helper the student wrote, every non-constexpr parameter may be a block, so its loads need
a mask too. The check keys on what names are bound to (``triton.language`` under any alias, ``load``
imported by name), not on the sample solutions' variable names.
"""

from __future__ import annotations

import ast
import types

__all__ = ["unmasked_loads", "describe"]


class _Lang:
    """What a kernel's globals bind: names of triton.language, of the triton package, of triton.language.load."""

    def __init__(self, glob):
        self.lang, self.pkg, self.load = set(), set(), set()
        for name, val in glob.items():
            mod = getattr(val, "__name__", None) if isinstance(val, types.ModuleType) else None
            if mod in ("triton.language", "triton.language.core"):
                self.lang.add(name)
            elif mod == "triton":
                self.pkg.add(name)
            elif getattr(val, "__module__", "") in ("triton.language.core", "triton.language") and \
                    getattr(val, "__name__", "") == "load":
                self.load.add(name)

    def is_lang(self, node) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.lang
        return (isinstance(node, ast.Attribute) and node.attr == "language" and isinstance(node.value, ast.Name)
                and node.value.id in self.pkg)

    def is_call(self, node, attr: str) -> bool:
        if not isinstance(node, ast.Call):
            return False
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == attr and self.is_lang(f.value):
            return True
        return attr == "load" and isinstance(f, ast.Name) and f.id in self.load

    def arange_in(self, expr) -> bool:
        return any(self.is_call(n, "arange") for n in ast.walk(expr))


def _names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _taint(fn: ast.FunctionDef, lang: _Lang, params_are_blocks: bool) -> set:
    """Names that hold blocks of offsets/pointers (from tl.arange)."""
    block = {a.arg for a in fn.args.args if params_are_blocks
             and not (a.annotation is not None and "constexpr" in ast.dump(a.annotation))}

    assigns = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            assigns.append((node.targets, node.value))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            assigns.append(([node.target], node.value))
        elif isinstance(node, ast.For):
            assigns.append(([node.target], node.iter))
        elif isinstance(node, ast.NamedExpr):
            assigns.append(([node.target], node.value))
    changed = True
    while changed:
        changed = False
        for targets, value in assigns:
            if lang.arange_in(value) or _names(value) & block:
                new = set().union(*map(_names, targets)) - block
                block |= new
                changed = changed or bool(new)
    return block


def _kw(call: ast.Call, name: str, pos: int):
    """The argument ``name`` of ``call``, by keyword or at position ``pos``; None when not given."""
    return next((k.value for k in call.keywords if k.arg == name), call.args[pos] if len(call.args) > pos else None)


def unmasked_loads(functions) -> list[dict]:
    """``functions``: [(name, source, globals)], the kernel first, then the student's @jit helpers.
    Returns one dict per unmasked block load: function, code (the kernel is the gate's text, whose lines are
    not the cell's: the code names the load)."""
    found = []
    for k, (name, src, glob) in enumerate(functions):
        try:
            fn = next((n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef)), None)
        except SyntaxError:
            continue
        if fn is None:
            continue
        lang = _Lang(glob)
        block = _taint(fn, lang, params_are_blocks=k > 0)
        for node in ast.walk(fn):
            if not lang.is_call(node, "load"):
                continue
            ptr = _kw(node, "pointer", 0)
            if ptr is None:
                continue
            mask = _kw(node, "mask", 1)
            if (_names(ptr) & block or lang.arange_in(ptr)) and (mask is None or isinstance(mask, ast.Constant)
                                                               and mask.value is None):
                found.append({"function": name,
                              "code": ast.get_source_segment(src, node) or "tl.load(...)"})
    return found


def describe(found: list[dict], kernel_name: str) -> str:
    """Korean feedback naming the first unmasked load (and how many there are)."""
    f = found[0]
    where = f"@triton.jit 함수 {f['function']}" if f["function"] != kernel_name else "커널"
    code = " ".join(f["code"].split())
    if len(code) > 90:
        code = code[:87] + "..."
    more = f" (마스크 없는 로드 {len(found)}개)" if len(found) > 1 else ""
    return (f"마스크 없는 로드 `{code}` ({where}){more}: 포인터 블록의 일부 레인이 텐서 범위 밖을 가리킬 수 "
            "있습니다. 저장(tl.store)에 마스크가 있어도 GPU에서는 범위 밖 읽기가 잘못된 메모리 접근이 됩니다. "
            "tl.load(..., mask=..., other=...)로 범위 안의 레인만 읽으세요.")
