"""The table of review-finding codes (gemm_lab/grading/audit/findings.py) is the only one, and it is complete:
every code a detector can report is in it under that detector, and every code in it is reported somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from gemm_lab.grading.audit import findings, scan

ROOT = Path(__file__).resolve().parent.parent
DETECTOR_FILES = {
    findings.SCAN: ROOT / "gemm_lab" / "grading" / "audit" / "scan.py",
    findings.VERDICT: ROOT / "autograder" / "grade" / "review.py",
}
# ("CODE", detail) / return "CODE", detail in the scan, f"CODE: {FLAG_TEXT['CODE']}" in the verdict
_EMITTED = re.compile(r"""(?:\(|return )"([A-Z_]+)", |f"([A-Z_]+): \{FLAG_TEXT""")


def _emitted(path: Path) -> set[str]:
    return {next(g for g in m.groups() if g) for m in _EMITTED.finditer(path.read_text(encoding="utf-8"))}


def test_codes_are_unique_and_every_one_has_korean_text_and_a_known_detector():
    codes = [f.code for f in findings.FINDINGS]
    assert len(codes) == len(set(codes))
    for f in findings.FINDINGS:
        assert re.fullmatch(r"[A-Z_]+", f.code) and re.search(r"[가-힣]", f.text), f
        assert f.detector in DETECTOR_FILES, f
    assert findings.FLAG_TEXT == {f.code: f.text for f in findings.FINDINGS}


def test_every_reported_code_is_in_the_table_under_its_detector():
    emitted = {d: _emitted(p) for d, p in DETECTOR_FILES.items()}
    tables = (scan._IMPORTS, scan._MODULE_CALLS, scan._BUILTIN_CALLS)
    emitted[findings.SCAN] |= {code for table in tables for code in table.values()}
    table = {d: {f.code for f in findings.FINDINGS if f.detector == d} for d in DETECTOR_FILES}
    assert emitted == table


def test_the_scan_uses_the_table():
    assert scan.FLAG_TEXT is findings.FLAG_TEXT
