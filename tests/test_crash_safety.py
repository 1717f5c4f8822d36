"""`make autograde` killed at any point, run twice at once, and kernels killed from outside.

Each test starts `python -m autograder autograde` on the tiny fixture assignment as its own process and
kills processes it started (or their descendants) by PID. Fast tests cover the lock, the resume
bookkeeping and the exit-status reading without grading anything.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autograder.course_lock import AutogradeLocked, CourseLock, clean_leftovers, owner_gone, pid_alive
from autograder.grade.nbexec import death_reason

ROOT = Path(__file__).resolve().parent.parent


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


# ------------------------------------------------------------------------------------------ fast tests
def test_lock_refuses_a_second_holder_and_takes_over_a_dead_ones(tmp_path):
    said = []
    with CourseLock(tmp_path, log=said.append):
        with pytest.raises(AutogradeLocked, match=f"process {os.getpid()}"):
            CourseLock(tmp_path).__enter__()
    assert said == [] and (tmp_path / "autograde.lock").read_text() == ""
    dead = _dead_pid()
    (tmp_path / "autograde.lock").write_text(f"{dead}\n")
    with CourseLock(tmp_path, log=said.append) as lock:
        assert lock.taken_over == dead
    assert len(said) == 1 and f"process {dead}" in said[0] and "gone" in said[0]


def test_leftover_runtime_folder_with_a_mounted_socket_folder_is_removed(tmp_path):
    """As root, a kernel's ipc sockets live on a small tmpfs inside the runtime folder; a grader killed by
    SIGKILL leaves it mounted, and the next run must still remove the folder."""
    rt = tmp_path / "rt"
    stale = rt / f"glrt-{_dead_pid()}-12345-abc"
    (stale / "s 1-x").mkdir(parents=True)  # a space: written \040 in mountinfo
    (stale / "kernel-1.json").write_text("{}")
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(stale / "s 1-x")], check=True,
                       capture_output=True, timeout=30)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN): {exc}")
    (stale / "s 1-x" / "k-shell").write_text("")
    removed = clean_leftovers(tmp_path / "work", runtime_parent=rt)
    assert removed == [stale] and not stale.exists()
    assert str(stale) not in Path("/proc/self/mountinfo").read_text()


def test_leftovers_of_a_dead_run_are_removed_and_live_ones_kept(tmp_path):
    work, rt = tmp_path / "work", tmp_path / "rt"
    (work / "grade" / "a1" / "bob" / "x").mkdir(parents=True)
    (work / "grade" / "a1" / "gradebook.base.db").write_text("x")
    dead, live = rt / f"glrt-{_dead_pid()}-abc", rt / f"glrt-{os.getpid()}-abc"
    old, recent = rt / "glrt-k2j3h4", rt / "glrt-x9y8z7"  # no owner PID (older versions)
    for d in (dead, live, old, recent):
        d.mkdir(parents=True)
    os.utime(old, (time.time() - 2 * 86400,) * 2)
    removed = clean_leftovers(work, runtime_parent=rt)
    assert not (work / "grade" / "a1" / "bob").exists() and not dead.exists() and not old.exists()
    assert live.exists() and recent.exists()
    assert len(removed) == 4
    assert pid_alive(os.getpid()) and not pid_alive(_dead_pid())


def test_a_folder_whose_pid_now_belongs_to_a_newer_process_is_a_dead_runs(tmp_path):
    """pids are reused on a busy machine: a live process that started after the folder was last written
    is not its owner."""
    rt = tmp_path / "rt"
    reused = rt / f"glrt-{os.getpid()}-old"
    reused.mkdir(parents=True)
    os.utime(reused, (time.time() - 3 * 86400,) * 2)  # written before this process (the test runner) began
    assert owner_gone(os.getpid(), reused.stat().st_mtime) and not owner_gone(os.getpid(), time.time())
    assert clean_leftovers(tmp_path / "work", runtime_parent=rt) == [reused] and not reused.exists()


@pytest.mark.parametrize("status, reason, sig", [
    (-9, "killed by signal 9 (SIGKILL)", 9),  # the sandbox process itself was killed
    (137, "killed by signal 9 (SIGKILL)", 9),  # bwrap: the kernel inside died of SIGKILL
    (139, "killed by signal 11 (SIGSEGV)", 11),
    (3, "kernel exited with code 3", None),  # the student's os._exit(3)
    (0, "kernel exited with code 0", None),
])
def test_death_reason_reads_the_exit_status(status, reason, sig):
    assert death_reason(status) == (reason, sig)


# ------------------------------------------------------------------------------------ real processes
def _start(course, *extra, env=None):
    cmd = [sys.executable, "-m", "autograder", "--course-root", str(course.root), "autograde", "demo01",
           "--cell-timeout", "30", "--notebook-timeout", "120", *extra]
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def _run(course, *extra, env=None, timeout=300):
    p = _start(course, *extra, env=env)
    out, _ = p.communicate(timeout=timeout)
    return p.returncode, out


def _scores(course) -> dict:
    with sqlite3.connect(course.gradebook) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = db.execute(
            "SELECT submitted_assignment.student_id, base_cell.name, grade.auto_score FROM grade "
            "JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id "
            "JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id "
            "JOIN base_cell ON grade.cell_id = base_cell.id").fetchall()
    out: dict = {}
    for student, cell, score in rows:
        out.setdefault(student, {})[cell] = score
    return out


def _graded_mark(course) -> set:
    with sqlite3.connect(course.gradebook) as db:
        return {s for (s,) in db.execute("SELECT student FROM gemm_lab_graded WHERE ok = 1")}


def _graded_lines(out: str) -> list[str]:
    return [ln.split()[1].split("/", 1)[1] for ln in out.splitlines() if ln.startswith("graded demo01/")]


def _descendants(pid: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def _running_in(folder: Path) -> list[int]:
    """Processes whose working directory is inside ``folder`` (nbgrader runs in the scratch course)."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and Path(os.readlink(d / "cwd")).is_relative_to(folder):
                out.append(int(d.name))
        except OSError:
            continue
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.slow
def test_sigkill_midway_then_rerun_keeps_scores_and_grades_the_rest_once(tmp_path, make_scratch_course):
    from autograder.sandbox import bwrap as sandbox

    if sandbox.bwrap_path() is None:
        pytest.skip("bubblewrap not installed (apt-get install -y bubblewrap)")

    def wrong(nbs):
        cell = next(c for c in nbs["01_counts"]["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "ans_pct")
        cell["source"] = "pct = 41.0"

    course = make_scratch_course(tmp_path / "course", hand_ins={"a_full": None, "b_wrong": wrong, "c_full": None})
    # 0. kill -9 while it records the assignment (nbgrader generate_assignment writing the gradebook)
    p = _start(course, "--jobs", "1")
    lock = course.work / "autograde.lock"
    while p.poll() is None and not (lock.exists() and lock.read_text().strip() == str(p.pid)):
        time.sleep(0.1)
    time.sleep(1.5)
    os.kill(p.pid, signal.SIGKILL)
    assert p.wait(timeout=60) == -signal.SIGKILL
    assert _scores(course) == {} and _graded_mark(course) == set()  # integrity_check inside
    # 1. kill -9 the whole run right after its first hand-in is merged
    p = _start(course, "--jobs", "1")
    first = None
    for line in p.stdout:
        if line.startswith("graded demo01/"):
            first = line.split()[1].split("/", 1)[1]
            os.kill(p.pid, signal.SIGKILL)
            break
    p.wait(timeout=60)
    assert first is not None and p.returncode == -signal.SIGKILL
    # the sandboxes notice their grader is gone within their 0.5 s poll, then stop and clean up within their
    # own bounds (the output reader's 10 s, the cgroup removal's 5 s per controller; on a loaded machine they
    # use them): nothing may be left once those have passed
    bound = 10 + 2 * 5 + 5
    deadline = time.monotonic() + bound
    while _running_in(course.root) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _running_in(course.root)
    assert not left, f"grading processes outlived the kill by {bound} s: {[_cmdline(x)[:160] for x in left]}"
    before = _scores(course)  # integrity_check inside
    assert _graded_mark(course) == {first}
    leftover_rt = list(Path("/tmp").glob(f"glrt-{p.pid}-*"))
    assert leftover_rt and any((course.work / "grade" / "demo01").iterdir())  # the kill left scratch behind

    # 2. rerun: takes the dead lock over, skips the merged hand-in, grades the other two once
    rc, out = _run(course, "--jobs", "2")
    assert rc == 0, out
    assert f"taking over the lock of process {p.pid}" in out and out.count("taking over") == 1
    assert "1 hand-in(s) of demo01 already graded" in out
    assert sorted(_graded_lines(out)) == sorted({"a_full", "b_wrong", "c_full"} - {first})
    after = _scores(course)
    assert after[first] == before[first]
    total = {s: sum(v or 0 for v in cells.values()) for s, cells in after.items()}
    assert total == {"a_full": 8.0, "b_wrong": 5.0, "c_full": 8.0}  # b_wrong loses pct_40 (3 points)
    assert _graded_mark(course) == {"a_full", "b_wrong", "c_full"}
    left_rt = list(Path("/tmp").glob(f"glrt-{p.pid}-*"))
    assert not left_rt, ([str(f) for x in left_rt for f in x.rglob("*")], out[-2000:])
    assert not list((course.work / "grade").glob("*/*"))  # no scratch course, no snapshot left
    review = json.loads(course.review_json.read_text())["demo01"]
    assert set(review) == {"a_full", "b_wrong", "c_full"}

    # 3. killed inside the merge transaction (fault injection): old scores intact, regraded next time
    # (--no-master-check: the masters' check merges too, and would be the one killed when its cache is cold)
    rc, out = _run(course, "--regrade", "--student", "b_wrong", "--no-master-check",
                   env={"GEMM_LAB_CRASH_AT": "before_commit"})
    assert rc == -signal.SIGKILL
    assert _scores(course) == after and _graded_mark(course) == {"a_full", "c_full"}
    rc, out = _run(course)
    assert rc == 0 and _graded_lines(out) == ["b_wrong"] and _scores(course) == after
    # 4. nothing changed: nothing is graded again
    rc, out = _run(course)
    assert rc == 0 and _graded_lines(out) == [] and "3 hand-in(s) of demo01 already graded" in out


@pytest.mark.slow
def test_second_autograde_refused_and_kernel_killed_from_outside_flagged(tmp_path, make_scratch_course):
    from autograder.sandbox import bwrap as sandbox

    if sandbox.bwrap_path() is None:
        pytest.skip("bubblewrap not installed (apt-get install -y bubblewrap)")

    def sleeper(nbs):
        cells = nbs["01_counts"]["cells"]
        i = next(i for i, c in enumerate(cells) if c["metadata"].get("nbgrader", {}).get("grade_id") == "ans_tiles")
        cells.insert(i + 1, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                             "source": "import time\ntime.sleep(45)"})

    def self_exit(nbs):
        cells = nbs["01_counts"]["cells"]
        i = next(i for i, c in enumerate(cells) if c["metadata"].get("nbgrader", {}).get("grade_id") == "ans_tiles")
        cells.insert(i + 1, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                             "source": "import os\nos._exit(3)"})

    course = make_scratch_course(tmp_path / "course",
                                 hand_ins={"sleeper": sleeper, "self_exit": self_exit, "sleeper_once": sleeper})
    p = _start(course, "--jobs", "3", "--unit", "notebook")  # the other tests here grade a task per hand-in
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(p.stdout), daemon=True)
    reader.start()

    def sleeper_kernel(student: str = "sleeper") -> int | None:
        """The sleeper's kernel: the deepest ipykernel process under the nbgrader running in the scratch
        of its notebook 01_counts."""
        for nbg in _running_in(course.work / "grade" / "demo01" / student / "nb-01_counts"):
            if "nbgrader" not in _cmdline(nbg):
                continue
            deep = [k for k in _descendants(nbg) if "ipykernel" in _cmdline(k)
                    and not any("ipykernel" in _cmdline(c) for c in _descendants(k))]
            if deep:
                return deep[0]
        return None

    def wait_kernel(student: str, not_this: int | None = None) -> tuple[int | None, float]:
        """The kernel once it has settled: the sandbox forks before it execs the kernel, and the fork
        carries the kernel's command line for a moment, so a pid counts only when seen 1.5 s unchanged."""
        deadline = time.monotonic() + 120
        k, since = None, time.monotonic()
        while time.monotonic() < deadline:
            now = sleeper_kernel(student)
            if now != k:
                k, since = now, time.monotonic()
            elif k not in (None, not_this) and time.monotonic() - since >= 1.5:
                return k, since
            time.sleep(0.3)
        return None, time.monotonic()

    kernel, seen = wait_kernel("sleeper")
    assert kernel is not None and p.poll() is None, "".join(lines)
    # a second autograde while this one runs stops at once, saying why
    t0 = time.monotonic()
    rc, out = _run(course, timeout=60)
    assert rc == 2 and "another autograde is running" in out and f"process {p.pid}" in out
    assert time.monotonic() - t0 < 30
    # the sleeper's kernel is killed from outside, as the OOM killer or an admin would (it is in its
    # 45 s cell by then: the cells before it take milliseconds)
    time.sleep(max(0.0, 6 - (time.monotonic() - seen)))
    assert sleeper_kernel() == kernel
    os.kill(kernel, signal.SIGKILL)
    once, seen = wait_kernel("sleeper_once")
    assert once is not None, "".join(lines)
    time.sleep(max(0.0, 6 - (time.monotonic() - seen)))
    os.kill(once, signal.SIGKILL)
    # the sleeper is graded once more in a fresh kernel: killed again, its cells go to hand grading
    again, seen = wait_kernel("sleeper", not_this=kernel)
    assert again is not None, "".join(lines)
    time.sleep(max(0.0, 6 - (time.monotonic() - seen)))
    os.kill(again, signal.SIGKILL)
    assert p.wait(timeout=200) == 0
    reader.join(timeout=10)
    out = "".join(lines)
    assert out.count("regrading demo01/sleeper/01_counts") == 1 and "regrading demo01/sleeper_once/01_counts" in out
    review = json.loads(course.review_json.read_text())["demo01"]
    killed = review["sleeper"]
    assert any("killed by signal 9 (SIGKILL)" in i for i in killed["incidents"]["01_counts"]), killed
    assert killed["manual"]["01_counts"] == ["tiles_54", "pct_40", "double_works"]
    assert killed["incidents"]["regraded"] == [
        "01_counts: killed by signal 9 (SIGKILL); graded again in a fresh kernel"]
    # killed once: the fresh kernel's run counts (its sleep hits the cell limit), nothing for hand grading
    once = review["sleeper_once"]
    assert once["manual"] == {} and once["incidents"]["regraded"], once
    assert not any("signal" in i for i in once["incidents"].get("01_counts", [])), once
    from autograder.reporting.grade_table import review_flags

    flags = review_flags(course)
    assert any("kernel killed by signal 9 (SIGKILL), manual grading" in f for f in flags["sleeper"]), flags
    assert not any("signal" in f for f in flags["self_exit"])
    own = review["self_exit"]
    assert any("kernel exited with code 3" in i for i in own["incidents"]["01_counts"]), own
    assert not any("signal" in i for i in own["incidents"]["01_counts"]) and own["manual"] == {}
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:
        nb = next(n for n in gb.find_submission("demo01", "sleeper").notebooks if n.name == "01_counts")
        assert nb.flagged and {g.name for g in nb.grades if g.needs_manual_grade} >= {"tiles_54", "pct_40"}
        nb = next(n for n in gb.find_submission("demo01", "self_exit").notebooks if n.name == "01_counts")
        assert not nb.flagged
        nb = next(n for n in gb.find_submission("demo01", "sleeper_once").notebooks if n.name == "01_counts")
        assert not nb.flagged


