"""Which Triton versions the course runs on: `make compat` (maintainers; CI keeps one version).

    python tools/compat.py 3.4.0 3.5.1 3.6.0 3.7.1 [--out build/compat] [--numpy 2.3.5]

For each triton version: a venv of its own under build/compat/triton-<version> with torch 2.13.0 (the
CPU build, which does not depend on triton) and the course's other pinned runtime packages, this
clone on PYTHONPATH, and four checks, each a subprocess:

* calc      the calculator tests (tests/test_calc_*.py; test_calc_smem asks the compiler too)
* kernels   the kernel tests under the CPU interpreter (tests/test_kernels_{vector_add,softmax,matmul,persistent}.py)
* compile   gemm_lab.compile.compile_artifacts for matmul and softmax, cross-compiled for sm_75, sm_80, sm_90
* notebooks one master per week run as a student (tools/student_run.py): week06/01, week07/04

Writes <out>/compat.csv (version, check, status, seconds, detail) and <out>/compat.md (the README table)
and prints the table. A failing check keeps its last error line as the detail.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ("torch", "numpy", "pandas", "matplotlib", "ipywidgets", "ipykernel", "nbclient", "pytest",
           "pytest-timeout", "hypothesis")
KERNEL_TESTS = [f"tests/test_kernels_{n}.py" for n in ("vector_add", "softmax", "matmul", "persistent")]
NOTEBOOKS = ["source/week06/01_block_model.ipynb", "source/week07/04_compile_pipeline.ipynb"]
COMPILE_SCRIPT = """
from gemm_lab import compile as gc
from gemm_lab.calc.roofline import BLOG_CONFIG
for target in ("sm_75", "sm_80", "sm_90"):
    art = gc.compile_artifacts("matmul", BLOG_CONFIG, target=target)
    row = gc.compile_artifacts("softmax", {"BLOCK_SIZE": 1024}, target=target)
    assert art.ptx and art.ttgir and row.ptx, target
    print(target, "matmul shared", art.shared, "B; softmax shared", row.shared, "B")
"""


def pins() -> dict[str, str]:
    course = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["course"]
    return {req.partition("==")[0].strip().lower(): req for req in course}


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if any(word in ln for word in ("Error", "error", "FAILED", "failed", "assert")):
            return ln[:300]
    return lines[-1][:300] if lines else ""


def _run(cmd: list[str], env: dict, timeout: int = 1200) -> tuple[str, float, str]:
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "fail", time.perf_counter() - start, f"timed out after {timeout} s"
    seconds = time.perf_counter() - start
    out = proc.stdout + proc.stderr
    return ("ok" if proc.returncode == 0 else "fail"), seconds, _last_line(out)


def check_version(version: str, out: Path, numpy: str | None = None) -> list[dict]:
    venv = out / (f"triton-{version}" + (f"-numpy-{numpy}" if numpy else ""))
    python = venv / "bin" / "python"
    rows = []
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    p = pins()
    if numpy:  # another numpy than the course pin (triton <= 3.6's interpreter and numpy >= 2.4 disagree)
        p["numpy"] = f"numpy=={numpy}"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", f"triton=={version}",
                              *(p[name] for name in RUNTIME)], capture_output=True, text=True)
    if install.returncode != 0:
        return [{"version": version + (f" (numpy {numpy})" if numpy else ""), "check": "install", "status": "fail", "seconds": 0,
                 "detail": _last_line(install.stderr)}]
    env = {k: v for k, v in os.environ.items() if k not in ("GEMM_LAB_GRADING", "VIRTUAL_ENV")}
    env |= {"PYTHONPATH": str(ROOT), "PATH": os.pathsep.join([str(venv / "bin"), env.get("PATH", "")]),
            "TRITON_CACHE_DIR": str(venv / "triton-cache")}
    found = subprocess.run([str(python), "-c", "import torch, triton; print(torch.__version__, triton.__version__)"],
                           capture_output=True, text=True, env=env).stdout.strip()
    pytest = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout=900"]
    checks = {
        "calc": pytest + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_calc_*.py")),
        "kernels": pytest + KERNEL_TESTS,
        "compile": [str(python), "-c", COMPILE_SCRIPT],
        "notebooks": [str(python), str(ROOT / "tools" / "student_run.py"), "--json", str(venv / "notebooks.json"),
                      *NOTEBOOKS],
    }
    scratch = venv / "notebooks"  # run copies: a notebook writes beside itself, never into source/
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    checks["notebooks"][4:] = [str(Path(shutil.copy(ROOT / nb, scratch / Path(nb).name))) for nb in NOTEBOOKS]
    for name, cmd in checks.items():
        status, seconds, detail = _run(cmd, env)
        if name == "notebooks" and (venv / "notebooks.json").exists():
            reports = json.loads((venv / "notebooks.json").read_text())
            errors = [f"{Path(r['notebook']).stem} cell {e['cell']}: {e['ename']}: {e['evalue'][:150]}"
                      for r in reports for e in r["errors"]]
            status = "ok" if status == "ok" and not errors else "fail"
            detail = "; ".join(errors[:2]) or detail
        rows.append({"version": version + (f" (numpy {numpy})" if numpy else ""), "check": name, "status": status, "seconds": round(seconds, 1),
                     "detail": detail if status == "fail" else (found if name == "calc" else "")})
        print(f"triton {version} {name}: {status} ({seconds:.0f} s) {rows[-1]['detail'][:200]}", flush=True)
    return rows


def table(rows: list[dict]) -> str:
    versions = list(dict.fromkeys(r["version"] for r in rows))
    checks = list(dict.fromkeys(r["check"] for r in rows))
    cell = {(r["version"], r["check"]): r for r in rows}
    lines = ["| triton | " + " | ".join(checks) + " |", "| --- |" + " --- |" * len(checks)]
    for v in versions:
        parts = []
        for c in checks:
            r = cell.get((v, c))
            parts.append("—" if r is None else ("✅" if r["status"] == "ok" else "❌") + f" {r['seconds']:.0f} s")
        lines.append(f"| {v} | " + " | ".join(parts) + " |")
    notes = [f"- triton {r['version']} {r['check']}: {r['detail']}" for r in rows if r["status"] != "ok"]
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("versions", nargs="+")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "compat")
    ap.add_argument("--numpy", help="numpy version instead of the course pin")
    args = ap.parse_args(argv)
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for version in args.versions:
        rows += check_version(version, args.out, args.numpy)
        with open(args.out / "compat.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=["version", "check", "status", "seconds", "detail"])
            writer.writeheader()
            writer.writerows(rows)
        (args.out / "compat.md").write_text(table(rows))
    print(table(rows))
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
