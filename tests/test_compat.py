"""`make compat`'s pure logic: version sets, the index's answer, warning diffs, instruction markers, the table.

Nothing here installs, asks the network or compiles (tools/compat.py does that; `make compat` runs it).
"""

from __future__ import annotations

from pathlib import Path

import compat
import compat_sets as cs
import pytest

ROOT = Path(__file__).resolve().parents[1]

PINS = {"torch": "2.13.0", "triton": "3.7.1", "numpy": "2.4.6", "pandas": "3.1.1", "matplotlib": "3.11.2",
        "ipywidgets": "8.1.9", "ipykernel": "7.4.0", "nbclient": "0.11.0", "pytest": "9.2.0",
        "pytest-timeout": "2.4.0", "hypothesis": "6.170.17"}
INDEX = {
    "triton": "3.9.0, 3.8.0, 3.7.1, 3.7.0, 3.6.0, 3.5.1, 3.5.0, 3.4.0, 2.3.1".split(", "),
    "numpy": "2.4.6, 2.4.5, 2.3.5, 2.2.6, 2.1.3, 2.1.2, 2.1.0, 1.26.4".split(", "),
    "ipywidgets": "8.1.9, 8.1.8, 7.8.5, 7.7.5, 7.7.2, 7.7.1, 7.7.0".split(", "),
}
PIP_INDEX_OUTPUT = """WARNING: Location 'file:///opt/pypi-more/simple/triton/' is ignored: it is neither a file nor a directory.
triton (3.9.0)
Available versions: 3.9.0, 3.8.0, 3.7.1, 3.7.0, 3.6.0
  INSTALLED: 3.7.1
  LATEST:    3.9.0
"""


def _index(asked: list | None = None):
    def available(pkg):
        if asked is not None:
            asked.append(pkg)
        return INDEX[pkg]
    return available


def test_default_sets_resolve_to_colab_pins_newest_38_and_newest():
    sets = [cs.parse_set(s) for s in compat.DEFAULT_SETS]
    asked: list[str] = []
    resolved = cs.resolve(sets, PINS, _index(asked))
    assert [r.names for r in resolved] == [("colab",), ("pinned",), ("3.8",), ("newest",)]
    colab, pinned, v38, newest = (r.versions for r in resolved)
    assert (colab["triton"], colab["numpy"], colab["ipywidgets"]) == ("3.6.0", "2.1.3", "7.7.1")
    assert pinned == {pkg: PINS[pkg] for pkg in cs.RUNTIME}
    assert v38["triton"] == "3.8.0" and newest["triton"] == "3.9.0"
    assert {r.versions["torch"] for r in resolved} == {"2.13.0"}  # torch stays the CPU build everywhere
    assert newest["numpy"] == PINS["numpy"]  # a package the set does not name keeps its course pin
    assert sorted(asked) == ["ipywidgets", "numpy", "triton"]  # the index is asked once per package


def test_a_new_release_in_the_index_is_picked_up_without_editing_the_sets():
    newer = dict(INDEX, triton=["3.10.0", "3.10.0rc1", *INDEX["triton"]])
    resolved = cs.resolve([cs.parse_set("newest:triton")], PINS, newer.__getitem__)
    assert resolved[0].versions["triton"] == "3.10.0"  # 3.10 > 3.9 as versions, not as strings
    only_rc = dict(INDEX, triton=["3.11.0rc1", "3.10.0"])
    assert cs.resolve([cs.parse_set("n:triton>3.10")], PINS, only_rc.__getitem__)[0].versions["triton"] == "3.11.0rc1"


def test_sets_with_the_same_versions_run_once_under_both_names():
    index = dict(INDEX, triton=["3.8.0", "3.7.1"])  # 3.8 is the newest release
    resolved = cs.resolve([cs.parse_set(s) for s in ("pinned", "3.8:triton==3.8.*", "newest:triton",
                                                      "again:triton==3.7.1")], PINS, index.__getitem__)
    assert [r.names for r in resolved] == [("pinned", "again"), ("3.8", "newest")]
    assert resolved[1].label(PINS) == "triton 3.8.0"


def test_label_names_triton_and_every_package_off_its_pin():
    rs = cs.resolve([cs.parse_set("colab:triton==3.6.*,numpy==2.1.*,ipywidgets==7.7.1")], PINS, _index())[0]
    assert rs.label(PINS) == "triton 3.6.0 · numpy 2.1.3 · ipywidgets 7.7.1"
    assert "numpy==2.1.3" in rs.requirements() and "torch==2.13.0" in rs.requirements()


