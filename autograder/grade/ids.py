"""Grade ids that carry no answers: the renamed ids of old releases, and the check that finds a leaking id.

A grade id is visible to every student (it is cell metadata of the release), so it must name the exercise
and the quantity, never a value the test cell expects (``ex3_2_break_even_986`` told the answer 986).

``OLD_GRADE_IDS``: per notebook (``<assignment>/<notebook stem>``), the id an earlier release used ->
the id of the current release. :func:`renames` gives the ones that apply to a hand-in, and
``autograder/grade/normalize.py`` rewrites them before nbgrader sees the hand-in, so a notebook downloaded
before the rename keeps its points (the review column says "renamed old grade id X -> Y").

:func:`notebook_leaks` decides whether an id carries an answer, in general (no list of bad ids): it runs
each autograded test cell of the master with recording stand-ins for the checks — the cell computes its
expected values exactly as the grader does (``g.calc``, ``g.compile_answers``, constants in the cell),
the student's answer names are blanks — and collects the expected argument of every ``check_*`` call.
An id fails when a number in it after the exercise label (``ex3_2_``) equals one of the notebook's
expected numbers at the precision the id writes it (``2_33`` = 2.33, ``4kib`` = 4096 too; a whole
number also matches the integer part of an expected decimal: "part of an answer"), or when a word in it
is one of the expected strings (or the English word of an expected number: ``zero``). Digits inside a
name (``fp16``, ``g2``) are not numbers. Only ``g.calc`` and the grader's modules are called, never a
kernel check, so the whole course takes seconds (the compile-based keys of w7/04 most of them).
"""

from __future__ import annotations

import builtins
import importlib
import math
import re
import types
from pathlib import Path

import tomllib

from autograder import cells as nbcells

# notebook ("<assignment>/<notebook stem>") -> {old grade id: new grade id}
OLD_GRADE_IDS: dict[str, dict[str, str]] = tomllib.loads(
    Path(__file__).with_name("old_grade_ids.toml").read_text(encoding="utf-8"))


def renames(notebook: str | None, release_ids) -> dict[str, str]:
    """{old id: new id} for a hand-in of ``notebook`` against a release holding ``release_ids``.

    Only pairs whose new id is in the release and whose old id is not apply (a release that reused an
    old id for another cell is never rewritten). Without a known notebook every table is consulted.
    """
    release_ids = set(release_ids)
    tables = [OLD_GRADE_IDS[notebook]] if notebook in OLD_GRADE_IDS else list(OLD_GRADE_IDS.values())
    out: dict[str, str] = {}
    for table in tables:
        for old, new in table.items():
            if new in release_ids and old not in release_ids:
                out.setdefault(old, new)
    return out


