"""Benchmarks of grading itself: `python -m autograder bench-grading` (`make bench-grading N=100`).

    python -m autograder bench-grading -n 100                     # both weeks, results/grading_throughput.{csv,md}
    python -m autograder bench-grading -n 2 --notebook 01_block_model --out /tmp/r   # a quick check
    python -m autograder bench-grading -n 50 --assignment week07 --kind full_marks --slow-every 0 [--dask-workers 2]
    python -m autograder bench-grading -n 1 --assignment week07 --kind full_marks --jobs 1 --breakdown
    python -m autograder bench-grading --report -n 500             # how long `make report` takes

Each synthetic student hands in every notebook of every assignment with committed samples
(autograder/samples/ASSIGNMENT): for each notebook one sample kind that has it, rotating through the kinds
(right, wrong, blank, kernel bugs, hostile: tampering, snooping, fork bomb, ...), so the class mixes them
all (``--kind K``: only these kinds); every ``--slow-every``-th student's notebook also ends with a cell that
sleeps until its cell time limit ("slow", otherwise full marks). Expected scores come from the samples'
expected.csv, so every grade is checked. The whole class is graded by one ``autograde`` (one pool,
autograder/grade/schedule.py; ``--dask-workers W``: a Dask LocalCluster of W single-thread workers, the path
``make autograde SCHEDULER=...`` takes) in a scratch course under autograder/work/bench-<pid>-*; the machine's
cores, RAM and load, the wall time, the seconds per notebook (median, p95, per notebook name), the peak memory
in use on the machine and the score mismatches are printed and, for the full mix of kinds, appended to
``OUT/grading_throughput.csv`` and the table ``OUT/grading_throughput.md`` is rewritten from it. The machine's
CPU busy share tells whether grading is CPU-bound. Run it on a quiet machine: every other process's CPU and
memory counts against it.

``--breakdown``: where the CPU seconds go. The process tree is sampled every 50 ms (psutil) and each
process's CPU time (user + system, the last sample it was seen at) summed by what it is: nbgrader (its
start-up, the test cells replayed on the claims, the judging), the sandboxed kernel that ran the student's
cells, the workers that ran kernels and function answers, the sandbox plumbing (bubblewrap, the supervisor).
Processes that live under 50 ms are missed; the sum is compared with the machine's busy CPU time so the gap
is visible (nbgrader runs are children of a fork server, so ``getrusage`` of this process's children misses them).

``--report``: builds (untimed) a class of N students with a week-7-sized assignment (6 notebooks, 54 graded
cells, a kernel cell and a manual cell in each, planted wrong answers; autograder/samplekit/synthetic_class.py),
each autograded notebook padded with ``--pad-kb`` KiB of image output as an executed notebook has, then runs
``python -m autograder report`` on it ``--repeat`` times in a fresh interpreter each and prints each wall time
and CPU time (user + system of the command and its worker processes) and the medians. On a busy machine the
wall time counts other programs' turns on the CPUs; the CPU time does not.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from unittest.mock import patch

import numpy as np
import psutil

from autograder.course import Course, read_notebook
from autograder.course_lock import stage_dir
from autograder.grade.autograde import DEFAULT_CELL_TIMEOUT, GradeSettings, autograde_all
from autograder.samplekit.compare import score_mismatches
from autograder.samplekit.expected import read_expected
from autograder.samplekit.model import code_cell

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


def kinds_by_notebook(samples: Path, only: list[str] | None = None) -> dict[str, list[str]]:
    """{notebook: sample kinds (student folders) that hand it in, of ``only`` when given}, kinds sorted."""
    out: dict[str, list[str]] = {}
    for d in sorted(p for p in samples.iterdir() if p.is_dir() and (not only or p.name in only)):
        for nb in sorted(d.glob("*.ipynb")):
            out.setdefault(nb.stem, []).append(d.name)
    return out


def build_class(repo: Course, course: Course, assignments: list[str], n: int, notebooks: list[str] | None,
                slow_every: int, kinds_only: list[str] | None = None) -> tuple[dict, list[str]]:
    """Hand in N students; return ({(assignment, student, notebook, grade_id): expected points}, slow students)."""
    expected: dict = {}
    slow: list[str] = []
    for a in assignments:
        samples = repo.root / "autograder" / "samples" / a
        exp, _ = read_expected(samples)
        kinds = kinds_by_notebook(samples, kinds_only)
        names = [nb for nb in course.notebooks(a, "release") if nb in kinds and (not notebooks or nb in notebooks)]
        for i in range(n):
            student = f"s{i:03d}"
            dest = course.submitted / student / a
            dest.mkdir(parents=True, exist_ok=True)
            slow_nb = names[i % len(names)] if names and slow_every and i % slow_every == slow_every - 1 else None
            for j, nb in enumerate(names):
                kind = SLOW if nb == slow_nb else kinds[nb][(i + 3 * j) % len(kinds[nb])]
                base = "full_marks" if kind == SLOW else kind
                data = read_notebook(samples / base / f"{nb}.ipynb")
                if kind == SLOW:
                    data["cells"].append(code_cell(SLOW_CELL))
                    slow.append(f"{a}/{student}/{nb}")
                (dest / f"{nb}.ipynb").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
                for (k, knb, gid), pts in exp.items():
                    if k == base and knb == nb:
                        expected[(a, student, nb, gid)] = pts
    return expected, slow


def kind_of(cmdline: list[str]) -> str:
    """The kind of a grading process, from its command line."""
    line = " ".join(cmdline)
    if "gemm_lab.grading.judge.worker" in line:
        return "worker"
    if line.startswith(("bwrap", "/usr/bin/bwrap")):
        return "bwrap"
    if "ipykernel" in line:
        return "kernel (student cells)"
    if "multiprocessing.forkserver" in line:  # autograder/nbgrader_fork.py: the server and its forked runs
        return "nbgrader (fork server once + forked runs: replay, judging)"
    if "nbgrader" in line:
        return "nbgrader (start-up, replay, judging)"
    if "supervisor" in line or "sandbox" in line:
        return "sandbox supervisor"
    return "other: " + (Path(cmdline[0]).name if cmdline else "?")


class Sampler:
    """Polls the machine while running: the peak of (MemTotal - MemAvailable) minus its value at the start
    and, with ``processes``, each descendant's last CPU time and kind."""

    def __init__(self, processes: bool = False, every: float = 0.5):
        self.processes, self.every = processes, 0.05 if processes else every
        self.peak, self.base = 0, self.used()
        self.seen: dict[int, tuple[str, float, str]] = {}  # pid -> (kind, cpu, command line)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def used() -> int:
        mem = psutil.virtual_memory()
        return mem.total - mem.available

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.wait(self.every):
            self.peak = max(self.peak, self.used() - self.base)
            for p in me.children(recursive=True) if self.processes else []:
                try:
                    with p.oneshot():
                        t, prev = p.cpu_times(), self.seen.get(p.pid)
                        line = prev[2] if prev else " ".join(p.cmdline())
                        self.seen[p.pid] = (prev[0] if prev else kind_of(line.split()), t.user + t.system, line)
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    pass

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def print_breakdown(self, busy_cpu: float, verbose: bool) -> None:
        by_kind: dict[str, list] = defaultdict(lambda: [0, 0.0])
        for kind, cpu, _ in self.seen.values():
            by_kind[kind][0] += 1
            by_kind[kind][1] += cpu
        for kind, (n, c) in sorted(by_kind.items(), key=lambda kv: -kv[1][1]):
            print(f"  {c:6.1f} CPU-s  {n:3d} process(es)  {kind}")
        if verbose:
            for pid, (_, c, line) in sorted(self.seen.items(), key=lambda kv: kv[1][1]):
                if c >= 0.3:
                    print(f"    {c:5.1f} CPU-s  pid {pid}: {line[-150:]}")
        total = sum(c for _, c in by_kind.values())
        print(f"  {total:6.1f} CPU-s  sampled in all, of {busy_cpu:.1f} the machine was busy ({busy_cpu - total:+.1f}: "
              "processes under 50 ms, this one, other programs)")


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far, other users included."""
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0), sum(t)


def p95(xs: list[float]) -> float:
    return float(np.percentile(xs, 95, method="inverted_cdf")) if xs else 0.0  # nearest rank


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
    lines = ["# Grading throughput (`make bench-grading N=...`, autograder/bench/grading.py)", "",
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


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def grade_class(args, repo: Course) -> int:
    try:
        assignments = sampled(repo, args.assignment)
    except ValueError as exc:
        return _fail(str(exc))
    if not assignments:
        return _fail("no assignment has samples (autograder/samples/*/expected.csv)")
    samples = repo.root / "autograder" / "samples"
    assignments = [a for a in assignments if set(repo.notebooks(a, "source")) & set(kinds_by_notebook(
        samples / a, args.kind)) & set(args.notebook or repo.notebooks(a, "source"))]
    if not assignments:
        return _fail("no sampled notebook to hand in (check --notebook and --kind)")
    scratch = stage_dir(repo.work, "bench", "class")
    try:
        course = repo.scratch(scratch, assignments, released=True)
        expected, slow = build_class(repo, course, assignments, args.n, args.notebook, args.slow_every, args.kind)
        n_nb = len({(a, nb) for (a, _, nb, _) in expected})
        load, cpus = os.getloadavg()[0], os.cpu_count() or 1
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)
        print(f"bench-grading: {args.n} students x {n_nb} notebooks ({', '.join(assignments)}); {cpus} CPUs, "
              f"{ram:.1f} GiB RAM, load average {load:.1f}; {len(slow)} slow notebook(s)", flush=True)
        per_nb: dict[str, list[float]] = {}

        def on_part(part, res):
            per_nb.setdefault(f"{part.assignment}/{part.notebook or '*'}", []).append(res.seconds)

        with contextlib.ExitStack() as stack:
            if args.dask_workers:
                from autograder.grade import dispatch

                cluster = stack.enter_context(dispatch.local_cluster(args.dask_workers))
                stack.enter_context(patch.dict(os.environ, {dispatch.ENV: cluster.scheduler_address}))
            b0, t0 = _machine_busy(), time.monotonic()
            from autograder.grade import schedule

            # the job count autograde_all decides as it starts (from the memory free then, not after the run)
            jobs = schedule.plan_jobs(args.jobs, per_handin_bytes=schedule.handin_memory_bytes(),
                                      available=schedule.available_memory())[0]
            with Sampler(processes=args.breakdown) as mem:
                settings = GradeSettings(jobs=args.jobs, cell_timeout=args.cell_timeout, unit=args.unit)
                results = autograde_all(course, assignments, settings, on_part=on_part)
            wall, b1 = time.monotonic() - t0, _machine_busy()
        maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        bad = score_mismatches(course, expected)
        errors = [f"{r.assignment}/{r.student}: {r.error}" for rs in results.values() for r in rs if not r.ok]
        secs = [x for xs in per_nb.values() for x in xs]
        row = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"), "commit": _commit(repo),
               "cpus": cpus, "ram_gib": f"{ram:.1f}", "load_1min": f"{load:.1f}", "students": args.n,
               "assignments": " ".join(assignments), "notebooks_each": n_nb,
               "jobs": jobs,
               "unit": schedule.grading_unit(args.unit), "wall_s": f"{wall:.0f}",
               "wall_per_student_s": f"{wall / args.n:.1f}", "nb_median_s": f"{statistics.median(secs):.1f}",
               "nb_p95_s": f"{p95(secs):.1f}", "nb_max_s": f"{max(secs):.1f}",
               "peak_mem_gib": f"{mem.peak / (1 << 30):.2f}", "largest_process_gib": f"{maxrss / (1 << 30):.2f}",
               "mismatches": len(bad), "grader_errors": len(errors), "slow_students": len(slow)}
        total = sum(len(rs) for rs in results.values())
        busy = (b1[0] - b0[0]) / max(1e-9, b1[1] - b0[1])
        print(f"graded {total} hand-ins ({len(secs)} notebooks) in {wall:.0f}s ({wall / args.n:.1f}s per student); "
              f"per notebook median {row['nb_median_s']}s, p95 {row['nb_p95_s']}s; peak memory "
              f"{row['peak_mem_gib']} GiB; {len(bad)} score mismatch(es), {len(errors)} grader error(s)")
        print(f"machine CPU busy {busy:.0%} during the run (all processes) -> "
              + ("CPU-bound: more hand-ins at once will not help on this machine" if busy > 0.85
                 else "not CPU-bound: waits (kernel start-up, I/O) dominate; try more --jobs"))
        if args.breakdown:
            mem.print_breakdown(b1[0] - b0[0], args.verbose)
        for line in (bad + errors)[:20]:
            print("  " + line)
        if args.kind:
            print("results/ not written: --kind grades only some kinds, not the class mix")
        else:
            csv_path, md_path = write_results(Path(args.out) if args.out else repo.root / "results", row, per_nb)
            print(f"wrote {csv_path} and {md_path}")
        return 1 if bad or errors else 0
    finally:
        if args.keep:
            print(f"scratch course kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def week_sized_spec(n_students: int, notebooks: int = 6) -> list[dict]:
    """``notebooks`` notebooks, each with every graded cell of SPEC (ids suffixed) and its value cells twice."""
    from autograder.samplekit.synthetic_class import SPEC, scale_spec

    cells = [c for nb in scale_spec(SPEC, n_students) for c in nb["cells"]]
    extra = [dict(c, grade_id=c["grade_id"] + "_b") for c in cells if "checks" in c]
    return [{"notebook": f"{i:02d}_notebook", "cells": [
        c if "md" in c else dict(c, grade_id=f"{c['grade_id']}_{i}") for c in cells + extra]}
        for i in range(1, notebooks + 1)]


def time_report(args, repo: Course) -> int:
    from autograder.samplekit.synthetic_class import make_class

    repo.work.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="bench-report-", dir=repo.work))
    try:
        t0 = time.monotonic()
        make_class(root, args.n, week_sized_spec(args.n), pad_kb=args.pad_kb, progress=print)
        files = list((root / "autograder" / "autograded").rglob("*.ipynb"))
        print(f"written in {time.monotonic() - t0:.0f}s: class of {args.n} students, {len(files)} autograded "
              f"notebooks, {sum(p.stat().st_size for p in files) / 2**20:.0f} MiB")
        walls, cpus = [], []
        for i in range(args.repeat):
            t, c0 = time.monotonic(), _children_cpu()
            subprocess.run([sys.executable, "-m", "autograder", "--course-root", str(root), "report"],
                           cwd=repo.root, check=True)
            walls.append(time.monotonic() - t)
            cpus.append(_children_cpu() - c0)
            print(f"run {i + 1}: wall {walls[-1]:.1f}s, CPU {cpus[-1]:.1f}s")
        print(f"make report, {args.n} students: median wall {statistics.median(walls):.1f}s, "
              f"median CPU {statistics.median(cpus):.1f}s on {os.cpu_count()} CPUs "
              f"(load average {os.getloadavg()[0]:.1f})")
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


def main(argv=None) -> int:
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(prog="python -m autograder bench-grading", description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=100, help="synthetic students (default 100)")
    ap.add_argument("--assignment", action="append", help="default: every assignment with samples")
    ap.add_argument("--notebook", action="append", help="only these notebooks (default: all)")
    ap.add_argument("--kind", action="append", help="only these sample kinds, e.g. full_marks (default: all)")
    ap.add_argument("--jobs", type=int, default=None, help="default: as autograde (CPUs and memory)")
    ap.add_argument("--unit", choices=("notebook", "handin"), default=None,
                    help="one task per hand-in x notebook or per hand-in (default: as autograde)")
    ap.add_argument("--cell-timeout", type=int, default=DEFAULT_CELL_TIMEOUT)
    ap.add_argument("--slow-every", type=int, default=25,
                    help="every K-th student has one notebook that sleeps to its cell limit (0: none)")
    ap.add_argument("--dask-workers", type=int, default=0, help="grade on a Dask LocalCluster of W workers")
    ap.add_argument("--breakdown", action="store_true", help="CPU seconds by kind of process (psutil)")
    ap.add_argument("--verbose", action="store_true", help="with --breakdown: every process over 0.3 CPU-s")
    ap.add_argument("--out", default=None, help="folder of grading_throughput.csv/.md (default results/)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the scratch course (until the next collect/autograde, which cleans it)")
    ap.add_argument("--report", action="store_true", help="time `make report` on a synthetic class of N instead")
    ap.add_argument("--pad-kb", type=int, default=150, help="with --report: KiB of image output per notebook")
    ap.add_argument("--repeat", type=int, default=3, help="with --report: runs of the report command")
    args = ap.parse_args(argv)
    if args.n < 1 or args.slow_every < 0 or args.dask_workers < 0:
        return _fail("-n must be >= 1, --slow-every and --dask-workers >= 0")
    return (time_report if args.report else grade_class)(args, Course.at())


if __name__ == "__main__":
    raise SystemExit(main())
