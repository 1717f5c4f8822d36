"""Feedback is safe to hand out and safe to open, on the tiny fixture assignment.

Fast tests check autograder/grade/safe_feedback.py, grade/output_limits.py and grade/normalize.py on notebook JSON; one
slow test grades hostile and edited hand-ins for real (nbgrader + bubblewrap), builds the feedback and
parses every page with an HTML parser: no script, no event handler, no javascript: URL, no frame, form or
object, no external load; no hidden-test source; no instructor path; a right hand-in with edited
structure scores full marks; huge outputs are capped in bytes.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograder.grade import safe_feedback as sf
from autograder.grade.normalize import normalize
from autograder.grade.output_limits import OutputBudget, is_notice, output_bytes

ROOT = Path(__file__).resolve().parent.parent

PAYLOADS = [
    "<script>alert('s1')</script>",
    "<img src=x onerror=alert('s2')>",
    "<a href=\"javascript:alert('s3')\">click</a>",
    "<iframe src=\"https://evil.example/f\"></iframe>",
    "<form action=\"https://evil.example/post\"><input name=q></form>",
    "<object data=\"https://evil.example/o.swf\"></object>",
    "<svg onload=alert('s4')></svg>",
    "<img src=\"https://evil.example/track.png\">",
    "<div style=\"background:url(https://evil.example/bg.png)\">bg</div>",
]


class ActiveFinder(HTMLParser):
    """Everything in a page that can run code or load from elsewhere (independent of safe_feedback)."""

    LOAD_ATTRS = {"src", "srcset", "data", "poster", "background", "action", "formaction"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        if tag in {"script", "iframe", "frame", "object", "embed", "form", "base", "link", "applet", "svg"}:
            self.found.append(tag)
        if tag == "meta" and {k for k, _ in attrs} - {"charset"}:  # http-equiv refresh, set-cookie, ...
            self.found.append(f"meta{sorted(k for k, _ in attrs)}")
        self._in_style = tag == "style"
        for name, value in attrs:
            v = (value or "").strip().lower()
            if name.startswith("on"):
                self.found.append(f"{tag}[{name}]")
            if v.startswith(("javascript:", "vbscript:")):
                self.found.append(f"{tag}[{name}=javascript]")
            if name in self.LOAD_ATTRS and not v.startswith("data:"):
                self.found.append(f"{tag}[{name}={v[:30]}]")
            if name == "style" and "url(" in v:
                self.found.append(f"{tag}[style url]")

    def handle_data(self, data):
        if self._in_style and ("@import" in data or re.search(r"url\(\s*['\"]?(?!data:)", data, re.I)):
            self.found.append("style loads")

    def handle_endtag(self, tag):
        self._in_style = False


def active(page: str) -> list[str]:
    p = ActiveFinder()
    p.feed(page)
    p.close()
    return p.found


# ------------------------------------------------------------------------------------------ fast tests
def _test_cell(src, gid="t1"):
    return {"cell_type": "code", "source": src, "execution_count": 1, "id": gid,
            "metadata": {"nbgrader": {"grade": True, "solution": False, "locked": True, "points": 1,
                                      "grade_id": gid, "schema_version": 3}}, "outputs": []}


def _code(src, outputs=(), gid=None):
    cell = {"cell_type": "code", "source": src, "execution_count": 1, "metadata": {}, "outputs": list(outputs)}
    if gid:
        cell["id"] = gid
    return cell


HIDDEN = ("g.check_value('x', x, 1)\n### BEGIN HIDDEN TESTS\nassert secret_helper(x) == 42, '숨은 검사 실패'\n"
          "### END HIDDEN TESTS")


def test_test_cell_traceback_keeps_only_the_checker_message():
    tb = ["\x1b[0;31mAssertionError\x1b[0m Traceback", "Cell In[3], line 3\n----> 3 assert secret_helper(x) == 42",
          f"File {ROOT}/.venv/lib/python3.11/site-packages/gemm_lab/x.py:1", "AssertionError: 숨은 검사 실패"]
    cell = _test_cell(HIDDEN)
    cell["outputs"] = [{"output_type": "error", "ename": "AssertionError", "evalue": "숨은 검사 실패", "traceback": tb}]
    nb, notes = sf.scrub_notebook({"cells": [cell]})
    assert nb["cells"][0]["outputs"][0]["traceback"] == ["AssertionError: 숨은 검사 실패"]
    assert notes == []


def test_instructor_paths_leave_student_tracebacks():
    home = os.path.expanduser("~")
    tb = [f"File {sys.prefix}/lib/python3.11/site-packages/numpy/core.py:9", f"File {ROOT}/autograder/work/x.py",
          "File /tmp/glrt-123-abc/kernel.json", f"in {home}/.cache/thing", "File /tmp/ipykernel_77/1234.py:2"]
    nb = {"cells": [_code("1/0", [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "x",
                                   "traceback": tb},
                                  {"output_type": "stream", "name": "stderr", "text": f"warn {sys.prefix}/x\n"}])]}
    nb, _ = sf.scrub_notebook(nb)
    text = json.dumps(nb)
    for path in (sys.prefix, str(ROOT), "/tmp/glrt-", "/tmp/ipykernel_"):
        assert path not in text
    assert f"{home}/.cache" not in text
    assert "<python>/lib/python3.11/site-packages/numpy/core.py:9" in text


def test_student_output_quoting_hidden_tests_is_redacted_with_a_note():
    leak = {"output_type": "stream", "name": "stdout", "text": "['', \"assert secret_helper(x) == 42, '숨은 검사 실패'\"]"}
    marker = {"output_type": "execute_result", "execution_count": 2, "metadata": {},
              "data": {"text/plain": "'### BEGIN HIDDEN TESTS'"}}
    fine = {"output_type": "stream", "name": "stdout", "text": "g.check_value('x', x, 1)\n"}  # visible part: fine
    nb = {"cells": [_test_cell(HIDDEN), _code("print(In)", [leak, marker, fine])]}
    nb, notes = sf.scrub_notebook(nb)
    outs = nb["cells"][1]["outputs"]
    assert [o.get("text") for o in outs[:2]] == [sf.REDACTED_KO + "\n"] * 2
    assert outs[2] == fine
    assert len(notes) == 2 and all("redacted" in n for n in notes)


def test_sanitize_notebook_removes_active_content_and_keeps_images():
    png = PNG
    outs = [{"output_type": "display_data", "metadata": {}, "data": {"text/html": p, "text/plain": "x"}}
            for p in PAYLOADS]
    outs.append({"output_type": "display_data", "metadata": {}, "data": {"image/png": png}})
    outs.append({"output_type": "display_data", "metadata": {},
                 "data": {"application/javascript": "alert('js')", "image/svg+xml": "<svg onload=alert(1)/>"}})
    outs.append({"output_type": "display_data", "metadata": {}, "data": {"text/markdown": "".join(PAYLOADS)}})
    md = {"cell_type": "markdown", "metadata": {}, "source": "".join(PAYLOADS)}
    nb = sf.sanitize_notebook({"cells": [_code("x", outs), md], "metadata": {}})
    html = "".join(o["data"].get("text/html", "") + o["data"].get("text/markdown", "")
                   for o in nb["cells"][0]["outputs"])
    assert active(html) == []
    assert nb["cells"][0]["outputs"][len(PAYLOADS)]["data"]["image/png"] == png
    assert "application/javascript" not in json.dumps(nb) and "svg+xml" not in json.dumps(nb)
    assert "click" in html  # the text stays, only the active parts go
    # markdown is rendered first and cleaned as HTML with the page: the rendered page holds none of it
    page = sf.sanitize_html_document(_render_feedback(nb))
    assert active(page) == [] and "click" in page


def _render_feedback(nb: dict, score=1.0, max_score=3.0) -> str:
    """The page nbgrader generate_feedback writes (its feedback template), rendered in this process."""
    import nbformat
    import nbgrader
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor

    base = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
    exporter = HTMLExporter(template_name="feedback", extra_template_basedirs=[str(base / "templates")],
                            extra_template_paths=[str(base / "static" / "node_modules" / "bootstrap" / "dist" / "css")])
    exporter.register_preprocessor(CSSHTMLHeaderPreprocessor, enabled=True)
    node = nbformat.from_dict({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, **nb})
    resources = {"nbgrader": {"notebook": "01_counts", "score": score, "max_score": max_score, "late_penalty": 0}}
    body, _ = exporter.from_notebook_node(node, resources=resources)
    return body


BADGE = ("[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
         "(https://colab.research.google.com/github/gemm-lab/gemm-lab/blob/v0.1.0/release/week07/x.ipynb)")


def _feedback_page() -> str:
    long_line = "x = " + " + ".join(f"value_{i:03d}" for i in range(120))
    written = {"cell_type": "markdown", "source": "그룹 순서는 A 행을 재사용합니다.",
               "metadata": {"nbgrader": {"grade": True, "solution": True, "grade_id": "explain_order",
                                         "points": 2, "score": sf.PENDING, "schema_version": 3}}}
    test = {"cell_type": "code", "source": "g.check_value('tiles', tiles, 54)", "execution_count": 3,
            "metadata": {"nbgrader": {"grade": True, "solution": False, "locked": True, "grade_id": "tiles_54",
                                      "points": 1, "score": 1.0, "schema_version": 3}},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "✅ tiles = 54\n❌ pct: 41 ≠ 40\n⚠️ 주의\n"}]}
    cells = [{"cell_type": "markdown", "metadata": {}, "source": f"# 타일 순서\n\n{BADGE}\n\n"
              "> **핵심**: 같은 A 행을 다시 씁니다.\n\n조건 `a > b` 와 `x < y`.\n"},
             {"cell_type": "code", "source": long_line, "execution_count": 1, "metadata": {},
              "outputs": [{"output_type": "stream", "name": "stdout", "text": long_line + "\n"}]},
             {"cell_type": "code", "source": "print(1)", "execution_count": 2, "metadata": {},
              "outputs": [{"output_type": "display_data", "metadata": {},
                           "data": {"text/html": "<table><tr>" + "<td>column_value_1234567890</td>" * 60
                                    + "</tr></table>", "text/plain": "t"}}]},
             written, test]
    nb = sf.sanitize_notebook({"cells": cells, "metadata": {}})
    return sf.sanitize_html_document(_render_feedback(nb))


def test_feedback_page_renders_markdown_marks_and_pending_answers():
    page = _feedback_page()
    assert "<blockquote>" in page and "&gt; <strong>" not in page and "&gt; **" not in page
    assert "<code>a &gt; b</code>" in page and "&amp;gt;" not in page and "&amp;amp;" not in page
    assert "colab-badge" not in page and "<img" not in page and "Open In Colab" in page  # alt text, no broken image
    for ch in ("✅", "❌", "⚠"):
        assert ch not in page  # drawn with CSS: no emoji font needed
    assert page.count('class="gl-mark gl-ok"') == 1 and page.count('class="gl-mark gl-fail"') == 1
    assert "Score: -999" not in page and "수동 채점 전" in page and "수동 채점 전 2점 제외" in page
    assert "Score: 1.0 / 1.0" in page  # a graded test cell keeps its score
    assert active(page) == []


def test_feedback_page_in_a_real_browser(tmp_path):
    """Headless Chromium at 1200 px: no literal '>'/'&gt;', no broken image, nothing wider than the window."""
    import shutil

    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is pinned in pyproject: make setup")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver_bin = shutil.which("chromedriver")
    if not (chromium and driver_bin):
        pytest.skip("chromium/chromedriver missing: make browser-deps")
    page = tmp_path / "01_counts.html"
    page.write_text(_feedback_page(), encoding="utf-8")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,900",
                "--disable-dev-shm-usage"):
        options.add_argument(arg)
    browser = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_bin))
    try:
        browser.get(page.as_uri())
        text = browser.execute_script("return document.body.innerText")
        widths = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth, window.innerWidth]")
        broken = browser.execute_script(
            "return Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).length")
        marks = browser.execute_script(
            "return Array.from(document.querySelectorAll('.gl-mark')).map(e => [e.getBoundingClientRect().width,"
            " getComputedStyle(e).backgroundColor])")
        (tmp_path / "shot.png").write_bytes(browser.get_screenshot_as_png())
    finally:
        browser.quit()
    assert "&gt;" not in text and "&lt;" not in text and "&amp;" not in text
    assert not any(line.lstrip().startswith(">") for line in text.splitlines())
    assert "a > b" in text and "x < y" in text and "Open In Colab" in text and "수동 채점 전" in text
    assert broken == 0
    assert widths[0] <= widths[1] <= 1200, widths  # no horizontal scroll at 1200 px
    assert len(marks) == 3 and all(w > 5 and bg != "rgba(0, 0, 0, 0)" for w, bg in marks)


def test_sanitize_html_document_drops_scripts_and_external_css():
    page = ("<html><head><title>t</title><script src='https://cdn/x.js'></script>"
            "<style>a{color:red} @import url(https://evil/x.css); b{background:url(https://evil/b.png)}</style>"
            "</head><body onload='alert(1)'><div class='cell'>" + "".join(PAYLOADS) + "ok</div></body></html>")
    clean = sf.sanitize_html_document(page)
    assert active(clean) == []
    assert "a{color:red}" in clean and "ok" in clean


def test_only_test_cells_lose_hidden_regions_in_feedback():
    """A student cell holding the literal marker is data: nbgrader's ClearHiddenTests raised on it."""
    from nbformat import from_dict

    pre = sf.TestCellsClearHiddenTests(enforce_metadata=False)
    student = from_dict(_code("# ### BEGIN HIDDEN TESTS (my notes)\nx = 1"))
    test = from_dict(_test_cell(HIDDEN))
    out, _ = pre.preprocess_cell(student, {}, 0)
    assert "BEGIN HIDDEN TESTS" in out.source
    out, _ = pre.preprocess_cell(test, {}, 1)
    assert "secret_helper" not in out.source and "check_value" in out.source


