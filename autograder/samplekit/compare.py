"""Compare a graded course with a samples folder's expected.csv / cases.csv (``make demo``, the grading
benchmark)."""

from __future__ import annotations

from pathlib import Path

from autograder.course import Course


def score_mismatches(course: Course, expected: dict, label=lambda a, s, nb, gid: f"{a}/{s}/{nb}/{gid}") -> list[str]:
    """One line per cell whose gradebook score differs from ``expected`` ({(assignment, student, notebook,
    grade_id): points}) or that was not graded; ``label`` names the cell in the line."""
    from nbgrader.api import Gradebook, MissingEntry

    bad = []
    with Gradebook(course.db_url, "gemm-lab") as gb:
        for (a, s, nb, gid), want in sorted(expected.items()):
            try:
                got = float(gb.find_grade(gid, nb, a, s).score)
            except MissingEntry:
                bad.append(f"{label(a, s, nb, gid)}: not graded")
                continue
            if abs(got - want) > 1e-9:
                bad.append(f"{label(a, s, nb, gid)}: expected {want:g}, got {got:g}")
    return bad


def compare_with_expected(course: Course, assignment: str, samples: Path) -> list[str]:
    """Per-cell comparison of the gradebook with samples/expected.csv (and the review flags)."""
    from autograder.reporting.grade_table import review_flags
    from autograder.samplekit.expected import read_expected, read_review_contains

    expected, review = read_expected(samples)
    flags = review_flags(course)
    bad = score_mismatches(course, {(assignment, s, nb, gid): exp for (s, nb, gid), exp in expected.items()},
                           label=lambda a, s, nb, gid: f"{s}/{nb}/{gid}")
    for student, want in review.items():
        found = [f for f in flags.get(student, []) if "tampering" in f or "findings" in f]
        if want and not found:
            bad.append(f"{student}: expected a review flag, none")
        mine = [f for f in found if f.startswith(f"{assignment}/")]
        if mine and not want:  # honest work never reads as tampering
            bad.append(f"{student}: a review flag where none is expected: {mine[0][:200]}")
    # the sandbox limits / repairs the review column must name
    bad += [f"{s}: review column lacks {w!r}" for s, w in read_review_contains(samples).items()
            if not any(w in f for f in flags.get(s, []))]
    return bad
