"""What a student (and the instructor's browser) may see of an autograded notebook.

Two steps, both on notebook JSON, plus a final one on the feedback HTML:

1. :func:`scrub_notebook` (run by grade/merge.py on every autograded notebook it merges): an error in a test
   cell keeps only ``ename: evalue`` (the checker's Korean message), never the traceback, which would
   quote the cell's source with its hidden tests; instructor paths (course root, home, Python/venv, /tmp
   scratch) are replaced in every traceback and stream; any output that quotes a hidden-test line (e.g.
   printed from IPython history by a student cell) is replaced by a notice and reported for review.
2. :func:`sanitize_notebook` (run by report.feedback on a scratch copy): every student output goes
   through nh3 (script, event handlers, iframes, objects, forms, external loads, ``javascript:`` URLs
   removed; images kept only as ``data:`` URIs); JavaScript, SVG and widget outputs are dropped. Markdown
   cells stay markdown: escaping their source before it is rendered would show ``>`` and ``&gt;``
   literally; they are rendered by nbconvert and cleaned with the rest of the page in step 3.
3. :func:`sanitize_html_document` rebuilds the nbconvert page from the CSS of its head (external
   ``url()`` and ``@import`` removed; a ``<style>`` in student text never reaches it) and the nh3-cleaned
   body: the page has no script at all. An image whose source is not an inline ``data:`` image shows its
   alt text instead of a broken picture (the Colab badge becomes the words "Open In Colab"); ✅/❌/⚠️
   become marks drawn with CSS (readable without an emoji font); long lines wrap at any width; a written
   answer nobody graded yet reads "수동 채점 전" instead of a score of 0 (:class:`PendingGetGrades`).
   What is left of student text is what nh3 lets through (its allow-lists are the guarantee; the
   tests check the pages with a parser of their own).

:class:`TestCellsClearHiddenTests` is nbgrader's ClearHiddenTests for test cells only: a student cell
that contains the literal marker is data, not an error.
"""

from __future__ import annotations

import html
import json
import os
import re
import sys
from pathlib import Path

import nh3
from nbgrader.preprocessors import ClearHiddenTests, GetGrades

from autograder import cells as nbcells
from autograder.course import REPO_ROOT

BEGIN, END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
REDACTED_KO = "[가려짐] 이 출력에 숨겨진 테스트의 내용이 들어 있어 피드백에서 지웠습니다."
MIN_HIDDEN_LINE = 12  # shorter hidden lines (")", "g = fresh()") are too common to mean a leak

TAGS = set(nh3.ALLOWED_TAGS) - {"area", "map"}
ATTRS = {"*": {"class", "title", "lang", "dir", "id"}, "a": {"href", "name"}, "img": {"src", "alt", "width", "height"},
         "td": {"colspan", "rowspan"}, "th": {"colspan", "rowspan"}, "ol": {"start"}}
DROP_MIME = ("application/javascript", "text/javascript", "image/svg+xml",
             "application/vnd.jupyter.widget-view+json", "application/vnd.jupyter.widget-state+json")
_DATA_IMG = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$")


# ---------------------------------------------------------------------------------------------- paths
def instructor_paths(extra: list[str] | None = None) -> list[tuple[str, str]]:
    """(path, replacement) pairs, longest first."""
    pairs = {}
    for p, tag in [(sys.prefix, "<python>"), (sys.base_prefix, "<python>"), (str(REPO_ROOT), "<course>"),
                   (os.path.expanduser("~"), "~"), *[(e, "<course>") for e in extra or []]]:
        for q in {p, os.path.realpath(p)}:
            if len(q) > 4:  # never "/", "/usr" or "/tmp" themselves
                pairs[q.rstrip("/")] = tag
    return sorted(pairs.items(), key=lambda kv: -len(kv[0]))


_TMP = re.compile(r"/tmp/(glrt-[\w.-]+|ipykernel_\d+|tmp[\w.-]+|pytest-of-[\w.-]+)(/[^\s'\"\x1b]*)?")


def strip_paths(text: str, pairs: list[tuple[str, str]]) -> str:
    for path, tag in pairs:
        text = text.replace(path, tag)
    return _TMP.sub("<tmp>", text)


# --------------------------------------------------------------------------------------- hidden text
def is_test_cell(cell) -> bool:
    """A code cell nbgrader locks (tests and given code): its source is the course's."""
    return nbcells.is_code(cell) and nbcells.is_locked(cell)


def hidden_lines(nb: dict) -> set[str]:
    """Lines of the hidden-test regions of the test cells that are not also visible elsewhere."""
    hidden, visible = set(), set()
    for cell in nb.get("cells", []):
        inside = False
        for line in nbcells.source(cell).split("\n"):
            s = line.strip()
            if BEGIN in line and is_test_cell(cell):
                inside = True
            elif END in line and is_test_cell(cell):
                inside = False
            elif inside:
                hidden.add(s)
            else:
                visible.add(s)
    return {h for h in hidden - visible if len(h) >= MIN_HIDDEN_LINE}


