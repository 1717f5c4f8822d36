"""docs/CONTRACTS.md is what tools/contracts.py writes from the code, so it cannot drift from it."""

from __future__ import annotations

from pathlib import Path

import contracts

ROOT = Path(__file__).resolve().parent.parent


def test_committed_contracts_are_current():
    committed = (ROOT / "docs" / "CONTRACTS.md").read_text(encoding="utf-8")
    assert committed == contracts.render(), "docs/CONTRACTS.md is out of date: run .venv/bin/python -m tools.contracts"


def test_contracts_cover_the_kernels_grading_and_commands():
    text = contracts.render()
    for needle in ("`best_matmul(", "`hinted_matmul(", "`splitk_matmul(", "`fp8_matmul(", "`compile_artifacts(",
                   "`check_matmul(", "`tile_grid(", "### `autograde`", "`--jobs`"):
        assert needle in text, needle


def test_check_names_a_stale_file_in_one_line(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "CONTRACTS.md"
    stale.write_text("# old\n", encoding="utf-8")
    monkeypatch.setattr(contracts, "OUT", stale)
    assert contracts.main(["--check"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "out of date" in err[0] and "tools.contracts" in err[0]
    assert stale.read_text(encoding="utf-8") == "# old\n"  # --check writes nothing
