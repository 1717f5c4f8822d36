"""Where a hand-in's grading seconds go: CPU seconds per kind of process, per notebook.

    python -m autograder.bench.breakdown [--assignment week07] [--assignment week06] [--rounds 1]

Grades one full-marks hand-in of each assignment alone (one job) while sampling the process tree every
50 ms (psutil), and sums each process's CPU time (user + system, the last sample it was seen at) by what
it is: the nbgrader process (its start-up, the test cells replayed on the claims, the judging), the
sandboxed kernel that ran the student's cells, the workers that ran kernels and function answers, and the
sandbox plumbing (bubblewrap, the supervisor). Processes that live under 50 ms are missed; the sum is
compared with the children's CPU time from ``getrusage`` so the gap is visible.
"""

from __future__ import annotations

import argparse
import resource
import threading
import time
import warnings
from collections import defaultdict
from pathlib import Path

import psutil

from autograder.bench.throughput import prepared
from autograder.grade.autograde import autograde


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
    """Polls this process's descendants; keeps each one's last CPU time and kind."""

    def __init__(self, interval: float = 0.05):
        self.interval = interval
        self.seen: dict[int, tuple[str, float, float]] = {}  # pid -> (kind, create_time, cpu)
        self.lines: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            for p in me.children(recursive=True):
                try:
                    with p.oneshot():
                        t = p.cpu_times()
                        key = p.pid
                        if key not in self.lines:
                            self.lines[key] = " ".join(p.cmdline())
                        kind = self.seen.get(key, (None,))[0] or kind_of(p.cmdline())
                        self.seen[key] = (kind, p.create_time(), t.user + t.system)
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    pass
            self._stop.wait(self.interval)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def by_kind(self) -> dict[str, tuple[int, float]]:
        out: dict[str, list] = defaultdict(lambda: [0, 0.0])
        for kind, _, cpu in self.seen.values():
            out[kind][0] += 1
            out[kind][1] += cpu
        return {k: (n, c) for k, (n, c) in out.items()}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--assignment", action="append", help="default: week06 and week07")
    ap.add_argument("--verbose", action="store_true", help="also list every process over 0.3 CPU-s")
    ap.add_argument("--rounds", type=int, default=1, help="grade the hand-in this many times")
    args = ap.parse_args(argv)
    for a in args.assignment or ["week06", "week07"]:
        with prepared(a, None, args.rounds - 1) as (course, assignment, _warm_s, _shared):
            for r in range(args.rounds):
                c0, t0 = _children_cpu(), time.monotonic()
                with Sampler() as s:
                    res = autograde(course, assignment, students=[f"s{r:03d}"], jobs=1, quiet=True,
                                    regrade=True)
                wall, cpu = time.monotonic() - t0, _children_cpu() - c0
                assert res[0].ok, res[0].error
                if args.verbose:
                    log = Path(res[0].log).read_text(errors="replace").splitlines()
                    print("\n".join(x for x in log if "kernel" in x.lower())[-3000:])
                print(f"{assignment} round {r + 1}: {wall:.1f}s wall, {cpu:.1f} CPU-s (getrusage of children)")
                total = 0.0
                for kind, (n, c) in sorted(s.by_kind().items(), key=lambda kv: -kv[1][1]):
                    total += c
                    print(f"  {c:6.1f} CPU-s  {n:3d} process(es)  {kind}")
                if args.verbose:
                    for pid, (_kind, _t, c) in sorted(s.seen.items(), key=lambda kv: kv[1][1]):
                        if c >= 0.3:
                            print(f"    {c:5.1f} CPU-s  pid {pid}: {s.lines[pid][-150:]}")
                print(f"  {total:6.1f} CPU-s  sampled in all ({cpu - total:+.1f} missed: processes under 50 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