def test_output_budget_caps_bytes_per_cell_and_per_notebook():
    budget = OutputBudget(cell_bytes=10_000, notebook_bytes=25_000)
    kept_total = 0
    for _cell in range(5):
        budget.start_cell()
        outs = []
        for _ in range(50):  # 50 lines of 1 KB: 50 KB asked per cell
            out = {"output_type": "stream", "name": "stdout", "text": "y" * 1000 + "\n"}
            outs.append(out)
            budget.admit(outs, out)
        outs = budget.settle(outs)
        size = sum(output_bytes(o) for o in outs if not is_notice(o))
        assert size <= 10_000
        assert is_notice(outs[-1]) and "KiB" in outs[-1]["text"]
        kept_total += size
    assert kept_total <= 25_000
    one = {"output_type": "stream", "name": "stdout", "text": "z" * 5_000_000}  # one huge line
    budget = OutputBudget(cell_bytes=10_000, notebook_bytes=25_000)
    outs = [one]
    budget.admit(outs, one)
    assert sum(output_bytes(o) for o in outs) < 11_000 and is_notice(outs[-1])


# ---------------------------------------------------------------------------- normalize (fast, no nbgrader)
def _rel_nb():
    def c(kind, gid, src="x = 1", **flags):
        meta = {"grade_id": gid, "schema_version": 3, "grade": False, "solution": False, "locked": False}
        meta.update(flags)
        return {"cell_type": kind, "id": gid, "metadata": {"nbgrader": meta}, "source": src,
                **({"outputs": [], "execution_count": None} if kind == "code" else {})}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3"}}, "cells": [
        c("code", "setup", "import math", locked=True),
        c("code", "given", "HELP = 2", locked=True),
        c("code", "test_a", "assert a == 1", grade=True, locked=True, points=2),
        c("code", "ans_b", "b = None", solution=True),
        c("code", "test_b", "assert b == 2", grade=True, locked=True, points=1),
    ]}


