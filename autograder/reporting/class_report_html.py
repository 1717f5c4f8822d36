"""The class report as one self-contained HTML page (jinja2; figures inlined as data: URIs; no script).

Everything a student wrote or a grader derived from it (answer values, messages, kernel reasons, student
ids) goes through nh3's ``clean_text`` (shown as text, never markup); everything else is autoescaped. The
page's Content-Security-Policy allows no script and images only from data: URIs, so it opens offline.
"""

from __future__ import annotations

import base64
import time
from collections import Counter

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
    summary_stats,
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


TEMPLATE = """<!DOCTYPE html>
<html lang="ko"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ assignment }} 학급 리포트{% if anonymous %} (수업 공유용){% endif %}</title>
<style>
body { font-family: "Noto Sans CJK KR", "Noto Sans KR", "NanumGothic", "Malgun Gothic", sans-serif;
       margin: 1.5rem auto; max-width: 1100px; padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { font-size: 1.5rem; } h2 { margin-top: 2.2rem; border-bottom: 2px solid #ddd; }
h3 { margin-bottom: .3rem; } code { background: #f4f4f4; padding: 0 .25em; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; vertical-align: top; text-align: left; }
th { background: #f6f6f6; } td.n { text-align: right; white-space: nowrap; }
.low { color: #b22; font-weight: bold; } .muted { color: #595959; } .value { font-family: monospace; }
img { max-width: 100%; border: 1px solid #eee; } details { font-size: .85rem; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: .4rem .8rem; }
.pending { color: #6b4700; background: #fff3c4; padding: 0 .3em; border-radius: 3px; font-size: .85rem; white-space: nowrap; }
</style></head><body>
<h1>{{ assignment }} 학급 리포트 — {{ "수업 공유용" if anonymous else "강사용" }}</h1>
<p class="muted">{{ generated }} · 학생 {{ n_students }}명 · 노트북 {{ n_notebooks }}개 · 만점 {{ max_total }}점 ·
채점 기록(gradebook, 채점기 판정)에서 만들었습니다 (노트북을 다시 실행하지 않음).
{% if anonymous %}학생 ID가 없고, {{ min_shared }}명 미만이 낸 값과 인원은 싣지 않으며 ({{ min_shared }}명 미만은 "&lt;{{ min_shared }}"), {{ min_stats }}명 미만에 대한 평균·비율은 "–"로 둡니다.{% else %}학생 ID가 들어 있으니 공유하지 마세요
(공유용: <code>{{ assignment }}_class.html</code>).{% endif %}</p>
{% if anonymous and pending_note %}<p class="note">수동 채점이 아직 끝나지 않은 문항이 있어 일부 점수는 바뀔 수 있습니다.</p>{% endif %}

<h2 id="scores">1. 점수 분포</h2>
<table id="totals"><tr><th></th><th>학생 수</th><th>평균</th><th>중앙값</th>{% if not anonymous %}<th>최저</th><th>최고</th>{% endif %}<th>만점</th></tr>
{% for row in score_rows %}<tr><th>{{ row.label }}</th><td class="n">{{ row.n }}</td><td class="n">{{ row.mean }}</td>
<td class="n">{{ row.median }}</td>{% if not anonymous %}<td class="n">{{ row.min }}</td><td class="n">{{ row.max }}</td>{% endif %}
<td class="n">{{ row.top }}</td></tr>{% endfor %}</table>
{% for name in ("totals", "notebooks") %}{% if name in figs %}<p><img class="figure" id="fig-{{ name }}" alt="{{ alts[name] }}" src="{{ figs[name] }}"></p>{% endif %}{% endfor %}

<h2 id="items">2. 문항별 결과 (어려운 문항부터)</h2>
<p class="muted">만점 비율·평균 점수 = 제출해 채점된 학생 가운데서만 (수동 채점을 기다리는 답은 세지 않고 "채점 대기 N"으로 따로 표시). 판정은 채점기가 남긴 기록(verdict)입니다.</p>
<table id="item-table"><tr><th>#</th><th>문항 (grade_id)</th><th>연습문제</th><th>배점</th><th>제출</th><th>만점 비율</th>
<th>평균 점수</th><th>판정</th><th>빈 답</th><th>수동 채점 대기</th></tr>
{% for it in items %}<tr data-grade-id="{{ it.grade_id }}"><td class="n">{{ loop.index }}</td>
<td><code>{{ it.notebook }}</code><br><code>{{ it.grade_id }}</code></td><td>{{ it.title }}{% if it.description %}<br><span class="muted">{{ it.description }}</span>{% endif %}</td>
<td class="n">{{ it.max }}</td><td class="n">{{ it.handed_in }}</td><td class="n {{ 'low' if it.low }}">{{ it.rate }}{% if it.waiting %}<br><span class="pending">채점 대기 {{ it.waiting }}</span>{% endif %}</td>
<td class="n">{{ it.mean }}</td><td>{{ it.status }}</td><td class="n">{{ it.blank }}</td><td class="n">{{ it.pending }}</td></tr>{% endfor %}</table>
{% if "cells" in figs %}<p><img class="figure" id="fig-cells" alt="{{ alts.cells }}" src="{{ figs.cells }}"></p>{% endif %}

<h2 id="wrong">3. 자주 나온 오답</h2>
{% if not wrong %}<p class="muted">채점기 판정에 틀린 답이 없습니다{% if not any_verdict %} (이 채점 결과에는 판정 기록이 없습니다){% endif %}.</p>{% endif %}
{% for cell in wrong %}<h3><code>{{ cell.notebook }}</code> · <code>{{ cell.grade_id }}</code> <span class="muted">{{ cell.title }}</span></h3>
{% for ch in cell.checks %}<p><code>{{ ch.name }}</code> — 기대값 <span class="value">{{ ch.expected }}</span> ·
검사 {{ ch.checked }}명 · 정답 {{ ch.correct }} · 빈 답 {{ ch.blank }}명 ({{ ch.blank_share }})</p>
<table class="wrong" data-cell="{{ cell.grade_id }}" data-check="{{ ch.name }}">
<tr><th>틀린 답</th><th>학생 수</th><th>비율</th><th>채점기 설명</th>{% if not anonymous %}<th>학생</th>{% endif %}</tr>
{% for w in ch.rows %}<tr class="answer" data-count="{{ w.count }}"><td class="value">{{ w.value }}</td><td class="n">{{ w.count }}</td>
<td class="n">{{ w.share }}</td><td>{{ w.message }}</td>{% if not anonymous %}<td><details><summary>{{ w.count }}명</summary>{{ w.students }}</details></td>{% endif %}</tr>{% endfor %}
{% if ch.other_students %}<tr class="other"><td class="muted">그 밖의 답 {{ ch.other_values }}가지{% if anonymous %} (각각 {{ min_shared }}명 미만){% endif %}</td>
<td class="n">{{ ch.other_students }}</td><td class="n">{{ ch.other_share }}</td><td></td>{% if not anonymous %}<td><details><summary>{{ ch.other_students }}명</summary>{{ ch.other_list }}</details></td>{% endif %}</tr>{% endif %}
{% if not anonymous and ch.blank %}<tr class="blank"><td class="muted">(빈 답)</td><td class="n">{{ ch.blank }}</td><td class="n">{{ ch.blank_share }}</td><td></td>
<td><details><summary>{{ ch.blank }}명</summary>{{ ch.blank_list }}</details></td></tr>{% endif %}
</table>{% endfor %}
{% if cell.unchecked_total %}<p>검사할 값 없이 실패 (이름이 정의되지 않았거나 검사 전에 오류) — {{ cell.unchecked_total }}명</p>
<table class="unchecked" data-cell="{{ cell.grade_id }}"><tr><th>채점기 메시지</th><th>학생 수</th>{% if not anonymous %}<th>학생</th>{% endif %}</tr>
{% for m in cell.unchecked %}<tr data-count="{{ m.count }}"><td>{{ m.message }}</td><td class="n">{{ m.count }}</td>{% if not anonymous %}<td><details><summary>{{ m.count }}명</summary>{{ m.students }}</details></td>{% endif %}</tr>{% endfor %}
{% if cell.unchecked_other %}<tr class="other"><td class="muted">그 밖의 메시지 (각각 {{ min_shared }}명 미만)</td><td class="n">{{ cell.unchecked_other }}</td></tr>{% endif %}
</table>{% endif %}{% endfor %}

<h2 id="kernels">4. 커널: 숨은 테스트에서 실패한 경우</h2>
{% if not kernels %}<p class="muted">커널 판정 기록이 없습니다.</p>{% endif %}
{% for k in kernels %}<h3><code>{{ k.notebook }}</code> · <code>{{ k.grade_id }}</code> <span class="muted">{{ k.title }} · 커널 {{ k.students }}명</span></h3>
<table class="kernel" data-cell="{{ k.grade_id }}"><tr><th>실패 유형</th><th>학생 수</th>{% if not anonymous %}<th>자주 나온 이유</th><th>학생</th>{% endif %}</tr>
{% for row in k.rows %}<tr data-kind="{{ row.kind }}"><td>{{ row.label }}</td><td class="n">{{ row.count }}</td>
{% if not anonymous %}<td>{% for reason, n in row.reasons %}{{ reason }} ({{ n }}명)<br>{% endfor %}</td><td><details><summary>{{ row.count }}명</summary>{{ row.students }}</details></td>{% endif %}</tr>{% endfor %}
{% if k.hidden %}<tr class="other"><td class="muted" colspan="4">그 밖의 실패 유형 {{ k.hidden }}가지 (각각 {{ min_shared }}명 미만)</td></tr>{% elif not k.rows %}<tr><td colspan="4">모두 통과</td></tr>{% endif %}</table>
{% if ("maps-" ~ k.grade_id) in figs %}<p>공개 경우에서 가장 많이 나온 실수 (같은 경우에서 실패한 학생들의 오류 지도를 겹친 그림)</p>
<p><img class="figure error-maps" id="fig-maps-{{ k.grade_id }}" alt="{{ k.grade_id }}: 자주 나온 실수의 오류 지도" src="{{ figs["maps-" ~ k.grade_id] }}"></p>{% endif %}{% endfor %}
{% if "kernels" in figs %}<p><img class="figure" id="fig-kernels" alt="{{ alts.kernels }}" src="{{ figs.kernels }}"></p>{% endif %}

{% if not anonymous %}<h2 id="todo">5. 강사가 확인할 것</h2>
<h3>검토 표시된 제출 ({{ review|length }}명)</h3>
{% if review %}<table id="review"><tr><th>학생</th><th>내용</th></tr>{% for s, notes in review %}<tr><td>{{ s }}</td><td>{% for n in notes %}{{ n }}<br>{% endfor %}</td></tr>{% endfor %}</table>{% else %}<p class="muted">없음</p>{% endif %}
<h3>수동 채점 대기 ({{ pending_total }}건)</h3>
{% if pending %}<table id="pending"><tr><th>문항</th><th>건수</th><th>학생</th></tr>{% for p in pending %}<tr><td><code>{{ p.notebook }}</code> · <code>{{ p.grade_id }}</code></td><td class="n">{{ p.count }}</td><td><details><summary>{{ p.count }}명</summary>{{ p.students }}</details></td></tr>{% endfor %}</table>{% else %}<p class="muted">없음</p>{% endif %}
<h3>채점기 오류 ({{ grader_errors|length }}건)</h3>
{% if grader_errors %}<table id="grader-errors"><tr><th>학생</th><th>문항</th><th>내용</th></tr>{% for e in grader_errors %}<tr><td>{{ e.student }}</td><td><code>{{ e.notebook }}</code> · <code>{{ e.grade_id }}</code></td><td>{{ e.message }}</td></tr>{% endfor %}</table>{% else %}<p class="muted">없음</p>{% endif %}
<h3>읽을 수 없는 파일 ({{ unreadable|length }}건)</h3>
{% if unreadable %}<table id="unreadable"><tr><th>학생</th><th>내용</th></tr>{% for s, what in unreadable %}<tr><td>{{ s }}</td><td>{{ what }}</td></tr>{% endfor %}</table>{% else %}<p class="muted">없음</p>{% endif %}
{% if ignored %}<h3>세지 않은 판정 기록 ({{ ignored|length }}건)</h3><table id="ignored"><tr><th>학생</th><th>노트북</th><th>이유</th></tr>
{% for s, nb, why in ignored %}<tr><td>{{ s }}</td><td><code>{{ nb }}</code></td><td>{{ why }}</td></tr>{% endfor %}</table>{% endif %}
{% endif %}
</body></html>
"""

