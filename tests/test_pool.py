"""One grading pool over every hand-in × notebook (autograder/grade/schedule.py, dispatch.py,
autograder/course_lock.py): the job count from CPUs and memory, the order of the tasks, and the cleanup of
what a killed command left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder import course_lock as lock
from autograder.course import Course
from autograder.grade import dispatch, schedule
from autograder.sandbox.limits import GiB

ROOT = Path(__file__).resolve().parent.parent


def _fake_host(monkeypatch, tmp_path, avail_gib: float, cg_max: str | None = None, cg_current: int = 0):
    tmp_path.mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(schedule.psutil, "virtual_memory", lambda: SimpleNamespace(available=int(avail_gib * GiB)))
    proc_cg = tmp_path / "cgroup"
    proc_cg.write_text("0::/grader.slice\n")
    root = tmp_path / "cg"
    (root / "grader.slice").mkdir(parents=True)
    if cg_max is not None:
        (root / "grader.slice" / "memory.max").write_text(cg_max + "\n")
        (root / "grader.slice" / "memory.current").write_text(f"{cg_current}\n")
    return schedule.available_memory(proc_cg, root)


def test_job_count_on_a_fake_small_host(tmp_path, monkeypatch):
    monkeypatch.delenv(schedule.JOBS_ENV, raising=False)
    six = 6 * GiB
    # 16 cores but 13 GiB free: memory allows two 6-GiB hand-ins, not 17
    avail = _fake_host(monkeypatch, tmp_path, 13)
    assert avail == 13 * GiB
    n, why = schedule.plan_jobs(per_handin_bytes=six, cpus=16, available=avail)
    assert n == 2 and "CPUs 16 + 1 = 17" in why and "13.0 GiB available / 6 GiB per hand-in = 2" in why
    # less than one hand-in's limit: still one at a time, never zero
    assert schedule.plan_jobs(per_handin_bytes=six, cpus=16, available=2 * GiB)[0] == 1
    # plenty of memory: CPUs + 1
    assert schedule.plan_jobs(per_handin_bytes=six, cpus=2, available=64 * GiB)[0] == 3
    # the grader's own cgroup caps what is available (8 GiB max, 1 GiB used: 7 GiB of room)
    avail = _fake_host(monkeypatch, tmp_path / "c", 60, cg_max=str(8 * GiB), cg_current=GiB)
    assert avail == 7 * GiB and schedule.plan_jobs(per_handin_bytes=3 * GiB, cpus=8, available=avail)[0] == 2
    assert _fake_host(monkeypatch, tmp_path / "d", 5, cg_max="max") == 5 * GiB
    # the per-hand-in limit is a setting (argument or environment)
    assert schedule.handin_memory_bytes(None, 2.5) == int(2.5 * GiB)
    monkeypatch.setenv(schedule.HANDIN_MEMORY_ENV, "3")
    assert schedule.handin_memory_bytes() == 3 * GiB
    monkeypatch.delenv(schedule.HANDIN_MEMORY_ENV)
    assert schedule.handin_memory_bytes() == 6 * GiB  # the sandbox's cgroup limit
    assert schedule.handin_memory_bytes(8 * GiB) == 8 * GiB  # a larger per-process limit raises it
    # the job count is a setting too: it wins over the computed one
    assert schedule.plan_jobs(5, per_handin_bytes=six, cpus=2, available=GiB) == (5, "5 at a time (set)")
    monkeypatch.setenv(schedule.JOBS_ENV, "4")
    assert schedule.plan_jobs(per_handin_bytes=six, cpus=2, available=GiB)[0] == 4


@pytest.mark.parametrize("setting", [{"jobs": 0}, {"jobs": True}, {"env": "x"}, {"env": "-2"}])
def test_bad_job_settings_are_refused(setting, monkeypatch):
    monkeypatch.delenv(schedule.JOBS_ENV, raising=False)
    if "env" in setting:
        monkeypatch.setenv(schedule.JOBS_ENV, setting["env"])
    with pytest.raises(ValueError, match="GRADE_JOBS|jobs"):
        schedule.plan_jobs(setting.get("jobs"), per_handin_bytes=GiB, cpus=2, available=GiB)


@pytest.mark.parametrize("gb,exc", [(0, ValueError), (-1.0, ValueError), ("4", TypeError)])
def test_bad_handin_memory_is_refused(gb, exc):
    with pytest.raises(exc, match="handin_memory_gb"):
        schedule.handin_memory_bytes(None, gb)


@pytest.mark.parametrize("argv,env,needle", [(["--jobs", "0", "--handin-memory-gb", "4"], {}, "jobs"),
                                             (["--handin-memory-gb", "-1"], {"GRADE_UNIT": "handin"},
                                              "handin_memory_gb"),
                                             ([], {"GRADE_JOBS": "x"}, "GRADE_JOBS")])
def test_autograde_cli_bad_settings_one_line(tmp_path, argv, env, needle):
    """Refused before anything runs (the masters' check, grading): one line, exit 2, nothing written."""
    from autograder.samplekit.fixture import ASSIGNMENT, hand_in, make_course

    root = make_course(tmp_path / "c")
    hand_in(root, "ann", {"01_counts": json.loads(_nb(2))})
    before = sorted(p.relative_to(root) for p in Path(root).rglob("*"))
    p = subprocess.run([sys.executable, "-m", "autograder", "--course-root", str(root), "autograde", ASSIGNMENT,
                        *argv], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), **env))
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("error:")
    assert sorted(p.relative_to(root) for p in Path(root).rglob("*")) == before


