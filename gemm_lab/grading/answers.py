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

No numpy/torch/math function is used to compare: values are turned into Python numbers through the
C-level ``item``/``tolist`` methods and compared with plain operators, so a notebook that rebinds
``np.allclose``, ``torch.allclose`` or ``math.isclose`` changes nothing here. See
``gemm_lab.grading.integrity`` for what a hostile notebook can still do.
"""

from __future__ import annotations

import sys

from . import _seal, _trusted
from .feedback import describe_type, fail, fmt, ok, tolerance_text

__all__ = ["check_value", "check_table", "check_choice", "check_pairs", "normalize_text"]

_INT = (0).__class__
_FLOAT = (0.0).__class__
_BOOL = (0 == 0).__class__
_STR = "".__class__
_TUPLE = ().__class__
_LIST = [].__class__
_DICT = {}.__class__
_SET = {0}.__class__
_NONE = None.__class__
_TYPE = (0).__class__.__class__
_BASE_EXC = _trusted.REAL_BASE_EXCEPTION
_INF = 1e308 * 10.0


class _Bad(_trusted.REAL_EXCEPTION):
    """Internal: a student's value that cannot be read as the expected kind (Korean text)."""


# --------------------------------------------------------------------------- conversion


def _plain(x):
    """Turn numpy/torch/pandas scalars and small arrays into plain Python values (no coercion of kind)."""
    t = _TYPE(x)
    if t in (_INT, _FLOAT, _BOOL, _STR, _NONE, _TUPLE, _LIST, _DICT, _SET):
        return x
    mod = t.__module__ or ""
    if mod == "numpy" or mod.startswith("numpy."):
        np = sys.modules.get("numpy")
        if np is not None and isinstance(x, np.generic):
            return np.generic.item(x)
        if np is not None and isinstance(x, np.ndarray):
            v = np.ndarray.tolist(x)
            return _unwrap_one(v)
    if mod.startswith("torch"):
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(x, torch._C.TensorBase):
            _trusted.guard_torch(torch)
            base = torch._C.TensorBase
            v = base.tolist(base.cpu(base.detach(x)))
            return _unwrap_one(v)
    if mod.startswith("pandas"):
        pd = sys.modules.get("pandas")
        if pd is not None and isinstance(x, (pd.Series, pd.Index)):
            return [_plain(v) for v in x.tolist()]
    if t.__name__ == "frozenset":
        return _SET(x)
    if t.__name__ in ("Fraction", "Decimal") and mod in ("fractions", "decimal"):
        if t.__name__ == "Decimal" and not x.is_finite():
            return _FLOAT(_STR(x).lower().replace("infinity", "inf"))
        return _FLOAT(x)
    if t.__name__ == "ndarray" or t.__name__ == "Tensor":
        return x
    # str subclasses / int subclasses: take the genuine base value, never the subclass's overrides.
    if isinstance(x, _BOOL):
        return _BOOL(_INT.__index__(x))
    if isinstance(x, _STR):
        return _STR.__str__(x)
    if isinstance(x, _INT):
        return _INT.__index__(x)
    if isinstance(x, _FLOAT):
        return _FLOAT.__float__(x)
    return x


def _unwrap_one(v):
    """A one-element list (from a size-1 array/tensor) counts as its element."""
    while _TYPE(v) is _LIST and len(v) == 1:
        v = v[0]
    return v


def _as_number(x, name: str):
    """A Python int or float from a student's value, or _Bad with a Korean reason."""
    v = _plain(x)
    t = _TYPE(v)
    if t is _BOOL:
        raise _Bad(f"참/거짓 값 {v}을(를) 받았습니다. 숫자로 답하세요.")
    if t is _INT:
        return v
    if t is _FLOAT:
        if v != v:
            raise _Bad("NaN(숫자가 아님)을 받았습니다. 계산 과정에 0/0이나 정의되지 않은 값이 없는지 확인하세요.")
        if v == _INF or v == -_INF:
            raise _Bad("무한대(inf)를 받았습니다. 0으로 나누지 않았는지 확인하세요.")
        return v
    if v is None:
        raise _Bad("None을 받았습니다. 값을 변수에 대입했는지(return을 빠뜨리지 않았는지) 확인하세요.")
    if t is _STR:
        try:
            _FLOAT(v)
            raise _Bad(f"문자열 {fmt(v)}을(를) 받았습니다. 따옴표 없이 숫자로 적으세요.")
        except _Bad:
            raise
        except _BASE_EXC:
            raise _Bad(f"문자열 {fmt(v)}을(를) 받았습니다. 숫자를 기대합니다.") from None
    if t in (_LIST, _TUPLE):
        raise _Bad(f"{describe_type(v)} {fmt(v)}을(를) 받았습니다. 숫자 하나를 기대합니다.")
    if t is _FLOAT.__class__ or callable(v):
        raise _Bad("함수나 클래스를 받았습니다. 함수 자체가 아니라 계산한 숫자를 대입하세요 (호출했나요?).")
    raise _Bad(f"{describe_type(v)} 값을 받았습니다. 숫자(int 또는 float)를 기대합니다.")


