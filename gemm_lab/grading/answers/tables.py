"""Answer checks, part 3: ``check_table``, a table compared cell by cell (see ``answers``)."""

from __future__ import annotations

import sys

from ..messages import describe_type, fail, fmt
from .convert import _plain, normalize_text
from .values import _compare, _Spec

__all__ = ["check_table"]


# --------------------------------------------------------------------------- tables


def _label_key(label):
    label = _plain(label)
    t = type(label)
    if t is str:
        return normalize_text(label)
    if t is float and label == int(label):
        return int(label)
    if t is tuple:
        return tuple(_label_key(v) for v in label)
    return label


def _row_title(label, index_name, row_name):
    if row_name is not None:
        return row_name.format(label) if type(row_name) is str else row_name(label)
    if type(label) is str:
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
            if type(rec) is dict:
                for ck, v in rec.items():
                    cells[(key, ck)] = v
            else:
                rec = list(rec)
                if len(rec) == len(col_keys) + 1 and _label_key(rec[0]) == key:
                    rec = rec[1:]
                if len(rec) != len(col_keys):
                    return (f"{i + 1}번째 행에 값 {len(rec)}개를 받았습니다. "
                            f"열 {len(col_keys)}개({', '.join(str(c) for c in cols)})를 기대합니다.")
                for ck, v in zip(col_keys, rec, strict=False):
                    cells[(key, ck)] = v
        return None

    if pd is not None and isinstance(got, pd.DataFrame):
        df = got
        index = _label_key(df.index.name)
        if df.index.name is not None and index in col_set and index not in [_label_key(c) for c in df.columns]:
            df = df.reset_index()  # the row labels are one of the expected columns
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
        records = [(idx[i], {gcols[j]: _plain(df.iat[i, j]) for j in range(len(gcols)) if j != key_col})
                   for i in range(len(df))]
        if row_set <= set(idx) and len(records) > len(row_keys):
            records = [r for r in records if r[0] in row_set]
        return cells, by_rows(records)
    got = _plain(got)
    if type(got) is dict:
        keys = [_label_key(k) for k in got]
        values = [_plain(v) for v in got.values()]
        if set(keys) & col_set and not set(keys) & row_set - col_set:
            # dict of columns: {col: [values...]} or {col: {row: value}}
            for ck, colv in zip(keys, values, strict=False):
                if type(colv) is dict:
                    for rk, v in colv.items():
                        cells[(_label_key(rk), ck)] = v
                else:
                    colv = colv if type(colv) in (list, tuple) else [colv]
                    if len(colv) != len(row_keys):
                        return cells, (f"열 {fmt(ck)}에 값 {len(colv)}개를 받았습니다. "
                                       f"행 {len(row_keys)}개를 기대합니다.")
                    for rk, v in zip(row_keys, colv, strict=False):
                        cells[(rk, ck)] = v
            return cells, None
        return cells, by_rows([(rk, {_label_key(c): v for c, v in rv.items()} if type(rv) is dict else rv)
                               for rk, rv in zip(keys, values, strict=False)])
    if type(got) in (list, tuple):
        records = []
        for r in got:
            r = _plain(r)
            if pd is not None and isinstance(r, pd.Series):
                r = dict(r.items())
            if type(r) is dict:
                rec = {_label_key(c): v for c, v in r.items()}
                rk = None
                for c in list(rec):
                    if c not in col_set and _label_key(rec[c]) in row_set:
                        rk = _label_key(rec.pop(c))
                        break
                records.append((rk, rec))
            elif type(r) in (list, tuple):
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
        if type(opt) is dict and any(_label_key(k) in col_keys for k in opt):
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
                    fail(name, f"열 {fmt(c)}이(가) 없습니다. 기대하는 열: {', '.join(str(x) for x in cols)}.", hint)
                fail(name, f"{where} 값이 없습니다.", hint)
            spec = _Spec(per_col(digits, c), per_col(rel, c), per_col(abs, c), per_col(sig, c),
                         per_col(accept, c), reveal)
            result = _compare(cells[(rk, ck)], expected_df.iat[i, j], spec)
            if result is not None:
                path, reason = result
                fail(name, f"{where}{path}: {reason}", hint)
    print(f"✅ {name}: 표 {len(rows)}행 × {len(cols)}열 모두 맞습니다")
    return None