def test_kernel_death_review_signal_flags_manual_limit_does_not():
    """What merge reads from the autograded notebook: a signal from outside flags the later test cells for
    manual grading; a sandbox limit (LIMIT_* code from autograder/sandbox/limits.py) is named, nothing flagged."""
    from autograder.grade.merge import HandInResult, _notebook_review
    from autograder.grade.nbexec import GuardedExecute, _stop_output

    def nb(evalue):
        test = {"cell_type": "code", "source": "x", "outputs": [],
                "metadata": {"nbgrader": {"grade": True, "solution": False, "locked": True, "grade_id": "t1",
                                          "points": 1}}}
        return {"cells": [{"cell_type": "code", "source": "y", "metadata": {}, "outputs": [_stop_output(evalue)]},
                          test]}

    class FakeKM:
        def __init__(self, text):
            self.text = text

        def limit_reason(self):
            return self.text

    ge = GuardedExecute.__new__(GuardedExecute)  # only the helper is used: no kernel, no config
    ge.km = FakeKM("LIMIT_MEMORY: the hand-in's memory limit (6 GiB) was reached; KILLED_BY_SIGNAL: signal 9")
    assert ge._sandbox_limits() == "LIMIT_MEMORY: the hand-in's memory limit (6 GiB) was reached"
    ge.km = FakeKM("KILLED_BY_SIGNAL: the kernel was killed by signal 9 (SIGKILL)")
    assert ge._sandbox_limits() == ""

    res = HandInResult("s", "a", ok=True, seconds=0, log="x")
    _notebook_review(res, "nb", nb("커널이 외부 신호 9번으로 종료되었습니다(killed by signal 9 (SIGKILL): ...)"))
    assert res.manual == {"nb": ["t1"]} and "killed by signal 9 (SIGKILL)" in res.incidents["nb"]
    res = HandInResult("s", "a", ok=True, seconds=0, log="x")
    _notebook_review(res, "nb", nb("커널이 자원 제한으로 종료되었습니다(LIMIT_MEMORY: the hand-in's memory ...)"))
    assert res.manual == {} and "LIMIT_MEMORY" in res.incidents["nb"]


