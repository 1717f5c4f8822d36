"""Do the course's notebooks, calculators and kernels run on the versions students really have? `make compat`.

    python tools/compat.py [SET ...] [--out build/compat] [--ref REV] [--readme README.md] [--report-only]

A SET is ``NAME[:REQ,...]`` (tools/compat_sets.py): ``pinned`` is the course pins, ``colab:triton==3.6.*,
numpy==2.1.*,ipywidgets==7.7.*`` Colab's pairing, ``newest:triton`` the newest triton in the package
index. Specifiers are resolved with ``pip index versions`` when compat runs; every package a set does
not name keeps its course pin, and torch stays the pinned CPU build (it does not depend on triton).
Sets that resolve to the same versions run once.

The checks run on a snapshot taken when compat starts (<out>/src: the working tree's tracked and
untracked-but-not-ignored files, or ``--ref REV``'s tree), so edits made meanwhile and stale build
outputs stay out. Each set gets a venv of its own under <out>/<set>/venv (kept while its versions stay
the same) with the gemm_lab wheel built from the snapshot, and runs, one after the other:

* calc      the calculator tests (tests/test_calc_*.py; test_calc_smem asks the compiler too)
* kernels   every kernel test under the CPU interpreter (tests/test_kernels_*.py, GPU-only tests deselected)
* compile   matmul and softmax cross-compiled for sm_75/80/90; the matmul's PTX must use FMA on sm_75,
            mma.sync on sm_80 and wgmma on sm_90 (compat_sets.EXPECTED_MARKERS)
* notebooks all 11 notebooks (the masters of both weeks and the two labs) run as a student by
            tools/student_run.py: copied out of the repository, no GEMM_LAB_GRADING, gemm_lab from the wheel;
            any error fails the set

Every ``...Warning:`` line the checks print (pytest's warnings summary, a notebook's stderr) is collected,
and the ones the pinned set did not show are listed as new. Writes <out>/<set>/result.json per set,
<out>/compat.json and <out>/compat.md (the table), and with --readme the README's compat section.
``--report-only`` rebuilds the table from the stored results without running anything.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import compat_sets as cs  # beside this file: sys.path[0] when run as a script
import tomllib

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SETS = ["colab:triton==3.6.*,numpy==2.1.*,ipywidgets==7.7.1", "pinned", "3.8:triton==3.8.*",
                "newest:triton"]
NOTEBOOK_GROUPS = {"week06": "source/week06", "week07": "source/week07", "labs": "notebooks"}
COMPILE_SCRIPT = """
import json
from gemm_lab import compile as gc
from gemm_lab.calc.roofline import BLOG_CONFIG
rows = []
for target in ("sm_75", "sm_80", "sm_90"):
    rows.append(gc.compile_artifacts("matmul", BLOG_CONFIG, target=target).summary())
    soft = gc.compile_artifacts("softmax", {"BLOCK_SIZE": 1024}, target=target)
    assert soft.ptx and soft.shared >= 0, target
print("COMPAT-ROWS " + json.dumps(rows, default=str))
"""
LIMITS = {"install": 1800, "calc": 1200, "kernels": 2400, "compile": 900, "notebooks": 3600}


def course_pins() -> dict[str, str]:
    course = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["course"]
    return cs.pins_from(course)


def index_versions(pkg: str) -> list[str]:
    """The index's versions of ``pkg`` for this interpreter (`pip index versions`, as a student's pip sees them)."""
    proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", pkg], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"compat: cannot ask the package index for {pkg}'s versions: "
                         f"{(proc.stderr.strip().splitlines() or ['no answer'])[-1]}. Check the network or pip's index.")
    return cs.parse_index_versions(proc.stdout)


def _nice():
    os.nice(10)  # a shared machine: the checks run behind everyone else's work


def _run(cmd: list[str], env: dict, cwd: Path, timeout: int) -> tuple[int, float, str]:
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=_nice)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return 124, time.perf_counter() - start, out + f"\ntimed out after {timeout} s"
    return proc.returncode, time.perf_counter() - start, proc.stdout + proc.stderr


def _last_error(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    failed = [ln for ln in lines if ln.startswith(("FAILED ", "ERROR "))]  # pytest -ra's short summary
    if failed:
        return "; ".join(ln[:200] for ln in failed[:3]) + (f" (+{len(failed) - 3} more)" if len(failed) > 3 else "")
    for ln in reversed(lines):
        if re.search(r"Error|FAILED|failed|assert|timed out", ln):
            return ln[:300]
    return lines[-1][:300] if lines else ""


def _pytest_summary(text: str) -> str:
    """``98 passed, 2 warnings`` from pytest's last line (with or without -q's missing ``=`` rule)."""
    found = re.findall(r"^=*\s*(\d+ (?:passed|failed|error|skipped|deselected).*?) in [\d.]+s", text, re.M)
    return found[-1] if found else ""


def snapshot(out: Path, ref: str | None) -> Path:
    """A copy of the tree to check: ``ref``'s files (git archive), or the working tree's tracked and
    untracked-but-not-ignored files; never build/ leftovers (a stale build/lib would ship deleted modules)."""
    src = out / "src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    if ref:
        archive = subprocess.run(["git", "archive", "--format=tar", ref], cwd=ROOT, capture_output=True)
        if archive.returncode != 0:
            raise ValueError(f"--ref {ref}: {archive.stderr.decode(errors='replace').strip()}")
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True)
        return src
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        path = ROOT / rel
        if path.is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / rel)
    return src


def build_wheel(out: Path, src: Path) -> Path:
    """The gemm_lab wheel of the snapshot (what a student's setup cell installs from the course tag)."""
    wheels = out / "wheel"
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(wheels), str(src)], check=True, capture_output=True, text=True, cwd=src)
    return next(wheels.glob("gemm_lab-*.whl"))


