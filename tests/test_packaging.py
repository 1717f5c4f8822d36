"""The project's own files install everything, with exact pins that agree everywhere."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_pins() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pins = {}
    for req in data["project"]["optional-dependencies"]["course"]:
        name, _, version = req.partition("==")
        assert version, f"course requirement {req!r} is not an exact pin"
        pins[name.strip().lower()] = version.strip()
    return pins


def _environment_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.match(r"\s*-\s+([A-Za-z0-9_.-]+)==([^\s#]+)", line)
        if m:
            pins[m.group(1).lower()] = m.group(2)
    return pins


def test_environment_yml_lists_the_same_pins_as_pyproject():
    assert _environment_pins() == _pyproject_pins()


def test_torch_is_pinned_to_the_cpu_build_on_disk():
    pins = _pyproject_pins()
    assert pins["torch"] == "2.13.0"
    assert re.fullmatch(r"3\.\d+\.\d+", pins["triton"]), "one exact triton 3.x"


def test_course_pins_cover_the_required_tools():
    required = {"torch", "triton", "nbgrader", "jupyterlab", "jupytext", "matplotlib", "pandas",
                "ipywidgets", "pytest", "hypothesis", "ruff"}
    assert required <= set(_pyproject_pins())


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make demo" in readme


def test_make_help_lists_the_workflows():
    out = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    for target in ("demo", "test", "release", "collect", "autograde", "feedback", "grades",
                   "bench", "lab", "lint", "clean"):
        assert f"make {target} " in out, target


def test_importing_calc_does_not_import_torch_or_triton():
    code = ("import gemm_lab.calc, sys; "
            "assert 'torch' not in sys.modules and 'triton' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_results_come_from_local_folders_and_the_network_only_when_asked(tmp_path, monkeypatch):
    import gemm_lab
    from gemm_lab import results

    (tmp_path / "mine.csv").write_text("a,b\n1,2\n")
    monkeypatch.setenv(results.ENV, str(tmp_path))
    assert results.results_dir() == tmp_path
    assert results.load_csv("mine.csv").to_dict("records") == [{"a": 1, "b": 2}]
    fetched = []
    monkeypatch.setattr(results, "_fetch", lambda name: fetched.append(name))
    assert results.path("matmul.csv") is not None and fetched == []  # the clone's results/
    assert results.path("no_such_file.csv") is None and fetched == []
    results.path("no_such_file.csv", download=True)
    results.path("matmul.csv", refresh=True)
    assert fetched == ["no_such_file.csv", "matmul.csv"]
    assert results.refresh_url("x.csv") == (gemm_lab.COURSE_URL.replace("github.com", "raw.githubusercontent.com")
                                            + f"/{gemm_lab.COURSE_REF}/results/x.csv")
    for bad in ("", "/etc/passwd", "../x.csv", None):
        with pytest.raises(ValueError, match="name"):
            results.path(bad)
