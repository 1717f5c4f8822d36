"""Built notebooks match their masters, release/ is current and clean, labs execute on a CPU."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import build_notebooks  # noqa: E402

import release  # noqa: E402

LABS = sorted(p for p in build_notebooks.masters() if p.parts[-2] == "notebooks")
ASSIGNMENTS = sorted(p.name for p in (ROOT / "source").glob("week*") if p.is_dir())


def test_every_master_has_a_fresh_built_notebook():
    assert build_notebooks.masters(), "no notebook masters found"
    assert build_notebooks.stale(build_notebooks.masters()) == []


def test_built_notebooks_open_with_badge_and_setup_cell():
    for master in build_notebooks.masters():
        nb = build_notebooks.build(master)
        assert "colab.research.google.com" in nb.cells[0].source
        assert "runtime.check_environment()" in nb.cells[1].source
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


@pytest.mark.slow
def test_release_is_current_and_holds_no_solutions():
    assert ASSIGNMENTS, "no assignments under source/"
    assert release.check(ASSIGNMENTS) == []


@pytest.mark.slow
@pytest.mark.parametrize("master", LABS, ids=[p.stem for p in LABS])
def test_lab_notebook_executes_on_cpu(master):
    # Alone, each lab runs in 10-25 s on 2 cores; inside the parallel suite one run took 250 s
    # (cause not found), so the bound here is a hang guard, not the 2-minute budget of the masters.
    seconds, err = build_notebooks.execute(master.with_suffix(".ipynb"), timeout=300)
    assert err is None, err
    assert seconds < 480, f"{master.name} took {seconds:.0f} s on this CPU"
