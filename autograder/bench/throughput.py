"""Grading throughput: time per hand-in and for N hand-ins, and what bounds it.

    python -m autograder.bench.throughput                         # the demo fixture, 50 hand-ins
    python -m autograder.bench.throughput --assignment week07 --notebook 01_pointer_blocks -n 50
    python -m autograder.bench.throughput --assignment week07 -n 6 --dask-workers 2 --no-alone   # through Dask

(A whole class of mixed hand-ins over both weeks: autograder/bench/class_scale.py, ``make bench-grading N=100``.)

Builds a scratch course (autograder/work/bench-*), hands in N full-marks copies, and measures:
the fixed costs (nbgrader start-up, a sandboxed kernel start), one hand-in alone, then all N with
``--jobs`` at once (default: the CPU count), or with ``--dask-workers W`` through a Dask LocalCluster of W
single-thread worker processes (``autograder/grade/dispatch.py``, the path ``make autograde SCHEDULER=...``
takes). CPU seconds are the machine's busy time (run it on a quiet machine), so "CPU per hand-in x N /
cores" close to the wall time means grading is CPU-bound.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import psutil

from autograder.course import Course, release
from autograder.course_lock import stage_dir
from autograder.grade import dispatch, triton_cache
from autograder.grade.autograde import autograde, default_jobs, prepare_gradebook
from autograder.samplekit.fixture import make_course
from autograder.samplekit.model import Notebook


def _machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far, other users included: nbgrader runs are children
    of a fork server (autograder/nbgrader_fork.py), not of this process, so this process's children's time
    misses them; on a quiet machine the busy time is the grading's."""
    t = psutil.cpu_times()
    total = sum(t)
    return total - t.idle - getattr(t, "iowait", 0.0), total


def nbgrader_startup(reps: int = 3) -> float:
    t0 = time.monotonic()
    for _ in range(reps):
        subprocess.run([sys.executable, "-m", "nbgrader", "--version"], capture_output=True, check=True)
    return (time.monotonic() - t0) / reps


