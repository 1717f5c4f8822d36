"""The notebooks of one hand-in share a kernel, reset between notebooks (autograder/grade/shared_kernel.py),
and run as ``nbgrader`` children of a fork server (autograder/nbgrader_fork.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow

# appended to 01_counts: leaves a name, an environment variable, a sys.path entry, a warning filter and a
# working folder behind (nothing the review scan flags)
LEAVE_BEHIND = """\
vec = [0, 2, 4, 6]
import os, sys, warnings
os.environ["FROM_01"] = "1"
sys.path.insert(0, "/nowhere")
warnings.simplefilter("error")
os.makedirs("elsewhere", exist_ok=True)
os.chdir("elsewhere")
"""

# appended to 01_counts: an import hook that breaks every later import (flagged by the review scan)
HOOKS = """\
import builtins
_real = builtins.__import__
def _broken(name, *a, **k):
    if name.startswith(("gemm_lab", "json", "numpy")):
        raise ImportError("hooked")
    return _real(name, *a, **k)
builtins.__import__ = _broken
"""

# 02_vectors' answer: right only when nothing of 01_counts is left in the kernel
CLEAN_ONLY = """\
import os, sys, warnings
try:
    vec
    left = ["vec"]
except NameError:
    left = []
left += [what for what, there in [("environ", "FROM_01" in os.environ),
                                  ("sys.path", "/nowhere" in sys.path),
                                  ("warnings", bool(warnings.filters) and warnings.filters[0][0] == "error"),
                                  ("cwd", os.path.basename(os.getcwd()) == "elsewhere")] if there]
