"""Merge one scratch grading run into the course: notebooks, scores, review notes (one thread only).

Order matters for crash safety (see autograder/grade/resume.py): the hand-in's 'graded' mark is removed first,
then the autograded notebooks are copied and scrubbed (autograder/grade/safe_feedback.py), then the scores, the
review notes and the new 'graded' mark are committed in ONE SQLite transaction; the review files are
written from the gradebook afterwards. A kill anywhere leaves the hand-in either fully merged or to be
graded again on the next run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import warnings
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path

from autograder import cells as nbcells
from autograder.course import Course, read_notebook
from autograder.grade import resume, review
from autograder.grade.nbexec import SIGNAL_RE, STOP_ENAME
from autograder.grade.safe_feedback import scrub_notebook
from autograder.sandbox.bwrap import read_outcomes
from autograder.sandbox.limits import limit_reason

_LIMIT_RE = re.compile(r"LIMIT_[A-Z_]+")


@dataclass
class HandInResult:
    student: str
    assignment: str
    ok: bool
    seconds: float
    log: str
    error: str = ""
    incidents: dict = field(default_factory=dict)  # notebook -> list of strings (timeouts, kernel death)
    findings: dict = field(default_factory=dict)  # notebook -> list of integrity findings
    repairs: dict = field(default_factory=dict)  # notebook -> structural repairs before grading (normalize)
    redacted: dict = field(default_factory=dict)  # notebook -> outputs hidden from feedback (safe_feedback)
    manual: dict = field(default_factory=dict)  # notebook -> grade_ids flagged for manual grading (kill)
    handin_sha: str = ""
    source_sha: str = ""
    skipped: bool = False  # already graded (resume): nothing was run


REVIEW_NOTES = ("incidents", "findings", "repairs", "redacted", "manual")  # kept in the review row, per notebook


def review_entry(course: Course, r: HandInResult) -> dict:
    return {"ok": r.ok, "error": r.error, "log": os.path.relpath(r.log, course.root), "seconds": round(r.seconds, 1),
            **{k: getattr(r, k) for k in REVIEW_NOTES}}


def _notebook_review(res: HandInResult, name: str, nb: dict) -> None:
    stops, killed_at = set(), None
    for idx, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            if out.get("ename") == STOP_ENAME:
                stops.add(out.get("evalue", ""))
                stops.update(_LIMIT_RE.findall(str(out.get("evalue", ""))))  # the sandbox's limit codes
                m = SIGNAL_RE.search(str(out.get("evalue", "")))
                if m and killed_at is None:
                    killed_at = idx
                    stops.add(m.group(0))
            elif out.get("ename") == "CellTimeoutError":
                stops.add("셀 시간 제한 초과(CellTimeoutError)")
        verdict = (cell.get("metadata", {}).get("gemm_lab") or {}).get("verdict") or {}
        stops.update(str(i) for i in verdict.get("incidents") or [])  # a grading worker killed mid-check
    if stops:
        res.incidents[name] = sorted(stops)
    res.findings[name] = review.review_notebook(nb)
    if killed_at is not None:  # killed from outside: a person decides what the rest deserves
        res.manual[name] = [c["metadata"]["nbgrader"]["grade_id"] for c in nb["cells"][killed_at:]
                            if nbcells.is_autograded_test(c)]


def merge(course: Course, res: HandInResult, parts: dict) -> None:
    """Merge the runs this autograde made for the hand-in, ``parts`` ({None: its folder} when it was graded
    whole, else {notebook: its folder} of the notebooks graded apart; schedule.part_dir): a folder of
    another run, kept or left by a crash, is never read."""
    from sqlalchemy.exc import SAWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's own ORM use in update_or_create_submission
        _merge(course, res, parts)
    resume.write_review_files(course)


def _copy_notebooks(course: Course, res: HandInResult, parts: dict) -> None:
    scratch = course.work / "grade" / res.assignment / res.student
    dst_nb_dir = course.autograded / res.student / res.assignment
    if dst_nb_dir.exists():
        shutil.rmtree(dst_nb_dir)
    for own, part in parts.items():
        src_nb_dir = part / "autograded" / res.student / res.assignment
        # a notebook's own run: only that notebook of it was graded, links stay out
        skip = None if own is None else lambda d, names, own=own: [
            n for n in names if Path(d, n).is_symlink() or (n.endswith(".ipynb") and n[:-len(".ipynb")] != own)]
        if src_nb_dir.is_dir():
            shutil.copytree(src_nb_dir, dst_nb_dir, ignore=skip, dirs_exist_ok=True)
    for nb_path in sorted(dst_nb_dir.glob("*.ipynb")) if dst_nb_dir.is_dir() else []:
        nb = read_notebook(nb_path)
        nb, notes = scrub_notebook(nb, [str(course.root), str(scratch)])
        nb_path.write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")
        if notes:
            res.redacted[nb_path.stem] = notes
        _notebook_review(res, nb_path.stem, nb)


def sandbox_limits(folders) -> list[str]:
    """Every limit the hand-in's sandboxes hit (``LIMIT_*: detail`` from the outcomes the sandbox wrote
    beside the spec, ``sandbox-outcomes/`` in each of ``folders``), also those that did not end a kernel (a
    refused fork bomb)."""
    hits = set()
    for outcome in (o for part in folders for o in read_outcomes(part / "sandbox-outcomes")):
        hits.update(h for h in limit_reason(outcome).split("; ") if h.startswith("LIMIT_"))
    return sorted(hits)


def graded_sources(nb_dir) -> dict:
    """{(notebook, grade_id): cell source} of the graded cells of the autograded notebooks in ``nb_dir``."""
    return {(p.stem, nbcells.grade_id(c)): nbcells.source(c)
            for p in (sorted(nb_dir.glob("*.ipynb")) if nb_dir.is_dir() else [])
            for c in read_notebook(p).get("cells", []) if nbcells.grade_id(c)}


def _merge(course: Course, res: HandInResult, parts: dict) -> None:
    from nbgrader.api import Gradebook, MissingEntry
    from sqlalchemy import text

    resume.forget(course.gradebook, res.assignment, res.student)
    before = graded_sources(course.autograded / res.student / res.assignment)  # what formgrader showed
    _copy_notebooks(course, res, parts)
    after = graded_sources(course.autograded / res.student / res.assignment)
    limits = sandbox_limits(parts.values())
    if limits:
        res.incidents["sandbox"] = limits
    # the scratch gradebook(s): the hand-in's own, or one per notebook graded apart
    with ExitStack() as stack:
        gb = stack.enter_context(Gradebook(course.db_url, "gemm-lab"))
        subs = {}
        for name, part in parts.items():
            if (db := part / "gradebook.db").is_file():
                with suppress(MissingEntry):
                    sgb = stack.enter_context(Gradebook(f"sqlite:///{db}", "gemm-lab"))
                    subs[name] = sgb.find_submission(res.assignment, res.student)
        ssub = next(iter(subs.values()), None)
        gb.update_or_create_student(res.student)
        kw = {"timestamp": ssub.timestamp} if ssub is not None and ssub.timestamp is not None else {}
        sub = gb.update_or_create_submission(res.assignment, res.student, **kw)
        for nb in sub.notebooks:
            snb = None
            if ssub is not None and res.ok:
                snb = next((x for x in subs.get(nb.name, ssub).notebooks if x.name == nb.name), None)
            sgrades = {g.name: g for g in snb.grades} if snb is not None else {}
            manual = set(res.manual.get(nb.name, []))
            for grade in nb.grades:
                sg = sgrades.get(grade.name)
                if sg is None:  # nothing graded (grader failure): zero, and flagged for review
                    grade.auto_score = 0
                    grade.needs_manual_grade = grade.cell.cell_type == "markdown" or not res.ok
                else:
                    grade.auto_score = sg.auto_score
                    grade.needs_manual_grade = sg.needs_manual_grade or grade.name in manual
                    if sg.auto_score is None and grade.manual_score is not None:  # an answer a person graded
                        # their score stands while the answer is the text they read; a rewritten answer is
                        # pending again (grades, feedback, report, LMS files) until a person grades it again
                        key = (nb.name, grade.name)
                        if key in before and before[key] == after.get(key):
                            grade.needs_manual_grade = False
                        else:
                            grade.manual_score = None
            scomments = {c.name: c for c in snb.comments} if snb is not None else {}
            for comment in nb.comments:
                sc = scomments.get(comment.name)
                comment.auto_comment = sc.auto_comment if sc is not None else None
            nb.flagged = bool(manual) or not res.ok
            if snb is not None:
                nb.late_submission_penalty = snb.late_submission_penalty
        gb.db.execute(text(resume.UPSERT_SQL), {
            "assignment": res.assignment, "student": res.student, "handin_sha": res.handin_sha,
            "source_sha": res.source_sha, "ok": int(res.ok),
            "review": json.dumps(review_entry(course, res), ensure_ascii=False, sort_keys=True)})
        crash_point("before_commit")
        gb.db.commit()


def crash_point(name: str) -> None:
    """Fault injection for tests/test_crash_safety.py: SIGKILL this process at ``name`` when
    ``GEMM_LAB_CRASH_AT`` says so (never set in normal use)."""
    if os.environ.get("GEMM_LAB_CRASH_AT") == name:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
