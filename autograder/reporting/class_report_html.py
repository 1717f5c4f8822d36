"""The class report as one self-contained HTML page (jinja2; figures inlined as data: URIs; no script).

Everything a student wrote or a grader derived from it (answer values, messages, kernel reasons, student
ids) goes through nh3's ``clean_text`` (shown as text, never markup); everything else is autoescaped. The
page's Content-Security-Policy allows no script and images only from data: URIs, so it opens offline.
"""

from __future__ import annotations

import base64
import statistics
import time
from collections import Counter
from pathlib import Path

import jinja2
import nh3
from markupsafe import Markup

from autograder.reporting.class_report_model import (
    KIND_LABELS,
    MIN_SHARED,
    MIN_STATS,
    STATUSES,
    TOP_WRONG,
    ClassReport,
    show,
)

STATUS_LABELS = {"pass": "통과", "fail": "실패", "grader_error": "채점기 오류", "not_run": "실행 안 됨"}
FIGURE_ALT = {"totals": "합계 점수 분포", "notebooks": "노트북별 점수 분포", "cells": "문항별 만점 비율",
              "kernels": "커널 숨은 테스트 실패 유형"}


def untrusted(text) -> Markup:
    """Student-provided text as safe HTML text (nh3: every markup character escaped)."""
    return Markup(nh3.clean_text("" if text is None else str(text)))


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _num(x) -> str:
    return "–" if x is None else (f"{x:g}" if float(x).is_integer() else f"{x:.2f}")


def _count(n: int, anonymous: bool):
    """A number of students; in the class copy one below MIN_SHARED is not shown (it may point at them)."""
    return f"<{MIN_SHARED}" if anonymous and 0 < n < MIN_SHARED else n


def _stat(text: str, over: int, anonymous: bool) -> str:
    """A statistic over ``over`` students; in the class copy only over MIN_STATS or more."""
    return "–" if anonymous and over < MIN_STATS else text


def _share(n: int, over: int, anonymous: bool) -> str:
    """``n`` of ``over`` students as a percentage (a statistic: see :func:`_stat`)."""
    return _stat(_pct(n / over if over else None), over, anonymous)


_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent), autoescape=True,
                          undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
_PAGE = _ENV.get_template("class_report.html.j2")


def _ids(students) -> Markup:
    return untrusted(", ".join(sorted(students)))


def _score_row(label, values, top) -> dict:
    stats = {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max}
    return {"label": label, "n": len(values), "top": _num(top),
            **{k: _num(f(values) if values else None) for k, f in stats.items()}}