vec = np.arange(4) * 2.0 if not left else left
"""


def _cells_with(nb, gid):
    return next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id") == gid)


def _leaves(nbs):
    nbs["01_counts"]["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                      "source": LEAVE_BEHIND})
    nbs["02_vectors"]["cells"][_cells_with(nbs["02_vectors"], "ans_vec")]["source"] = CLEAN_ONLY


def _hooks(nbs):
    nbs["01_counts"]["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                      "source": HOOKS})


def _times_out(nbs):
    _leaves(nbs)
    nbs["01_counts"]["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                      "source": "import time\ntime.sleep(600)"})


def test_the_next_notebook_sees_nothing_the_last_one_left(tmp_path, make_scratch_course, bwrap):
    from nbgrader.api import Gradebook

    from autograder.grade.autograde import autograde
    from autograder.samplekit.fixture import ASSIGNMENT

    course = make_scratch_course(tmp_path / "course", hand_ins={"leaves": _leaves, "times_out": _times_out,
                                                                      "hooks": _hooks})
    results = {r.student: r for r in autograde(course, ASSIGNMENT, jobs=2, cell_timeout=20, notebook_timeout=60,
                                               quiet=True)}
    assert all(r.ok for r in results.values()), {s: r.error for s, r in results.items()}
    with Gradebook(course.db_url) as gb:
        for student in ("leaves", "times_out", "hooks"):
            nb = {n.name: n.score for n in gb.find_submission(ASSIGNMENT, student).notebooks}
            assert nb["02_vectors"] == 2.0, (student, nb)
    # the first really ran 02_vectors in 01_counts' kernel; the second got a fresh one after the time limit
    shared = Path(results["leaves"].log).read_text(errors="replace")
    assert shared.count("the kept kernel runs this notebook") == 1, shared[-3000:]
    fresh = Path(results["times_out"].log).read_text(errors="replace")
    assert "the kept kernel runs this notebook" not in fresh and "Timeout" in fresh
    # a notebook the review scan flags (here: an import hook) hands no kernel on
    assert "the kept kernel runs this notebook" not in Path(results["hooks"].log).read_text(errors="replace")


def test_the_reset_restores_builtins_and_refuses_a_changed_import_machinery():
    """RESET_SOURCE in a plain kernel: replaced and added builtins come back; an import hook on
    sys.meta_path or a look-alike gemm_lab module makes it fail (the next notebook then gets a fresh kernel)."""
    from jupyter_client.manager import start_new_kernel

    from autograder.grade.shared_kernel import BASELINE_SOURCE, RESET_SOURCE

    def run(kc, code, **kw):
        msg_id = kc.execute(code, **kw)
        while True:
            reply = kc.get_shell_msg(timeout=60)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"]

    def value(kc, expr):
        return run(kc, "", user_expressions={"v": expr})["user_expressions"]["v"]["data"]["text/plain"]

    km, kc = start_new_kernel()
    try:
        assert run(kc, BASELINE_SOURCE)["status"] == "ok"
        run(kc, "import builtins\nbuiltins.oct = lambda x: 'patched'\nbuiltins.extra_name = 1")
        assert run(kc, RESET_SOURCE % (".",))["status"] == "ok"
        assert value(kc, "oct(8)") == "'0o10'" and value(kc, "'extra_name' in dir(__builtins__)") == "False"
        run(kc, "import sys\nclass F:\n    def find_spec(self, *a): return None\nsys.meta_path.insert(0, F())")
        reply = run(kc, RESET_SOURCE % (".",))
        assert reply["status"] == "error" and "import machinery" in reply["evalue"]
        run(kc, "import sys\nsys.meta_path.pop(0)\nimport types\nsys.modules['gemm_lab.grading'] = "
                "types.ModuleType('gemm_lab.grading')")
        reply = run(kc, RESET_SOURCE % (".",))
        assert reply["status"] == "error" and "gemm_lab replaced" in reply["evalue"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_forked_nbgrader_is_a_subprocess_in_all_that_counts(tmp_path):
    from autograder import nbgrader_fork

    if not nbgrader_fork.enabled():
        pytest.skip("the fork server is off here (not Linux, GEMM_LAB_NBGRADER_FORK=0, or a __main__ it may not import)")
    env = dict(os.environ, GEMM_LAB_PROBE="42")
    proc = nbgrader_fork.run(["--version"], tmp_path, env, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip(), proc.stderr
    args = ["autograde", "nope", "--student", "x"]
    forked = nbgrader_fork.run(args, tmp_path, env, timeout=120)
    plain = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120)
    assert forked.returncode == plain.returncode
    assert "No notebooks were matched" in forked.stderr and "No notebooks were matched" in plain.stderr
    assert str(tmp_path) in forked.stderr  # run in its own working directory
    t0 = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        nbgrader_fork.run(["--version"], tmp_path, env, timeout=0.001)
    assert time.monotonic() - t0 < 30


def test_forked_nbgrader_dies_with_a_killed_grader(tmp_path):
    """A grader killed by SIGKILL leaves no forked nbgrader behind (nor the fork server)."""
    from autograder import nbgrader_fork

    if not nbgrader_fork.enabled():
        pytest.skip("the fork server is off here (not Linux, GEMM_LAB_NBGRADER_FORK=0, or a __main__ it may not import)")
    marker = tmp_path / "child.pid"
    (tmp_path / "nbgrader_config.py").write_text("import time\ntime.sleep(600)\n")  # nbgrader list hangs here
    script = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from autograder import nbgrader_fork\n"
        "import autograder.nbgrader_fork as f\n"
        "ctx = f._context()\n"
        "p = ctx.Process(target=f._child, args=(['list'], sys.argv[1], dict(os.environ), "
        "os.devnull, os.devnull, os.getpid()))\n"
        "p.start()\n"
        "Path(sys.argv[2]).write_text(str(p.pid))\n"
        "time.sleep(600)\n")
    grader = subprocess.Popen([sys.executable, "-c", script, str(tmp_path), str(marker)],
                              cwd=Path(__file__).resolve().parent.parent)
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    child = int(marker.read_text())
    time.sleep(3)
    assert Path(f"/proc/{child}").exists(), "the forked nbgrader ended before the grader was killed"
    grader.kill()
    grader.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
            state = Path(f"/proc/{child}/stat").read_text().split()[2]
            if state == "Z":
                break
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"forked nbgrader {child} outlived its killed grader by 10 s")


def test_an_unguarded_instructor_script_gets_plain_subprocesses(tmp_path):
    """A script that calls the library at its top level (no ``if __name__ == "__main__":``) would run again in
    every forked child; it releases an assignment through plain subprocesses instead, and nothing runs twice."""
    script = tmp_path / "release_it.py"
    script.write_text(
        "from pathlib import Path\n"
        "from autograder import nbgrader_fork\n"
        "from autograder.course import Course, release\n"
        "from autograder.samplekit.fixture import ASSIGNMENT, make_course\n"
        f"print('top level ran', flush=True)\n"
        f"root = make_course(Path({str(tmp_path / 'course')!r}))\n"
        "print('fork server:', nbgrader_fork.enabled(), flush=True)\n"
        "release(Course.at(root), ASSIGNMENT)\n"
        "print('released', sorted(p.name for p in (root / 'release' / ASSIGNMENT).glob('*.ipynb')))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("top level ran") == 1 and "fork server: False" in proc.stdout
    assert "released ['01_counts.ipynb', '02_vectors.ipynb']" in proc.stdout