def _ids(nb):
    return [c["metadata"].get("nbgrader", {}).get("grade_id") for c in nb["cells"]]


def test_normalize_restores_a_test_cell_deleted_after_a_locked_only_cell():
    rel = _rel_nb()
    nb = copy.deepcopy(rel)
    del nb["cells"][2]  # test_a followed the locked-only cell 'given': nbgrader's KeyError case
    fixed, repairs = normalize(nb, rel)
    assert _ids(fixed) == _ids(rel) and repairs == ["restored missing test cell test_a"]


def test_normalize_drops_duplicates_restores_ids_and_metadata():
    rel = _rel_nb()
    nb = copy.deepcopy(rel)
    nb["cells"].append(copy.deepcopy(nb["cells"][4]))  # duplicated test cell
    nb["cells"][2]["metadata"]["nbgrader"]["grade_id"] = "test_a_mine"  # altered id
    nb["cells"][3]["metadata"]["nbgrader"]["points"] = 99  # metadata edited
    nb["cells"][1]["metadata"] = ["not", "a", "dict"]  # non-dict metadata
    nb["cells"].insert(3, copy.deepcopy(nb["cells"][3]))  # duplicated answer cell: its copy stays, plain
    fixed, repairs = normalize(nb, rel)
    assert [g for g in _ids(fixed) if g] == _ids(rel)
    assert len({c["id"] for c in fixed["cells"]}) == len(fixed["cells"])
    assert any("restored grade_id test_a" in r for r in repairs)
    assert any("duplicate(s) of test cell test_b" in r for r in repairs)
    assert any("duplicate(s) of answer cell" in r for r in repairs)
    assert any("metadata was not a dict" in r for r in repairs)
    assert sum(c["source"] == "b = None" for c in fixed["cells"]) == 2  # the answer copy still runs
    assert normalize(fixed, rel)[1] == []  # idempotent
    assert normalize(copy.deepcopy(rel), rel) == (rel, [])  # a clean hand-in is left alone