def _as_bool(x):
    v = _plain(x)
    if _TYPE(v) is _BOOL:
        return v
    if v is None:
        raise _Bad("None을 받았습니다. True 또는 False를 대입하세요.")
    if _TYPE(v) is _STR:
        raise _Bad(f"문자열 {fmt(v)}을(를) 받았습니다. 따옴표 없이 True 또는 False로 적으세요.")
    raise _Bad(f"{describe_type(v)} {fmt(v)}을(를) 받았습니다. True 또는 False로 답하세요.")


def normalize_text(s: str) -> str:
    """Case-, width-, space-, '_' and '-'-insensitive form of a string (used for answers and labels)."""
    s = _STR.casefold(_STR.__str__(s))
    out = []
    for ch in s:
        if ch in " \t\r\n_-·":
            continue
        o = ord(ch)
        if 0xFF01 <= o <= 0xFF5E:  # full-width ASCII
            ch = chr(o - 0xFEE0)
        out.append(ch)
    return "".join(out)


# --------------------------------------------------------------------------- number comparison


def _absval(v):
    return -v if v < 0 else v


def _pow10(n: int) -> float:
    r = 1.0
    if n >= 0:
        for _ in range(n):
            r *= 10.0
    else:
        for _ in range(-n):
            r /= 10.0
    return r


def _exponent10(v: float) -> int:
    """floor(log10(|v|)) for v != 0, without math."""
    v = _absval(v)
    e = 0
    while v >= 10.0:
        v /= 10.0
        e += 1
    while v < 1.0:
        v *= 10.0
        e -= 1
    return e


def _within(got, exp, digits, rel, abs_tol, sig) -> bool:
    diff = _absval(got - exp)
    mag = _absval(exp)
    if digits is None and rel is None and abs_tol is None and sig is None:
        if _TYPE(exp) is _INT or (_TYPE(exp) is _FLOAT and exp == _INT(exp) and mag < 1e15):
            return diff <= 1e-9
        return diff <= 1e-6 * mag + 1e-12
    slack = 1e-12 * mag + 1e-300
    if digits is not None and diff <= 0.5 * _pow10(-digits) * (1.0 + 1e-9) + slack:
        return True
    if sig is not None:
        unit = _pow10(_exponent10(exp) - sig + 1) if exp != 0 else 0.0
        if diff <= 0.5 * unit * (1.0 + 1e-9) + slack:
            return True
    if rel is not None and diff <= rel * mag + slack:
        return True
    if abs_tol is not None and diff <= abs_tol + slack:
        return True
    return False


def _times(ratio: float) -> str:
    """A ratio to two significant digits, written plainly (3.1, 20, 1,000)."""
    e = _exponent10(ratio)
    unit = _pow10(e - 1)
    r = _INT(ratio / unit + 0.5) * unit
    if r >= 10:
        return format(_INT(r + 0.5), ",")
    return format(r, ".2g")


def _number_feedback(got, exp, reveal, digits, rel, abs_tol, sig) -> str:
    text = f"{fmt(got)}을(를) 받았습니다."
    if reveal:
        pct = ""
        if exp != 0:
            pct = f", {format(_absval(got - exp) / _absval(exp) * 100.0, '.3g')}% 차이"
        return text + f" 기대값: {fmt(exp)}{pct}. 허용 오차: {tolerance_text(digits, rel, abs_tol, sig)}."
    if exp != 0 and got != 0 and (got > 0) != (exp > 0):
        text += " 부호가 반대입니다."
    elif exp != 0 and got != 0 and (_absval(got) >= 3 * _absval(exp) or 3 * _absval(got) <= _absval(exp)):
        ratio = _absval(got) / _absval(exp)
        if ratio >= 1:
            text += f" 기대값보다 약 {_times(ratio)}배 큽니다 — 단위나 자릿수를 확인하세요."
        else:
            text += f" 기대값보다 약 {_times(1 / ratio)}배 작습니다 — 단위나 자릿수를 확인하세요."
    elif got > exp:
        text += " 기대값보다 큽니다."
    else:
        text += " 기대값보다 작습니다."
    return text + f" 허용 오차: {tolerance_text(digits, rel, abs_tol, sig)}."