_ENV = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
_PAGE = _ENV.from_string(TEMPLATE)


def _ids(students) -> Markup:
    return untrusted(", ".join(sorted(students)))


def _score_row(label, values, top) -> dict:
    st = summary_stats(values)
    return {"label": label, "n": st["n"], "mean": _num(st.get("mean")), "median": _num(st.get("median")),
            "min": _num(st.get("min")), "max": _num(st.get("max")), "top": _num(top)}


def _wrong_sections(report: ClassReport, anonymous: bool) -> list[dict]:
    k = MIN_SHARED if anonymous else 1
    out = []
    for c in report.cells:
        checks = []
        for ch in c.checks.values():
            if not ch.wrong and not ch.blank:
                continue
            shown, n_other, other_students = ch.top_wrong(k)
            other = [s for w in ch.wrong.values() if w not in shown for s in w.students]
            checks.append({
                "name": ch.name, "expected": untrusted(show(ch.expected_value)),
                "checked": _count(ch.checked, anonymous),
                "correct": _stat(_pct(ch.correct / ch.checked if ch.checked else None), ch.checked, anonymous),
                "blank": _count(len(ch.blank), anonymous),
                "blank_share": _stat(_pct(len(ch.blank) / ch.checked if ch.checked else None), ch.checked,
                                     anonymous),
                "blank_list": _ids(ch.blank),
                "rows": [{"value": untrusted(show(w.value)), "count": len(w.students),
                          "share": _stat(_pct(len(w.students) / ch.checked), ch.checked, anonymous),
                          "message": untrusted(w.message),
                          "students": _ids(w.students)} for w in shown],
                "other_values": n_other, "other_students": _count(other_students, anonymous),
                "other_share": _stat(_pct(other_students / ch.checked if ch.checked else None), ch.checked,
                                     anonymous), "other_list": _ids(other)})
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
                      "waiting": _count(len(c.pending), anonymous) if c.pending else "",
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
