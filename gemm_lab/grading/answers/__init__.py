"""Answer checks for nbgrader test cells: values, tables, choices and ordered pairs.

Each check prints one "✅ name: value" line on success and raises ``AssertionError`` with a Korean
message on failure. They accept what a careful student writes:

* numbers: ``int``/``float``, numpy and torch scalars (or one-element arrays/tensors), ``Fraction``,
  ``Decimal``; ``54`` and ``54.0`` are the same answer. A numeric *string* (``"54"``) is rejected with a
  message telling the student to drop the quotes (a number is asked for, and the message makes the fix
  obvious). ``True``/``False`` are never accepted as numbers.
* tolerances: ``digits=d`` accepts any value within half a unit of the d-th decimal (the printed
  precision, so 63.0154 matches 63.01538...), ``sig=s`` the same for s significant digits, ``rel`` and
  ``abs`` the usual bounds; an answer passes when any given bound holds. With no tolerance an integral
  expected value must match exactly and a float to a relative 1e-6.
* strings: compared case-, space-, ``_``- and ``-``-insensitively (``"Memory-Bound"`` == ``"memory bound"``);
  ``accept=[...]`` adds aliases (``"메모리"``, ``"HBM 대역폭"``).
* booleans: ``True``/``False`` (also numpy/torch booleans); ``1``/``0`` are rejected with a message.
* tuples/lists (and dicts) are compared element by element with the same rules.

Messages never show the expected value unless ``reveal=True`` (use it in *visible* tests, whose
source the student can read anyway). With ``reveal=False`` a wrong number gets its direction
("기대값보다 큽니다") or, when off by 3× or more, its order of magnitude, plus the tolerance;
``hint=`` adds a likely-mistake sentence and ``mistakes={wrong_value: "message"}`` a message for a
known wrong answer (e.g. ``{4: "num_pid_m만 셌습니다"}``).

Values are turned into plain Python numbers (``item``/``tolist``) and compared with plain operators.
Each call is recorded for the grader's verdict (``record``).

The checks live in ``convert`` (reading a student's value), ``values`` (comparison, ``check_value``),
``tables`` (``check_table``) and ``choices`` (``check_choice``, ``check_pairs``); this package keeps their
public names.
"""

from __future__ import annotations

from ..record import recorded
from . import choices, tables, values
from .convert import normalize_text

check_value = recorded("check_value")(values.check_value)
check_table = recorded("check_table")(tables.check_table)
check_choice = recorded("check_choice")(choices.check_choice)
check_pairs = recorded("check_pairs")(choices.check_pairs)

__all__ = ["check_value", "check_table", "check_choice", "check_pairs", "normalize_text"]