# --------------------------------------------------------------------------- generic element check


class _Spec:
    __slots__ = ("digits", "rel", "abs_tol", "sig", "accept", "reveal")

    def __init__(self, digits=None, rel=None, abs_tol=None, sig=None, accept=None, reveal=False):
        self.digits, self.rel, self.abs_tol, self.sig = digits, rel, abs_tol, sig
        self.accept = accept
        self.reveal = reveal


def _aliases(expected: str, accept) -> set:
    names = {normalize_text(expected)}
    if accept is None:
        return names
    if _TYPE(accept) is _STR:
        accept = [accept]
    if _TYPE(accept) is _DICT:
        accept = accept.get(expected, [])
        if _TYPE(accept) is _STR:
            accept = [accept]
    for a in accept:
        names.add(normalize_text(a))
    return names


def _compare(got, exp, spec: _Spec, path: str = ""):
    """None when ``got`` matches ``exp``, else (path, Korean reason)."""
    exp = _plain(exp)
    te = _TYPE(exp)
    try:
        if te is _BOOL:
            g = _as_bool(got)
            if g is exp:
                return None
            if spec.reveal:
                return path, f"{g}을(를) 받았습니다. 기대값: {exp}."
            return path, f"{g}을(를) 받았습니다. 반대로 생각해 보세요."
        if te is _INT or te is _FLOAT:
            g = _as_number(got, path)
            if _within(g, exp, spec.digits, spec.rel, spec.abs_tol, spec.sig):
                return None
            return path, _number_feedback(g, exp, spec.reveal, spec.digits, spec.rel, spec.abs_tol, spec.sig)
        if te is _STR:
            g = _plain(got)
            if g is None:
                return path, "None을 받았습니다. 문자열로 답하세요."
            if _TYPE(g) is not _STR:
                return path, f"{describe_type(g)} {fmt(g)}을(를) 받았습니다. 문자열(따옴표로 감싼 답)을 기대합니다."
            if normalize_text(g) in _aliases(exp, spec.accept):
                return None
            if spec.reveal:
                return path, f"{fmt(g)}을(를) 받았습니다. 기대값: {fmt(exp)}."
            return path, f"{fmt(g)}을(를) 받았습니다. 맞는 답이 아닙니다."
        if te in (_TUPLE, _LIST):
            g = _plain(got)
            if _TYPE(g) is _SET:
                return path, "집합(set)을 받았습니다. 순서가 있는 리스트나 튜플로 답하세요."
            if _TYPE(g) not in (_TUPLE, _LIST):
                return path, (f"{describe_type(g)} {fmt(g)}을(를) 받았습니다. "
                              f"원소 {len(exp)}개짜리 리스트나 튜플을 기대합니다.")
            if len(g) != len(exp):
                return path, f"원소 {len(g)}개를 받았습니다. 원소 {len(exp)}개를 기대합니다."
            for i, (gi, ei) in enumerate(zip(g, exp, strict=False)):
                r = _compare(gi, ei, spec, f"{path}[{i}]")
                if r is not None:
                    return r
            return None
        if te is _DICT:
            g = _plain(got)
            if _TYPE(g) is not _DICT:
                return path, f"{describe_type(g)}을(를) 받았습니다. 딕셔너리(dict)를 기대합니다."
            gk = {normalize_text(_STR(k)) if _TYPE(k) is _STR else k: k for k in g}
            for k, ev in exp.items():
                nk = normalize_text(k) if _TYPE(k) is _STR else k
                if nk not in gk:
                    return f"{path}[{fmt(k)}]", "이 키가 없습니다."
                r = _compare(g[gk[nk]], ev, spec, f"{path}[{fmt(k)}]")
                if r is not None:
                    return r
            return None
        if exp is None:
            g = _plain(got)
            return None if g is None else (path, f"{fmt(g)}을(를) 받았습니다. None을 기대합니다.")
    except _Bad as bad:
        return path, bad.args[0]
    raise TypeError(f"check: unsupported expected value of type {te.__name__}")