def test_resume_skips_only_unchanged_handins_graded_from_unchanged_source(tmp_path):
    from autograder.course import Course
    from autograder.grade import resume

    course = Course.at(tmp_path)
    for student in ("ann", "ben", "cat"):
        (course.submitted / student / "a1").mkdir(parents=True)
        (course.submitted / student / "a1" / "nb.ipynb").write_text(f'{{"who": "{student}"}}')
    (course.source / "a1").mkdir(parents=True)
    (course.source / "a1" / "nb.ipynb").write_text("{}")
    course.gradebook.parent.mkdir(parents=True, exist_ok=True)
    resume.ensure_table(course.gradebook)
    src = resume.tree_sha256(course.source / "a1")
    with sqlite3.connect(course.gradebook) as db:
        for student, ok in (("ann", 1), ("ben", 1), ("cat", 0)):
            db.execute(resume.UPSERT_SQL, {"assignment": "a1", "student": student, "source_sha": src, "ok": ok,
                                           "handin_sha": resume.tree_sha256(course.submitted / student / "a1"),
                                           "review": json.dumps({"ok": bool(ok)})})
    students = ["ann", "ben", "cat"]
    assert set(resume.already_graded(course, "a1", students)) == {"ann", "ben"}  # cat's grading failed
    (course.submitted / "ben" / "a1" / "nb.ipynb").write_text('{"who": "ben", "v": 2}')  # handed in again
    assert set(resume.already_graded(course, "a1", students)) == {"ann"}
    (course.source / "a1" / "nb.ipynb").write_text('{"fixed": "a test"}')  # the instructor changed a test
    assert resume.already_graded(course, "a1", students) == {}
    resume.write_review_files(course)
    assert json.loads(course.review_json.read_text())["a1"] == {"ann": {"ok": True}, "ben": {"ok": True},
                                                                "cat": {"ok": False}}
    resume.forget(course.gradebook, "a1", "ann")
    assert ("a1", "ann") not in resume.graded_rows(course.gradebook)


