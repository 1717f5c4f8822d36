"""Build the course notebooks from their jupytext percent-script masters.

Every ``source/<assignment>/*.py`` and ``notebooks/*.py`` that carries a jupytext header is turned
into the ``.ipynb`` beside it: no outputs, deterministic cell ids, and two cells prepended — a
Colab badge and a locked set-up cell that installs gemm_lab on Colab/Kaggle and checks the
environment. The ``.py`` is the file people edit; the ``.ipynb`` is generated and committed
(nbgrader and Colab need it).

    python tools/build_notebooks.py                 # build all
    python tools/build_notebooks.py --check         # exit 1 if a committed .ipynb is stale
    python tools/build_notebooks.py --execute F.py  # build F, run it in a scratch dir, report
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from gemm_lab import REPO_URL  # noqa: E402

GITHUB_PATH = REPO_URL.removeprefix("https://github.com/")

SETUP_SOURCE = '''\
# 환경 설정 (수정하지 마세요): Colab/Kaggle에서는 gemm_lab을 설치하고, 어디서든 실행 환경을 점검합니다.
import os
import subprocess
import sys

if "google.colab" in sys.modules or "KAGGLE_KERNEL_RUN_TYPE" in os.environ:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                    "gemm-lab @ git+{url}"], check=True)

from gemm_lab import runtime

runtime.check_environment();'''.format(url=REPO_URL)


def masters(root: Path = ROOT) -> list[Path]:
    """All jupytext masters of the repository, sorted."""
    found = []
    for pattern in ("source/*/*.py", "notebooks/*.py"):
        for path in sorted(root.glob(pattern)):
            head = path.read_text(encoding="utf-8")[:400]
            if "jupytext" in head and "# %%" in path.read_text(encoding="utf-8"):
                found.append(path)
    return found


def release_path(master: Path) -> str:
    """Where the student opens this notebook on GitHub (release/ for assignments)."""
    rel = master.relative_to(ROOT).with_suffix(".ipynb")
    if rel.parts[0] == "source":
        rel = Path("release", *rel.parts[1:])
    return rel.as_posix()


def _cell_id(index: int, source: str) -> str:
    return hashlib.sha1(f"{index}:{source}".encode()).hexdigest()[:12]


def build(master: Path) -> nbformat.NotebookNode:
    """The notebook built from one master (not written)."""
    nb = jupytext.read(master, fmt="py:percent")
    is_assignment = master.relative_to(ROOT).parts[0] == "source"
    badge = (
        f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        f"(https://colab.research.google.com/github/{GITHUB_PATH}/blob/main/{release_path(master)})"
    )
    badge_cell = nbformat.v4.new_markdown_cell(badge)
    setup_cell = nbformat.v4.new_code_cell(SETUP_SOURCE)
    if is_assignment:
        badge_cell.metadata["nbgrader"] = {
            "grade": False, "grade_id": "colab_badge", "locked": True,
            "schema_version": 3, "solution": False, "task": False,
        }
        setup_cell.metadata["nbgrader"] = {
            "grade": False, "grade_id": "environment_setup", "locked": True,
            "schema_version": 3, "solution": False, "task": False,
        }
    cells = [badge_cell, setup_cell] + list(nb.cells)
    for i, cell in enumerate(cells):
        cell.id = _cell_id(i, cell.source)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    out = nbformat.v4.new_notebook()
    out.cells = cells
    out.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    out.nbformat, out.nbformat_minor = 4, 5
    return out


def dumps(nb: nbformat.NotebookNode) -> str:
    return json.dumps(nb, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def write(master: Path) -> Path:
    target = master.with_suffix(".ipynb")
    text = dumps(build(master))
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
    return target


def stale(paths: list[Path]) -> list[str]:
    """Masters whose committed .ipynb differs from a fresh build (or is missing)."""
    bad = []
    for master in paths:
        target = master.with_suffix(".ipynb")
        if not target.exists() or target.read_text(encoding="utf-8") != dumps(build(master)):
            bad.append(str(target.relative_to(ROOT)))
    return bad


def execute(notebook: Path, timeout: int = 600) -> tuple[float, str | None]:
    """Run a copy of ``notebook`` in a scratch dir; return (seconds, first error or None)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(notebook, as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(notebook, tmp)
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": tmp}})
        start = time.perf_counter()
        try:
            client.execute()
            err = None
        except CellExecutionError as exc:
            err = str(exc)[-3000:]
        return time.perf_counter() - start, err


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", type=Path, help="masters (.py); default: all")
    ap.add_argument("--check", action="store_true", help="fail if a built .ipynb is stale")
    ap.add_argument("--execute", action="store_true", help="also execute the built notebooks")
    args = ap.parse_args(argv)
    paths = [p.resolve() for p in args.paths] or masters()
    if args.check:
        bad = stale(paths)
        for b in bad:
            print(f"stale: {b} (run `make notebooks`)")
        return 1 if bad else 0
    status = 0
    for master in paths:
        target = write(master)
        print(f"built {target.relative_to(ROOT)}")
        if args.execute:
            seconds, err = execute(target)
            print(f"  executed in {seconds:.1f} s" + ("" if err is None else " — FAILED"))
            if err:
                print(err)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