@pytest.mark.parametrize("text, message", [
    ("", "expected NAME"),
    ("a b:triton", "expected NAME"),
    ("x:triton===", "is not a requirement"),
    ("x:torch==2.12.0", "stays at the course pin"),
    ("x:scipy==1.0", "not one of the runtime packages"),
    ("x:triton==3.6.*,triton==3.7.*", "twice"),
])
def test_bad_sets_name_what_is_expected(text, message):
    with pytest.raises(ValueError, match=message):
        cs.parse_set(text)


def test_a_specifier_nothing_matches_lists_what_the_index_has():
    with pytest.raises(ValueError, match=r"no release of triton matches ==4\.0\.\* \(index has: 3\.9\.0, 3\.8\.0"):
        cs.resolve([cs.parse_set("x:triton==4.0.*")], PINS, _index())
    with pytest.raises(ValueError, match="course pins lack"):
        cs.resolve([cs.parse_set("pinned")], {"triton": "3.7.1"}, _index())


def test_pip_index_versions_output_is_parsed_and_garbage_refused():
    assert cs.parse_index_versions(PIP_INDEX_OUTPUT) == ["3.9.0", "3.8.0", "3.7.1", "3.7.0", "3.6.0"]
    with pytest.raises(ValueError, match="Available versions"):
        cs.parse_index_versions("ERROR: No matching distribution found for tritonn")


def test_pins_come_from_the_course_extra():
    pins = compat.course_pins()
    assert pins["torch"] == "2.13.0" and set(cs.RUNTIME) <= set(pins)
    assert cs.pins_from(["torch==2.13.0", "ruff>=0.1", "Pytest_Timeout==2.4.0"]) == {
        "torch": "2.13.0", "pytest-timeout": "2.4.0"}


PYTEST_SUMMARY = """
=============================== warnings summary ===============================
tests/test_kernels_matmul.py::test_matmul_odd_shapes[17-31-9]
  /venv/lib/python3.11/site-packages/triton/runtime/interpreter.py:888: DeprecationWarning: Conversion of an array with ndim > 0 to a scalar is deprecated (Deprecated NumPy 1.25.)
    return int(x)
tests/test_kernels_softmax.py::test_softmax
  /venv/lib/python3.11/site-packages/triton/runtime/interpreter.py:901: DeprecationWarning: Conversion of an array with ndim > 0 to a scalar is deprecated (Deprecated NumPy 1.25.)
"""
NOTEBOOK_STDERR = ("/home/s/.venv/lib/python3.11/site-packages/triton/knobs.py:312: FutureWarning: "
                   "TRITON_DEFAULT_FP_FUSION will default to off in triton 3.10.\n  warnings.warn(\n")


def test_warnings_are_keyed_without_paths_numbers_or_addresses():
    found = cs.warnings_in(PYTEST_SUMMARY)
    assert len(found) == 1  # the same warning from two lines of the interpreter
    (key, line), = found.items()
    assert key.startswith("DeprecationWarning: Conversion of an array") and "/venv" not in key
    assert line.endswith("(Deprecated NumPy 1.25.)")  # the full message is kept for the report
    a = cs.warning_key("UserWarning", "object at 0x7f3a2b1c on /tmp/a/b.py, 12 tiles")
    b = cs.warning_key("UserWarning", "object at 0x55aa on /work/x/b.py, 40 tiles.")
    assert a == b
    assert cs.warning_key("UserWarning", "x") != cs.warning_key("FutureWarning", "x")


def test_new_warnings_are_those_the_pinned_set_did_not_show():
    baseline = cs.warnings_in(PYTEST_SUMMARY)
    newest = cs.warnings_in(PYTEST_SUMMARY + NOTEBOOK_STDERR)
    new = cs.new_warnings(newest, baseline)
    assert list(new.values()) == ["FutureWarning: TRITON_DEFAULT_FP_FUSION will default to off in triton 3.10."]
    assert cs.new_warnings(baseline, newest) == {}
    # the same warning naming another version is not new
    again = cs.warnings_in(NOTEBOOK_STDERR.replace("3.10", "3.11"))
    assert cs.new_warnings(again, newest) == {}


def _row(target, mma, **counts):
    return {"kernel": "matmul", "target": target, "mma": mma, "mma.sync": 0, "wgmma": 0, "fma.rn.f32": 0,
            **counts}


GOOD = [_row("sm_75", "fma", **{"fma.rn.f32": 2048}), _row("sm_80", "mma.sync", **{"mma.sync": 32}),
        _row("sm_90", "wgmma", wgmma=4)]


def test_markers_as_the_cross_compiler_emits_them_pass():
    assert cs.marker_problems(GOOD) == []