def _nb(n_code: int) -> str:
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": "x = 1"}] * n_code
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_pool_order_longest_expected_first(tmp_path, monkeypatch):
    monkeypatch.delenv(schedule.UNIT_ENV, raising=False)
    course = Course.at(tmp_path)
    for a, nbs in {"w6": {"k1": 9, "k2": 2}, "w7": {"m1": 4}}.items():
        (course.work / "release" / a).mkdir(parents=True)
        for nb, n in nbs.items():
            (course.work / "release" / a / f"{nb}.ipynb").write_text(_nb(n))
            for s in ("ann", "bob", "cid"):
                (course.submitted / s / a).mkdir(parents=True, exist_ok=True)
                (course.submitted / s / a / f"{nb}.ipynb").write_text(_nb(n))
    (course.submitted / "bob" / "w6" / "extra.ipynb").write_text(_nb(50))  # not in the assignment: no task
    todo = {"w6": ["ann", "bob", "cid"], "w7": ["ann", "bob", "cid"]}
    # one task per hand-in on this machine, per hand-in x notebook on a Dask cluster
    monkeypatch.delenv(dispatch.ENV, raising=False)
    assert len(schedule.plan_parts(course, todo)) == 6
    monkeypatch.setenv(dispatch.ENV, "tcp://127.0.0.1:8786")
    assert len(schedule.plan_parts(course, todo)) == 9
    monkeypatch.delenv(dispatch.ENV)
    monkeypatch.setenv(schedule.UNIT_ENV, "notebook")
    # no history: by code cells
    parts = schedule.plan_parts(course, todo)
    assert [(p.assignment, p.notebook) for p in parts[:3]] == [("w6", "k1")] * 3
    assert len(parts) == 9 and not any(p.notebook == "extra" for p in parts)
    # with the last run's times: bob's k2 hung to its limit last time; w7/m1 is slow for the whole class
    schedule.record_durations(course, [(schedule.Part("w6", "bob", "k2"), 600.0),
                                       (schedule.Part("w6", "ann", "k2"), 5.0),
                                       (schedule.Part("w6", "cid", "k2"), 4.0),
                                       (schedule.Part("w7", "ann", "m1"), 40.0),
                                       (schedule.Part("w7", "bob", "m1"), 50.0),
                                       (schedule.Part("w6", "ann", "k1"), 20.0)])
    parts = schedule.plan_parts(course, todo)
    names = [p.name for p in parts]
    assert names[0] == "w6/bob/k2"  # the hang first
    assert names[1:4] == ["w7/bob/m1", "w7/cid/m1", "w7/ann/m1"]  # cid: the class median (45 s)
    assert parts[2].expected_s == 45.0
    assert names[4:] == ["w6/ann/k1", "w6/bob/k1", "w6/cid/k1", "w6/ann/k2", "w6/cid/k2"]
    assert [p.expected_s for p in parts] == sorted((p.expected_s for p in parts), reverse=True)
    parts = schedule.plan_parts(course, todo, unit="handin")
    assert len(parts) == 6 and all(p.notebook is None for p in parts)
    with pytest.raises(ValueError, match="unit"):
        schedule.plan_parts(course, todo, unit="cell")
    monkeypatch.setenv(schedule.UNIT_ENV, "handin")
    assert len(schedule.plan_parts(course, todo)) == 6
    monkeypatch.setenv(schedule.UNIT_ENV, "cells")
    with pytest.raises(ValueError, match="GRADE_UNIT"):
        schedule.plan_parts(course, todo)