# ------------------------------------------------------------------------------------ expected values
class _Blank:
    """Stands for a student's answer name while a test cell runs: every use of it gives a blank again."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, key):
        return self

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return False

    def _same(self, *args):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __abs__ = _same
    __lt__ = __le__ = __gt__ = __ge__ = _same


BLANK = _Blank()
_EXPECTED_KW = ("expected", "expected_set", "expected_list", "expected_df")


class _Recorder:
    """``g`` of a test cell: the grader's own modules, but every ``check_*`` call only records its key.

    ``g.calc`` is ``gemm_lab.calc`` and ``g.<name>`` the grader's module ``gemm_lab.grading.<name>``
    (``g.compile_answers``), imported one by one so a check needs no more of the grader than it uses.
    """

    def __init__(self, target, found: list):
        self._target, self._found = target, found

    def __getattr__(self, name):
        if name.startswith("check_"):
            return self._record
        if name.startswith("__"):
            raise AttributeError(name)
        if self._target is None:
            module = "gemm_lab.calc" if name == "calc" else f"gemm_lab.grading.{name}"
            value = importlib.import_module(module)
        else:
            value = getattr(self._target, name)
        if isinstance(value, types.ModuleType) and not value.__name__.startswith("gemm_lab.calc"):
            return _Recorder(value, self._found)  # its check_* functions record too (g.kernels.check_matmul)
        return value

    def _record(self, *args, **kwargs):
        if len(args) > 2:
            self._found.append(args[2])
        self._found.extend(v for k, v in kwargs.items() if k in _EXPECTED_KW)


class _Names(dict):
    """The cell's globals: a name the cell did not bind and Python does not know is a student's answer."""

    def __missing__(self, key):
        if hasattr(builtins, key):
            raise KeyError(key)
        return BLANK


def _importer(recorder: _Recorder):
    grading = types.ModuleType("gemm_lab.grading")
    grading.fresh = lambda *a, **k: recorder
    grading.__getattr__ = lambda name: getattr(recorder, name)
    top = types.ModuleType("gemm_lab")
    top.grading = grading
    real_import = builtins.__import__

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "gemm_lab.grading" or name.startswith("gemm_lab.grading.")):
            return grading if fromlist else top  # `import gemm_lab.grading` binds gemm_lab
        return real_import(name, globals, locals, fromlist, level)

    return _import


def expected_values(test_source: str) -> list:
    """The expected argument of every ``check_*`` call the test cell makes, computed as the grader does."""
    found: list = []
    recorder = _Recorder(None, found)
    names = _Names(__builtins__=dict(vars(builtins), __import__=_importer(recorder)), __name__="__grade_cell__")
    exec(compile(test_source, "<test cell>", "exec"), names)  # noqa: S102 - the master's own test cell
    return found


# --------------------------------------------------------------------------------- matching an id
_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                 "eleven", "twelve")
_UNITS = {"kib": 1024, "kb": 1000, "mib": 1024 ** 2, "mb": 1000 ** 2, "gib": 1024 ** 3, "k": 1000}
_LABEL = re.compile(r"^(?:ex\d+(?:_\d+)*_)")


def _scalars(value):
    """Numbers and strings inside an expected value (lists, sets, dicts' values, tables' cells)."""
    if value is None or value is BLANK or isinstance(value, _Blank):
        return
    if isinstance(value, (bool, str, int, float)):
        yield value
        return
    if hasattr(value, "to_numpy") and hasattr(value, "shape"):  # a pandas table or series
        yield from _scalars(value.to_numpy().ravel().tolist())
        return
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy / torch scalars and arrays
        yield from _scalars(value.tolist())
        return
    if isinstance(value, dict):
        for v in value.values():
            yield from _scalars(v)
        return
    if isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _scalars(v)
        return
    if hasattr(value, "__dict__"):  # a small result record (dataclass, namedtuple handled above)
        yield from _scalars(dict(vars(value)))


def _id_numbers(rest: str):
    """(text, value, decimals) of every number an id writes after its exercise label.

    A number is a part of its own (``986``), with a unit (``4kib``, ``164_kib``), a shape (``500x600``) or
    a decimal (``2_33``, ``2p33``); digits inside a name (``fp16``, ``sm90``, ``2mn``, ``g2``) are not.
    """
    parts = rest.lower().split("_")
    out = []
    for i, part in enumerate(parts):
        nxt = parts[i + 1] if i + 1 < len(parts) else ""
        if part.isdigit():
            out.append((part, int(part), 0))
            if nxt in _UNITS:
                out.append((f"{part}_{nxt}", int(part) * _UNITS[nxt], 0))
            if nxt.isdigit():
                out.append((f"{part}_{nxt}", float(f"{part}.{nxt}"), len(nxt)))
        elif m := re.fullmatch(r"(\d+)([a-z]+)", part):
            if m.group(2) in _UNITS:
                out += [(m.group(1), int(m.group(1)), 0), (part, int(m.group(1)) * _UNITS[m.group(2)], 0)]
        elif m := re.fullmatch(r"(\d+)p(\d+)", part):
            out.append((part, float(f"{m.group(1)}.{m.group(2)}"), len(m.group(2))))
        elif re.fullmatch(r"\d+(?:x\d+)+", part):
            out += [(d, int(d), 0) for d in part.split("x")]
    return out


def _shows(number: float, decimals: int, expected: float) -> bool:
    """Whether an id's number equals ``expected`` at the precision the id writes it."""
    if not math.isfinite(expected):
        return False
    if decimals == 0 and (number == math.floor(expected) or number == round(expected)):
        return True
    return abs(round(expected, decimals) - number) < 10 ** -(decimals + 3)


def _norm(text: str) -> str:
    return re.sub(r"[^0-9a-z가-힣]+", "_", text.lower()).strip("_")


def id_leaks(grade_id: str, expected: list) -> list[str]:
    """Why ``grade_id`` shows one of the ``expected`` values (empty when it shows none)."""
    rest = _LABEL.sub("", grade_id)
    scalars = list(_scalars(expected))
    numbers = [float(v) for v in scalars if isinstance(v, (int, float)) and not isinstance(v, bool)]
    words = {_norm(v) for v in scalars if isinstance(v, str) and _norm(v)}
    words |= {_NUMBER_WORDS[int(v)] for v in numbers if v == int(v) and 0 <= v < len(_NUMBER_WORDS)}
    why = []
    for text, value, decimals in _id_numbers(rest):
        hit = next((e for e in numbers if e == value), None)  # an exact value names itself first
        hit = hit if hit is not None else next((e for e in numbers if _shows(value, decimals, e)), None)
        if hit is not None:
            why.append(f"{text!r} is the expected value {hit:g}")
    padded = f"_{rest.lower()}_"
    why += [f"{w!r} is an expected answer" for w in sorted(words) if f"_{w}_" in padded]
    return why


def notebook_leaks(master: dict, where: str = "", also=None) -> list[str]:
    """One line per grade id of ``master`` (an nbgrader source notebook) that shows an expected answer.

    The expected values of every autograded test cell of the notebook count for every id in it: an id
    must not show the answer of its neighbour either. ``also``: more notebooks whose ids are checked
    against the same answers (the committed release of this master). A test cell whose values cannot be
    computed is a problem too (the check never passes silently).
    """
    cells = [c for c in master.get("cells", []) if isinstance(c, dict)]
    expected: list = []
    problems: list[str] = []
    for cell in cells:
        m = nbcells.meta(cell)
        if cell.get("cell_type") == "code" and m.get("grade") and not m.get("solution"):
            try:
                expected += expected_values(nbcells.source(cell))
            except Exception as exc:  # noqa: BLE001 - reported as a problem, named
                problems.append(f"{where}{m.get('grade_id')}: its expected answers could not be computed "
                                f"({type(exc).__name__}: {exc})")
    ids = [nbcells.meta(c).get("grade_id") for nb in [master, *(also or [])] for c in nb.get("cells", [])]
    for gid in dict.fromkeys(g for g in ids if isinstance(g, str)):
        problems += [f"{where}grade id {gid} carries an answer: {why}" for why in id_leaks(gid, expected)]
    return problems
