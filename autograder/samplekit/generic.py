"""Cases that need only the release and the master's answers: full, blank, wrong, other formats, close numbers."""

from __future__ import annotations

import ast

from autograder import cells as nbcells
from autograder.cells import is_solution

from .model import Notebook, _assigned_names, _code, mentions, set_answer

WRONG_VALUE = -12345


def _wrong_source(solution: str) -> str:
    names, funcs = _assigned_names(solution)
    lines = [f"{n} = {WRONG_VALUE}" for n in names]
    lines += [f"def {f}(*args, **kwargs):\n    return {WRONG_VALUE}" for f in funcs]
    return "\n".join(lines) or "pass"


ALT_HELPER = '''def _alt(v):
    """The same answer in another valid format (54 -> 54.0, 40.0 -> 40, tuple <-> list, rows -> array)."""
    import numbers
    if isinstance(v, bool):
        return v
    if isinstance(v, numbers.Integral):
        return float(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, tuple) and all(isinstance(x, numbers.Number) for x in v):
        return list(v)
    if isinstance(v, list) and all(isinstance(x, numbers.Number) for x in v):
        return tuple(v)
    if (isinstance(v, list) and v and all(isinstance(r, list) and r for r in v)
            and len({len(r) for r in v}) == 1
            and all(isinstance(x, numbers.Number) for r in v for x in r)):
        import numpy
        return numpy.array(v)  # rows of numbers (offsets, masks) as one 2-D array
    return v
'''


def full(nb: Notebook):
    return "all answers right", nb.full(), nb.full_points()


def blank(nb: Notebook):
    return "the untouched release", nb.copy(), nb.zero_points()


def all_wrong(nb: Notebook):
    out = nb.copy()
    for cell in out["cells"]:
        gid = nbcells.meta(cell).get("grade_id")
        if cell["cell_type"] == "code" and is_solution(cell) and gid in nb.solutions:
            cell["source"] = _wrong_source(nb.solutions[gid])
    return f"every answer replaced by {WRONG_VALUE}", out, nb.zero_points()


def other_formats(nb: Notebook):
    out = nb.full()
    offset = 0
    for i, cell in enumerate(list(out["cells"])):
        gid = nbcells.meta(cell).get("grade_id")
        if cell["cell_type"] == "code" and is_solution(cell) and gid in nb.solutions:
            names, _ = _assigned_names(nb.solutions[gid])
            if names:
                out["cells"].insert(i + 1 + offset, _code(ALT_HELPER + "\n".join(f"{n} = _alt({n})" for n in names)))
                offset += 1
    return "right answers in other valid formats (int/float, tuple/list, rows/array)", out, nb.full_points()


def literal_answers(nb: Notebook) -> list[tuple[str, str, int | float]]:
    """(answer grade_id, name, value) of every answer written as a plain number literal in the master."""
    found = []
    for gid in nb.answer_cells():
        try:
            body = ast.parse(nb.solutions[gid]).body
        except SyntaxError:
            continue
        for node in body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Constant) and type(node.value.value) in (int, float)):
                found.append((gid, node.targets[0].id, node.value.value))
    return found


def _close_wrong(nb: Notebook, kind: str):
    """The first literal answer of type ``kind`` made slightly wrong; the tests that read it lose their points."""
    for gid, name, value in literal_answers(nb):
        if type(value).__name__ != kind:
            continue
        tests = [t for t in nb.group_of(gid) if mentions(nb.test_source(t), name)]
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


CASES = {"full_marks": full, "blank": blank, "all_wrong": all_wrong, "other_formats": other_formats,
         "off_by_one": off_by_one, "last_digit_off": last_digit_off}
