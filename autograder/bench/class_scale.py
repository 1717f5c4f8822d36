"""Class-scale grading benchmark (``make bench-grading N=100``): N synthetic students, every sampled week.

    python -m autograder bench-grading -n 100                     # both weeks, results/grading_throughput.{csv,md}
    python -m autograder bench-grading -n 2 --notebook 01_block_model --out /tmp/r   # a quick check

Each synthetic student hands in every notebook of every assignment with committed samples
(autograder/samples/ASSIGNMENT): for each notebook one sample kind that has it, rotating through the kinds
(right, wrong, blank, kernel bugs, hostile: tampering, snooping, fork bomb, ...), so the class mixes them
all; every ``--slow-every``-th student's notebook also ends with a cell that sleeps until its cell time
limit ("slow", otherwise full marks). Expected scores come from the samples' expected.csv, so every grade
is checked. The whole class is graded by one ``autograde`` (one pool, autograder/grade/schedule.py) in a scratch
course under autograder/work/bench-<pid>-*; the machine's cores, RAM and load, the wall time, the seconds
per notebook (median, p95, per notebook name), the peak memory in use on the machine and the score
mismatches are appended to ``OUT/grading_throughput.csv`` and the table ``OUT/grading_throughput.md`` is
rewritten from it. Run it on a quiet machine: every other process's CPU and memory counts against it.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import psutil

from autograder.course import Course, read_notebook
from autograder.course_lock import stage_dir
from autograder.grade.autograde import DEFAULT_CELL_TIMEOUT, GradeSettings, autograde_all
from autograder.samplekit.compare import score_mismatches
from autograder.samplekit.expected import read_expected

SLOW = "slow"
SLOW_CELL = "import time\ntime.sleep(10 ** 6)  # bench: sleeps until the cell time limit"
FIELDS = ["date", "commit", "cpus", "ram_gib", "load_1min", "students", "assignments", "notebooks_each",
          "jobs", "unit", "wall_s", "wall_per_student_s", "nb_median_s", "nb_p95_s", "nb_max_s",
          "peak_mem_gib", "largest_process_gib", "mismatches", "grader_errors", "slow_students"]


def sampled(repo: Course, only: list[str] | None = None) -> list[str]:
    base = repo.root / "autograder" / "samples"
    found = sorted(p.parent.name for p in base.glob("*/expected.csv")) if base.is_dir() else []
    found = [a for a in found if (repo.source / a).is_dir()]
    if only:
        missing = sorted(set(only) - set(found))
        if missing:
            raise ValueError(f"no samples for {', '.join(missing)} (have: {', '.join(found) or 'none'})")
        found = [a for a in found if a in only]
    return found


def kinds_by_notebook(samples: Path) -> dict[str, list[str]]:
    """{notebook: sample kinds (student folders) that hand it in}, kinds sorted."""
    out: dict[str, list[str]] = {}
    for d in sorted(p for p in samples.iterdir() if p.is_dir()):
        for nb in sorted(d.glob("*.ipynb")):
            out.setdefault(nb.stem, []).append(d.name)
    return out


def build_class(repo: Course, course: Course, assignments: list[str], n: int, notebooks: list[str] | None,
                slow_every: int) -> tuple[dict, list[str]]:
    """Hand in N students; return ({(assignment, student, notebook, grade_id): expected points}, slow students)."""
    expected: dict = {}
    slow: list[str] = []
    for a in assignments:
        samples = repo.root / "autograder" / "samples" / a
        exp, _ = read_expected(samples)
        kinds = kinds_by_notebook(samples)
        names = [nb for nb in course.notebooks(a, "release") if nb in kinds and (not notebooks or nb in notebooks)]
        for i in range(n):
            student = f"s{i:03d}"
            dest = course.submitted / student / a
            dest.mkdir(parents=True, exist_ok=True)
            slow_nb = names[i % len(names)] if names and slow_every and i % slow_every == slow_every - 1 else None
            for j, nb in enumerate(names):
                kind = kinds[nb][(i + 3 * j) % len(kinds[nb])]
                if nb == slow_nb:
                    kind = SLOW
                src = samples / ("full_marks" if kind == SLOW else kind) / f"{nb}.ipynb"
                data = read_notebook(src)
                if kind == SLOW:
                    data["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {},
                                          "outputs": [], "source": SLOW_CELL})
                    slow.append(f"{a}/{student}/{nb}")
                (dest / f"{nb}.ipynb").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
                base = "full_marks" if kind == SLOW else kind
                for (k, knb, gid), pts in exp.items():
                    if k == base and knb == nb:
                        expected[(a, student, nb, gid)] = pts
    return expected, slow


class MemoryPeak:
    """Peak of (MemTotal - MemAvailable) on the machine while running, minus its value at the start."""

    def __init__(self, every: float = 0.5):
        self.every, self.peak, self._stop = every, 0, threading.Event()
        self.base = self.used()

    @staticmethod
    def used() -> int:
        mem = psutil.virtual_memory()
        return mem.total - mem.available

    def __enter__(self):
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self):
        while not self._stop.wait(self.every):
            self.peak = max(self.peak, self.used() - self.base)

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def p95(xs: list[float]) -> float:
    if not xs:
        return 0.0
    xs = sorted(xs)  # nearest rank
    return xs[max(0, math.ceil(0.95 * len(xs)) - 1)]


def _commit(repo: Course) -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo.root, capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def write_results(out: Path, row: dict, per_nb: dict[str, list[float]]) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "grading_throughput.csv"
    rows = []
    if path.is_file():
        with path.open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    rows.append({k: row.get(k, "") for k in FIELDS})
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    md = out / "grading_throughput.md"
    cols = ["date", "commit", "cpus", "ram_gib", "load_1min", "students", "notebooks_each", "jobs", "wall_s",
            "wall_per_student_s", "nb_median_s", "nb_p95_s", "peak_mem_gib", "mismatches", "grader_errors"]
    lines = ["# Grading throughput (`make bench-grading N=...`, autograder/bench/class_scale.py)", "",
             "Every run: N synthetic students each handing in every sampled notebook of every week "
             "(sample kinds rotated: right, wrong, kernel bugs, hostile; a few slow), graded by one autograde. "
             "nb_*: seconds per graded notebook (one nbgrader + sandboxed kernel each); peak_mem: "
             "peak (MemTotal - MemAvailable) minus its value at the start.", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    lines += ["", f"## Seconds per notebook, latest run ({row['date']})", "",
              "| notebook | graded | median s | p95 s | max s |", "|---|---|---|---|---|"]
    for name, xs in sorted(per_nb.items()):
        lines.append(f"| {name} | {len(xs)} | {statistics.median(xs):.1f} | {p95(xs):.1f} | {max(xs):.1f} |")
    md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, md


def main(argv=None) -> int:
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(prog="python -m autograder bench-grading", description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=100, help="synthetic students (default 100)")
    ap.add_argument("--assignment", action="append", help="default: every assignment with samples")
    ap.add_argument("--notebook", action="append", help="only these notebooks (default: all)")
    ap.add_argument("--jobs", type=int, default=None, help="default: as autograde (CPUs and memory)")
    ap.add_argument("--unit", choices=("notebook", "handin"), default=None,
                    help="one task per hand-in x notebook or per hand-in (default: as autograde)")
    ap.add_argument("--cell-timeout", type=int, default=DEFAULT_CELL_TIMEOUT)
    ap.add_argument("--slow-every", type=int, default=25,
                    help="every K-th student has one notebook that sleeps to its cell limit (0: none)")
    ap.add_argument("--out", default=None, help="folder of grading_throughput.csv/.md (default results/)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the scratch course (until the next collect/autograde, which cleans it)")
    args = ap.parse_args(argv)
    if args.n < 1 or args.slow_every < 0:
        print("error: -n must be >= 1 and --slow-every >= 0", file=sys.stderr)
        return 2
    repo = Course.at()
    try:
        assignments = sampled(repo, args.assignment)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not assignments:
        print("error: no assignment has samples (autograder/samples/*/expected.csv)", file=sys.stderr)
        return 2
    assignments = [a for a in assignments
                   if set(repo.notebooks(a, "source")) & set(kinds_by_notebook(repo.root / "autograder" / "samples" / a))
                   & set(args.notebook or repo.notebooks(a, "source"))]
    if not assignments:
        print("error: no sampled notebook to hand in (check --notebook)", file=sys.stderr)
        return 2
    scratch = stage_dir(repo.work, "bench", "class")
    try:
        course = repo.scratch(scratch, assignments, released=True)
        expected, slow = build_class(repo, course, assignments, args.n, args.notebook, args.slow_every)
        n_nb = len({(a, nb) for (a, _, nb, _) in expected})
        load = os.getloadavg()[0]
        cpus = os.cpu_count() or 1
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)
        print(f"bench-grading: {args.n} students x {n_nb} notebooks ({', '.join(assignments)}); {cpus} CPUs, "
              f"{ram:.1f} GiB RAM, load average {load:.1f}; {len(slow)} slow notebook(s)", flush=True)
        per_nb: dict[str, list[float]] = {}
        t0 = time.monotonic()

        def on_part(part, res):
            per_nb.setdefault(f"{part.assignment}/{part.notebook or '*'}", []).append(res.seconds)

        with MemoryPeak() as mem:
            settings = GradeSettings(jobs=args.jobs, cell_timeout=args.cell_timeout, unit=args.unit)
            results = autograde_all(course, assignments, settings, on_part=on_part)
        wall = time.monotonic() - t0
        maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        bad = score_mismatches(course, expected)
        errors = [f"{r.assignment}/{r.student}: {r.error}" for rs in results.values() for r in rs if not r.ok]
        secs = [x for xs in per_nb.values() for x in xs]
        from autograder.grade.autograde import default_jobs
        from autograder.grade.schedule import grading_unit

        row = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"), "commit": _commit(repo),
               "cpus": cpus, "ram_gib": f"{ram:.1f}", "load_1min": f"{load:.1f}", "students": args.n,
               "assignments": " ".join(assignments), "notebooks_each": n_nb,
               "jobs": args.jobs or default_jobs(), "unit": grading_unit(args.unit), "wall_s": f"{wall:.0f}",
               "wall_per_student_s": f"{wall / args.n:.1f}", "nb_median_s": f"{statistics.median(secs):.1f}",
               "nb_p95_s": f"{p95(secs):.1f}", "nb_max_s": f"{max(secs):.1f}",
               "peak_mem_gib": f"{mem.peak / (1 << 30):.2f}", "largest_process_gib": f"{maxrss / (1 << 30):.2f}",
               "mismatches": len(bad), "grader_errors": len(errors), "slow_students": len(slow)}
        total = sum(len(rs) for rs in results.values())
        print(f"graded {total} hand-ins ({len(secs)} notebooks) in {wall:.0f}s ({wall / args.n:.1f}s per student); "
              f"per notebook median {row['nb_median_s']}s, p95 {row['nb_p95_s']}s; peak memory "
              f"{row['peak_mem_gib']} GiB; {len(bad)} score mismatch(es), {len(errors)} grader error(s)")
        for line in (bad + errors)[:20]:
            print("  " + line)
        csv_path, md_path = write_results(Path(args.out) if args.out else repo.root / "results", row, per_nb)
        print(f"wrote {csv_path} and {md_path}")
        return 1 if bad or errors else 0
    finally:
        if args.keep:
            print(f"scratch course kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
