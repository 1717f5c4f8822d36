"""`make report`: the class report from a synthetic graded class with planted answers (no nbgrader run).

autograder/samplekit/synthetic_class.py writes the gradebook (nbgrader's API) and autograded notebooks with the
grader's verdicts; of 50 students exactly 20 answer 985 for the break-even (the named mistake: not
rounded up), 5 leave it blank, 2 answer 1000, 1 answers a <script> string, 22 are right.
"""

from __future__ import annotations

import csv
import shutil
import warnings
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from autograder.__main__ import main
from autograder.course import Course
from autograder.reporting.class_report import (
    MIN_SHARED,
    _csv_cell,
    analyze,
    build_report,
)
from autograder.reporting.class_report_plots import bins
from autograder.samplekit.synthetic_class import BREAK_EVEN_HINT, REGROUP_HINT, make_class, student_ids

ROOT = Path(__file__).resolve().parent.parent

A = "week07"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    course = make_class(tmp_path_factory.mktemp("class"), 50)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        files = build_report(course, A)
    return course, files, caught, analyze(course, A)


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _wrong_rows(soup, check: str) -> list[tuple[str, int]]:
    table = soup.select_one(f'table.wrong[data-check="{check}"]')
    assert table is not None, f"no wrong-answer table for {check}"
    return [(tr.select_one("td.value").get_text(), int(tr["data-count"])) for tr in table.select("tr.answer")]


def test_planted_answers_are_counted_exactly(built):
    course, _, _, report = built
    cell = next(c for c in report.cells if c.info.grade_id == "ex3_2_break_even_986")
    be = cell.checks["break_even"]
    assert {w.value: len(w.students) for w in be.wrong.values()} == {985: 20, 1000: 2, "<script>alert('x')</script>": 1}
    assert (be.checked, be.correct, len(be.blank)) == (50, 22, 5)
    assert (cell.full, cell.graded, cell.status["fail"]) == (22, 50, 28)
    assert cell.blank_share == pytest.approx(5 / 50)
    loads_cell = next(c for c in report.cells if c.info.grade_id == "ex2_loads_grouped_54")
    loads = loads_cell.checks["loads_grouped"]
    assert {w.value: len(w.students) for w in loads.wrong.values()} == {90: 8, 72: 3}
    # two never defined the name: their verdicts hold no check, only the message; they count as blank
    assert loads.checked == 48 and len(loads_cell.blank) == 2
    assert [len(v) for m, v in loads_cell.unchecked.items() if "정의되지 않았습니다" in m] == [2]
    # 85.8993 and the 0.0859 (a factor 1000 off) stay apart; integral floats count as ints
    tf = next(c for c in report.cells if c.info.grade_id == "ex3_1_tflops").checks["tflops_fixed"]
    assert {w.value: len(w.students) for w in tf.wrong.values()} == {85.8993: 4, 0.0859: 3}


def test_pages_show_the_counts_the_named_mistake_and_the_hardest_cell_first(built):
    _, files, _, _ = built
    for page in (files.instructor, files.class_copy):
        soup = _soup(page)
        rows = _wrong_rows(soup, "break_even")
        assert rows[0] == ("985", 20)
        first = soup.select_one('table.wrong[data-check="break_even"] tr.answer')
        assert BREAK_EVEN_HINT in first.get_text()
        assert _wrong_rows(soup, "loads_grouped")[0] == ("90", 8)
        assert REGROUP_HINT in soup.select_one('table.wrong[data-check="loads_grouped"] tr.answer').get_text()
        undefined = soup.select_one('table.unchecked[data-cell="ex2_loads_grouped_54"]')
        rows = undefined.select("tr[data-count]") if undefined else []
        if page == files.instructor:
            assert [int(r["data-count"]) for r in rows] == [2] and "정의되지 않았습니다" in rows[0].get_text()
        else:  # two students: one "other" row, not the message
            assert rows == [] and "정의되지 않았습니다" not in undefined.get_text()
        items = [tr["data-grade-id"] for tr in soup.select("#item-table tr[data-grade-id]")]
        assert items[0] == "ex3_2_break_even_986"  # 44 % full points: the lowest of the graded cells
        assert items[-1] == "ex3_3_explain_autotune_key"  # 40 of 50 still awaiting manual grading
        assert "연습문제 3" in soup.select_one('#item-table tr[data-grade-id="ex3_2_break_even_986"]').get_text()
    instructor = _wrong_rows(_soup(files.instructor), "break_even")
    assert instructor == [("985", 20), ("1000", 2), ("<script>alert('x')</script>", 1)]


