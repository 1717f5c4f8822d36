"""`make demo`: release, collect the bundled sample hand-ins, autograde, print one grade table.

    python -m autograder demo                 # every assignment with autograder/samples/ASSIGNMENT/expected.csv
    python -m autograder demo week06 [--jobs N] [--keep]

Everything happens in one scratch course under autograder/work/ (the real release/ and gradebook are not
touched): each assignment is released from source/, its samples are collected and graded, then one table
over every graded assignment is printed (only the notebooks the samples use) and the gradebook is
compared cell by cell with each expected.csv (and the review flags with cases.csv). Exit status 1 on any
mismatch, 2 without bubblewrap.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from autograder.course import Course
from autograder.grade.autograde import GradeSettings, SandboxMissing, autograde
from autograder.reporting.grade_table import grade_table
from autograder.samplekit.compare import compare_with_expected


def sampled_assignments(repo: Course) -> list[str]:
    """Assignments with committed samples (``autograder/samples/A/expected.csv``) and a master in source/."""
    base = repo.root / "autograder" / "samples"
    found = sorted(p.parent.name for p in base.glob("*/expected.csv")) if base.is_dir() else []
    return [a for a in found if (repo.source / a).is_dir()]


def run_all(assignments: list[str], *, repo: Course, settings: GradeSettings | None = None,
            samples: dict[str, Path] | None = None, keep: bool = False, out=sys.stdout,
            report_dir: Path | None = None, hooks: dict | None = None) -> dict[str, list[str]]:
    """Grade the samples of ``assignments`` in one scratch course; print one table; {assignment: mismatches}.

    ``samples``: {assignment: folder} instead of autograder/samples/ASSIGNMENT. ``hooks`` (for tests):
    ``{"before_grading": f(course), "after_grading": f(course) -> list[str]}``; what after_grading returns is
    added to the mismatches of the first assignment.
    """
    from autograder.collect.handins import collect
    from autograder.samplekit.expected import read_expected

    if not assignments:
        raise ValueError("no assignment has samples: run `python -m autograder.samplekit.make_samples ASSIGNMENT`")
    hooks = hooks or {}
    samples = {a: Path((samples or {}).get(a) or repo.root / "autograder" / "samples" / a) for a in assignments}
    repo.work.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="demo-", dir=repo.work))
    try:
        course = repo.scratch(root, assignments, released=True)
        handed_in = {}
        for a in assignments:
            print(f"{a}: {collect(course, a, samples[a]).summary()}", file=out)
            handed_in[a] = {(s, nb) for (s, nb, _) in read_expected(samples[a])[0]}
        if "before_grading" in hooks:
            hooks["before_grading"](course)
        for a in assignments:
            t0 = time.monotonic()
            results = autograde(course, a, settings)
            print(f"{a}: {len(results)} hand-ins graded in {time.monotonic() - t0:.1f}s", file=out)
        print("", file=out)
        print(grade_table(course, handed_in=handed_in), file=out)
        if report_dir is not None:  # the class report of the samples, before the scratch course goes
            from autograder.reporting.class_report import demo_reports

            demo_reports(course, assignments, report_dir, out=out)
        bad = {a: compare_with_expected(course, a, samples[a]) for a in assignments}
        if "after_grading" in hooks:
            bad[assignments[0]] += hooks["after_grading"](course) or []
        return bad
    finally:
        if keep:
            print(f"demo course kept in {root}", file=out)
        else:
            shutil.rmtree(root, ignore_errors=True)


def main(repo: Course, assignments: list[str], settings: GradeSettings, keep: bool = False) -> int:
    """`python -m autograder demo`: exit 1 on any mismatch, 2 without samples or bubblewrap (one line)."""
    sampled = sampled_assignments(repo)
    assignments = assignments or sampled
    unknown = [a for a in assignments if a not in sampled]
    if unknown:
        print(f"error: {unknown[0]} has no sample hand-ins (sampled: {', '.join(sampled) or 'none'}); "
              f"make them with `python -m autograder.samplekit.make_samples {unknown[0]} --from-source`",
              file=sys.stderr)
        return 2
    if not assignments:
        print("error: no samples: run `python -m autograder.samplekit.make_samples ASSIGNMENT`", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    try:
        bad = run_all(assignments, repo=repo, settings=settings, keep=keep,
                      report_dir=repo.root / "autograder" / "report" / "demo")
    except SandboxMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"\ndemo: {', '.join(assignments)} in {time.monotonic() - t0:.0f}s")
    status = 0
    for a, mismatches in bad.items():
        if mismatches:
            status = 1
            print(f"MISMATCHES with autograder/samples/{a}/expected.csv:")
            print("\n".join("  " + b for b in mismatches))
        else:
            print(f"all scores match autograder/samples/{a}/expected.csv")
    for a in assignments:
        page = repo.root / "autograder" / "report" / "demo" / f"{a}.html"
        print(f"class report: {page}" if page.is_file() else f"class report of {a}: not written (see above)")
    return status
