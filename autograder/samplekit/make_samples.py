"""Generate the sample hand-ins and their expected scores from an assignment's master and release.

    python -m autograder.samplekit.make_samples week07 --from-source     # the committed samples (plan samplekit.plan.PLANS)
    python -m autograder.samplekit.make_samples week06 --from-source
    python -m autograder.samplekit.make_samples ASSIGNMENT --course-root DIR --out DIR [--plan week07-all]

Every sample is built from the release notebook (what a student starts from) and the master's
solutions, matched by grade_id, so the samples stay valid when the notebooks change. Layout (what
``collect`` reads): ``OUT/<student>/<notebook>.ipynb``; ``OUT/expected.csv`` has one row per
auto-graded or manual cell: student, notebook, grade_id, max_points, expected_points, and
``OUT/cases.csv`` one row per student: what it does, whether it must be flagged for review and what its
review column must hold; ``OUT/options.json`` how the folder was made.

An assignment with a plan in ``autograder/samplekit/plan.py`` gets that plan (full/blank/all-wrong on every
notebook, the rest where they teach something); any other (the test fixture) ``plan.FIXTURE_PLAN``.
The cases themselves live in ``autograder/samplekit/``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from autograder.course import Course
from autograder.samplekit.expected import write_cases
from autograder.samplekit.model import Notebook
from autograder.samplekit.plan import FIXTURE_PLAN, PLANS


def make_samples(course: Course, assignment: str, out: Path, from_source: bool = False, plan: str | None = None,
                 cases: list[str] | None = None) -> Path:
    """Write the samples; ``from_source``: release the masters afresh instead of reading release/;
    ``plan``: a name in ``PLANS`` (default: the assignment's own plan, else ``FIXTURE_PLAN``); ``cases``: only
    these students of the plan."""
    if from_source:  # a scratch course: the real release/ and gradebook untouched
        with tempfile.TemporaryDirectory(prefix="samples-", dir=course.root) as tmp:
            scratch = course.scratch(Path(tmp) / "c", [assignment], released=True)
            return make_samples(scratch, assignment, out, plan=plan, cases=cases)
    names = course.notebooks(assignment, "release")
    if not names:
        raise FileNotFoundError(f"no release notebooks for {assignment} in {course.release}: "
                                "run `python -m autograder release` (or pass --from-source)")
    nbs = [Notebook.load(course.root, f"{assignment}/{name}") for name in names]
    if plan is None and assignment in PLANS:
        plan = assignment
    return write_samples(nbs, out, plan=plan, assignment=assignment, cases=cases)


def write_samples(nbs: list[Notebook], out: Path, plan: str | None = None, assignment: str | None = None,
                  cases: list[str] | None = None) -> Path:
    """Write the cases built from ``nbs`` to ``out`` (replaced): plan ``plan`` (a name in ``PLANS``) or the
    fixture plan, only ``cases`` where given; ``assignment`` names the notebooks' assignment where they do not
    know it."""
    chosen = PLANS.get(plan) if plan else FIXTURE_PLAN
    if chosen is None or not set(cases or ()) <= set(chosen):
        raise ValueError(f"plan {plan!r} or cases {cases}: unknown; plans: {', '.join(PLANS)}")
    for nb in nbs:
        nb.assignment = nb.assignment or (assignment or "")
    out = write_cases(nbs, out, {c: w for c, w in chosen.items() if not cases or c in cases})
    options = {"plan": plan, "assignment": assignment, "cases": cases}
    (out / "options.json").write_text(json.dumps(options, indent=1) + "\n", encoding="utf-8")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("assignment")
    ap.add_argument("--course-root", default=None)
    ap.add_argument("--out", default=None, help="default: autograder/samples/ASSIGNMENT")
    ap.add_argument("--from-source", action="store_true",
                    help="release source/ASSIGNMENT in a scratch course instead of reading release/")
    ap.add_argument("--plan", default=None, help=f"one of {', '.join(PLANS)} (default: the assignment's own)")
    args = ap.parse_args(argv)
    course = Course.at(args.course_root)
    out = Path(args.out) if args.out else course.root / "autograder" / "samples" / args.assignment
    make_samples(course, args.assignment, out, from_source=args.from_source, plan=args.plan)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