def test_sandbox_limit_hits_reach_the_review_column(tmp_path):
    """Limits the sandbox reports (autograder/sandbox/limits.py outcomes) are named per hand-in, even when the kernel
    survived them (a refused fork bomb); a signal without a limit is left to the kernel-death report."""
    from autograder.grade.merge import sandbox_limits
    from autograder.sandbox import limits as lim

    out = tmp_path / "sandbox-outcomes"
    out.mkdir()
    fork = lim.Outcome(0, [lim.processes_hit(256, 744)])
    killed = lim.Outcome(137, [lim.signal_hit(137)])
    for i, o in enumerate((fork, killed)):
        (out / f"outcome-{i}.json").write_text(json.dumps(o.to_json()))
    got = sandbox_limits([tmp_path])
    assert len(got) == 1 and got[0].startswith("LIMIT_PROCESSES: ") and "256" in got[0]
    assert sandbox_limits([tmp_path / "nothing"]) == []


@pytest.mark.filterwarnings("ignore:.*not in session")
def test_merge_reads_only_the_runs_of_this_autograde(course, monkeypatch):
    """A ``nb-*`` folder another run left (kept scratch, a crash) is not merged: its notebook, scores and
    sandbox limits stay out; the notebooks this run graded come in."""
    import shutil

    from nbgrader.api import Gradebook, GradeCell, Notebook

    from autograder.grade import resume
    from autograder.grade.merge import HandInResult, merge
    from autograder.grade.schedule import part_dir
    from autograder.sandbox import limits as lim

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # alembic
    a, s, cells = "demo01", "ann", {"01_counts": "t1", "02_vectors": "t2"}
    course.gradebook.parent.mkdir(parents=True, exist_ok=True)
    with Gradebook(course.db_url, "gemm-lab") as gb:
        asg = gb.update_or_create_assignment(a)
        for nb, gid in cells.items():
            gb.db.add(GradeCell(name=gid, notebook=Notebook(name=nb, assignment=asg), max_score=4, cell_type="code"))
        gb.db.commit()
    resume.ensure_table(course.gradebook)
    for nb, gid in cells.items():  # each notebook's own run folder, full marks in its scratch gradebook
        part = part_dir(course, a, s, nb)
        (part / "autograded" / s / a).mkdir(parents=True)
        shutil.copy(course.gradebook, part / "gradebook.db")
        with Gradebook(f"sqlite:///{part / 'gradebook.db'}", "gemm-lab") as sgb:
            sgb.update_or_create_student(s)
            sgb.add_submission(a, s)
            sgb.find_grade(gid, nb, a, s).auto_score = 4
            sgb.db.commit()
        cell = {"cell_type": "code", "execution_count": None, "outputs": [], "source": "",
                "metadata": {"nbgrader": {"grade_id": gid, "grade": True, "points": 4}}}
        (part / "autograded" / s / a / f"{nb}.ipynb").write_text(
            json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (part / "sandbox-outcomes").mkdir()  # the last one (02_vectors) hit a limit
    (part / "sandbox-outcomes" / "outcome-0.json").write_text(
        json.dumps(lim.Outcome(0, [lim.processes_hit(256, 744)]).to_json()))

    def merged(units):
        res = HandInResult(s, a, ok=True, seconds=1.0, log=str(course.root / "ann.log"))
        merge(course, res, {nb: part_dir(course, a, s, nb) for nb in units})
        with Gradebook(course.db_url, "gemm-lab") as gb:
            got = {nb: gb.find_grade(gid, nb, a, s).auto_score for nb, gid in cells.items()}
        return sorted(p.stem for p in (course.autograded / s / a).iterdir()), got, "sandbox" in res.incidents

    # this run graded 01_counts only: 02_vectors's folder is an earlier run's
    assert merged(["01_counts"]) == (["01_counts"], {"01_counts": 4, "02_vectors": None}, False)
    assert merged(list(cells)) == (list(cells), {"01_counts": 4, "02_vectors": 4}, True)


def test_write_atomic_replaces_whole_with_the_umask_mode_and_leaves_no_temporary(tmp_path):
    from autograder.course import write_atomic

    old = os.umask(0o022)
    try:
        target = tmp_path / "sub" / "page.html"
        write_atomic(target, "첫 판")
        write_atomic(target, b"\x00second")
    finally:
        os.umask(old)
    assert target.read_bytes() == b"\x00second"
    assert target.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in target.parent.iterdir()] == ["page.html"]