def test_class_copy_holds_no_student_id_and_no_value_of_fewer_than_three(built):
    course, files, _, _ = built
    text = files.class_copy.read_text(encoding="utf-8")
    for s in [*student_ids(50), "lee_404"]:
        assert s not in text
    soup = _soup(files.class_copy)
    counts = [int(tr["data-count"]) for tr in soup.select("table.wrong tr.answer")]
    assert counts and min(counts) >= MIN_SHARED
    assert _wrong_rows(soup, "break_even") == [("985", 20)]  # 1000 (2) and the script (1): the "other" row
    other = soup.select_one('table.wrong[data-check="break_even"] tr.other').get_text()
    assert "2가지" in other and "3" in other
    assert ("72", 3) in _wrong_rows(soup, "loads_grouped")
    assert "alert(" not in text  # the one-student <script> answer is left out, not even escaped
    assert not soup.select("#todo, #review, #pending")
    # the instructor's copy has the ids (drill-downs) and what needs the instructor
    inst = _soup(files.instructor)
    assert "kim_" in files.instructor.read_text(encoding="utf-8")
    assert inst.select_one("#review") and "kim_003" in inst.select_one("#review").get_text()
    # the items CSV: no student id either
    csv_text = files.items_csv.read_text(encoding="utf-8")
    assert "kim_" not in csv_text and "lee_404" not in csv_text


def test_student_text_is_escaped_and_the_page_runs_no_script(built):
    _, files, _, _ = built
    text = files.instructor.read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    soup = _soup(files.instructor)
    assert not soup.find_all("script")
    assert "default-src 'none'" in soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    assert ("<script>alert('x')</script>", 1) in _wrong_rows(soup, "break_even")  # shown as text


def test_kernel_cases_and_what_needs_the_instructor(built):
    course, files, _, report = built
    kernel = next(c for c in report.cells if c.kernel).kernel
    assert {k: len(s) for k, s in kernel.students_by_kind()} == {
        "k_tail": 9, "edge_tile": 3, "compile_refused": 2, "compile_error": 1, "poisoned_margin": 1}
    assert kernel.students == 49  # kim_002's notebook is unreadable
    assert ("lee_404", "03_tile_configs_roofline.ipynb: invalid JSON at line 1") in report.unreadable
    assert any(s == "kim_002" and "01_pointer_blocks" in w for s, w in report.unreadable)
    manual = next(c for c in report.cells if c.info.grade_id == "ex3_3_explain_autotune_key")
    assert len(manual.pending) == 40
    errors = [(c.info.grade_id, s) for c in report.cells for s, _ in c.grader_errors]
    assert errors == [("ex3_1_tflops", "kim_050")]
    assert any("findings (" in n for n in report.review["kim_003"])  # what was found, named by its code
    # the verdict a student wrote into an ungraded cell is not counted
    assert [(s, why) for s, _, why in report.ignored_verdicts] == [
        ("kim_001", "verdict in a cell that is not a graded cell")]
    assert "4242" not in files.instructor.read_text(encoding="utf-8")
    soup = _soup(files.instructor)
    kt = soup.select_one('table.kernel tr[data-kind="k_tail"]').get_text()
    assert "9" in kt and "K 꼬리" in kt


def test_totals_match_the_gradebook_and_grades_csv(built):
    from autograder.reporting.grade_table import scores

    course, _, _, report = built
    columns, table, maxima = scores(course, [A])
    for s in report.students:
        assert report.totals[s] == pytest.approx(sum(table[s].get(c, 0.0) for c in columns))
    assert report.max_total == pytest.approx(sum(maxima.values()))


def test_figures_are_png_files_and_inline_images(built):
    _, files, caught, _ = built
    names = {p.name for p in files.figures}
    instructor = {f"{A}_{n}.png" for n in ("totals", "notebooks", "cells", "kernels")}
    assert instructor <= names  # and a class PNG where the class copy's figure differs
    assert names - instructor <= {f"{A}_class_{n}.png" for n in ("totals", "notebooks", "cells", "kernels")}
    for p in files.figures:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for page in (files.instructor, files.class_copy):
        imgs = _soup(page).select("img.figure")
        assert {i["id"] for i in imgs} == {"fig-totals", "fig-notebooks", "fig-cells", "fig-kernels"}
        assert all(i["src"].startswith("data:image/png;base64,") for i in imgs)
    from gemm_lab.viz.fonts import korean_font

    if korean_font() is not None:  # Hangul labels drawn with a Korean font: no tofu warning
        assert not [w for w in caught if "missing from font" in str(w.message)]


def test_class_histogram_bins_hold_three_or_more():
    values = [0, 1, 1, 5, 5, 5, 5, 9, 12, 12]
    raw = bins(values, 12)
    merged = bins(values, 12, k=3)
    assert sum(c for *_, c in merged) == len(values) == sum(c for *_, c in raw)
    assert all(c == 0 or c >= 3 for *_, c in merged)
    assert any(0 < c < 3 for *_, c in raw)
    lefts = [lo for lo, _, _ in merged]
    assert lefts == sorted(lefts)
    assert bins([3, 4], 10, k=3) == []  # two students in all: no bar that shows them