def _match_mistake(got, mistakes, spec):
    if not mistakes:
        return None
    items = mistakes.items() if _TYPE(mistakes) is _DICT else mistakes
    for wrong, message in items:
        if _compare(got, wrong, _Spec(spec.digits, spec.rel, spec.abs_tol, spec.sig, spec.accept)) is None:
            return message
    return None


def check_value(name, got, expected, *, rel=None, abs=None, digits=None, sig=None, accept=None,
                hint=None, mistakes=None, reveal=False):
    """Check one answer (number, string, bool, tuple/list/dict of those) with Korean feedback.

    ``accept``: aliases for a string answer (list, or dict expected→aliases). ``mistakes``: dict (or
    list of pairs) ``wrong answer → Korean explanation`` shown when the student gave that wrong answer.
    ``reveal``: show the expected value in the message (visible tests only).
    """
    _trusted.guard(name)
    spec = _Spec(digits, rel, abs, sig, accept, reveal)
    result = _compare(got, expected, spec)
    if result is None:
        ok(name, _plain(got))
        return None
    path, reason = result
    known = _match_mistake(got, mistakes, spec)
    label = f"{name}{path}" if path else name
    if known:
        fail(label, f"{reason} {known}", hint)
    fail(label, reason, hint)


# --------------------------------------------------------------------------- tables


def _label_key(label):
    label = _plain(label)
    t = _TYPE(label)
    if t is _STR:
        return normalize_text(label)
    if t is _FLOAT and label == _INT(label):
        return _INT(label)
    if t is _TUPLE:
        return _TUPLE(_label_key(v) for v in label)
    return label


def _row_title(label, index_name, row_name):
    if row_name is not None:
        return row_name.format(label) if _TYPE(row_name) is _STR else row_name(label)
    if _TYPE(label) is _STR:
        return label
    if index_name:
        return f"{index_name} {label}"
    return f"{label}번 행"


