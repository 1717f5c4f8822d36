"""Generate the student release of each assignment with nbgrader, or check the committed one.

    python -m tools.release week06 week07          # nbgrader generate_assignment → release/<a>/
    python -m tools.release --check week06 week07  # exit 1 if release/ is stale or leaks

The check regenerates every assignment into a scratch copy of the course and compares it with the
committed ``release/``; it also fails when a release notebook still holds a solution or hidden-test
marker, when any committed notebook carries outputs, or when a grade id shows an answer: each master's
test cells are run with recording checks to get the values they expect, and an id that writes one of
them (``ex3_2_break_even_986``) fails (``autograder/grade/ids.py`` says how a number or word matches).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.course import Course, release

ROOT = Path(__file__).resolve().parents[1]
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
           "BEGIN MARK SCHEME")


def _canonical(path: Path) -> str:
    return json.dumps(json.loads(path.read_text(encoding="utf-8")), sort_keys=True)


def leaks(folder: Path) -> list[str]:
    """Release notebooks that still hold a solution or hidden-test marker."""
    bad = []
    for nb in sorted(folder.rglob("*.ipynb")):
        text = nb.read_text(encoding="utf-8")
        bad += [f"{nb.relative_to(ROOT)}: {m}" for m in MARKERS if m in text]
    return bad


def with_outputs(root: Path = ROOT) -> list[str]:
    """Committed notebooks (tracked by git) that carry outputs."""
    files = subprocess.run(["git", "ls-files", "*.ipynb"], cwd=root, capture_output=True,
                           text=True, check=True).stdout.split()
    bad = []
    for f in files:
        nb = json.loads((root / f).read_text(encoding="utf-8"))
        if any(c.get("outputs") for c in nb.get("cells", []) if c.get("cell_type") == "code"):
            bad.append(f)
    return bad


def answer_ids(source: Path, release: Path) -> list[str]:
    """Grade ids that show an answer their notebook's test cells expect (masters and committed release)."""
    from autograder.grade.ids import notebook_leaks

    problems = []
    for master in sorted(source.glob("*.ipynb")):
        print(f"grade ids: {source.name}/{master.name}", file=sys.stderr, flush=True)
        shipped = release / master.name
        also = [json.loads(shipped.read_text(encoding="utf-8"))] if shipped.is_file() else []
        problems += notebook_leaks(json.loads(master.read_text(encoding="utf-8")),
                                   f"{source.name}/{master.name}: ", also=also)
    return problems


def check(assignments: list[str]) -> list[str]:
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        course = Course.at(ROOT).scratch(tmp, assignments, released=True)
        for a in assignments:
            fresh, committed = course.release / a, ROOT / "release" / a
            fresh_files = {p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file()}
            committed_files = ({p.relative_to(committed) for p in committed.rglob("*") if p.is_file()}
                               if committed.exists() else set())
            for rel in sorted(fresh_files ^ committed_files):
                problems.append(f"release/{a}/{rel}: {'missing' if rel in fresh_files else 'extra'}")
            for rel in sorted(fresh_files & committed_files):
                a_path, b_path = fresh / rel, committed / rel
                same = (_canonical(a_path) == _canonical(b_path) if rel.suffix == ".ipynb"
                        else a_path.read_bytes() == b_path.read_bytes())
                if not same:
                    problems.append(f"release/{a}/{rel}: stale (run `make release`)")
            problems += answer_ids(course.source / a, committed)
    problems += leaks(ROOT / "release")
    problems += [f"{f}: has outputs" for f in with_outputs()]
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("assignments", nargs="+")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    try:
        if args.check:
            problems = check(args.assignments)
            for p in problems:
                print(p)
            print("release: OK" if not problems else f"release: {len(problems)} problem(s)")
            return 1 if problems else 0
        for a in args.assignments:
            release(Course.at(ROOT), a)
            print(f"released {a} → release/{a}/")
    except (RuntimeError, FileNotFoundError) as exc:  # nbgrader failed, or no such assignment: one line
        lines = str(exc).strip().splitlines()
        print(f"error: {lines[0]}{' ' + lines[-1] if len(lines) > 1 else ''}", file=sys.stderr)
        return 2
    bad = leaks(ROOT / "release")
    for b in bad:
        print(f"LEAK: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