def set_env(folder: Path) -> dict:
    venv = folder / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("GEMM_LAB_GRADING", "PYTHONPATH", "VIRTUAL_ENV")}
    return env | {"PATH": os.pathsep.join([str(venv / "bin"), env.get("PATH", "")]),
                  "TRITON_CACHE_DIR": str(folder / "triton-cache"), "PYTHONWARNINGS": "default",
                  "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


def install(rs: cs.ResolvedSet, folder: Path, wheel: Path) -> dict:
    venv, python = folder / "venv", folder / "venv" / "bin" / "python"
    marker = folder / "venv" / ".compat-versions"
    wanted = "\n".join([sys.version, *rs.requirements()])
    start = time.perf_counter()
    if not marker.exists() or marker.read_text() != wanted:
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        code, _, out = _run([str(python), "-m", "pip", "install", "-q", *rs.requirements()], set_env(folder),
                            ROOT, LIMITS["install"])
        if code != 0:
            return {"status": "fail", "seconds": round(time.perf_counter() - start, 1), "summary": "",
                    "detail": _last_error(out), "output": out[-20000:]}
        marker.write_text(wanted)
    code, _, out = _run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)],
                        set_env(folder), ROOT, LIMITS["install"])
    seconds = round(time.perf_counter() - start, 1)
    if code != 0:
        return {"status": "fail", "seconds": seconds, "summary": "", "detail": _last_error(out), "output": out}
    return {"status": "ok", "seconds": seconds, "summary": "", "detail": "", "output": ""}