def _table_cells(got, rows, cols):
    """{(row_key, col_key): value} read from a DataFrame / dict / list, positional when there are no labels.

    ``rows``: expected row labels (list), ``cols``: expected column names. Returns (cells, problem).
    """
    row_keys = [_label_key(r) for r in rows]
    col_keys = [_label_key(c) for c in cols]
    col_set = set(col_keys)
    row_set = set(row_keys)
    pd = sys.modules.get("pandas")
    cells = {}

    def by_rows(records):
        """records: list of (row_key or None, {col_key: value} or list)."""
        if len(records) != len(row_keys):
            return f"행 {len(records)}개를 받았습니다. 행 {len(row_keys)}개를 기대합니다."
        labelled = all(rk in row_set for rk, _ in records) and len({rk for rk, _ in records}) == len(records)
        for i, (rk, rec) in enumerate(records):
            key = rk if labelled else row_keys[i]
            if _TYPE(rec) is _DICT:
                for ck, v in rec.items():
                    cells[(key, ck)] = v
            else:
                rec = _LIST(rec)
                if len(rec) == len(col_keys) + 1 and _label_key(rec[0]) == key:
                    rec = rec[1:]
                if len(rec) != len(col_keys):
                    return (f"{i + 1}번째 행에 값 {len(rec)}개를 받았습니다. "
                            f"열 {len(col_keys)}개({', '.join(_STR(c) for c in cols)})를 기대합니다.")
                for ck, v in zip(col_keys, rec, strict=False):
                    cells[(key, ck)] = v
        return None

    if pd is not None and isinstance(got, pd.DataFrame):
        df = got
        if df.index.name is not None and _label_key(df.index.name) in col_set and _label_key(
            df.index.name
        ) not in [_label_key(c) for c in df.columns]:
            df = df.reset_index()
        gcols = [_label_key(c) for c in df.columns]
        idx = [_label_key(v) for v in df.index.tolist()]
        key_col = None
        if not row_set <= set(idx):
            for j, c in enumerate(df.columns):
                if gcols[j] in col_set:
                    continue
                vals = [_label_key(v) for v in df[c].tolist()]
                if row_set <= set(vals):
                    key_col, idx = j, vals
                    break
        records = []
        for i in range(len(df)):
            rec = {gcols[j]: _plain(df.iat[i, j]) for j in range(len(gcols)) if j != key_col}
            records.append((idx[i], rec))
        if row_set <= set(idx) and len(records) > len(row_keys):
            records = [r for r in records if r[0] in row_set]
        return cells, by_rows(records)
    got = _plain(got)
    if _TYPE(got) is _DICT:
        keys = [_label_key(k) for k in got]
        values = [_plain(v) for v in got.values()]
        if set(keys) & col_set and not set(keys) & row_set - col_set:
            # dict of columns: {col: [values...]} or {col: {row: value}}
            for ck, colv in zip(keys, values, strict=False):
                if _TYPE(colv) is _DICT:
                    for rk, v in colv.items():
                        cells[(_label_key(rk), ck)] = v
                else:
                    colv = colv if _TYPE(colv) in (_LIST, _TUPLE) else [colv]
                    if len(colv) != len(row_keys):
                        return cells, (f"열 {fmt(ck)}에 값 {len(colv)}개를 받았습니다. "
                                       f"행 {len(row_keys)}개를 기대합니다.")
                    for rk, v in zip(row_keys, colv, strict=False):
                        cells[(rk, ck)] = v
            return cells, None
        records = []
        for rk, rv in zip(keys, values, strict=False):
            if _TYPE(rv) is _DICT:
                rv = {_label_key(c): v for c, v in rv.items()}
            records.append((rk, rv))
        return cells, by_rows(records)
    if _TYPE(got) in (_LIST, _TUPLE):
        records = []
        for r in got:
            r = _plain(r)
            if pd is not None and isinstance(r, pd.Series):
                r = {k: v for k, v in r.items()}
            if _TYPE(r) is _DICT:
                rec = {_label_key(c): v for c, v in r.items()}
                rk = None
                for c in list(rec):
                    if c not in col_set and _label_key(rec[c]) in row_set:
                        rk = _label_key(rec.pop(c))
                        break
                records.append((rk, rec))
            elif _TYPE(r) in (_LIST, _TUPLE):
                records.append((_label_key(r[0]) if r and _label_key(r[0]) in row_set else None, r))
            else:
                return cells, f"행으로 {describe_type(r)} {fmt(r)}을(를) 받았습니다. 각 행은 리스트나 딕셔너리여야 합니다."
        if any(rk is None for rk, _ in records):
            records = [(None, rec) for _, rec in records]
        return cells, by_rows(records)
    return cells, (f"{describe_type(got)}을(를) 받았습니다. 표는 pandas DataFrame, 열 딕셔너리, "
                   "행 딕셔너리 또는 행 리스트로 주세요.")


def check_table(name, got, expected_df, *, digits=None, rel=None, abs=None, sig=None, accept=None,
                row_name=None, hint=None, reveal=False):
    """Check a table cell by cell; ``digits``/``rel``/``abs``/``sig``/``accept`` may be dicts per column.

    ``accept`` is either per column (``{"bound": {"memory": ["메모리"], ...}}``) or, when its keys are not
    column names, one alias map for every string cell (``{"memory": ["메모리"], "compute": [...]}``).

    ``got``: DataFrame (rows matched by index label, by a column holding the labels, or by position),
    dict of columns, dict of rows, or list of rows (lists in column order or dicts). Extra columns are
    ignored. ``row_name``: how to name a row in messages, e.g. ``"후보 {}"`` (default: the label).
    """
    _trusted.guard(name)
    rows = expected_df.index.tolist()
    cols = expected_df.columns.tolist()
    if got is None:
        fail(name, "None을 받았습니다. 표를 변수에 대입했는지 확인하세요.", hint)
    cells, problem = _table_cells(got, rows, cols)
    if problem:
        fail(name, problem, hint)
    index_name = expected_df.index.name

    col_keys = {_label_key(c) for c in cols}

    def per_col(opt, col):
        """A per-column dict ({column: option}) gives that column's option; anything else applies to all."""
        if _TYPE(opt) is _DICT and any(_label_key(k) in col_keys for k in opt):
            for k, v in opt.items():
                if _label_key(k) == _label_key(col):
                    return v
            return None
        return opt

    for i, r in enumerate(rows):
        rk = _label_key(r)
        for j, c in enumerate(cols):
            ck = _label_key(c)
            where = f"{_row_title(r, index_name, row_name)}의 {c}"
            if (rk, ck) not in cells:
                if not any(k[1] == ck for k in cells):
                    fail(name, f"열 {fmt(c)}이(가) 없습니다. 기대하는 열: {', '.join(_STR(x) for x in cols)}.", hint)
                fail(name, f"{where} 값이 없습니다.", hint)
            spec = _Spec(per_col(digits, c), per_col(rel, c), per_col(abs, c), per_col(sig, c),
                         per_col(accept, c), reveal)
            result = _compare(cells[(rk, ck)], expected_df.iat[i, j], spec)
            if result is not None:
                path, reason = result
                fail(name, f"{where}{path}: {reason}", hint)
    print(f"✅ {name}: 표 {len(rows)}행 × {len(cols)}열 모두 맞습니다")
    return None


