"""The class report on a small class: cells rated over graded answers only ("채점 대기 N" beside), the class copy
shows no count under MIN_SHARED and no statistic over fewer than MIN_STATS students, and the labels are
readable (WCAG contrast of at least 4.5:1, computed from the pages' own CSS)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from autograder.reporting.class_report import analyze, build_report
from autograder.reporting.class_report_model import MIN_SHARED, MIN_STATS
from autograder.samplekit.synthetic_class import ASSIGNMENT as A
from autograder.samplekit.synthetic_class import make_class

pytestmark = pytest.mark.filterwarnings("ignore::Warning")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    course = make_class(tmp_path_factory.mktemp("small"), MIN_STATS - 1, extras=False)
    return analyze(course, A), build_report(course, A, tmp_path_factory.mktemp("out"))


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _int(text: str) -> int | None:
    return int(text) if re.fullmatch(r"\d+", text.strip()) else None


def test_class_copy_of_a_small_class_shows_no_small_count_and_no_statistic(small):
    report, files = small
    soup = _soup(files.class_copy)
    for tr in soup.select("#totals tr")[1:]:
        cells = [td.get_text(strip=True) for td in tr.select("td")]
        assert cells[1:3] == ["–", "–"], cells  # mean, median over fewer than MIN_STATS students
    for tr in soup.select("#item-table tr[data-grade-id]"):
        tds = [td.get_text(" ", strip=True) for td in tr.select("td")]
        handed_in, rate, mean, status, blank, pending = tds[4], tds[5], tds[6], tds[7], tds[8], tds[9]
        assert rate.split(" ")[0] == "–" and mean == "–" and blank == "–", tds
        for text in (handed_in, pending, *re.findall(r"\d+", status)):
            n = _int(text)
            assert n is None or n == 0 or n >= MIN_SHARED, tds
    for n in re.findall(r"(\d+)명", soup.get_text()):
        assert int(n) == 0 or int(n) >= MIN_SHARED, n
    assert f"<{MIN_SHARED}" in soup.get_text()  # what is held back says so


def test_manual_cells_are_rated_over_graded_answers_only(small):
    report, files = small
    pending = [c for c in report.cells if c.pending]
    assert pending, "the synthetic class leaves written answers awaiting grading"
    soup = _soup(files.instructor)
    for c in pending:
        tr = soup.select_one(f'#item-table tr[data-grade-id="{c.info.grade_id}"]')
        rate = tr.select("td")[5].get_text(" ", strip=True)
        assert f"채점 대기 {len(c.pending)}" in rate
        if c.graded:
            assert rate.startswith(f"{100 * c.full / c.graded:.0f}%")  # over the graded answers
        else:
            assert rate.startswith("–") and "low" not in tr.select("td")[5].get("class", [])
        assert len(c.points) == c.graded and c.handed_in == c.graded + len(c.pending)


def _lum(hex_color: str) -> float:
    h = hex_color.lstrip("#")
    if len(h) == 3:
        h = "".join(ch * 2 for ch in h)
    rgb = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(fg: str, bg: str) -> float:
    a, b = sorted((_lum(fg), _lum(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def _rule(css: str, selector: str) -> dict:
    m = re.search(re.escape(selector) + r"\s*\{([^}]*)\}", css)
    assert m, selector
    return dict((k.strip(), v.strip()) for k, v in (d.split(":", 1) for d in m.group(1).split(";") if ":" in d))


def test_labels_are_readable():
    from autograder.grade.safe_feedback import PAGE_CSS
    from autograder.reporting import class_report_html

    TEMPLATE = (Path(class_report_html.__file__).parent / "class_report.html.j2").read_text(encoding="utf-8")

    assert contrast("#9a6700", "#337ab7") < 1.1  # the old feedback label on nbgrader's answer bar (1.07:1)
    label = _rule(PAGE_CSS, ".gl-pending")
    # its own background: readable on the answer bar (panel-primary, #337ab7) and on white alike
    assert contrast(label["color"], label["background"]) >= 4.5
    for sel in (".pending", ".muted", ".low"):
        rule = _rule(TEMPLATE, sel)
        bg = rule.get("background", "#ffffff")
        assert contrast(rule["color"], bg) >= 4.5, (sel, contrast(rule["color"], bg))
