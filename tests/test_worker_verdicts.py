"""Every verdict on a kernel is the grader's: its workers hand back raw data (compile results from a process
that never runs a check, output buffers, what the interpreter saw each program write), nothing one hand-in's
worker produced is read for another, each notebook gets fresh workers, and a worker killed mid-check is
started again once and recorded."""

from __future__ import annotations

import json
import os
import time

import pytest

from gemm_lab.grading import cache
from gemm_lab.grading.judge import gate, remote, replay
from gemm_lab.grading.kernels import compiler

pytest.importorskip("torch")

from test_grading_outside import ADD_KERNEL, IMPORTS, VISIBLE_ADD  # noqa: E402 - tests/ is on sys.path

EMPTY_KERNEL = ADD_KERNEL.split("    pid =")[0] + "    pass\n"
CLAIM = {"claims": {"add_kernel": {"__kernel__": "add_kernel"}}}


@pytest.fixture
def interp(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(tmp_path / "worker-compile"))
    cache._MEMORY.clear()
    remote.set_runner(remote.SubprocessRunner(timeout=240))
    remote.take_incidents()
    yield tmp_path / "worker-compile"
    remote.set_runner(remote.SubprocessRunner())  # closes the test's fork server
    remote.set_deadline(None)
    cache._MEMORY.clear()


def _grade(kernel_source, **kw):
    return replay.grade_cell(VISIBLE_ADD, CLAIM, [IMPORTS, kernel_source], **kw)[1]


class _Forging:
    """A runner whose workers answer every job with ``answer(job)`` (what a worker the gate failed to protect
    could send), or pass it on to a real worker when ``answer`` returns None; it notes each job."""

    def __init__(self, answer):
        self.answer, self.jobs, self.real = answer, [], remote.SubprocessRunner(timeout=240)

    def start(self):
        outer = self

        class W:
            def __init__(self):
                self.inner = None

            def run(self, job, arrays=None):
                outer.jobs.append(job)
                forged = outer.answer(job)
                if forged is not None:
                    return forged
                self.inner = self.inner or outer.real.start()
                return self.inner.run(job, arrays)

            def alive(self):
                return True

            def close(self):
                if self.inner is not None:
                    self.inner.close()

        return W()


def test_compiles_run_apart_from_checks_and_are_kept_only_by_the_grader(interp):
    v = _grade(ADD_KERNEL)
    assert v["status"] == "pass", v["message"]
    kept = list(interp.glob("*.json"))
    assert kept and all(isinstance(json.loads(p.read_text()), list) for p in kept)
    spy = _Forging(lambda job: None)
    remote.set_runner(spy)
    cache._MEMORY.clear()  # a later grading run: only the folder the grader wrote is left
    v = _grade(ADD_KERNEL)
    assert v["status"] == "pass", v["message"]
    assert [j["op"] for j in spy.jobs] == ["run"]  # the compile came from the grader's own cache
    assert not any(k.startswith("compile") for k in spy.jobs[0])  # a run worker gets no compile results


REFUSED = ADD_KERNEL.replace("    tl.store(", "    if pid == 0:\n        print(f\"program {pid}\")\n    tl.store(")


def test_a_forged_compile_verdict_stays_with_its_own_source(interp, monkeypatch, tmp_path):
    """A compile process that lies ("compiles" for a kernel the compiler refuses, "does not compile" for
    anything else) changes no other hand-in's verdict, in the same run or a later one."""
    ok = {"ok": True, "kind": "", "message": "", "line": None, "source": None, "shared": 0, "regs": 8, "local": 0,
          "mma": "none"}
    bad = dict(ok, ok=False, kind="CompilationError", message="forged")

    def lie(job):
        if job["op"] != "compile":
            return None
        entry = ok if "print(" in job["module"] else bad
        return {"per_set": [[dict(entry, constexprs=c, target=t[0]) for t in compiler.TARGETS]
                            for c in job["constexpr_sets"]]}

    others = [ADD_KERNEL, REFUSED.replace("x_ptr", "xp"), ADD_KERNEL.replace("x + y", "y + x")]
    remote.set_runner(_Forging(lie))
    _grade(REFUSED)  # the liar's own hand-in: whatever it earns, it earns for itself
    _grade(EMPTY_KERNEL)
    remote.set_runner(remote.SubprocessRunner(timeout=240))
    after = [[_grade(src)["message"] for src in others]]
    cache._MEMORY.clear()  # a later run: the grader's folder is all that is left
    after.append([_grade(src)["message"] for src in others])
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(tmp_path / "clean"))
    cache._MEMORY.clear()
    clean = [_grade(src)["message"] for src in others]
    assert clean[0].startswith("✅") and "컴파일되지 않습니다" in clean[1]
    assert after == [clean, clean]