def test_markers_name_each_wrong_or_missing_target():
    tensor_core_on_t4 = [_row("sm_75", "mma.sync", **{"mma.sync": 16, "fma.rn.f32": 8}), *GOOD[1:]]
    assert cs.marker_problems(tensor_core_on_t4) == [
        "sm_75: matmul uses 'mma.sync', expected 'fma'", "sm_75: 16 mma.sync lines in the PTX, expected none"]
    no_wgmma = [*GOOD[:2], _row("sm_90", "mma.sync", **{"mma.sync": 32})]
    assert cs.marker_problems(no_wgmma) == ["sm_90: matmul uses 'mma.sync', expected 'wgmma'",
                                            "sm_90: no wgmma in the PTX"]
    assert cs.marker_problems(GOOD[:2]) == ["sm_90: not compiled"]
    hopper_on_ampere = [GOOD[0], _row("sm_80", "wgmma", wgmma=4, **{"mma.sync": 2}), GOOD[2]]
    assert "sm_80: 4 wgmma lines in the PTX, expected none" in cs.marker_problems(hopper_on_ampere)


def _result(names, triton, status="ok", new=None, **versions):
    checks = {"install": {"status": "ok", "summary": ""}}
    checks |= {c: {"status": status if c == "kernels" else "ok", "summary": "1 passed",
                   "detail": "FAILED tests/x.py::t - boom" if status != "ok" else ""}
               for c in ("calc", "kernels", "compile", "notebooks")}
    return {"names": names, "versions": {**PINS, "triton": triton, **versions}, "seconds": 150.0,
            "checks": checks, "new_warnings": new}


def test_table_rows_notes_and_warning_counts():
    results = [_result(["colab"], "3.6.0", numpy="2.1.3"), _result(["pinned"], "3.7.1", new={}),
               _result(["newest"], "3.9.0", status="fail", new={"k": "FutureWarning: fp fusion"})]
    text = cs.table(results, PINS)
    lines = text.splitlines()
    assert lines[0].startswith("| set | versions | calc | kernels | compile | notebooks | time | new warnings |")
    assert "| colab | triton 3.6.0 · numpy 2.1.3 |" in lines[2] and lines[2].endswith("| 2.5 min | — |")
    assert lines[3].endswith("| (baseline) |")
    assert "❌ 1 passed" in lines[4] and lines[4].endswith("| 1 |")
    assert "- newest kernels: FAILED tests/x.py::t - boom" in text
    assert "- newest, new warning: `` FutureWarning: fp fusion ``" in text
    assert "Run on" not in text  # no dates in these records
    results[0]["date"], results[2]["date"] = "2026-12-04", "2026-12-05"
    results[2]["new_warnings"] = {"k": "DeprecationWarning: The `Comm` class is deprecated"}
    text = cs.table(results, PINS)
    assert "\nRun on 2026-12-04 to 2026-12-05.\n" in text
    assert "- newest, new warning: `` DeprecationWarning: The `Comm` class is deprecated ``" in text
    failed_install = _result(["old"], "2.3.1")
    failed_install["checks"] = {"install": {"status": "fail", "summary": "", "detail": "no wheel"}}
    row = cs.table([failed_install], PINS).splitlines()[2]
    assert "❌ install | — | — | —" in row


def test_readme_section_is_replaced_and_a_missing_one_named():
    readme = f"# X\n\nbefore\n{cs.README_START}\nold table\n{cs.README_END}\nafter\n"
    new = cs.replace_section(readme, "| t |\n")
    assert new == f"# X\n\nbefore\n{cs.README_START}\n\n| t |\n\n{cs.README_END}\nafter\n"
    assert cs.replace_section(new, "| t |\n") == new  # idempotent
    with pytest.raises(ValueError, match="no compat section"):
        cs.replace_section("# X\n", "| t |")


def test_report_only_without_stored_results_says_what_to_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(compat, "index_versions", lambda pkg: INDEX[pkg])
    assert compat.main(["--report-only", "--out", str(tmp_path), "pinned"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("compat: no stored result for pinned") and "Traceback" not in err
    assert compat.main(["--out", str(tmp_path), "x:scipy==1"]) == 2
    assert "not one of the runtime packages" in capsys.readouterr().err


def test_the_makefile_runs_the_default_sets():
    makefile = (ROOT / "Makefile").read_text()
    line = next(ln for ln in makefile.splitlines() if ln.startswith("COMPAT_SETS ?="))
    assert line.split("?=", 1)[1].split() == compat.DEFAULT_SETS
    assert [cs.parse_set(s).name for s in compat.DEFAULT_SETS] == ["colab", "pinned", "3.8", "newest"]


def test_an_unknown_revision_is_named_in_one_line(tmp_path, capsys):
    assert compat.main(["--ref", "no-such-revision-xyz", "--out", str(tmp_path), "pinned"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("compat: --ref no-such-revision-xyz:") and "\n" not in err