def test_a_long_task_leaves_no_slot_idle():
    """Longest first through the local pool: 1 task of 1.2 s and 8 of 0.3 s on 2 slots end in ~1.2 s
    (the long one beside the short ones), where long-last would take 1.2 + 8 * 0.3 / 2 = 2.4 s."""
    started = []
    lock_ = threading.Lock()

    def task(name, s):
        with lock_:
            started.append(name)
        time.sleep(s)
        return name

    tasks = [("long", 1.2)] + [(f"s{i}", 0.3) for i in range(8)]
    t0 = time.monotonic()
    with dispatch.pool(2) as submit:
        done = dispatch.Completion()
        for name, s in tasks:
            done.add(submit(task, name, s, priority=int(s * 10)), name)
        got = []
        while done:
            fut, tag = done.next()
            got.append(fut.result())
            if tag == "s0":  # a task added while others run (a regrade) is taken too
                done.add(submit(task, "again", 0.05), "again")
    wall = time.monotonic() - t0
    assert started[0] == "long" and sorted(got) == sorted([n for n, _ in tasks] + ["again"])
    assert wall < 2.0, wall


def test_killed_commands_leave_nothing_a_rerun_does_not_clean(tmp_path):
    work = tmp_path / "work"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = lock.stage_dir(work, "collect", "week07")  # this process: alive
    assert live.name.startswith(f"collect-{os.getpid()}-week07-")
    stale = work / f"collect-{dead.pid}-week07-abcd"
    (stale / "handins").mkdir(parents=True)
    (stale / "handins" / "0.ipynb").write_text("{}")
    bench = work / f"bench-{dead.pid}-xyz"
    bench.mkdir()
    old = work / "collect-week07-oldformat"
    old.mkdir()
    os.utime(old, (time.time() - 2 * lock.OLD_FORMAT_AGE_S,) * 2)
    young = work / "collect-week07-young"
    young.mkdir()
    assert lock.clean_stale_stages(work) == sorted([stale, bench, old])
    assert live.is_dir() and young.is_dir()
    # autograde (course lock held): grading scratch, a dead run's warm-up and stale stages
    (work / "grade" / "w7" / "ann" / "nb-01").mkdir(parents=True)
    (work / "warm-1234").mkdir()
    stale.mkdir()
    rt = tmp_path / "rt"
    rt.mkdir()
    removed = lock.clean_leftovers(work, runtime_parent=rt)
    assert set(removed) == {work / "grade" / "w7" / "ann", work / "warm-1234", stale}
    assert live.is_dir() and not list((work / "grade" / "w7").iterdir())
    with pytest.raises(ValueError, match="kind"):
        lock.stage_dir(work, "grade")