def test_items_csv_hardest_first_and_safe_for_spreadsheets(built):
    _, files, _, _ = built
    rows = list(csv.DictReader(files.items_csv.open(encoding="utf-8")))
    assert rows[0]["grade_id"] == "ex3_2_break_even_986"
    assert (rows[0]["top_wrong_answer"], rows[0]["top_wrong_students"]) == ("985", "20")
    assert BREAK_EVEN_HINT in rows[0]["top_wrong_message"]
    assert rows[0]["pass_rate"] == "0.44" and rows[0]["manual_pending"] == "0"
    assert _csv_cell("=HYPERLINK(\"x\")") == "'=HYPERLINK(\"x\")"
    assert _csv_cell("-3") == "-3" and _csv_cell(-0.5) == "-0.5" and _csv_cell("@x") == "'@x"


def _run(capsys, root, *args) -> tuple[int, str, str]:
    rc = main(["--course-root", str(root), "report", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_bad_use_is_one_line_and_loses_nothing(built, tmp_path, capsys):
    course, files, _, _ = built
    # no gradebook
    rc, _, err = _run(capsys, tmp_path)
    assert rc == 2 and err.count("\n") == 1 and "no gradebook" in err and "make autograde" in err
    assert "Traceback" not in err and not (tmp_path / "autograder" / "report").exists()
    # not a gradebook: a text file in its place, left as it was
    db = tmp_path / "autograder" / "gradebook.db"
    db.parent.mkdir(parents=True)
    db.write_text("not sqlite")
    rc, _, err = _run(capsys, tmp_path)
    assert rc == 2 and err.count("\n") == 1 and "not" in err and "gradebook" in err
    assert db.read_text() == "not sqlite"
    # unknown assignment: names the known ones; the earlier report stays whole
    before = files.instructor.read_bytes()
    rc, _, err = _run(capsys, course.root, "week99")
    assert rc == 2 and err.count("\n") == 1 and "unknown assignment 'week99'" in err and "week07" in err
    assert files.instructor.read_bytes() == before
    # a gradebook with the assignment but no hand-in
    empty = tmp_path / "empty"
    shutil.copytree(course.root / "release", empty / "release")
    make_class(empty, 3, [], extras=False)  # no notebook: the assignment exists, nothing graded
    from nbgrader.api import Gradebook

    with Gradebook(Course.at(empty).db_url, "gemm-lab") as gb:
        gb.update_or_create_assignment("week06")
    rc, _, err = _run(capsys, empty, "week06")
    assert rc == 2 and err.count("\n") == 1 and "no graded hand-ins of week06" in err


def test_demo_reports_writes_the_page_or_one_line(built, tmp_path):
    import io

    from autograder.reporting.class_report import demo_reports

    course, _, _, _ = built
    assert demo_reports(course, [A], tmp_path) == [tmp_path / f"{A}.html"]
    printed = io.StringIO()
    assert demo_reports(Course.at(tmp_path / "none"), [A], tmp_path, out=printed) == []
    assert printed.getvalue().count("\n") == 1 and "no gradebook" in printed.getvalue()
    assert not (tmp_path / f"{A}.html").exists()  # the earlier page is not left to look current


def test_cli_writes_every_graded_assignment(built, tmp_path, capsys):
    course, _, _, _ = built
    rc, out, err = _run(capsys, course.root, "--out", str(tmp_path))
    assert rc == 0, err
    assert f"{A}: report in" in out
    assert sorted(p.name for p in tmp_path.glob("*.html")) == [f"{A}.html", f"{A}_class.html"]
    assert [p.name for p in tmp_path.glob("*.csv")] == [f"{A}_items.csv"]


@pytest.mark.slow
def test_browser_shows_the_plots_and_the_top_wrong_answer(built):
    """Headless Chromium (Debian's chromium + chromium-driver, as tests/test_browser.py) opens both pages
    from disk, offline: every figure decodes, and the first wrong answer of the break-even is 985 (20)."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is pinned in pyproject: make setup")
    chromium, driver_bin = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_bin):
        pytest.fail("chromium / chromedriver missing: run `make setup` (apt-get install chromium chromium-driver)")
    _, files, _, _ = built
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1200,1000"):
        options.add_argument(flag)
    browser = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_bin))
    try:
        for page in (files.instructor, files.class_copy):
            browser.get(page.as_uri())
            figures = browser.execute_script("""
                return Array.from(document.querySelectorAll('img.figure')).map(
                    i => [i.id, i.complete, i.naturalWidth, i.naturalHeight]);""")
            assert sorted(f[0] for f in figures) == ["fig-cells", "fig-kernels", "fig-notebooks", "fig-totals"]
            assert all(done and w > 300 and h > 100 for _, done, w, h in figures), figures
            row = browser.find_element("css selector", 'table.wrong[data-check="break_even"] tr.answer')
            cells = [td.text for td in row.find_elements("css selector", "td")]
            assert cells[:3] == ["985", "20", "40%"] and BREAK_EVEN_HINT in cells[3]
            assert row.is_displayed()
            shots = ROOT / "screenshots"
            shots.mkdir(exist_ok=True)
            browser.set_window_size(1200, browser.execute_script("return document.body.scrollHeight") + 100)
            browser.save_screenshot(str(shots / f"class_report_{page.stem}.png"))
    finally:
        browser.quit()
