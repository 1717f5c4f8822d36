"""The table of review-finding codes (gemm_lab/grading/audit/findings.py) is the only one, and it is complete:
every code a detector can report is in it under that detector, and every code in it is reported somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from gemm_lab.grading.audit import findings, scan

ROOT = Path(__file__).resolve().parent.parent
DETECTOR_FILES = {
    "scan": ROOT / "gemm_lab" / "grading" / "audit" / "scan.py",
    "verdict": ROOT / "autograder" / "grade" / "review.py",
}
TABLES = {"scan": findings.SCAN_TEXT, "verdict": findings.VERDICT_TEXT}
# ("CODE", detail) / return "CODE", detail in the scan, f"CODE: {FLAG_TEXT['CODE']}" in the verdict
_EMITTED = re.compile(r"""(?:\(|return )"([A-Z_]+)", |f"([A-Z_]+): \{FLAG_TEXT""")


def _emitted(path: Path) -> set[str]:
    return {next(g for g in m.groups() if g) for m in _EMITTED.finditer(path.read_text(encoding="utf-8"))}


def test_codes_are_unique_and_every_one_has_korean_text():
    assert len(findings.FLAG_TEXT) == sum(len(t) for t in TABLES.values())
    for code, text in findings.FLAG_TEXT.items():
        assert re.fullmatch(r"[A-Z_]+", code) and re.search(r"[가-힣]", text), code


def test_every_reported_code_is_in_the_table_under_its_detector():
    emitted = {d: _emitted(p) for d, p in DETECTOR_FILES.items()}
    tables = (scan._IMPORTS, scan._MODULE_CALLS, scan._BUILTIN_CALLS)
    emitted["scan"] |= {code for table in tables for code in table.values()}
    assert emitted == {d: set(t) for d, t in TABLES.items()}


def test_the_scan_uses_the_table():
    assert scan.FLAG_TEXT is findings.FLAG_TEXT
