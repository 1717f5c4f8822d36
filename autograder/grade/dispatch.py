"""Where hand-ins are graded: a local thread pool (default) or a Dask cluster.

``SCHEDULER=tcp://host:8786 make autograde`` (environment ``GEMM_LAB_SCHEDULER``) sends each hand-in ×
notebook to a ``dask.distributed`` cluster as one task, longest expected first (task priority); results come
back to the one process that writes the gradebook, exactly as the local jobs do. Without it: ``jobs``
threads, each running one nbgrader at a time, taking the tasks in the order submitted.

A worker that dies mid-task (killed, OOM, lost host): the scheduler gives the task to another worker once
(``ALLOWED_FAILURES``: start the scheduler with the environment ``SCHEDULER_ENV``; a ``LocalCluster``
made here gets it set); a second death reports the hand-in as failed (:func:`result`), so a
hand-in is never lost and never merged twice (only a finished task's result is merged, once).
Workers need the course directory at the same path (a shared file system), the course venv and bubblewrap.
"""

from __future__ import annotations

import os
import queue
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

ENV = "GEMM_LAB_SCHEDULER"
ALLOWED_FAILURES = 1  # worker deaths a task survives: one retry, then reported
# A worker holds only the task it runs (saturation 1.0): a death then marks only that hand-in, not queued ones.
SCHEDULER_CONFIG = {"distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
                    "distributed.scheduler.worker-saturation": 1.0}
SCHEDULER_ENV = {"DASK_" + k.upper().replace(".", "__").replace("-", "_"): str(v) for k, v in SCHEDULER_CONFIG.items()}


def scheduler_address() -> str | None:
    """``$GEMM_LAB_SCHEDULER``; unset or '' means local."""
    addr = os.environ.get(ENV, "")
    if addr and "://" not in addr:
        raise ValueError(f"scheduler ({ENV}): expected an address like tcp://host:8786, got {addr!r}")
    return addr or None


@contextmanager
def pool(jobs: int):
    """``submit(fn, *args, key=None, priority=0)``, a future of ``fn(*args)``: on ``jobs`` local threads,
    which take tasks in the order submitted, or on the Dask scheduler (see :func:`scheduler_address`), which
    takes them by ``priority`` (higher first), so submit longest-expected first with the higher priority."""
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs: expected an int >= 1, got {jobs!r}")
    addr = scheduler_address()
    if addr is None:
        with ThreadPoolExecutor(max_workers=jobs) as ex:
            yield lambda fn, *a, key=None, priority=0: ex.submit(fn, *a)
        return
    from distributed import Client

    with Client(addr) as client:
        yield dask_submit(client)


def dask_submit(client):
    def submit(fn, *args, key=None, priority=0):
        return client.submit(fn, *args, pure=False, retries=0, key=key, priority=priority)

    return submit


class Completion:
    """Futures (local or Dask) with a tag each, taken as they finish; more may be added while waiting
    (a regrade). ``while c: fut, tag = c.next()``."""

    def __init__(self):
        self._done: queue.Queue = queue.Queue()
        self._open: set = set()  # held here: a Dask future nobody holds is released (its task forgotten)

    def add(self, fut, tag) -> None:
        self._open.add(fut)
        fut.add_done_callback(lambda f: self._done.put((f, tag)))

    def __len__(self) -> int:
        return len(self._open)

    def next(self):
        fut, tag = self._done.get()
        self._open.discard(fut)
        return fut, tag


def local_cluster(n_workers: int = 2):
    """A LocalCluster (processes, one thread each) whose scheduler retries a task once after a worker death."""
    import dask
    from distributed import LocalCluster

    with dask.config.set(SCHEDULER_CONFIG):
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None)


def result(fut, student: str, assignment: str, log: str):
    """``fut``'s HandInResult; a hand-in whose workers died is reported as a failed result (never dropped)."""
    try:
        return fut.result()
    except Exception as exc:
        if type(exc).__name__ != "KilledWorker":  # distributed's: the task's workers died (else a real error)
            raise
        from autograder.grade.merge import HandInResult

        why = f"the Dask worker grading it died {ALLOWED_FAILURES + 1} times ({exc}); not graded"
        return HandInResult(student, assignment, ok=False, seconds=0.0, log=log, error=why)