def test_a_kept_compile_answers_only_the_job_it_came_from(interp):
    """The grader keeps a worker's answer under the whole job it was given: a refusal, whose text names the
    check, is read back for that check and never for another check of the same kernel."""
    spy = _Forging(lambda job: {"refused": f"❌ {job['name']}: no"})
    remote.set_runner(spy)
    kernel = remote.KernelSource("add_kernel", gate.module_for([IMPORTS, ADD_KERNEL], "add_kernel"))
    for name in ("first", "second", "first"):
        with pytest.raises(AssertionError, match=f"^❌ {name}: no$"):
            kernel.compile("vector_add", "float32", name, [{"BLOCK_SIZE": 128}])
    assert [j["name"] for j in spy.jobs] == ["first", "second"]  # the third read what the first left


def test_a_compile_result_the_grader_cannot_read_is_no_pass(interp):
    for forged in ({"per_set": [[{"ok": True}]]}, {"per_set": "yes"}, {"compiled": "✅ all targets"}):
        cache._MEMORY.clear()
        remote.set_runner(_Forging(lambda job, f=forged: f if job["op"] == "compile" else None))
        v = _grade(ADD_KERNEL)
        assert v["status"] == "fail" and "컴파일" in v["message"], v["message"]


def test_forged_outputs_and_verdict_text_are_judged_as_data(interp):
    """A run worker that claims a pass (text, flags) but hands back no right buffer scores nothing."""
    def claim_pass(job):
        if job["op"] != "run":
            return None
        return {"results": [{"error": None, "ok": True, "out": [], "inputs_after": []} for _ in job["runs"]],
                "compiled": "✅", "passed": True}

    remote.set_runner(_Forging(claim_pass))
    v = _grade(ADD_KERNEL)
    assert v["status"] == "fail" and "읽을 수 없습니다" in v["message"], v["message"]


def test_annotations_never_run_in_a_worker(interp, tmp_path):
    """Even in a module the gate did not write (a hole in the gate), annotations stay text in the worker."""
    from gemm_lab.grading import kernels

    marker = tmp_path / "ran"
    module = (gate.module_for([IMPORTS, ADD_KERNEL], "add_kernel")
              + f"\nY: open({str(marker)!r}, 'w').write('x') = 1\n")
    kernels.check_vector_add(remote.KernelSource("add_kernel", module, 3))
    assert not marker.exists()


def test_a_worker_killed_mid_check_is_started_again_and_recorded(interp):
    killed = []

    def kill_once(job):
        if job["op"] == "run" and not killed:
            killed.append(job)
            raise remote.WorkerFailed("커널을 실행하던 프로세스가 결과 없이 끝났습니다 (종료 코드 -9).", died=True)
        return None

    remote.set_runner(_Forging(kill_once))
    v = _grade(ADD_KERNEL)
    assert v["status"] == "pass", v["message"]
    assert killed and len(v["incidents"]) == 1 and "died mid-check" in v["incidents"][0]


def test_a_real_kill_is_retried(interp):
    killed = []

    class Killing(remote.SubprocessRunner):
        def start(self):
            w = super().start()
            real = w.run

            def run(job, arrays=None):
                if job["op"] == "run" and not killed:  # SIGKILL, as the OOM killer or an admin sends it
                    killed.append(w)
                    os.kill(w.pid, 9)
                return real(job, arrays)

            w.run = run
            return w

    remote.set_runner(Killing(timeout=240))
    v = _grade(ADD_KERNEL)
    assert killed and v["status"] == "pass" and len(v["incidents"]) == 1, (v["message"], v.get("incidents"))


def test_each_job_gets_a_fresh_worker_of_one_server(interp):
    """Every job runs in a new fork of the same server (which is imported once and runs no job itself)."""
    seen = []

    class Noting(remote.SubprocessRunner):
        def start(self):
            w = super().start()
            seen.append((self.server.proc.pid, w.pid))
            return w

    remote.set_runner(Noting(timeout=240))
    assert _grade(ADD_KERNEL)["status"] == "pass"
    assert _grade(ADD_KERNEL.replace("x + y", "y + x"))["status"] == "pass"
    servers, workers = {s for s, _w in seen}, [w for _s, w in seen]
    assert len(seen) >= 4 and len(servers) == 1 and len(set(workers)) == len(workers), seen


def test_the_notebook_deadline_bounds_a_running_check(interp):
    remote.set_deadline(time.monotonic() + 0.2)
    t0 = time.monotonic()
    v = _grade(ADD_KERNEL.replace("x + y", "(x + y) * 1.0"))
    assert v["status"] == "fail" and "시간" in v["message"], v["message"]
    assert time.monotonic() - t0 < 30


