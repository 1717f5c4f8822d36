"""Built notebooks match their masters, release/ is current and clean, publishing is one setting.

The notebooks are executed as a student runs them in tests/test_student_path.py (once per kind:
release, master, lab); the nbgrader round trip grades them in tests/test_roundtrip.py."""

from pathlib import Path

import build_notebooks
import pytest

import release

ROOT = Path(__file__).resolve().parents[1]

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


def test_course_setting_is_checked_and_never_a_moving_branch():
    assert build_notebooks.course_url("https://github.com/Org-1/gemm.lab.git") == "https://github.com/Org-1/gemm.lab"
    for bad in ("http://github.com/a/b", "https://gitlab.com/a/b", "github.com/a", ""):
        with pytest.raises(ValueError, match="COURSE_URL"):
            build_notebooks.course_url(bad)
    for ref in ("v0.1.0", "1.2", "v2.0.0-rc1", "0123abc", "f" * 40):
        assert build_notebooks.course_ref(ref) == ref
    for bad in ("main", "master", "HEAD", "dev", "feature/x", ""):
        with pytest.raises(ValueError, match="COURSE_REF"):
            build_notebooks.course_ref(bad)


def test_stamping_the_course_moves_badges_install_line_and_results_url(tmp_path):
    init, readme = tmp_path / "__init__.py", tmp_path / "README.md"
    init.write_text((ROOT / "gemm_lab" / "__init__.py").read_text())
    readme.write_text((ROOT / "README.md").read_text())
    url, ref = build_notebooks.stamp_course("https://github.com/my-org/my-course", "v9.8.7", init=init,
                                            readme=readme)
    assert (url, ref) == build_notebooks.course_settings(init) == ("https://github.com/my-org/my-course", "v9.8.7")
    links = build_notebooks._COLAB_RE.findall(readme.read_text())
    assert links and set(links) == {"https://colab.research.google.com/github/my-org/my-course/blob/v9.8.7/"}
    assert "git+https://github.com/my-org/my-course@v9.8.7" in build_notebooks.setup_source(url, ref)
    namespace = {}
    exec(init.read_text(), namespace)
    assert (namespace["COURSE_URL"], namespace["COURSE_REF"]) == (url, ref)
    with pytest.raises(ValueError, match="COURSE_REF"):
        build_notebooks.stamp_course(None, "main", init=init, readme=readme)
    assert build_notebooks.course_settings(init)[1] == "v9.8.7"


def test_the_committed_notebooks_install_the_pinned_course_package():
    url, ref = build_notebooks.course_settings()
    for master in build_notebooks.masters():
        nb = build_notebooks.build(master)
        assert f"/blob/{ref}/" in nb.cells[0].source
        assert build_notebooks.install_requirement(url, ref) in nb.cells[1].source
    assert build_notebooks.stale_readme() == []
