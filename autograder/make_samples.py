"""Generate the sample hand-ins and their expected scores from an assignment's master and release.

    python autograder/make_samples.py week07            # writes autograder/samples/week07/
    python autograder/make_samples.py ASSIGNMENT --course-root DIR --out DIR
    python autograder/make_samples.py week06 --from-source --full-all --cases lean   # the committed week06

Every sample is built from the release notebook (what a student starts from) and the master's
solutions, matched by grade_id, so the samples stay valid when the notebooks change. Layout (what
``collect`` reads): ``OUT/<student>/<notebook>.ipynb``; ``OUT/expected.csv`` has one row per
auto-graded or manual cell: student, notebook, grade_id, max_points, expected_points, and
``OUT/cases.csv`` one row per student: what it does and whether it must be flagged for review.

"Groups": the test cells that follow an answer cell (up to the next answer cell) check that answer.
Every case uses one notebook, the first (or ``--hostile-notebook``), to keep grading time down
(``--full-all``: the full-marks sample covers every notebook).
"""

from __future__ import annotations

import argparse
import ast
import copy
import csv
import json
import shutil
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder.course import Course, read_notebook, release  # noqa: E402

SOLUTION_BEGIN = "### BEGIN SOLUTION"
SOLUTION_END = "### END SOLUTION"
HIDDEN_MARK = "BEGIN HIDDEN TESTS"


def _src(cell) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def is_solution(cell) -> bool:
    return bool(_meta(cell).get("solution"))


def is_auto_test(cell) -> bool:
    m = _meta(cell)
    return cell.get("cell_type") == "code" and bool(m.get("grade")) and not m.get("solution")


def is_graded(cell) -> bool:
    return bool(_meta(cell).get("grade"))


def strip_solution_markers(text: str) -> str:
    return "\n".join(line for line in text.splitlines()
                     if line.strip() not in (SOLUTION_BEGIN, SOLUTION_END)).strip("\n")