def check_pytest(folder: Path, src: Path, pattern: str, extra: list[str], limit: int) -> dict:
    python = folder / "venv" / "bin" / "python"
    files = sorted(str(p.relative_to(src)) for p in (src / "tests").glob(pattern))
    cmd = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--timeout={limit // 2}", *extra, *files]
    code, seconds, out = _run(cmd, set_env(folder), src, limit)
    summary = _pytest_summary(out)
    return {"status": "ok" if code == 0 else "fail", "seconds": round(seconds, 1), "summary": summary,
            "detail": "" if code == 0 else _last_error(out), "output": out}


def check_compile(folder: Path) -> dict:
    code, seconds, out = _run([str(folder / "venv" / "bin" / "python"), "-c", COMPILE_SCRIPT], set_env(folder),
                              folder, LIMITS["compile"])
    line = next((ln for ln in out.splitlines() if ln.startswith("COMPAT-ROWS ")), None)
    if code != 0 or line is None:
        return {"status": "fail", "seconds": round(seconds, 1), "summary": "", "detail": _last_error(out),
                "output": out}
    rows = json.loads(line.removeprefix("COMPAT-ROWS "))
    problems = cs.marker_problems(rows)
    summary = " · ".join(f"{r['target']} {r['mma']}" for r in rows)
    return {"status": "fail" if problems else "ok", "seconds": round(seconds, 1), "summary": summary,
            "detail": "; ".join(problems), "rows": rows, "output": out}


def check_notebooks(folder: Path, src: Path) -> dict:
    python = folder / "venv" / "bin" / "python"
    scratch = folder / "notebooks"
    shutil.rmtree(scratch, ignore_errors=True)
    copies = []
    for group, source in NOTEBOOK_GROUPS.items():  # each group alone in an empty folder, as downloaded
        (scratch / group).mkdir(parents=True)
        for nb in sorted((src / source).glob("*.ipynb")):
            copies.append(Path(shutil.copy(nb, scratch / group / nb.name)))
    report = folder / "notebooks.json"
    report.unlink(missing_ok=True)
    code, seconds, out = _run([str(python), str(src / "tools" / "student_run.py"), "--timeout", "600", "--json",
                               str(report), *map(str, copies)], set_env(folder), scratch, LIMITS["notebooks"])
    reports = json.loads(report.read_text()) if report.exists() else []
    errors = [f"{Path(r['notebook']).parent.name}/{Path(r['notebook']).stem} cell {e['cell']}: {e['ename']}: "
              f"{e['evalue'][:150]}" for r in reports for e in r["errors"]]
    errors += [f"{Path(r['notebook']).stem}: {r['status']}" for r in reports if r["status"] != "ok"]
    clean = sum(1 for r in reports if r["status"] == "ok" and not r["errors"])
    ok = code == 0 and not errors and len(reports) == len(copies)
    stderr = "\n".join(s["text"] for r in reports for s in r.get("stderr", []))
    return {"status": "ok" if ok else "fail", "seconds": round(seconds, 1),
            "summary": f"{clean}/{len(copies)}", "detail": "; ".join(errors[:3]) or ("" if ok else _last_error(out)),
            "times": {Path(r["notebook"]).stem: r["seconds"] for r in reports}, "output": out + "\n" + stderr}


def run_set(rs: cs.ResolvedSet, out: Path, src: Path, wheel: Path, pins: dict) -> dict:
    folder = out / rs.name
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    print(f"== {' = '.join(rs.names)}: {rs.label(pins)}", flush=True)
    checks = {"install": install(rs, folder, wheel)}
    print(f"   install: {checks['install']['status']} ({checks['install']['seconds']:.0f} s)", flush=True)
    if checks["install"]["status"] == "ok":
        runners = {
            "calc": lambda: check_pytest(folder, src, "test_calc_*.py", [], LIMITS["calc"]),
            "kernels": lambda: check_pytest(folder, src, "test_kernels_*.py", ["-m", "not gpu and not slow"],
                                            LIMITS["kernels"]),
            "compile": lambda: check_compile(folder),
            "notebooks": lambda: check_notebooks(folder, src),
        }
        for name, runner in runners.items():
            print(f"   {name} ...", end=" ", flush=True)
            checks[name] = runner()
            c = checks[name]
            print(f"{c['status']} ({c['seconds']:.0f} s) {c['summary']} {c['detail'][:200]}", flush=True)
    found: dict[str, str] = {}
    for c in checks.values():
        for key, line in cs.warnings_in(c.pop("output", "")).items():
            found.setdefault(key, line)
    result = {"names": list(rs.names), "versions": rs.versions, "seconds": round(time.perf_counter() - started, 1),
              "date": datetime.date.today().isoformat(), "checks": checks, "warnings": found}
    (folder / "result.json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
    return result


def stored(out: Path, rs: cs.ResolvedSet) -> dict | None:
    path = out / rs.name / "result.json"
    if not path.exists():
        return None
    res = json.loads(path.read_text())
    return res if res["versions"] == rs.versions else None


def with_new_warnings(results: list[dict], baseline: dict | None) -> list[dict]:
    for res in results:
        if baseline is None or cs.BASELINE in res["names"]:
            res["new_warnings"] = None if baseline is None else {}
        else:
            res["new_warnings"] = cs.new_warnings(res["warnings"], baseline["warnings"])
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="*", help="version sets (default: " + " ".join(DEFAULT_SETS) + ")")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "compat")
    ap.add_argument("--ref", help="check this git revision instead of the working tree")
    ap.add_argument("--readme", type=Path, help="write the table into this README's compat section")
    ap.add_argument("--report-only", action="store_true", help="rebuild the table from stored results")
    args = ap.parse_args(argv)
    try:
        sets = [cs.parse_set(text) for text in (args.sets or DEFAULT_SETS)]
        pins = course_pins()
        resolved = cs.resolve(sets, pins, index_versions)
    except ValueError as exc:
        print(f"compat: {exc}", file=sys.stderr)
        return 2
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for rs in resolved:
        print(f"{' = '.join(rs.names)}: {' '.join(rs.requirements())}", flush=True)
    results = []
    if args.report_only:
        for rs in resolved:
            res = stored(out, rs)
            if res is None:
                print(f"compat: no stored result for {rs.name} at these versions: run `python tools/compat.py "
                      f"{rs.name}:...` first (or drop --report-only)", file=sys.stderr)
                return 2
            results.append(res)
    else:
        try:
            src = snapshot(out, args.ref)
        except ValueError as exc:
            print(f"compat: {exc}", file=sys.stderr)
            return 2
        print(f"checking a snapshot of {args.ref or 'the working tree'} in {src}", flush=True)
        wheel = build_wheel(out, src)
        results = [run_set(rs, out, src, wheel, pins) for rs in resolved]
    # the baseline: the pinned set of this run, or its stored result at the same pins
    pinned = cs.resolve([cs.parse_set(cs.BASELINE)], pins, index_versions)[0]
    baseline = next((r for r in results if cs.BASELINE in r["names"]), None) or stored(out, pinned)
    results = with_new_warnings(results, baseline)
    (out / "compat.json").write_text(json.dumps(results, indent=1, ensure_ascii=False))
    text = cs.table(results, pins)
    (out / "compat.md").write_text(text)
    print(text)
    if baseline is None:
        print("compat: no pinned-set result to diff warnings against: run the `pinned` set too", file=sys.stderr)
    if args.readme:
        args.readme.write_text(cs.replace_section(args.readme.read_text(), text))
        print(f"wrote the table into {args.readme}")
    return 0 if all(c["status"] == "ok" for r in results for c in r["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