def test_normalize_unusable_notebook_becomes_the_blank_release():
    rel = _rel_nb()
    fixed, repairs = normalize({"cells": "x"}, rel)
    assert _ids(fixed) == _ids(rel) and "unreadable" in repairs[0]


# ------------------------------------------------------------------------------------ the real pipeline
def _add(nb, index, src, kind="code"):
    cell = {"cell_type": kind, "metadata": {}, "source": src}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    nb["cells"].insert(index, cell)
    return nb


def _index(nb, gid):
    return next(i for i, c in enumerate(nb["cells"]) if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == gid)


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
XSS_CELL = ("from IPython.display import HTML, Markdown, SVG, Javascript, display\n"
            f"P = {PAYLOADS!r}\n"
            "print(''.join(P))\n"
            "display(HTML(''.join(P)))\n"
            "display(Markdown(''.join(P) + ' [m](javascript:alert(9))'))\n"
            "display({'text/html': ''.join(P)}, raw=True)\n"
            "display(Javascript('alert(10)'))\n"
            "display(SVG('<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(11)\"></svg>'))\n"
            "import base64\nfrom IPython.display import Image\n"
            f"display(Image(data=base64.b64decode({PNG!r})))\n"
            "''.join(P)")
LEAK_CELL = ("print('IN', In)\nprint('IH', _ih)\nprint('I', _i, _ii, _iii)\n"
             "%history -g -n\n"
             "import inspect, linecache\nprint('LC', [k for k, v in linecache.cache.items() "
             "if len(v) > 2 and 'tiles' in ''.join(v[2] or [])])")