# --------------------------------------------------------------------------- choices and pairs


def _choice_items(got):
    g = _plain(got)
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(g, (pd.Series, pd.Index)):
        g = g.tolist()
    t = _TYPE(g)
    if t is _STR:
        parts = [p for p in g.replace("，", ",").split(",")]
        return [p for p in parts if p.strip()] if len(parts) > 1 else [g]
    if t in (_LIST, _TUPLE, _SET):
        return [_plain(v) for v in g]
    if t is _DICT:
        return [k for k, v in g.items() if v is not False and v is not None and v != 0]
    if t in (_INT, _FLOAT, _BOOL) or g is None:
        return [g]
    try:
        return [_plain(v) for v in iter(g)]
    except _BASE_EXC:
        return [g]


def _choice_key(item, int_mode, aliases):
    item = _plain(item)
    t = _TYPE(item)
    if t is _BOOL:
        raise _Bad(f"항목으로 {item}을(를) 받았습니다.")
    if int_mode:
        if t is _INT:
            return item
        if t is _FLOAT and item == _INT(item):
            return _INT(item)
        if t is _STR:
            digits, found, cur = [], [], ""
            for ch in item + " ":
                if "0" <= ch <= "9":
                    cur += ch
                elif cur:
                    found.append(cur)
                    cur = ""
            digits = found
            if len(digits) == 1:
                return _INT(digits[0])
        raise _Bad(f"항목 {fmt(item)}을(를) 번호로 읽을 수 없습니다. 번호(예: 1, 2) 또는 '후보 1'처럼 적으세요.")
    if t is _STR:
        n = normalize_text(item)
        return aliases.get(n, n)
    return item


def _numbered(label: str):
    """("후보", 1) for "후보 1": the label's text without its one number, and the number; else None."""
    found, cur, text = [], "", []
    for ch in label + " ":
        if "0" <= ch <= "9":
            cur += ch
        else:
            if cur:
                found.append(cur)
                cur = ""
            text.append(ch)
    if len(found) != 1:
        return None
    return normalize_text("".join(text)), _INT(found[0])


def check_choice(name, got, expected_set, *, accept=None, hint=None, reveal=False):
    """Check a set of chosen items (order and duplicates ignored).

    Integer choices accept ``{1, 2}``, ``[1, 2]``, ``["후보 1", "후보 2"]``, ``"1, 2"``; string choices are
    compared like ``check_value`` strings, ``accept={"memory": ["메모리", ...]}`` adds aliases.
    A single expected item (not a set/list) accepts a bare answer too.
    """
    _trusted.guard(name)
    exp = _plain(expected_set)
    exp_items = _choice_items(exp)
    int_mode = all(_TYPE(_plain(e)) is _INT for e in exp_items) and bool(exp_items)
    if not int_mode and exp_items and all(_TYPE(_plain(e)) is _STR for e in exp_items):
        # {"후보 1", "후보 2"}: labels that differ only by their number are compared as numbers
        shapes = {_numbered(e) for e in exp_items}
        if None not in shapes and len({t for t, _ in shapes}) == 1:
            int_mode = True
            exp_items = [n for _, n in shapes]
    aliases = {}
    if accept:
        for canon, names in accept.items():
            for a in ([names] if _TYPE(names) is _STR else names):
                aliases[normalize_text(a)] = normalize_text(canon)
    if got is None:
        fail(name, "None을 받았습니다. 고른 항목들을 집합이나 리스트로 적으세요.", hint)
    try:
        exp_keys = {_choice_key(e, int_mode, aliases) for e in exp_items}
        got_keys = {_choice_key(g, int_mode, aliases) for g in _choice_items(got)}
    except _Bad as bad:
        fail(name, bad.args[0], hint)
    if got_keys == exp_keys:
        ok(name, _plain(got))
        return None
    extra = got_keys - exp_keys
    missing = exp_keys - got_keys
    shown = fmt(sorted(got_keys, key=_STR) if not int_mode else sorted(got_keys))
    if reveal:
        parts = []
        if extra:
            parts.append(f"정답이 아닌 항목: {fmt(sorted(extra, key=_STR))}")
        if missing:
            parts.append(f"빠진 항목: {fmt(sorted(missing, key=_STR))}")
        fail(name, f"{shown}을(를) 받았습니다. " + ", ".join(parts) + ".", hint)
    parts = []
    if extra:
        parts.append(f"정답이 아닌 항목이 {len(extra)}개 섞여 있습니다")
    if missing:
        parts.append(f"빠진 정답이 {len(missing)}개 있습니다")
    fail(name, f"{shown}을(를) 받았습니다. " + ", ".join(parts) + ".", hint)