def _code(src: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": src}


def _assigned_names(src: str) -> tuple[list[str], list[str]]:
    """Top-level names assigned (variables) and defined (functions/classes) by a solution."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return [], []
    names, funcs = [], []
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            funcs.append(node.name)
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and n.id not in names:
                    names.append(n.id)
    return names, funcs


class Notebook:
    """A release notebook with the master's solutions at hand."""

    def __init__(self, name: str, release: dict, master: dict):
        self.name = name
        self.release = release
        solutions = {}
        for cell in master["cells"]:
            gid = _meta(cell).get("grade_id")
            if gid and is_solution(cell):
                solutions[gid] = strip_solution_markers(_src(cell))
        self.solutions = solutions

    def copy(self) -> dict:
        return copy.deepcopy(self.release)

    def full(self) -> dict:
        nb = self.copy()
        for cell in nb["cells"]:
            gid = _meta(cell).get("grade_id")
            if is_solution(cell) and gid in self.solutions:
                cell["source"] = self.solutions[gid]
        return nb

    def graded_cells(self) -> list[tuple[str, float, bool]]:
        """(grade_id, points, auto) for every graded cell, in order."""
        return [(_meta(c)["grade_id"], float(_meta(c).get("points", 0)), is_auto_test(c))
                for c in self.release["cells"] if is_graded(c)]

    def groups(self) -> list[tuple[int, list[str]]]:
        """(index of an answer code cell, grade_ids of the auto tests that follow it)."""
        out = []
        for i, cell in enumerate(self.release["cells"]):
            if cell["cell_type"] == "code" and is_solution(cell) and not is_graded(cell):
                out.append((i, []))
            elif is_auto_test(cell) and out:
                out[-1][1].append(_meta(cell)["grade_id"])
        return out

    def first_answer_index(self) -> int:
        groups = self.groups()
        if not groups:
            raise ValueError(f"{self.name}: no answer code cell")
        return groups[0][0]

    def after_first_test(self) -> tuple[int, str]:
        """Index just after the first auto test cell that follows the first answer, and its grade_id."""
        start = self.first_answer_index()
        for j in range(start + 1, len(self.release["cells"])):
            if is_auto_test(self.release["cells"][j]):
                return j + 1, _meta(self.release["cells"][j])["grade_id"]
        raise ValueError(f"{self.name}: no test cell after the first answer")


# --------------------------------------------------------------------------- hostile code

SNOOP = r'''# sample: tries to reach what a hand-in must never see
import json, os, socket
from pathlib import Path
_ev = {"read": [], "listed": [], "wrote": [], "net": [], "hidden_tests_seen": [], "procs": []}
_roots = {Path.cwd().resolve()} | set(Path.cwd().resolve().parents)
try:
    import gemm_lab
    _pkg = Path(gemm_lab.__file__).resolve().parent
    _roots |= {_pkg.parent} | set(_pkg.parents)
except Exception as _e:
    _ev["gemm_lab_error"] = repr(_e)
for _env in ("HOME", "PWD", "OLDPWD", "JUPYTER_RUNTIME_DIR"):
    if os.environ.get(_env):
        _roots.add(Path(os.environ[_env]))
_targets = ("source", "release", "autograder", "autograder/submitted", "autograder/autograded",
            "autograder/gradebook.db", "gradebook.db", "submitted", "autograded", ".git", "nbgrader_config.py")
for _r in sorted(_roots, key=str):
    for _t in _targets:
        _q = _r / _t
        try:
            if _q.is_dir():
                _ev["listed"].append(f"{_q}: {sorted(os.listdir(_q))[:20]}")
            elif _q.is_file():
                _q.read_bytes()
                _ev["read"].append(str(_q))
                try:
                    with open(_q, "ab") as _f:
                        _f.write(b"")
                    _ev["wrote"].append(str(_q))
                except OSError:
                    pass
        except OSError:
            pass
_marks = (b"BEGIN HIDDEN" + b" TESTS", b"BEGIN SOL" + b"UTION")
_cwd = str(Path.cwd().resolve())
for _top in ("/work", "/root", "/home", "/tmp", "/srv", "/mnt", "/opt", "/var"):
    for _dp, _dn, _fn in os.walk(_top):
        _dn[:] = [d for d in _dn if d not in ("site-packages", "lib", ".git", ".venv", "node_modules")]
        for _n in _fn:
            _p = os.path.join(_dp, _n)
            if _p.startswith(_cwd) or not _n.endswith((".ipynb", ".db", ".py")):
                continue
            try:
                _text = open(_p, "rb").read()
            except OSError:
                continue
            if not _n.endswith(".py"):
                _ev["read"].append(_p)
            if any(_m in _text for _m in _marks):
                _ev["hidden_tests_seen"].append(_p)
for _n in os.listdir("."):
    try:
        if any(_m in open(_n, "rb").read() for _m in _marks):
            _ev["hidden_tests_seen"].append(_n)
    except OSError:
        pass
for _host, _port in (("1.1.1.1", 53), ("8.8.8.8", 443), ("127.0.0.1", 22)):
    try:
        socket.create_connection((_host, _port), timeout=2).close()
        _ev["net"].append(f"{_host}:{_port}")
    except OSError:
        pass
try:
    socket.getaddrinfo("pypi.org", 443)
    _ev["net"].append("dns")
except OSError:
    pass
for _pid in os.listdir("/proc"):
    if _pid.isdigit():
        try:
            _ev["procs"].append(open(f"/proc/{_pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()[:120])
        except OSError:
            pass
print("EVIDENCE " + json.dumps(_ev))
'''

TAMPER_CHECKER = '''# sample: replaces the grading package the test cells import by one whose checks always pass
import sys, types
import gemm_lab
_fake = types.ModuleType("gemm_lab.grading")


class _Yes:
    def __getattr__(self, name):
        return lambda *a, **k: True


for _name in ("check_value", "check_table", "check_choice", "check_pairs", "check_vector_add",
              "check_softmax", "check_matmul", "check_persistent"):
    setattr(_fake, _name, lambda *a, **k: True)
_fake.fresh = lambda: _Yes()
sys.modules["gemm_lab.grading"] = _fake
gemm_lab.grading = _fake
fresh = _fake.fresh  # in case a setup cell imported it already
check_value = check_table = check_choice = check_pairs = check_matmul = _fake.check_value
'''

TAMPER_COMPARE = '''# sample: neuters numpy/torch comparisons and empties every later cell
import numpy as np
np.allclose = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
try:
    import torch
    torch.allclose = lambda *a, **k: True
    torch.testing.assert_close = lambda *a, **k: None
except ImportError:
    pass
get_ipython().input_transformers_cleanup.append(lambda lines: ["pass\\n"])
'''

WRONG_VALUE = -12345


def _wrong_source(solution: str) -> str:
    names, funcs = _assigned_names(solution)
    lines = [f"{n} = {WRONG_VALUE}" for n in names]
    lines += [f"def {f}(*args, **kwargs):\n    return {WRONG_VALUE}" for f in funcs]
    return "\n".join(lines) or "pass"


ALT_HELPER = '''def _alt(v):
    """The same answer in another valid format (54 -> 54.0, 40.0 -> 40, tuple <-> list, rows -> array)."""
    import numbers
    if isinstance(v, bool):
        return v
    if isinstance(v, numbers.Integral):
        return float(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, tuple) and all(isinstance(x, numbers.Number) for x in v):
        return list(v)
    if isinstance(v, list) and all(isinstance(x, numbers.Number) for x in v):
        return tuple(v)
    if (isinstance(v, list) and v and all(isinstance(r, list) and r for r in v)
            and len({len(r) for r in v}) == 1
            and all(isinstance(x, numbers.Number) for r in v for x in r)):
        import numpy
        return numpy.array(v)  # rows of numbers (offsets, masks) as one 2-D array
    return v
'''


def _insert(nb: dict, index: int, src: str) -> dict:
    nb["cells"].insert(index, _code(src))
    return nb


# --------------------------------------------------------------------------- cases

def build_cases(notebooks: list[Notebook], hostile: str | None = None, full_all: bool = False):
    """Yield (student, description, review_expected, {notebook: nb_json}, {nb: {grade_id: expected}}).

    ``hostile``: the notebook the one-notebook cases use (default: the first); ``full_all``: the
    full-marks sample covers every notebook (tools/roundtrip.py already checks every master).
    """
    first = next(nb for nb in notebooks if nb.name == hostile) if hostile else notebooks[0]
    full_pts = {nb.name: {g: (p if auto else 0.0) for g, p, auto in nb.graded_cells()} for nb in notebooks}
    zero_pts = {nb.name: {g: 0.0 for g, _, _ in nb.graded_cells()} for nb in notebooks}
    f_full, f_zero = full_pts[first.name], zero_pts[first.name]

    def only_first(nb_json, expected):
        return {first.name: nb_json}, {first.name: expected}

    if full_all:
        yield ("full_marks", "all answers right (every notebook)", False,
               {nb.name: nb.full() for nb in notebooks}, full_pts)
    else:
        yield ("full_marks", "all answers right", False, *only_first(first.full(), f_full))
    yield ("blank", "the untouched release", False, *only_first(first.copy(), f_zero))

    wrong = first.copy()
    for cell in wrong["cells"]:
        gid = _meta(cell).get("grade_id")
        if cell["cell_type"] == "code" and is_solution(cell) and gid in first.solutions:
            cell["source"] = _wrong_source(first.solutions[gid])
    yield ("all_wrong", f"every answer replaced by {WRONG_VALUE}", False, *only_first(wrong, f_zero))

    alt = first.full()
    offset = 0
    for i, cell in enumerate(list(alt["cells"])):
        gid = _meta(cell).get("grade_id")
        if cell["cell_type"] == "code" and is_solution(cell) and gid in first.solutions:
            names, _ = _assigned_names(first.solutions[gid])
            if names:
                conv = "\n".join(f"{n} = _alt({n})" for n in names)
                alt["cells"].insert(i + 1 + offset, _code(ALT_HELPER + conv))
                offset += 1
    yield ("other_formats", "right answers in other valid formats (int/float, tuple/list, rows/array)", False,
           *only_first(alt, f_full))

    at = first.first_answer_index() + 1
    cases = [
        ("raises", "an extra cell raises RuntimeError", 'raise RuntimeError("sample: a cell that raises")'),
        ("infinite_loop", "an extra cell loops forever (cell time limit)", "while True:\n    pass"),
        ("big_output", "an extra cell prints ~6 MB",
         'print("x" * 3_000_000)\nfor i in range(60_000):\n    print(i, "y" * 40)'),
        ("sys_exit", "an extra cell calls sys.exit()", "import sys\nsys.exit()"),
        ("memory_hog", "an extra cell allocates 1 TiB (MemoryError)",
         "hog = bytearray(1 << 40)"),
    ]
    for student, desc, code in cases:
        yield (student, desc, False, *only_first(_insert(first.full(), at, code), f_full))

    deleted = first.full()
    first_test = next(i for i, c in enumerate(deleted["cells"]) if is_auto_test(c))
    del deleted["cells"][first_test]
    yield ("deleted_test", "the first test cell deleted (nbgrader restores it)", False,
           *only_first(deleted, f_full))

    edited = first.copy()
    for cell in edited["cells"]:
        m = _meta(cell)
        if is_auto_test(cell):
            cell["source"] = "pass  # edited test cell"
        elif m.get("locked") and cell["cell_type"] == "code":
            cell["source"] = _src(cell) + "\npass  # edited locked cell"
    yield ("edited_locked", "blank answers, test and locked cells edited (restored)", False,
           *only_first(edited, f_zero))

    # after the first test of the first answer: that test keeps its points, every later test is zero
    cut, first_test_id = first.after_first_test()
    before = {g: (f_full[g] if g == first_test_id else 0.0) for g in f_full}
    for student, desc, code in [
        ("os_exit", "os._exit() after the first test cell", "import os\nos._exit(0)"),
        ("kernel_crash", "a segfault (ctypes) after the first test cell", "import ctypes\nctypes.string_at(0)"),
    ]:
        yield (student, desc, False, *only_first(_insert(first.full(), cut, code), before))

    for student, desc, code in [
        ("tamper_checker", "swaps gemm_lab.grading in sys.modules for always-pass checks after the first "
         "test cell; later answers wrong; later tests zeroed pending review", TAMPER_CHECKER),
        ("tamper_compare", "neuters numpy/torch comparisons and empties later cells after the first test "
         "cell; later answers wrong; later tests zeroed pending review", TAMPER_COMPARE),
    ]:
        nb = first.full()
        # keep the first answer; the others wrong (the tampering is what would earn their points)
        keep = _meta(nb["cells"][first.first_answer_index()]).get("grade_id")
        for cell in nb["cells"]:
            gid = _meta(cell).get("grade_id")
            if cell["cell_type"] == "code" and is_solution(cell) and gid != keep and gid in first.solutions:
                cell["source"] = _wrong_source(first.solutions[gid])
        yield (student, desc, True, *only_first(_insert(nb, cut, code), before))

    yield ("snoop", "reads masters/gradebook/other hand-ins, writes the gradebook, opens sockets", True,
           *only_first(_insert(first.full(), at, SNOOP), f_full))


def fresh_release(course: Course, assignment: str, scratch: Path) -> Course:
    """Release ``assignment`` from source/ in a scratch course (the real release/ and gradebook untouched)."""
    (scratch / "source").mkdir(parents=True)
    shutil.copytree(course.source / assignment, scratch / "source" / assignment)
    shutil.copy(course.root / "nbgrader_config.py", scratch / "nbgrader_config.py")
    scratch_course = Course.at(scratch)
    release(scratch_course, assignment)
    return scratch_course


CASES = ("full_marks", "blank", "all_wrong", "other_formats", "raises", "infinite_loop", "big_output", "sys_exit",
         "memory_hog", "deleted_test", "edited_locked", "os_exit", "kernel_crash", "tamper_checker",
         "tamper_compare", "snoop")
# a lean set (grading time): scores, formats, one cell that raises, one tampering that must be flagged
LEAN_CASES = ("full_marks", "blank", "all_wrong", "other_formats", "raises", "tamper_checker")


def make_samples(course: Course, assignment: str, out: Path, notebooks: list[str] | None = None,
                 from_source: bool = False, hostile: str | None = None, full_all: bool = False,
                 cases: tuple[str, ...] | list[str] | None = None) -> Path:
    """Write the samples; ``from_source``: release the masters afresh instead of reading release/;
    ``cases``: only these students (names from ``CASES``; default: all)."""
    unknown = sorted(set(cases or ()) - set(CASES))
    if unknown:
        raise ValueError(f"unknown sample cases {unknown}; known: {', '.join(CASES)}")
    if from_source:
        with tempfile.TemporaryDirectory(prefix="samples-", dir=course.root) as tmp:
            return make_samples(fresh_release(course, assignment, Path(tmp) / "c"), assignment, out, notebooks,
                                hostile=hostile, full_all=full_all, cases=cases)
    names = notebooks or course.notebooks(assignment, "release")
    if not names:
        raise FileNotFoundError(f"no release notebooks for {assignment} in {course.release}: "
                                "run `python -m autograder release` (or pass --from-source)")
    nbs = []
    for name in names:
        master = course.source / assignment / f"{name}.ipynb"
        nbs.append(Notebook(name, read_notebook(course.release / assignment / f"{name}.ipynb"),
                            read_notebook(master)))
    return write_samples(nbs, out, hostile=hostile, full_all=full_all, cases=cases)


def write_samples(nbs: list[Notebook], out: Path, hostile: str | None = None, full_all: bool = False,
                  cases: tuple[str, ...] | list[str] | None = None) -> Path:
    """Write the cases built from ``nbs`` (release + master solutions) to ``out`` (replaced)."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rows, case_rows = [], []
    for student, desc, review, files, expected in build_cases(nbs, hostile, full_all):
        if cases and student not in cases:
            continue
        for nb_name, nb_json in files.items():
            p = out / student / f"{nb_name}.ipynb"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps(nb_json, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            points = {g: p_ for g, p_, _ in next(n for n in nbs if n.name == nb_name).graded_cells()}
            for gid, exp in expected[nb_name].items():
                rows.append([student, nb_name, gid, _num(points[gid]), _num(exp)])
        case_rows.append([student, desc, "yes" if review else "no"])
    with (out / "expected.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "notebook", "grade_id", "max_points", "expected_points"])
        w.writerows(rows)
    with (out / "cases.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "case", "review_expected"])
        w.writerows(case_rows)
    return out


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def read_expected(folder: Path) -> tuple[dict, dict]:
    """({(student, notebook, grade_id): expected_points}, {student: review_expected})."""
    exp = {}
    with (Path(folder) / "expected.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            exp[(row["student"], row["notebook"], row["grade_id"])] = float(row["expected_points"])
    review = {}
    with (Path(folder) / "cases.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            review[row["student"]] = row["review_expected"] == "yes"
    return exp, review


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("assignment")
    ap.add_argument("--course-root", default=None)
    ap.add_argument("--out", default=None, help="default: autograder/samples/ASSIGNMENT")
    ap.add_argument("--from-source", action="store_true",
                    help="release source/ASSIGNMENT in a scratch course instead of reading release/")
    ap.add_argument("--hostile-notebook", default=None,
                    help="notebook for the one-notebook cases (default: the first; pick a quick one)")
    ap.add_argument("--full-all", action="store_true", help="the full-marks sample covers every notebook")
    ap.add_argument("--cases", default=None,
                    help="comma-separated students to write (default: all; 'lean': " + ",".join(LEAN_CASES) + ")")
    args = ap.parse_args(argv)
    cases = None
    if args.cases:
        cases = LEAN_CASES if args.cases == "lean" else tuple(c.strip() for c in args.cases.split(",") if c.strip())
    course = Course.at(args.course_root)
    out = Path(args.out) if args.out else course.root / "autograder" / "samples" / args.assignment
    make_samples(course, args.assignment, out, from_source=args.from_source, hostile=args.hostile_notebook,
                 full_all=args.full_all, cases=cases)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
