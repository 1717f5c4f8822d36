"""How long `make report` takes for a big class: a synthetic graded class, then the report command, timed.

    python -m autograder.bench.report_timing [-n 500] [--pad-kb 150] [--repeat 3] [--keep | --reuse DIR]

Builds (untimed) a class of N students in a scratch course under autograder/work/ with a week-7-sized
assignment (6 notebooks, 54 graded cells, a kernel cell and a manual cell in each, planted wrong answers;
``autograder/samplekit/synthetic_class.py``), each autograded notebook padded with ``--pad-kb`` KiB of image output
as an executed notebook has. Then runs ``python -m autograder report`` on it ``--repeat`` times in a fresh
interpreter each (what the instructor waits for: start-up, nbgrader's import, reading every notebook, the
figures, both pages) and prints each wall time and CPU time (user + system of the command and its worker
processes) and the medians. On a busy machine the wall time counts other programs' turns on the CPUs; the
CPU time does not (the notebooks are read by up to one worker process per CPU, so on an idle machine the
wall time is at most about the CPU time).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.course import Course
from autograder.samplekit.synthetic_class import SPEC, make_class, scale_spec


def week_sized_spec(n_students: int, notebooks: int = 6) -> list[dict]:
    """``notebooks`` notebooks, each with every graded cell of SPEC (ids suffixed) and its value cells twice."""
    base = scale_spec(SPEC, n_students)
    cells = [c for nb in base for c in nb["cells"]]
    extra = [dict(c, grade_id=c["grade_id"] + "_b") for c in cells if "checks" in c]
    spec = []
    for i in range(1, notebooks + 1):
        spec.append({"notebook": f"{i:02d}_notebook", "cells": [
            c if "md" in c else dict(c, grade_id=f"{c['grade_id']}_{i}") for c in cells + extra]})
    return spec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=500, help="students")
    ap.add_argument("--pad-kb", type=int, default=150, help="KiB of image output per autograded notebook")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the scratch course")
    ap.add_argument("--reuse", type=Path, default=None, help="time the report of a class kept by --keep")
    args = ap.parse_args(argv)
    repo = Course.at()
    repo.work.mkdir(parents=True, exist_ok=True)
    root = args.reuse or Path(tempfile.mkdtemp(prefix="bench-report-", dir=repo.work))
    try:
        if args.reuse is None:
            t0 = time.monotonic()
            spec = week_sized_spec(args.n)
            make_class(root, args.n, spec, pad_kb=args.pad_kb, progress=print)
            print(f"written in {time.monotonic() - t0:.0f}s")
        files = list((root / "autograder" / "autograded").rglob("*.ipynb"))
        students = len({p.parent.parent.name for p in files})
        print(f"class of {students} students, {len(files)} autograded notebooks, "
              f"{sum(p.stat().st_size for p in files) / 2**20:.0f} MiB")
        walls, cpus = [], []
        for i in range(args.repeat):
            t, r0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-m", "autograder", "--course-root", str(root), "report"],
                           cwd=repo.root, check=True)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            walls.append(time.monotonic() - t)
            cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
            print(f"run {i + 1}: wall {walls[-1]:.1f}s, CPU {cpus[-1]:.1f}s")
        print(f"make report, {students} students: median wall {statistics.median(walls):.1f}s, "
              f"median CPU {statistics.median(cpus):.1f}s on {os.cpu_count()} CPUs "
              f"(load average {os.getloadavg()[0]:.1f})")
    finally:
        if args.keep or args.reuse:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