def sandboxed_kernel_start(reps: int = 3) -> float:
    from autograder.sandbox.kernel import ENV_SPEC, SandboxKernelManager

    tmp = Path(tempfile.mkdtemp(prefix="glbench-", dir="/tmp"))
    (tmp / "cwd").mkdir()
    (tmp / "spec.json").write_text(json.dumps({"kernel_cwd": str(tmp / "cwd")}))
    os.environ[ENV_SPEC] = str(tmp / "spec.json")
    os.environ["JUPYTER_RUNTIME_DIR"] = str(tmp / "rt")

    async def once():
        km = SandboxKernelManager()
        await km.start_kernel(cwd=str(tmp / "cwd"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=120)
        await kc.execute_interactive("import gemm_lab.grading", timeout=120)
        kc.stop_channels()
        await km.shutdown_kernel(now=True)

    t0 = time.monotonic()
    try:
        for _ in range(reps):
            asyncio.run(once())
    finally:
        os.environ.pop(ENV_SPEC, None)
        os.environ.pop("JUPYTER_RUNTIME_DIR", None)
        shutil.rmtree(tmp, ignore_errors=True)
    return (time.monotonic() - t0) / reps


def build(scratch: Path, assignment: str | None, notebooks: list[str] | None, n: int) -> tuple[Course, str]:
    repo = Course.at()
    if assignment is None:
        course = Course.at(make_course(scratch))
        assignment = "demo01"
    else:
        course = repo.scratch(scratch, [assignment])
    src = course.source / assignment
    if notebooks:
        for nb in src.glob("*.ipynb"):
            if nb.stem not in notebooks:
                nb.unlink()
    release(course, assignment)
    full = {nb: Notebook.load(course.root, f"{assignment}/{nb}").full() for nb in course.notebooks(assignment)}
    for i in range(n + 1):
        d = course.submitted / f"s{i:03d}" / assignment
        d.mkdir(parents=True)
        for name, nb in full.items():
            (d / f"{name}.ipynb").write_text(json.dumps(nb))
    return course, assignment


@contextlib.contextmanager
def prepared(assignment: str | None, notebooks: list[str] | None, n: int):
    """(course, assignment, seconds to warm the shared Triton cache, its folder or None): a scratch course with
    n + 1 full-marks hand-ins, its gradebook prepared and the cache warm; removed afterwards."""
    repo = Course.at()
    repo.work.mkdir(parents=True, exist_ok=True)
    scratch = stage_dir(repo.work, "bench")  # a killed run's is removed by the next collect/autograde
    try:
        course, assignment = build(scratch, assignment, notebooks, n)
        t0 = time.monotonic()
        prepare_gradebook(course, assignment)  # the scratch release the shared Triton cache is warmed from
        shared = triton_cache.warm(course, assignment, course.work / "release" / assignment, log=lambda m: None)
        yield course, assignment, time.monotonic() - t0, shared
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv=None) -> int:
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--assignment", default=None, help="default: the demo fixture (two tiny notebooks)")
    ap.add_argument("--notebook", action="append")
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=default_jobs(), help="default: CPUs + 1, as autograde")
    ap.add_argument("--cell-timeout", type=int, default=180)
    ap.add_argument("--dask-workers", type=int, default=0, help="grade the N hand-ins on a Dask LocalCluster")
    ap.add_argument("--no-alone", action="store_true", help="skip the one-hand-in-alone measurement")
    args = ap.parse_args(argv)
    with prepared(args.assignment, args.notebook, args.n) as (course, assignment, warm_s, shared):
        nbs = len(list((course.release / assignment).glob("*.ipynb")))
        print(f"{assignment}: {nbs} notebook(s) per hand-in; {os.cpu_count()} CPUs; "
              f"load average {os.getloadavg()[0]:.1f}")
        t_nbg = nbgrader_startup()
        print(f"nbgrader start-up (python -m nbgrader --version): {t_nbg:.1f}s")
        t_k = sandboxed_kernel_start()
        print(f"sandboxed kernel start + import gemm_lab.grading + shutdown: {t_k:.1f}s")
        print("shared Triton cache (once per release and Triton version; autograder/grade/triton_cache.py): "
              + (f"{warm_s:.1f}s, {shared.name}" if shared else "off"))

        if not args.no_alone:
            c0, t0 = _machine_busy()[0], time.monotonic()
            r = autograde(course, assignment, students=["s000"], jobs=1, cell_timeout=args.cell_timeout,
                          quiet=True)
            one_wall, one_cpu = time.monotonic() - t0, _machine_busy()[0] - c0
            assert r[0].ok, r[0].error
            print(f"one hand-in alone: {one_wall:.1f}s wall, {one_cpu:.1f} CPU-s (machine busy time)")

        students = [f"s{i:03d}" for i in range(1, args.n + 1)]
        with contextlib.ExitStack() as stack:
            if args.dask_workers:
                cluster = stack.enter_context(dispatch.local_cluster(args.dask_workers))
                os.environ[dispatch.ENV] = cluster.scheduler_address
                stack.callback(os.environ.pop, dispatch.ENV, None)
                print(f"through Dask: a LocalCluster of {args.dask_workers} worker process(es), one thread each")
            b0, t0 = _machine_busy(), time.monotonic()
            rs = autograde(course, assignment, students=students, jobs=args.jobs, cell_timeout=args.cell_timeout,
                           quiet=True)
            wall, b1 = time.monotonic() - t0, _machine_busy()
        cpu = b1[0] - b0[0]
        machine = cpu / max(1e-9, b1[1] - b0[1])
        failed = [x.student for x in rs if not x.ok]
        per = [x.seconds for x in rs]
        how = f"on {args.dask_workers} Dask worker(s)" if args.dask_workers else f"{args.jobs} at a time"
        cpu_s = "CPU-s not counted (Dask worker processes)" if args.dask_workers else \
            f"{cpu:.0f} CPU-s of machine busy time ({cpu / args.n:.1f} per hand-in)"
        print(f"{args.n} hand-ins, {how}: {wall:.0f}s wall ({wall / args.n:.1f}s per hand-in), "
              f"{cpu_s}; each took {min(per):.0f}-{max(per):.0f}s; failed: {failed or 'none'}")
        print(f"machine CPU busy {machine:.0%} during the run (all processes, load average now "
              f"{os.getloadavg()[0]:.1f}) -> "
              + ("CPU-bound: more hand-ins at once will not help on this machine" if machine > 0.85
                 else "not CPU-bound: waits (kernel start-up, I/O) dominate; try more --jobs"))
        print(f"fixed cost per hand-in ~ nbgrader start-up {t_nbg:.1f}s + {nbs} x kernel start {t_k:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