HOOK_CELL = ("_seen = []\nget_ipython().events.register('pre_run_cell', lambda info: _seen.append(info.raw_cell))")
HOOK_PRINT = "print('SEEN', _seen)"


def _hostile_handins(root):
    from autograder.samplekit.fixture import hand_in, solved

    full = {n: solved(root, n) for n in ("01_counts", "02_vectors")}
    hand_in(root, "full_marks", full)
    # XSS: right answers, then payloads printed every way (outputs) and in a markdown cell
    nb = copy.deepcopy(full["01_counts"])
    _add(nb, len(nb["cells"]), XSS_CELL)
    _add(nb, len(nb["cells"]), "".join(PAYLOADS), kind="markdown")
    hand_in(root, "xss", {"01_counts": nb, "02_vectors": full["02_vectors"]})
    # wrong answer (failing hidden test) + history probes after the hidden test ran + the literal marker
    nb = copy.deepcopy(full["01_counts"])
    nb["cells"][_index(nb, "ans_tiles")]["source"] = "tiles = 55"
    _add(nb, _index(nb, "tiles_54") + 1, LEAK_CELL)
    _add(nb, _index(nb, "ans_pct"), "# ### BEGIN HIDDEN TESTS (my own note, no end marker)\nfrom gemm_lab import grading\n"
         "grading.check_value('x', 1, 2, digits='bad')")  # an error raised inside gemm_lab: venv paths
    hand_in(root, "leaky", {"01_counts": nb})
    # a hook that copies test cells as they run (the output scan is the backstop) + a huge output
    nb = copy.deepcopy(full["01_counts"])
    _add(nb, _index(nb, "ans_tiles"), HOOK_CELL)
    _add(nb, len(nb["cells"]), HOOK_PRINT)
    _add(nb, len(nb["cells"]), "print('x' * 30_000_000)\nfor i in range(200_000):\n    print(i, 'y' * 50)")
    hand_in(root, "hooked", {"01_counts": nb})
    # a right hand-in whose structure nbgrader 0.9.6 crashes on: deleted test cell after a locked-only
    # cell is not in this fixture's 01 (setup is followed by an answer), so: deleted + duplicated + renamed
    nb = copy.deepcopy(full["01_counts"])
    nb["cells"].append(copy.deepcopy(nb["cells"][_index(nb, "double_works")]))
    nb["cells"][_index(nb, "pct_40")]["metadata"]["nbgrader"]["grade_id"] = "pct_mine"
    del nb["cells"][_index(nb, "tiles_54")]
    vec = copy.deepcopy(full["02_vectors"])
    del vec["cells"][_index(vec, "vec_even")]
    vec["cells"][0]["metadata"] = []  # non-dict metadata on the locked setup cell
    hand_in(root, "edited", {"01_counts": nb, "02_vectors": vec})