def _output_text(out) -> str:
    parts = [out.get("text", ""), out.get("evalue", ""), *(out.get("traceback") or [])]
    for v in (out.get("data") or {}).values():
        parts.append(v if isinstance(v, (str, list)) else json.dumps(v, ensure_ascii=False))
    flat = "".join("".join(p) if isinstance(p, list) else str(p) for p in parts)
    return html.unescape(ANSI.sub("", flat))


def leaks(out, secret: set[str], own_source: str = "") -> bool:
    """True when ``out`` quotes a hidden-test line, or the markers (unless its own cell holds them)."""
    text = _output_text(out)
    markers = [m for m in (BEGIN, END) if m not in own_source]
    return any(m in text for m in markers) or any(s in text for s in secret)


def scrub_notebook(nb: dict, extra_paths: list[str] | None = None) -> tuple[dict, list[str]]:
    """Scrub one autograded notebook in place (see the module docstring); returns (nb, review notes)."""
    notes: list[str] = []
    secret = hidden_lines(nb)
    pairs = instructor_paths(extra_paths)
    for idx, cell in enumerate(nb.get("cells", [])):
        outs = cell.get("outputs")
        if not isinstance(outs, list):
            continue
        test = is_test_cell(cell)
        new = []
        for out in outs:
            if not isinstance(out, dict):
                continue
            if out.get("output_type") == "error":
                if test:
                    ev = str(out.get("evalue", ""))
                    out["traceback"] = [f"{out.get('ename', 'Error')}: {ev}" if ev else str(out.get("ename"))]
                out["traceback"] = [strip_paths(str(t), pairs) for t in out.get("traceback") or []]
                out["evalue"] = strip_paths(str(out.get("evalue", "")), pairs)
            elif out.get("output_type") == "stream":
                text = out.get("text", "")
                out["text"] = strip_paths("".join(text) if isinstance(text, list) else str(text), pairs)
            if leaks(out, secret, "" if test else nbcells.source(cell)):
                notes.append(f"cell {idx}: {'test ' if test else ''}output quoting hidden tests redacted")
                out = {"output_type": "stream", "name": "stderr", "text": REDACTED_KO + "\n"}
            new.append(out)
        cell["outputs"] = new
    return nb, notes


# ------------------------------------------------------------------------------------------ sanitize
def _attribute_filter(tag: str, attr: str, value: str) -> str | None:
    if attr == "src":
        return value if tag == "img" and _DATA_IMG.match(value) else None
    if attr == "href":
        v = value.strip().lower()
        return value if v.startswith(("http://", "https://", "mailto:", "#")) else None
    return value


_IMG = re.compile(r"<img\b[^>]*>", re.I)
_ATTR = re.compile(r"""([A-Za-z_:][-\w:.]*)\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+)""")


def _img_or_alt(m: re.Match) -> str:
    """An ``<img>`` whose source is an inline data image stays; any other shows its alt text (a picture
    from elsewhere would be a broken image in a page that loads nothing)."""
    attrs = {k.lower(): html.unescape(v.strip("\"'")) for k, v in _ATTR.findall(m.group(0))}
    if _DATA_IMG.match(attrs.get("src", "")):
        return m.group(0)
    alt = attrs.get("alt", "").strip()
    return f'<span class="gl-img-alt">{html.escape(alt)}</span>' if alt else ""


def clean_html(fragment: str) -> str:
    fragment = _IMG.sub(_img_or_alt, fragment)
    return nh3.clean(fragment, tags=TAGS, attributes=ATTRS, attribute_filter=_attribute_filter,
                     url_schemes={"http", "https", "mailto", "data"}, link_rel="noopener noreferrer")


def _clean_data(data: dict) -> dict:
    out = {}
    for mime, value in data.items():
        if mime in DROP_MIME or "javascript" in mime:
            continue
        text = "".join(value) if isinstance(value, list) else value
        if mime in ("text/html", "text/markdown"):
            out[mime] = clean_html(str(text))
        elif mime.startswith("image/"):
            out[mime] = text if isinstance(text, str) and re.fullmatch(r"[A-Za-z0-9+/=\s]*", text) else ""
        elif mime == "text/latex":
            out[mime] = html.escape(str(text), quote=False)
        elif mime.startswith("text/"):
            out[mime] = str(text)
        # other mime types (application/json, vendor formats) are not shown
    if not out:
        out["text/plain"] = "[출력 형식이 피드백에서 지원되지 않아 생략했습니다]"
    return out


