"""Build the course notebooks from their jupytext percent-script masters.

Every ``source/<assignment>/*.py`` and ``notebooks/*.py`` that carries a jupytext header is turned
into the ``.ipynb`` beside it: no outputs, deterministic cell ids, and two cells prepended — a
Colab badge and a locked set-up cell that installs gemm_lab when it is missing (Colab, Kaggle, a
laptop without the repo) and checks the environment. The ``.py`` is the file people edit; the
``.ipynb`` is generated and committed (nbgrader and Colab need it).

Where the course is published is one setting, ``COURSE_URL`` and ``COURSE_REF`` in
``gemm_lab/__init__.py``; ``--course-url``/``--course-ref`` rewrite it (``make release
COURSE_URL=https://github.com/<org>/<repo> COURSE_REF=<tag or commit>``) and the badges, the
install line, the README's badges and the results refresh URL follow.

    python tools/build_notebooks.py                 # build all
    python tools/build_notebooks.py --check         # exit 1 if a committed .ipynb is stale
    python tools/build_notebooks.py --execute F.py  # build F, run it in a scratch dir, report
    python tools/build_notebooks.py --course-url https://github.com/org/repo --course-ref v0.2.0
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
INIT = ROOT / "gemm_lab" / "__init__.py"
README = ROOT / "README.md"
_URL_RE = re.compile(r"https://github\.com/([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9._-]+?)(?:\.git)?/?")
# a tag that names a version (v1.2, 0.3.0, v1.0.0-rc1) or a commit (7 to 40 hex digits)
_REF_RE = re.compile(r"(v?\d+(\.\d+)*([-.+][A-Za-z0-9.]+)?|[0-9a-f]{7,40})")
_SETTING_RE = r'^{name} = "([^"]*)"$'
_COLAB_RE = re.compile(r"https://colab\.research\.google\.com/github/[^)\s]+?/blob/[^/)\s]+/")


def course_url(url: str) -> str:
    """``url`` checked and normalised to https://github.com/<org>/<repo>."""
    m = _URL_RE.fullmatch(url.strip()) if isinstance(url, str) else None
    if not m:
        raise ValueError(f"COURSE_URL must look like https://github.com/<org>/<repo>, got {url!r}")
    return f"https://github.com/{m.group(1)}/{m.group(2)}"


def course_ref(ref: str) -> str:
    """``ref`` checked: a version tag or a commit hash, never a moving branch such as main."""
    if not isinstance(ref, str) or not _REF_RE.fullmatch(ref.strip()):
        raise ValueError(f"COURSE_REF must be a version tag (v0.1.0) or a commit hash, not a branch; got {ref!r}")
    return ref.strip()


def course_settings(init: Path = INIT) -> tuple[str, str]:
    """(COURSE_URL, COURSE_REF) as written in gemm_lab/__init__.py."""
    text = init.read_text(encoding="utf-8")
    found = []
    for name in ("COURSE_URL", "COURSE_REF"):
        m = re.search(_SETTING_RE.format(name=name), text, flags=re.M)
        if not m:
            raise ValueError(f"{init}: no line {name} = \"...\"")
        found.append(m.group(1))
    return course_url(found[0]), course_ref(found[1])


def stamp_course(url: str | None = None, ref: str | None = None, init: Path = INIT,
                 readme: Path = README) -> tuple[str, str]:
    """Write a new COURSE_URL/COURSE_REF into gemm_lab/__init__.py and the README's Colab badges."""
    old_url, old_ref = course_settings(init)
    url = course_url(url) if url else old_url
    ref = course_ref(ref) if ref else old_ref
    text = init.read_text(encoding="utf-8")
    for name, value in (("COURSE_URL", url), ("COURSE_REF", ref)):
        text = re.sub(_SETTING_RE.format(name=name), f'{name} = "{value}"', text, count=1, flags=re.M)
    init.write_text(text, encoding="utf-8")
    if readme.exists():
        readme.write_text(_COLAB_RE.sub(colab_prefix(url, ref), readme.read_text(encoding="utf-8")),
                          encoding="utf-8")
    return url, ref


def colab_prefix(url: str, ref: str) -> str:
    return f"https://colab.research.google.com/github/{url.removeprefix('https://github.com/')}/blob/{ref}/"


def install_requirement(url: str, ref: str) -> str:
    """The pip requirement of the set-up cell: the course's package at a fixed tag or commit."""
    return f"gemm-lab @ git+{url}@{ref}"


def setup_source(url: str, ref: str) -> str:
    """The locked set-up cell: install gemm_lab only when it is missing, never touch torch/triton."""
    return SETUP_TEMPLATE.replace("{requirement}", install_requirement(url, ref))


SETUP_TEMPLATE = '''\
# 환경 설정 (수정하지 마세요): gemm_lab이 없으면 설치하고(Colab/Kaggle), 실행 환경을 점검합니다.
# gemm_lab은 numpy/pandas/matplotlib만 요구하므로 Colab에 설치된 torch/triton은 바꾸지 않습니다.
import importlib.util
import subprocess
import sys


def _installed(name):  # looks for the package without importing it (runtime must load before triton)
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


if not _installed("gemm_lab"):
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "{requirement}"])
    importlib.invalidate_caches()
_missing = [name for name in ("gemm_lab", "torch", "triton") if not _installed(name)]
if _missing:
    print("설치되지 않은 패키지: " + ", ".join(_missing) + " — 설치한 뒤 커널을 다시 시작하세요 (README 참고).")
else:
    from gemm_lab import runtime

    runtime.check_environment();'''


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
    url, ref = course_settings()
    badge = (
        f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        f"({colab_prefix(url, ref)}{release_path(master)})"
    )
    badge_cell = nbformat.v4.new_markdown_cell(badge)
    setup_cell = nbformat.v4.new_code_cell(setup_source(url, ref))
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


def stale_readme(readme: Path = README) -> list[str]:
    """README Colab badges that do not point at COURSE_URL/COURSE_REF."""
    prefix = colab_prefix(*course_settings())
    links = set(_COLAB_RE.findall(readme.read_text(encoding="utf-8")))
    return [f"README.md: {link}" for link in sorted(links) if link != prefix]


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
    ap.add_argument("--course-url", default="", help="https://github.com/<org>/<repo> (stamped first)")
    ap.add_argument("--course-ref", default="", help="tag or commit the notebooks install (stamped first)")
    args = ap.parse_args(argv)
    if args.course_url or args.course_ref:
        try:
            url, ref = stamp_course(args.course_url or None, args.course_ref or None)
        except ValueError as exc:  # a refused COURSE_URL/COURSE_REF: one line, nothing stamped
            print(f"error: {exc} (make release COURSE_REF=v0.2.0 or a commit hash)", file=sys.stderr)
            return 2
        print(f"course: {url} @ {ref} (gemm_lab/__init__.py, README badges)")
    paths = [p.resolve() for p in args.paths] or masters()
    if args.check:
        bad = stale(paths) + stale_readme()
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