@pytest.mark.slow
def test_feedback_of_hostile_and_edited_handins_is_safe(tmp_path, make_scratch_course, bwrap):
    from autograder.course import read_notebook
    from autograder.grade.autograde import autograde
    from autograder.reporting.feedback_build import build_feedback
    from autograder.samplekit.fixture import ASSIGNMENT

    course = make_scratch_course(tmp_path / "course", released=True)
    _hostile_handins(course.root)
    t0 = time.monotonic()
    results = {r.student: r for r in autograde(course, ASSIGNMENT, jobs=2, cell_timeout=30, notebook_timeout=120,
                                               quiet=True)}
    print(f"graded {len(results)} hand-ins in {time.monotonic() - t0:.0f}s")
    assert all(r.ok for r in results.values()), {s: r.error for s, r in results.items()}
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:
        def scores(s):
            return {n.name: n.score for n in gb.find_submission(ASSIGNMENT, s).notebooks}
        full = scores("full_marks")
        assert full == {"01_counts": 6.0, "02_vectors": 2.0}
        assert scores("edited") == full, results["edited"].repairs  # a right hand-in keeps its points
        assert scores("xss")["01_counts"] == 6.0
        assert scores("leaky")["01_counts"] == 4.0  # tiles wrong: 2 points lost, nothing else
    rep = results["edited"].repairs
    assert any("tiles_54" in r for r in rep["01_counts"]) and any("pct_40" in r for r in rep["01_counts"])
    assert any("vec_even" in r for r in rep["02_vectors"])
    from autograder.reporting.grade_table import review_flags

    flags = review_flags(course)
    assert any("repaired before grading" in f and "tiles_54" in f for f in flags["edited"]), flags["edited"]
    # hidden tests never run in the student's kernel (test cells hand out values there): a hook that prints
    # every cell's source has no hidden-test text to leak, so nothing needs redacting
    hooked = read_notebook(course.autograded / "hooked" / ASSIGNMENT / "01_counts.ipynb")
    assert "HIDDEN TESTS" not in json.dumps([c.get("outputs", []) for c in hooked["cells"]], ensure_ascii=False)

    # the kernel forgot the hidden tests before the student's probe ran: nothing to redact there
    leaky = read_notebook(course.autograded / "leaky" / ASSIGNMENT / "01_counts.ipynb")
    probe = next(c for c in leaky["cells"] if "".join(c["source"]).startswith("print('IN', In)"))
    probe_text = json.dumps(probe["outputs"], ensure_ascii=False)
    assert "IN" in probe_text and "tiles (hidden)" not in probe_text and "HIDDEN TESTS" not in probe_text
    assert sf.REDACTED_KO not in probe_text
    assert list(results["leaky"].redacted) == []  # its own marker comment in its own traceback is no leak
    # the hook copied what the kernel ran of the test cells: hand-outs only, nothing hidden, nothing to redact
    assert not any("redacted" in n for n in results["hooked"].redacted.get("01_counts", []))
    hooked = course.autograded / "hooked" / ASSIGNMENT / "01_counts.ipynb"
    assert hooked.stat().st_size < 4_000_000 and "[출력 제한]" in hooked.read_text(encoding="utf-8")

    build_feedback(course, ASSIGNMENT)
    pages = sorted(course.feedback.glob(f"*/{ASSIGNMENT}/*.html"))
    assert {p.parent.parent.name for p in pages} == set(results)
    secret = "assert int(float(tiles)) == compare_orders"
    # hidden-test SOURCE lines (the checker's own ✅/❌ messages may name a hidden case: that is feedback)
    forbidden = [secret, "g.check_value('double(-3)', double(-3), -6)", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                 str(ROOT), str(course.root), sys.prefix, "/tmp/glrt-"]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert active(text) == [], (page, active(text)[:5])
        for f in forbidden:
            if f == "BEGIN HIDDEN TESTS" and page.parent.parent.name == "leaky":
                continue  # the student's own comment is shown back to them as written
            assert f not in text, (page, f)
    xss = (course.feedback / "xss" / ASSIGNMENT / "01_counts.html").read_text(encoding="utf-8")
    assert "click" in xss  # the payload's text is shown, inert
    assert f'src="data:image/png;base64,{PNG}' in xss  # images stay, as data: URIs
    leaky_page = (course.feedback / "leaky" / ASSIGNMENT / "01_counts.html").read_text(encoding="utf-8")
    assert "tiles" in leaky_page and "my own note" in leaky_page