def _wrong_sections(report: ClassReport, anonymous: bool) -> list[dict]:
    k = MIN_SHARED if anonymous else 1
    out = []
    for c in report.cells:
        checks = []
        for ch in c.checks.values():
            if not ch.wrong and not ch.blank:
                continue
            shown, rest = ch.top_wrong(k)
            other = [s for w in rest for s in w.students]
            checks.append({
                "name": ch.name, "expected": untrusted(show(ch.expected_value)),
                "checked": _count(ch.checked, anonymous),
                "correct": _share(ch.correct, ch.checked, anonymous), "blank": _count(len(ch.blank), anonymous),
                "blank_share": _share(len(ch.blank), ch.checked, anonymous),
                "blank_list": _ids(ch.blank),
                "rows": [{"value": untrusted(show(w.value)), "count": len(w.students),
                          "share": _share(len(w.students), ch.checked, anonymous),
                          "message": untrusted(w.message),
                          "students": _ids(w.students)} for w in shown],
                "other_values": len(rest), "other_students": _count(len(other), anonymous),
                "other_share": _share(len(other), ch.checked, anonymous), "other_list": _ids(other)})
        ranked = sorted(c.unchecked.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        unchecked = [{"message": untrusted(m), "count": len(ss), "students": _ids(ss)}
                     for m, ss in ranked if len(ss) >= k][:TOP_WRONG]
        total = sum(len(ss) for ss in c.unchecked.values())
        if checks or unchecked or total:
            out.append({"notebook": c.info.notebook, "grade_id": c.info.grade_id, "title": c.info.title,
                        "checks": checks, "unchecked": unchecked, "unchecked_total": _count(total, anonymous),
                        "unchecked_other": _count(total - sum(u["count"] for u in unchecked), anonymous)})
    return out


def _kernel_sections(report: ClassReport, anonymous: bool = False) -> list[dict]:
    out = []
    for c in report.cells:
        if not (c.kernel and c.kernel.students):
            continue
        rows, hidden = [], 0
        for kind, students in c.kernel.students_by_kind():
            if anonymous and len(students) < MIN_SHARED:
                hidden += 1
                continue
            reasons = Counter(r for _, _, r in c.kernel.failed[kind] if r)
            rows.append({"kind": kind, "label": KIND_LABELS.get(kind, kind), "count": len(students),
                         "students": _ids(students),
                         "reasons": [(untrusted(r[:200]), n) for r, n in reasons.most_common(3)]})
        out.append({"notebook": c.info.notebook, "grade_id": c.info.grade_id, "title": c.info.title,
                    "students": _count(c.kernel.students, anonymous), "rows": rows, "hidden": hidden})
    return out


def render(report: ClassReport, figs: dict[str, bytes], anonymous: bool) -> str:
    """The instructor's page, or (``anonymous``) the class copy: no student id, no value < MIN_SHARED."""
    items = []
    for c in report.cells:
        status = ", ".join(f"{STATUS_LABELS[s]} {_count(c.status[s], anonymous)}" for s in STATUSES
                           if c.status.get(s))
        shown = not (anonymous and c.graded < MIN_STATS)
        items.append({"notebook": c.info.notebook, "grade_id": c.info.grade_id, "title": c.info.title,
                      "description": c.info.description, "max": _num(c.info.max_points),
                      "handed_in": _count(c.handed_in, anonymous),
                      "rate": _stat(_pct(c.pass_rate), c.graded, anonymous),
                      "low": shown and c.pass_rate is not None and c.pass_rate < 0.5,
                      "mean": _stat(_num(c.mean_points), c.graded, anonymous), "status": status or "–",
                      "blank": _stat(_pct(c.blank_share), c.verdicts, anonymous),
                      "pending": _count(len(c.pending), anonymous) or ""})
    score_rows = [_score_row("합계", list(report.totals.values()), report.max_total)]
    score_rows += [_score_row(nb, list(report.notebook_scores[nb].values()), report.notebook_max[nb])
                   for nb in report.notebooks]
    if anonymous:  # a statistic of a few students is nearly their value; a count of one or two points at them
        score_rows = [r if r["n"] >= MIN_STATS else dict(r, n=_count(r["n"], True), mean="–", median="–")
                      for r in score_rows]
    errors = [{"student": untrusted(s), "notebook": c.info.notebook, "grade_id": c.info.grade_id,
               "message": untrusted(m)} for c in report.cells for s, m in c.grader_errors]
    return _PAGE.render(
        assignment=report.assignment, anonymous=anonymous, min_shared=MIN_SHARED, min_stats=MIN_STATS,
        generated=time.strftime("%Y-%m-%d %H:%M"), n_students=len(report.students),
        n_notebooks=len(report.notebooks), max_total=_num(report.max_total),
        pending_note=bool(report.pending_total), pending_total=report.pending_total,
        score_rows=score_rows, items=items, alts=FIGURE_ALT,
        figs={n: "data:image/png;base64," + base64.b64encode(png).decode() for n, png in figs.items()},
        wrong=_wrong_sections(report, anonymous), any_verdict=any(c.status for c in report.cells),
        kernels=_kernel_sections(report, anonymous),
        review=[(untrusted(s), [untrusted(n) for n in notes]) for s, notes in sorted(report.review.items())],
        grader_errors=errors,
        unreadable=[(untrusted(s), untrusted(w)) for s, w in report.unreadable],
        ignored=[(untrusted(s), nb, untrusted(w)) for s, nb, w in report.ignored_verdicts],
        pending=[] if anonymous else [{"notebook": c.info.notebook, "grade_id": c.info.grade_id,
                                       "count": len(c.pending), "students": _ids(c.pending)}
                                      for c in report.cells if c.pending])