def sanitize_notebook(nb: dict) -> dict:
    """Make every output safe to render (in place; returns nb). Markdown is left to be rendered first and
    cleaned as HTML with the page (sanitize_html_document); its attachments are dropped."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            cell.get("metadata", {}).pop("attachments", None)
            cell.pop("attachments", None)
        for out in cell.get("outputs", []) or []:
            if isinstance(out.get("data"), dict):
                out["data"] = _clean_data(out["data"])
                out["metadata"] = {}  # (image sizes, widget state: nothing the page needs)
    nb.get("metadata", {}).pop("widgets", None)
    return nb


_STYLE = re.compile(r"<style[^>]*>(.*?)</style>", re.S | re.I)
_TITLE = re.compile(r"<title>(.*?)</title>", re.S | re.I)
_BODY = re.compile(r"<body[^>]*>(.*)</body>", re.S | re.I)
_CSS_URL = re.compile(r"url\(\s*(?!['\"]?data:)[^)]*\)", re.I)


# Appended to nbconvert's CSS: nothing wider than the window (1200 px laptops included), marks drawn
# with CSS, the "not graded yet" label.
PAGE_CSS = Path(__file__).with_name("feedback_page.css").read_text(encoding="utf-8")
_MARKS = [("\u2705", "gl-ok", "통과"), ("\u2714\ufe0f", "gl-ok", "통과"), ("\u2714", "gl-ok", "통과"),
          ("\u274c", "gl-fail", "실패"), ("\u2716\ufe0f", "gl-fail", "실패"), ("\u2716", "gl-fail", "실패"),
          ("\u26a0\ufe0f", "gl-warn", "주의"), ("\u26a0", "gl-warn", "주의")]
PENDING = -999.0  # PendingGetGrades' score of a cell awaiting a person (printed "-999.0" by the template)
PENDING_KO = "수동 채점 전"
_PENDING_SCORE = re.compile(r"Score: -999\.0 / ([0-9.]+)")
_TOC = re.compile(r'<div id="toc">.*?</div>', re.S)
_TOTAL = re.compile(r"(<h4>[^<]*\(Score: [0-9.]+ / [0-9.]+)\)")


def _marks(text: str) -> str:
    for ch, cls, label in _MARKS:
        mark = f'<span class="gl-mark {cls}" role="img" aria-label="{label}" title="{label}">'
        mark += "!</span>" if cls == "gl-warn" else "</span>"
        text = text.replace(ch, mark)
    return text


def _pending(body: str) -> str:
    toc = _TOC.search(body)
    waiting = sum(float(x) for x in _PENDING_SCORE.findall(toc.group(0))) if toc else 0.0
    body = _PENDING_SCORE.sub(lambda m: f'<span class="gl-pending">{PENDING_KO}</span> / {m.group(1)}', body)
    if waiting:
        body = _TOTAL.sub(lambda m: f"{m.group(1)}, <span class=\"gl-pending\">{PENDING_KO} "
                                    f"{waiting:g}점 제외</span>)", body, count=1)
    return body


def sanitize_html_document(page: str) -> str:
    """nbconvert's page rebuilt without scripts: the CSS of its head (no external url()/@import) plus
    PAGE_CSS, a cleaned body with CSS marks and pending labels (see the module docstring)."""
    head = re.split(r"<body\b", page, maxsplit=1, flags=re.I)[0]
    css = "\n".join(_STYLE.findall(head)) + PAGE_CSS
    css = _CSS_URL.sub("none", re.sub(r"@import[^;]*;", "", css)).replace("</", "<\\/")
    title = _TITLE.search(head)
    body = _BODY.search(page)
    clean_body = _marks(clean_html(_pending(body.group(1) if body else page)))
    return ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(html.unescape(title.group(1))) if title else 'feedback'}</title>\n"
            f"<style>\n{css}\n</style>\n</head>\n<body>\n{clean_body}\n</body>\n</html>\n")


class PendingGetGrades(GetGrades):
    """nbgrader's GetGrades, except that a cell still awaiting a person (``needs_manual_grade``) gets the
    score PENDING, which the page shows as "수동 채점 전" instead of 0."""

    def _get_score(self, cell, resources):
        super()._get_score(cell, resources)
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        if grade.needs_manual_grade:  # awaits a person, as in make grades, the report and formgrader
            cell.metadata.nbgrader["score"] = PENDING


class TestCellsClearHiddenTests(ClearHiddenTests):
    """ClearHiddenTests that touches test cells only (student text is data, never an error)."""

    def preprocess_cell(self, cell, resources, cell_index):
        if not is_test_cell(cell):
            return cell, resources
        return super().preprocess_cell(cell, resources, cell_index)