@pytest.mark.slow
def test_without_normalize_nbgrader_crashes_on_the_edited_handin(tmp_path, monkeypatch, make_scratch_course, bwrap):
    """The problem the normalisation solves, reproduced: nbgrader 0.9.6 itself fails on these edits
    (KeyError in add_missing_grade_cells / 'grade_id'), so the whole hand-in would score 0."""
    from autograder.grade import autograde as grade
    from autograder.samplekit.fixture import ASSIGNMENT

    course = make_scratch_course(tmp_path / "course", released=True)
    _hostile_handins(course.root)
    monkeypatch.setattr(grade, "normalize_file", lambda path, release_path: [])
    (res,) = grade.autograde(course, ASSIGNMENT, students=["edited"], jobs=1, quiet=True)
    assert not res.ok
    log = Path(res.log).read_text()
    assert "KeyError" in log, log[-2000:]


def test_display_updates_stay_in_bounds_and_capped(monkeypatch):
    """update_display_data after the byte cap dropped or moved outputs: no IndexError, no growth past the cap."""
    import nbformat

    from autograder.grade.nbexec import GuardedExecute

    monkeypatch.delenv("GEMM_LAB_SANDBOX", raising=False)
    monkeypatch.setenv("GEMM_LAB_UNSANDBOXED", "1")
    ge = GuardedExecute()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("a"), nbformat.v4.new_code_cell("b")])
    ge.nb = nb
    ge.reset_execution_trackers()
    ge.clear_before_next_output = False  # (set by nbclient when a cell starts)
    ge._budget = OutputBudget(cell_bytes=2_000, notebook_bytes=5_000)

    def msg(kind, content, display_id=None):
        if display_id:
            content["transient"] = {"display_id": display_id}
        return {"msg_type": kind, "header": {"msg_type": kind}, "parent_header": {"msg_id": "m"},
                "content": content}

    outs = nb.cells[0].outputs
    ge._budget.start_cell()
    ge.process_message(msg("display_data", {"data": {"text/plain": "small"}, "metadata": {}}, "d"), nb.cells[0], 0)
    for _ in range(10):
        ge.process_message(msg("stream", {"name": "stdout", "text": "x" * 500}), nb.cells[0], 0)
    ge.process_message(msg("display_data", {"data": {"text/plain": "late"}, "metadata": {}}, "e"), nb.cells[0], 0)
    before = list(outs)
    nb.cells[0].outputs = ge._budget.settle(before)
    ge._remap_display_ids(0, before, nb.cells[0].outputs)
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == "small"
    assert ge._display_id_map["e"][0] == [] and ge._display_id_map["d"][0] == [0]
    ge.process_message(msg("update_display_data", {"data": {"text/plain": "y" * 1_000_000}, "metadata": {}},
                           "d"), nb.cells[1], 1)
    ge.process_message(msg("update_display_data", {"data": {"text/plain": "z"}, "metadata": {}}, "e"),
                       nb.cells[1], 1)
    assert "[출력 제한]" in nb.cells[0].outputs[0]["data"]["text/plain"]
    assert sum(output_bytes(o) for o in nb.cells[0].outputs) < 3_000
    nbformat.validate(nb)


