"""The student's real path: no repository, only the wheel and the downloaded notebooks.

A fresh virtual environment gets the course's pinned runtime packages (torch 2.13.0 CPU, triton, numpy,
pandas, matplotlib, ipywidgets, ipykernel, nbclient) and the gemm_lab wheel built from this tree. Then
each week's release/ notebooks are copied alone into an empty folder and run top to bottom the way a
student runs them (GEMM_LAB_GRADING unset, tools/student_run.py): the TODO cells fail, every other cell
runs. The masters run the same way and raise nothing; the ungraded labs too (this is the one place the
labs are executed by the suite).

The environment is kept under build/student-venv (rebuilt when the pins change; the wheel is
reinstalled whenever gemm_lab, results/ or the packaging files change), so a repeated run costs only
the notebooks.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import build_notebooks
import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]

VENV = ROOT / "build" / "student-venv"
WHEELS = ROOT / "build" / "student-wheel"
LOCK = ROOT / "build" / "student-venv.lock"
DRY_RUN = WHEELS / "dry-run-report.json"
RUNTIME = ("torch", "triton", "numpy", "pandas", "matplotlib", "ipywidgets", "ipykernel", "nbclient")
WEEKS = sorted(p.name for p in (ROOT / "release").glob("week*") if p.is_dir())
LABS = sorted(p.with_suffix(".ipynb") for p in build_notebooks.masters() if p.parts[-2] == "notebooks")

# Notebooks with a demonstration cell that still fails in the untouched release because of the TODO:
# the cell catches NotImplementedError, but the CPU interpreter wraps the TODO's error in
# triton's InterpreterError. Fix in the master: `except Exception as exc:` and re-raise unless
# "NotImplementedError" is in repr(exc). Only that error is let through, only in these notebooks.
KNOWN_RELEASE_DEFECTS: set[str] = set()  # none left: 01 and 06 recognise the wrapped NotImplementedError


def _pins() -> list[str]:
    course = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["course"]
    by_name = {req.partition("==")[0].strip().lower(): req for req in course}
    return [by_name[name] for name in RUNTIME]


def _digest(paths) -> str:
    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(str(path.relative_to(ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _sources() -> list[Path]:
    files = list((ROOT / "gemm_lab").rglob("*.py")) + list((ROOT / "results").glob("*.csv"))
    return files + [ROOT / "pyproject.toml", ROOT / "setup.py", ROOT / "MANIFEST.in"]


def _pip(python: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "pip", *args], check=True, capture_output=True, text=True, **kw)


def _python() -> Path:
    return VENV / "bin" / "python"


def _ensure_env() -> tuple[Path, Path]:
    """(student python, wheel): create/refresh the environment; callers hold LOCK."""
    pins = _pins()
    pins_key = hashlib.sha256("\n".join([sys.version, *pins]).encode()).hexdigest()[:16]
    marker = VENV / ".pins"
    if not marker.exists() or marker.read_text() != pins_key:
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        _pip(_python(), "install", "-q", *pins)
        marker.write_text(pins_key)
    source_key = _digest(_sources())
    built = WHEELS / ".sources"
    wheels = sorted(WHEELS.glob("gemm_lab-*.whl"))
    if not built.exists() or built.read_text() != source_key or len(wheels) != 1:
        shutil.rmtree(WHEELS, ignore_errors=True)
        WHEELS.mkdir(parents=True)
        _pip(Path(sys.executable), "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(WHEELS), str(ROOT))
        wheels = sorted(WHEELS.glob("gemm_lab-*.whl"))
        # what installing the course package beside an existing torch/triton pair would install
        subprocess.run([str(_python()), "-m", "pip", "uninstall", "-y", "-q", "gemm-lab"], capture_output=True)
        _pip(_python(), "install", "--dry-run", "-q", "--report", str(DRY_RUN), str(wheels[0]))
        _pip(_python(), "install", "-q", "--no-deps", str(wheels[0]))
        built.write_text(source_key)
    return _python(), wheels[0]


@pytest.fixture(scope="module")
def student():
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers share one environment: one builds it
        python, wheel = _ensure_env()
    return python, wheel


def _student_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMM_LAB_GRADING", "PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(VENV / "bin"), env.get("PATH", "")])
    return env


def _run_notebooks(python: Path, notebooks: list[Path], folder: Path) -> list[dict]:
    folder.mkdir(parents=True)
    copies = []
    for nb in notebooks:
        shutil.copy(nb, folder / nb.name)
        copies.append(folder / nb.name)
    report = folder.parent / f"{folder.name}.json"
    subprocess.run([str(python), str(ROOT / "tools" / "student_run.py"), "--timeout", "400", "--json",
                    str(report), *map(str, copies)], cwd=folder, env=_student_env(), check=False,
                   capture_output=True, text=True, timeout=1500)
    assert report.exists(), f"tools/student_run.py wrote no report for {folder.name}"
    return json.loads(report.read_text())


@pytest.mark.slow
def test_wheel_carries_every_committed_results_csv(student):
    _, wheel = student
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"gemm_lab/data/results/{p.name}" for p in (ROOT / "results").glob("*.csv")}
    assert expected and expected <= names


@pytest.mark.slow
def test_installing_the_wheel_keeps_the_preinstalled_torch_and_triton(student):
    # pip's own report, made before the wheel went into the environment (torch and triton already there)
    report = json.loads(DRY_RUN.read_text())
    would = [(i["metadata"]["name"], i["metadata"]["version"]) for i in report["install"]]
    assert would == [("gemm-lab", "0.1.0")], would
    installed = subprocess.run([str(student[0]), "-m", "pip", "list", "--format=json"], capture_output=True,
                               text=True, check=True).stdout
    names = {d["name"].lower() for d in json.loads(installed)}
    assert {"torch", "triton", "gemm-lab"} <= names


@pytest.mark.slow
def test_installed_package_reads_the_h200_results_offline(student, tmp_path):
    python, _ = student
    code = ("import gemm_lab, gemm_lab.results as r; p = r.path('matmul.csv'); "
            "print(p); print(p.is_relative_to(r.PACKAGED)); print(len(r.load_csv('group_order.csv')))")
    env = _student_env() | {"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}
    out = subprocess.run([str(python), "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert "site-packages" in out[0] and out[1] == "True"
    assert Path(out[0]).read_bytes() == (ROOT / "results" / "matmul.csv").read_bytes()
    assert int(out[2]) == len((ROOT / "results" / "group_order.csv").read_text().strip().splitlines()) - 1


@pytest.mark.slow
@pytest.mark.parametrize("blocked", ["torch", "triton"])
def test_setup_cell_prints_one_line_naming_what_is_missing(student, tmp_path, blocked):
    python, _ = student
    source = build_notebooks.setup_source(*build_notebooks.course_settings())
    code = f"import sys; sys.modules[{blocked!r}] = None\n" + source
    out = subprocess.run([str(python), "-c", code], cwd=tmp_path, env=_student_env(), capture_output=True,
                         text=True, check=True)
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1 and blocked in lines[0] and "설치" in lines[0], out.stdout
    # all present: the environment summary, and triton was not imported before gemm_lab.runtime chose
    # the CPU interpreter (a kernel defined after the cell must be an interpreted one on this CPU)
    probe = source + "\nimport triton\nprint(type(triton.jit(lambda x: x)).__name__)"
    ok = subprocess.run([str(python), "-c", probe], cwd=tmp_path, env=_student_env(), capture_output=True,
                        text=True, check=True).stdout
    assert "torch 2.13.0" in ok and "설치되지 않은" not in ok
    assert ok.strip().splitlines()[-1] == "InterpretedFunction", ok


@pytest.mark.slow
@pytest.mark.parametrize("week", WEEKS)
def test_release_notebooks_run_as_a_student_only_todos_fail(student, tmp_path, week):
    python, _ = student
    notebooks = sorted((ROOT / "release" / week).glob("*.ipynb"))
    reports = _run_notebooks(python, notebooks, tmp_path / week)
    problems, known = [], []
    for rep in reports:
        name = Path(rep["notebook"]).stem
        assert rep["status"] == "ok", f"{name}: {rep['status']}"
        has_todo = any(cell.get("metadata", {}).get("nbgrader", {}).get("solution")
                       for cell in json.loads((ROOT / "release" / week / f"{name}.ipynb").read_text())["cells"])
        if has_todo:
            assert any(e["role"] == "solution" for e in rep["errors"]), f"{name}: no TODO cell failed"
        for err in rep["errors"]:
            if err["role"] != "other":
                continue
            line = f"{name} cell {err['cell']}: {err['ename']}: {err['evalue'][:200]}"
            wrapped_todo = err["ename"] == "InterpreterError" and "NotImplementedError" in err["evalue"]
            (known if name in KNOWN_RELEASE_DEFECTS and wrapped_todo else problems).append(line)
    assert not problems, "cells outside the TODOs failed:\n" + "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("week", WEEKS)
def test_masters_run_as_a_student_without_an_error(student, tmp_path, week):
    python, _ = student
    notebooks = sorted((ROOT / "source" / week).glob("*.ipynb"))
    reports = _run_notebooks(python, notebooks, tmp_path / week)
    bad = [f"{Path(r['notebook']).stem}: {r['status']}; " +
           "; ".join(f"cell {e['cell']} ({e['role']}) {e['ename']}: {e['evalue'][:200]}" for e in r["errors"])
           for r in reports if r["status"] != "ok" or r["errors"]]
    assert not bad, "\n".join(bad)


@pytest.mark.slow
def test_lab_notebooks_run_as_a_student_without_an_error(student, tmp_path):
    python, _ = student
    assert LABS, "no lab notebooks"
    reports = _run_notebooks(python, LABS, tmp_path / "labs")
    bad = [f"{Path(r['notebook']).stem}: {r['status']}; {r['errors']}" for r in reports
           if r["status"] != "ok" or r["errors"]]
    assert not bad, "\n".join(bad)