def _pair_list(got, width):
    g = got
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(g, pd.DataFrame):
        cols = [normalize_text(_STR(c)) for c in g.columns]
        if width == 2 and "pidm" in cols and "pidn" in cols:
            g = [(a, b) for a, b in zip(g.iloc[:, cols.index("pidm")].tolist(),
                                         g.iloc[:, cols.index("pidn")].tolist(), strict=False)]
        else:
            g = [_TUPLE(r) for r in g.itertuples(index=False)]
    g = _plain(g)
    if _TYPE(g) is _DICT:
        raise _Bad("딕셔너리를 받았습니다. 순서대로 좌표를 담은 리스트로 답하세요 (예: [(0, 0), (0, 1), ...]).")
    if _TYPE(g) is _SET:
        raise _Bad("집합(set)을 받았습니다. 순서가 중요하므로 리스트로 답하세요.")
    if _TYPE(g) not in (_LIST, _TUPLE):
        raise _Bad(f"{describe_type(g)}을(를) 받았습니다. 좌표 리스트를 기대합니다 (예: [(0, 0), (0, 1), ...]).")
    return [_plain(p) for p in g]


def check_pairs(name, got, expected_list, *, hint=None, reveal=False, item_name="pid"):
    """Check an ordered list of coordinates, e.g. ``[(0, 0), (1, 0), ...]`` (tuples or lists; an
    (n, 2) array; a DataFrame with pid_m/pid_n columns). The message names the first wrong position
    as ``{item_name}={position}``.
    """
    _trusted.guard(name)
    exp = [_TUPLE(p) for p in _pair_list(expected_list, 2)]
    width = len(exp[0]) if exp else 2
    if got is None:
        fail(name, "None을 받았습니다. 좌표 리스트를 대입하세요.", hint)
    try:
        pairs = _pair_list(got, width)
    except _Bad as bad:
        fail(name, bad.args[0], hint)
    if len(pairs) != len(exp):
        fail(name, f"좌표 {len(pairs)}개를 받았습니다. 좌표 {len(exp)}개를 기대합니다.", hint)
    spec = _Spec(reveal=reveal)
    for i, (p, e) in enumerate(zip(pairs, exp, strict=False)):
        if _TYPE(p) not in (_LIST, _TUPLE) or len(p) != width:
            fail(name, f"{item_name}={i}: {fmt(p)}을(를) 받았습니다. 원소 {width}개짜리 튜플을 기대합니다.", hint)
        if _compare(_TUPLE(p), e, spec) is not None:
            text = f"{item_name}={i}의 좌표가 틀렸습니다: {fmt(_TUPLE(p))}을(를) 받았습니다."
            if reveal:
                text += f" 기대값: {fmt(e)}."
            if i == 1:
                text += f" ({item_name}=0은 맞습니다.)"
            elif i > 1:
                text += f" ({item_name}=0 ~ {i - 1}은 맞습니다.)"
            fail(name, text, hint)
    print(f"✅ {name}: 좌표 {len(exp)}개 모두 맞습니다")
    return None


_seal.seal(__name__)