def test_the_kernel_reset_keeps_the_course_runtime(tmp_path):
    """A kept kernel decided TRITON_INTERPRET=1 when the course imported gemm_lab.runtime (after the
    baseline); the reset before the next notebook keeps it, or that notebook's kernels find no driver."""
    import subprocess
    import sys

    from autograder.grade.shared_kernel import BASELINE_SOURCE, RESET_SOURCE

    code = ("from IPython.core.interactiveshell import InteractiveShell\nimport os\n"
            "sh = InteractiveShell.instance()\n"
            f"sh.run_cell({BASELINE_SOURCE!r})\n"
            "sh.run_cell('import gemm_lab.runtime')\n"
            f"r = sh.run_cell({RESET_SOURCE % str(tmp_path)!r})\n"
            "print('RESULT', r.success, os.environ.get('TRITON_INTERPRET'))\n")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    line = [x for x in out.stdout.splitlines() if x.startswith("RESULT")]
    from gemm_lab import runtime

    assert line == [f"RESULT True {'1' if not runtime.on_gpu() else None}"], (out.stdout, out.stderr[-2000:])


def test_the_sandboxed_worker_writes_nothing_on_the_host_past_the_kernels_caps(tmp_path, monkeypatch, bwrap):
    """Its host folder sits in the hand-in's runtime folder (swept with it), read-only inside but for the socket
    folder the notebook kernel also gets (a 1 MiB tmpfs as root); the next worker of the same server finds
    no file and no process the first one left; the folder goes when the runner is closed."""
    from autograder.sandbox.bwrap import SANDBOX_CWD
    from autograder.sandbox.worker import SandboxRunner
    from gemm_lab.grading.codec import decode

    runtime = tmp_path / "glrt-test"
    runtime.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    spec = tmp_path / "spec.json"
    spec.write_text("{}")
    runner = SandboxRunner(str(spec), 120)
    w = runner.start()
    (folder,) = runtime.glob("glw-*")
    probe = ("import os, subprocess\ndef f(top, more):\n    out = {}\n"
             "    subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
             "    for d in [x for x, _d, _f in os.walk(top)] + more:\n"
             "        try:\n            with open(os.path.join(d, 'x'), 'wb') as h:\n"
             "                h.write(b'0' * (4 << 20))\n            out[d] = 'wrote 4 MiB'\n"
             "        except OSError as e:\n            out[d] = type(e).__name__\n    return out\n")
    writable = ["/tmp", "/dev/shm", "/run", SANDBOX_CWD]
    look = ("import os\ndef g(dirs):\n    return {'files': {d: sorted(os.listdir(d)) for d in dirs if os.path.isdir(d)},"
            "\n            'procs': [open(f'/proc/{p}/cmdline').read() for p in os.listdir('/proc') if p.isdigit()]}\n")
    try:
        got = w.run({"op": "calls", "module": probe, "function": "f",
                     "calls": [{"args": [str(folder), writable]}]})
        w.close()
        after = runner.start().run({"op": "calls", "module": look, "function": "g",
                                               "calls": [{"args": [[str(folder), *writable]]}]})
    finally:
        runner.close()
    written = decode(got["results"][0]["value"])
    assert len(written) >= 2 + len(writable), written  # its folder, the socket folder in it, the tmpfs mounts
    assert [written[d] for d in writable] == ["wrote 4 MiB"] * len(writable), written
    if os.geteuid() == 0:  # unprivileged, the socket folder is a plain one, as the notebook kernel's is
        assert "wrote 4 MiB" not in [v for d, v in written.items() if d not in writable], written
    seen = decode(after["results"][0]["value"])
    assert all(not any(n == "x" for n in names) for names in seen["files"].values()), seen
    assert seen["procs"] and not any("sleep" in c for c in seen["procs"]), seen
    assert not folder.exists()


def test_a_worker_incident_reaches_the_hand_ins_review():
    from autograder.grade.merge import HandInResult, _notebook_review

    cell = {"cell_type": "code", "source": "g.check_vector_add(add_kernel)", "outputs": [],
            "metadata": {"nbgrader": {"grade": True, "grade_id": "t", "points": 3, "solution": False},
                         "gemm_lab": {"verdict": {"status": "pass", "incidents": [
                             "grading worker died mid-check (...); started again"]}}}}
    res = HandInResult("s", "week06", True, 1.0, "")
    _notebook_review(res, "01_block_model", {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    assert res.incidents == {"01_block_model": ["grading worker died mid-check (...); started again"]}
