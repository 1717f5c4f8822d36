"""`make demo`: release, collect the bundled sample hand-ins, autograde, print one grade table.

    python -m autograder.demo                 # every assignment with autograder/samples/ASSIGNMENT/expected.csv
    python -m autograder.demo week06 [--jobs N] [--keep]

Everything happens in one scratch course under autograder/work/ (the real release/ and gradebook are not
touched): each assignment is released from source/, its samples are collected and graded, then one table
over every graded assignment is printed (only the notebooks the samples use) and the gradebook is
compared cell by cell with each expected.csv (and the review flags with cases.csv). Exit status 1 on any
mismatch, 2 without bubblewrap.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

from autograder.course import Course
from autograder.grade.autograde import DEFAULT_NOTEBOOK_TIMEOUT, SandboxMissing, autograde
from autograder.reporting.sample_check import compare_with_expected


def sampled_assignments(repo: Course) -> list[str]:
    """Assignments with committed samples (``autograder/samples/A/expected.csv``) and a master in source/."""
    base = repo.root / "autograder" / "samples"
    found = sorted(p.parent.name for p in base.glob("*/expected.csv")) if base.is_dir() else []
    return [a for a in found if (repo.source / a).is_dir()]


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}"


def demo_table(course: Course, handed_in: dict[str, set[tuple[str, str]]]) -> str:
    """One table over every graded assignment: a column per sampled notebook under its assignment,
    ``-`` where a sample has no hand-in for that notebook (not a zero), total over the hand-ins, review notes."""
    from autograder.reporting.report import review_flags, scores

    columns, table, maxima = scores(course, list(handed_in))
    sampled = {f"{a}/{nb}" for a, pairs in handed_in.items() for _, nb in pairs}
    columns = [c for c in columns if c in sampled]
    has = {(s, f"{a}/{nb}") for a, pairs in handed_in.items() for s, nb in pairs}
    students = sorted({s for pairs in handed_in.values() for s, _ in pairs})
    flags = review_flags(course)
    width = max([10] + [len(s) for s in students])
    w = 14
    groups = f"{'':<{width}} " + " ".join(f"{c.split('/', 1)[0]:>{w}}" for c in columns)
    head = f"{'student':<{width}} " + " ".join(f"{c.split('/', 1)[1][:w]:>{w}}" for c in columns) \
        + f" {'total':>7}  review"
    lines = [groups, head, "-" * len(head)]
    for s in students:
        vals = [table.get(s, {}).get(c, 0.0) if (s, c) in has else None for c in columns]
        cells = " ".join(f"{'-' if v is None else _fmt(v):>{w}}" for v in vals)
        lines.append(f"{s:<{width}} {cells} {_fmt(sum(v for v in vals if v is not None)):>7}  "
                     + "; ".join(flags.get(s, [])))
    lines.append(f"{'max':<{width}} " + " ".join(f"{_fmt(maxima[c]):>{w}}" for c in columns)
                 + f" {_fmt(sum(maxima[c] for c in columns)):>7}")
    return "\n".join(lines)


def run_all(assignments: list[str], *, repo: Course, jobs=None, cell_timeout=60,
            notebook_timeout=DEFAULT_NOTEBOOK_TIMEOUT, allow_unsandboxed=False, keep=False,
            out=sys.stdout, report_dir: Path | None = None) -> dict[str, list[str]]:
    """Grade the samples of ``assignments`` in one scratch course; print one table; {assignment: mismatches}."""
    from autograder.collect.handins import collect
    from autograder.samplekit.make_samples import read_expected

    if not assignments:
        raise ValueError("no assignment has samples: run `python -m autograder.samplekit.make_samples ASSIGNMENT`")
    repo.work.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="demo-", dir=repo.work))
    try:
        course = repo.scratch(root, assignments, released=True)
        handed_in, samples = {}, {}
        for a in assignments:
            samples[a] = repo.root / "autograder" / "samples" / a
            print(f"{a}: {collect(course, a, samples[a]).summary()}", file=out)
            handed_in[a] = {(s, nb) for (s, nb, _) in read_expected(samples[a])[0]}
        for a in assignments:
            t0 = time.monotonic()
            results = autograde(course, a, jobs=jobs, cell_timeout=cell_timeout,
                                notebook_timeout=notebook_timeout, allow_unsandboxed=allow_unsandboxed)
            print(f"{a}: {len(results)} hand-ins graded in {time.monotonic() - t0:.1f}s", file=out)
        print("", file=out)
        print(demo_table(course, handed_in), file=out)
        if report_dir is not None:  # the class report of the samples, before the scratch course goes
            from autograder.reporting.class_report import demo_reports

            demo_reports(course, assignments, report_dir, out=out)
        return {a: compare_with_expected(course, a, samples[a]) for a in assignments}
    finally:
        if keep:
            print(f"demo course kept in {root}", file=out)
        else:
            shutil.rmtree(root, ignore_errors=True)


def main(argv=None) -> int:
    warnings.filterwarnings("ignore", module="nbgrader")
    warnings.filterwarnings("ignore", message=".*not in session.*")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("assignment", nargs="*", help="default: every assignment with samples")
    ap.add_argument("--course-root", default=None)
    ap.add_argument("--jobs", type=int, default=None, help="hand-ins graded at once (default: CPUs + 1)")
    ap.add_argument("--cell-timeout", type=int, default=60)
    ap.add_argument("--notebook-timeout", type=int, default=DEFAULT_NOTEBOOK_TIMEOUT)
    ap.add_argument("--allow-unsandboxed", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the scratch course (autograder/work/demo-*)")
    args = ap.parse_args(argv)
    repo = Course.at(args.course_root)
    sampled = sampled_assignments(repo)
    assignments = args.assignment or sampled
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
        bad = run_all(assignments, repo=repo, jobs=args.jobs, cell_timeout=args.cell_timeout,
                      notebook_timeout=args.notebook_timeout, allow_unsandboxed=args.allow_unsandboxed,
                      keep=args.keep, report_dir=repo.root / "autograder" / "report" / "demo")
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


if __name__ == "__main__":
    raise SystemExit(main())