@pytest.mark.slow
def test_killed_collect_staging_is_cleaned_by_the_next_collect(tmp_path, make_scratch_course):
    """A collect killed with SIGKILL mid-way leaves its staging; the next collect removes it."""
    from autograder.collect.handins import collect
    from autograder.samplekit.fixture import ASSIGNMENT, solved

    course = make_scratch_course(tmp_path / "course", released=True)
    src = tmp_path / "downloads"
    src.mkdir()
    for s in ("ann", "bob"):
        (src / f"{s}.ipynb").write_text(json.dumps(solved(course.root, "01_counts")), encoding="utf-8")
    code = ("import sys, os, signal;"
            "import autograder.collect.handins as c; from autograder.course import Course;"
            "c._Run.choose = lambda self: os.kill(os.getpid(), signal.SIGKILL);"
            "c.collect(Course.at(sys.argv[1]), sys.argv[2], sys.argv[3])")
    p = subprocess.run([sys.executable, "-c", code, str(course.root), ASSIGNMENT, str(src)],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode == -9, p.stderr
    left = list(course.work.glob("collect-*"))
    assert left and any(left[0].rglob("*.ipynb"))  # the kill left a staging copy behind
    collect(course, ASSIGNMENT, src)
    assert not list(course.work.glob("collect-*")), "the rerun left staging behind"
    assert sorted(p.name for p in course.submitted.iterdir()) == ["ann", "bob"]


def test_bench_class_builds_a_mixed_class_with_expected_scores(tmp_path):
    from autograder.bench import grading as bench_class

    repo = Course.at(ROOT)
    assignments = bench_class.sampled(repo)
    assert {"week06", "week07"} <= set(assignments)
    course = Course.at(tmp_path)
    for a in assignments:
        (course.release / a).mkdir(parents=True)
        for nb in (repo.release / a).glob("*.ipynb"):
            (course.release / a / nb.name).write_bytes(nb.read_bytes())
    expected, slow = bench_class.build_class(repo, course, assignments, 26, None, slow_every=25)
    assert slow == [f"week06/s024/{repo.notebooks('week06')[24 % 3]}", f"week07/s024/{repo.notebooks('week07')[0]}"]
    for a in assignments:
        names = set(course.notebooks(a, "release"))
        for i in range(26):
            got = {p.stem for p in (course.submitted / f"s{i:03d}" / a).glob("*.ipynb")}
            assert got == names  # every student hands in every notebook
        exp_a = {k: v for k, v in expected.items() if k[0] == a}
        assert {nb for (_, _, nb, _) in exp_a} == names
        totals = {}
        for (_, s, nb, _), pts in exp_a.items():
            totals[(s, nb)] = totals.get((s, nb), 0) + pts
        for nb in names:  # the kinds rotate: right and wrong hand-ins of every notebook
            per = {totals[(f"s{i:03d}", nb)] for i in range(26)}
            assert len(per) >= 2 and 0 in per, (a, nb, per)
    a, s, nb = slow[1].split("/")
    cells = json.loads((course.submitted / s / a / f"{nb}.ipynb").read_text())["cells"]
    assert cells[-1]["source"] == bench_class.SLOW_CELL
    full = bench_class.read_expected(repo.root / "autograder" / "samples" / a)[0]
    assert {g: p for (aa, ss, n, g), p in expected.items() if (aa, ss, n) == (a, s, nb)} == \
        {g: p for (k, n, g), p in full.items() if (k, n) == ("full_marks", nb)}
    assert bench_class.p95(list(range(1, 101))) == 95 and bench_class.p95([3.0]) == 3.0
    row = {k: 1 for k in bench_class.FIELDS} | {"date": "d"}
    for _ in range(2):
        csv_path, md = bench_class.write_results(tmp_path / "out", row, {"week06/01": [1.0, 2.0]})
    assert len(csv_path.read_text().splitlines()) == 3 and "| week06/01 | 2 | 1.5 |" in md.read_text()


def test_regrade_reasons_a_signal_not_the_students_own_exit(tmp_path):
    from autograder.grade.merge import HandInResult
    from autograder.grade.nbexec import STOP_ENAME

    course = Course.at(tmp_path)
    part = schedule.Part("w7", "ann", "01_x")
    graded = schedule.part_dir(course, "w7", "ann", "01_x") / "autograded" / "ann" / "w7"
    graded.mkdir(parents=True)

    def write(evalue: str):
        stop = {"output_type": "error", "ename": STOP_ENAME, "evalue": evalue, "traceback": []}
        cells = [{"cell_type": "code", "source": "x", "metadata": {}, "outputs": [stop]}]
        (graded / "01_x.ipynb").write_text(json.dumps({"cells": cells}))

    ok = HandInResult("ann", "w7", ok=True, seconds=1.0, log="")
    write("이 셀을 실행하는 중 커널이 외부 신호 9번으로 종료되었습니다(killed by signal 9 (SIGKILL): ...)")
    assert schedule.regrade_reasons(course, part, ok, "nbgrader killed ") == ["01_x: killed by signal 9 (SIGKILL)"]
    write("이 셀을 실행하는 중 커널이 종료되었습니다(kernel exited with code 3).")  # the student's os._exit
    assert schedule.regrade_reasons(course, part, ok, "nbgrader killed ") == []
    write("이 셀을 실행하는 중 커널이 자원 제한으로 종료되었습니다(LIMIT_MEMORY: ...).")  # its own limit
    assert schedule.regrade_reasons(course, part, ok, "nbgrader killed ") == []
    bad = HandInResult("ann", "w7", ok=False, seconds=1.0, log="", error="nbgrader killed 9 (see /x/y.log)")
    assert schedule.regrade_reasons(course, part, bad, "nbgrader killed ") == ["01_x: nbgrader killed 9"]
    bad.error = "nbgrader autograde exited with 1 (see /x/y.log)"
    assert schedule.regrade_reasons(course, part, bad, "nbgrader killed ") == []


@pytest.mark.parametrize("argv,needle", [(["-n", "0"], "-n must be"), (["--assignment", "week99"], "no samples for week99"),
                                         (["-n", "1", "--notebook", "nope"], "no sampled notebook")])
def test_bench_class_bad_use_one_line(argv, needle, capsys):
    from autograder.bench import grading as bench_class

    assert bench_class.main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1