def test_normalize_recognises_cells_that_lost_their_metadata_where_they_stand():
    """A notebook rebuilt by copying cells (or saved by a tool that drops cell metadata): the given and test
    cells are recognised by their source in place, so the answers before them still count; a graded written
    answer by its neighbours. Nothing is inserted, and the result is stable."""
    rel = _rel_nb()
    rel["cells"].insert(5, {"cell_type": "markdown", "id": "why", "source": "YOUR ANSWER HERE", "metadata": {
        "nbgrader": {"grade_id": "why_b", "schema_version": 3, "grade": True, "solution": True, "locked": False,
                     "points": 2}}})
    nb = copy.deepcopy(rel)
    for c in nb["cells"]:
        c["metadata"] = {}
        c.pop("id")
    nb["cells"][3]["source"] = "b = 2"
    nb["cells"][5]["source"] = "b is two because ..."
    nb["cells"][2]["source"] = "assert a == 1\n"  # whitespace aside, the release's test
    nb["cells"].insert(3, {"cell_type": "code", "metadata": {}, "source": "a = 1", "outputs": [],
                           "execution_count": None})
    fixed, repairs = normalize(nb, rel)
    assert _ids(fixed) == ["setup", "given", "test_a", None, None, "test_b", "why_b"]
    assert [c["source"] for c in fixed["cells"]][3:5] == ["a = 1", "b = 2"]
    assert fixed["cells"][6]["source"] == "b is two because ..."
    assert len(repairs) == 5 and all("recognised as" in r and "metadata was missing" in r for r in repairs)
    assert normalize(fixed, rel)[1] == []


def test_normalize_adopts_nothing_it_cannot_tell():
    """An edited copy of a test is not that test (the release's is put back after its predecessor); two
    plain candidates for one written answer are left plain (the release's blank answer is put back)."""
    rel = _rel_nb()
    rel["cells"].append({"cell_type": "markdown", "id": "why", "source": "YOUR ANSWER HERE", "metadata": {
        "nbgrader": {"grade_id": "why_b", "schema_version": 3, "grade": True, "solution": True, "locked": False,
                     "points": 2}}})
    nb = copy.deepcopy(rel)
    nb["cells"][4]["metadata"] = {}
    nb["cells"][4]["source"] = "assert True  # b == 2"
    nb["cells"][5]["metadata"] = {}
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "second thoughts"})
    fixed, repairs = normalize(nb, rel)
    assert "restored missing test cell test_b" in repairs and "restored missing answer cell why_b" in repairs
    assert not any("recognised" in r for r in repairs)
    assert _ids(fixed).count("test_b") == 1 and _ids(fixed).count("why_b") == 1


def test_normalize_survives_random_edits():
    """Random deletions, copies, moves, renamed ids and junk metadata: no exception, and every locked/test
    cell of the release present exactly once afterwards (so nbgrader can grade the hand-in)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    rel = _rel_nb()
    must = [g for g, c in ((c["metadata"]["nbgrader"]["grade_id"], c) for c in rel["cells"])
            if c["metadata"]["nbgrader"].get("locked") or c["metadata"]["nbgrader"].get("grade")]
    junk = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2),
                     st.dictionaries(st.sampled_from(["grade_id", "grade", "locked", "solution", "points"]),
                                     st.one_of(st.booleans(), st.text(max_size=6), st.integers()), max_size=4))
    edit = st.tuples(st.sampled_from(["del", "dup", "move", "rename", "meta", "nbg", "cell"]),
                     st.integers(0, 20), st.integers(0, 20), junk)

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.lists(edit, max_size=6))
    def check(edits):
        nb = copy.deepcopy(rel)
        cells = nb["cells"]
        for op, i, j, value in edits:
            if not cells:
                break
            i, j = i % len(cells), j % len(cells)
            if op == "del":
                del cells[i]
            elif op == "dup":
                cells.insert(j, copy.deepcopy(cells[i]))
            elif op == "move":
                cells.insert(j, cells.pop(i))
            elif op == "cell":
                cells[i] = value
            elif not isinstance(cells[i], dict):
                continue
            elif op == "rename" and isinstance(cells[i].get("metadata"), dict) and \
                    isinstance(cells[i]["metadata"].get("nbgrader"), dict):
                cells[i]["metadata"]["nbgrader"]["grade_id"] = f"renamed{j}"
            elif op == "meta":
                cells[i]["metadata"] = value
            elif op == "nbg" and isinstance(cells[i].get("metadata"), dict):
                cells[i]["metadata"]["nbgrader"] = value
        fixed, _ = normalize(nb, rel)
        ids = _ids(fixed)
        assert all(ids.count(g) == 1 for g in must), ids
        assert all(isinstance(c.get("metadata"), dict) for c in fixed["cells"])

    check()
