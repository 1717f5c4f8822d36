"""`make report [ASSIGNMENT=…]`: the class picture after autograde — what to re-teach next session.

Reads only what grading recorded (no notebook runs again):

* the gradebook (``autograder/gradebook.db``, nbgrader's Gradebook API): every graded cell's points,
  which need manual grading;
* the grader's verdict in each autograded notebook's test cells
  (``autograder/autograded/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb``, ``cell.metadata["gemm_lab"]["verdict"]``):
  each checked value the student gave, the Korean message (with the named mistake when one matched),
  which hidden kernel cases failed;
* ``autograder/logs/review.json`` and ``collect_ASSIGNMENT.json`` (review flags, unreadable hand-ins);
* ``release/ASSIGNMENT/*.ipynb`` for the exercise titles (never the student's copy: its text is theirs).

and writes under ``autograder/report/``: ``ASSIGNMENT.html`` (the instructor's, student ids in the
drill-downs), ``ASSIGNMENT_class.html`` (to show the class: no student id, no value that fewer than
:data:`MIN_SHARED` students share — rarer wrong answers are one "other" row, histogram bins are merged
until each holds at least that many), the figures as PNG (also inside the pages as data: URIs, so a page
opens offline) and ``ASSIGNMENT_items.csv`` (one row per graded cell, no student id). Points always come
from the gradebook (a verdict only explains them): a verdict whose grade_id is not the graded cell's own
is not counted.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import sqlite3
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from autograder import cells as nbcells
from autograder.course import Course, write_atomic
from autograder.reporting.class_report_model import (
    MIN_SHARED,
    STATUSES,
    CellInfo,
    CellStats,
    CheckStats,
    ClassReport,
    KernelStats,
    WrongAnswer,
    _blank,
    _key,
    show,
)
from autograder.reporting.gradebook_export import read_gradebook

PARALLEL_FROM = 400  # autograded notebooks: read them in worker processes from this many on


class ReportError(ValueError):
    """Bad use of `make report` (no gradebook, unknown assignment, nothing graded): a one-line message."""


# ------------------------------------------------------------------------------------- reading


def _check_gradebook(course: Course) -> None:
    path = course.gradebook
    if not path.is_file():
        raise ReportError(f"no gradebook at {_rel(course, path)}: grade first (make autograde), then make report")
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as exc:
        raise ReportError(f"{_rel(course, path)} is not a readable nbgrader gradebook ({exc})") from None
    if not {"assignment", "grade", "submitted_notebook"} <= tables:
        raise ReportError(f"{_rel(course, path)} is not an nbgrader gradebook (no grade tables): "
                          "grade first (make autograde)")


def _rel(course: Course, path: Path) -> str:
    try:
        return str(path.relative_to(course.root))
    except ValueError:
        return str(path)


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_DOCSTRING = re.compile(r'^\s*[rRuU]?(?:"""|\'\'\')\s*(.*?)\s*(?:"""|\'\'\'|$)', re.M)


def _titles(course: Course, assignment: str, cells: list[CellInfo]) -> None:
    """Fill order, title and description of ``cells`` from release/ (else source/) notebooks."""
    by_nb = defaultdict(dict)
    for c in cells:
        by_nb[c.notebook][c.grade_id] = c
    for nb_order, nb in enumerate(sorted(by_nb)):
        for base in (course.release, course.source):
            try:
                data = json.loads((base / assignment / f"{nb}.ipynb").read_text(encoding="utf-8"))
                nb_cells = [c for c in data["cells"] if isinstance(c, dict)]
                break
            except (OSError, ValueError, KeyError, TypeError):
                continue
        else:
            nb_cells = []
        heading = ""
        for i, cell in enumerate(nb_cells):
            src, gid = nbcells.source(cell), nbcells.grade_id(cell)
            info = by_nb[nb].get(gid) if gid else None
            if info is not None:
                info.order = nb_order * 10_000 + i
                info.title = heading
                m = _DOCSTRING.match(src) if cell.get("cell_type") == "code" else None
                info.description = m.group(1).strip() if m else ""
            if cell.get("cell_type") == "markdown":
                found = _HEADING.findall(src)
                if found:
                    heading = found[-1]
        for info in by_nb[nb].values():
            if info.order < 0:
                info.order = nb_order * 10_000 + 9_999


def _of(v, kind: type, default=None):
    """``v`` when it is a ``kind``, else ``default``: a recorded verdict's fields are checked one by one."""
    return v if isinstance(v, kind) else default


def _check_kernels(checks: list) -> dict | None:
    """One kernel record of a cell from the records of its kernel checks (a cell may call several)."""
    found = [ch["kernel"] for ch in checks if isinstance(ch, dict) and isinstance(ch.get("kernel"), dict)]
    if not found:
        return None
    compiles = [k["compile"] for k in found if isinstance(k.get("compile"), dict)]
    return {"refused": next((k["refused"] for k in found if k.get("refused")), None),
            "compile": next((c for c in compiles if c.get("ok") is False), compiles[0] if compiles else {}),
            "cases": [c for k in found for c in _of(k.get("cases"), list, [])]}


def _clean_verdict(v, gid: str) -> tuple[dict | None, str | None]:
    """The verdict with every field of the expected type, or (None, why it is not counted)."""
    if not isinstance(v, dict):
        return None, "verdict is not an object"
    if v.get("grade_id") != gid:
        return None, f"verdict names {str(v.get('grade_id'))[:40]!r} in cell {gid!r}"
    raw_checks = _of(v.get("checks"), list, [])
    checks = [{"name": _of(ch.get("name"), str, "?"), "claimed": ch.get("claimed"), "expected": ch.get("expected"),
               "ok": ch.get("ok") is True, "message": _of(ch.get("message"), str, "")}
              for ch in raw_checks if isinstance(ch, dict)]
    # the grader keeps each kernel check's record in its check entry (a record for the whole cell is read too)
    kernel = v["kernel"] if isinstance(v.get("kernel"), dict) else _check_kernels(raw_checks)
    if kernel is not None:
        comp = _of(kernel.get("compile"), dict, {})
        kernel = {"refused": _of(kernel.get("refused"), str) or None, "compile_ok": comp.get("ok", True) is True,
                  "compile_message": _of(comp.get("message"), str, ""),
                  "cases": [{"kind": _of(c.get("kind"), str, "?"), "where": _of(c.get("where"), str, ""),
                             "ok": c.get("ok") is True, "reason": _of(c.get("reason"), str, ""),
                             "map": _of(c.get("map"), dict)}
                            for c in _of(kernel.get("cases"), list, []) if isinstance(c, dict)]}
    return {"status": v.get("status") if v.get("status") in STATUSES else "grader_error",
            "message": _of(v.get("message"), str, ""), "checks": checks, "kernel": kernel}, None


def read_verdicts(path: Path, grade_ids: set[str]) -> tuple[dict, list[str], str | None]:
    """({grade_id: verdict}, [why a verdict was not counted], why the file is unreadable or None).

    Only a verdict in the metadata of the nbgrader grade cell it names, of a cell the gradebook knows, counts.
    """
    try:
        nb = json.loads(Path(path).read_bytes())
        cells = nb["cells"]
        if not isinstance(cells, list):
            raise TypeError("cells is not a list")
    except FileNotFoundError:
        return {}, [], None
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        return {}, [], f"unreadable autograded notebook ({type(exc).__name__})"
    out, ignored = {}, []
    for cell in cells:
        raw = _of(_of(_of(cell, dict, {}).get("metadata"), dict, {}).get("gemm_lab"), dict, {}).get("verdict")
        if raw is None:
            continue
        gid = nbcells.grade_id(cell)
        if not (nbcells.meta(cell).get("grade") is True and gid in grade_ids):
            ignored.append("verdict in a cell that is not a graded cell")
            continue
        if gid in out:
            ignored.append(f"second verdict for {gid!r}")
            continue
        verdict, why = _clean_verdict(raw, gid)
        if verdict is None:
            ignored.append(why)
        else:
            out[gid] = verdict
    return out, ignored, None


def _read_one(job: tuple[str, str, Path, frozenset]) -> tuple[str, str, tuple]:
    s, nb, path, gids = job
    return s, nb, read_verdicts(path, gids)


def _read_all(jobs: list[tuple[str, str, Path, frozenset]]) -> list[tuple[str, str, tuple]]:
    workers = min(os.cpu_count() or 1, 8)
    if len(jobs) < PARALLEL_FROM or workers < 2:
        return [_read_one(job) for job in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:  # in job order, as read here
        return list(pool.map(_read_one, jobs, chunksize=-(-len(jobs) // (workers * 4))))


# ------------------------------------------------------------------------------------- analysis


def _canon(v, depth: int = 0):
    """A student's value, normalised for counting: integral floats as ints, floats to 6 significant digits."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, float):
        if math.isfinite(v):
            r = float(f"{v:.6g}")
            return int(r) if r.is_integer() and abs(r) < 1e15 else r
        return str(v)
    if isinstance(v, int):
        return v
    if depth > 20:
        return "…"
    if isinstance(v, list):
        return [_canon(x, depth + 1) for x in v]
    if isinstance(v, dict) and len(v) == 1 and next(iter(v)) in ("__set__", "__tuple__", "__dict__", "__float__"):
        from gemm_lab.grading.codec import decode

        d = decode(v)  # the hand-out's JSON, shown as a student writes the value
        if isinstance(d, (set, tuple)):
            items = [repr(_canon(x, depth + 1)) for x in (sorted(d, key=repr) if isinstance(d, set) else d)]
            return ("{%s}" % ", ".join(items) if d else "set()") if isinstance(d, set) else repr(tuple(
                _canon(x, depth + 1) for x in d))
        return _canon(d, depth + 1) if isinstance(d, (dict, float)) else str(d)
    if isinstance(v, dict):
        return {str(k): _canon(x, depth + 1) for k, x in v.items()}
    return str(v)


def _review_notes(course: Course, assignment: str) -> tuple[dict, list]:
    """({student: [review note of this assignment]}, [(student, why)] of students with no readable hand-in).

    The notes of grades.csv's review column (grade_table.review_flags) for one assignment, from collect's log
    and logs/review.json only: manual grading still to do is the report's own section.
    """
    from autograder.collect.summary import review_notes
    from autograder.reporting.grade_table import grader_notes

    notes, unreadable = review_notes(course, [assignment])
    for s, items in grader_notes(course, [assignment]).items():
        notes.setdefault(s, []).extend(items)
    return notes, sorted(unreadable.get(assignment, {}).items())


def analyze(course: Course, assignment: str, progress=None) -> ClassReport:
    """Read the gradebook, the verdicts and the review logs of ``assignment`` into a :class:`ClassReport`."""
    _check_gradebook(course)
    found = read_gradebook(course, [assignment])
    if not found:
        known = ", ".join(ag.name for ag in read_gradebook(course)) or "none"
        raise ReportError(f"unknown assignment {assignment!r}: the gradebook has {known} "
                          "(make report ASSIGNMENT=NAME)")
    (ag,) = found
    if not ag.score:
        raise ReportError(f"no graded hand-ins of {assignment} in the gradebook: run make autograde first")
    cells, grades, students = [CellInfo(*c) for c in ag.cells], ag.grades, sorted(ag.score)
    _titles(course, assignment, cells)
    stats = {(c.notebook, c.grade_id): CellStats(c) for c in cells}
    notebooks = sorted({c.notebook for c in cells})
    nb_max = {nb: sum(c.max_points for c in cells if c.notebook == nb) for nb in notebooks}
    gids = {nb: frozenset(c.grade_id for c in cells if c.notebook == nb) for nb in notebooks}

    jobs = [(s, nb, course.autograded / s / assignment / f"{nb}.ipynb", gids[nb])
            for s in students for nb in notebooks]
    if progress:
        progress(f"{assignment}: reading {len(jobs)} autograded notebooks of {len(students)} students")
    verdicts = {}
    unreadable, ignored = [], []
    files = set()
    for s, nb, (found, skipped, error) in _read_all(jobs):
        verdicts[(s, nb)] = found
        ignored += [(s, nb, why) for why in skipped]
        if error:
            unreadable.append((s, f"{nb}.ipynb: {error}"))
            files.add((s, nb))
        elif (course.autograded / s / assignment / f"{nb}.ipynb").is_file():
            files.add((s, nb))

    totals = {s: 0.0 for s in students}
    nb_scores = {nb: {} for nb in notebooks}
    for (s, nb), rows in grades.items():
        # a notebook missing from a hand-in still gets 0-point grades from nbgrader: the file decides; only
        # where the student's autograded folder is gone altogether do the recorded scores stand in for it
        folder = course.autograded / s / assignment
        handed_in = (s, nb) in files or (not folder.is_dir() and any(scored for *_, scored in rows))
        totals[s] += sum(score for _, score, _, _ in rows)
        if not handed_in:
            continue
        nb_scores[nb][s] = sum(score for _, score, _, _ in rows)
        for gid, score, manual, _ in rows:
            st = stats.get((nb, gid))
            if st is None:
                continue
            st.handed_in += 1
            if manual:
                st.pending.append(s)
                continue
            st.points.append(score)
            st.full += score >= st.info.max_points - 1e-9

    for (s, nb), found in verdicts.items():
        for gid, v in found.items():
            st = stats[(nb, gid)]
            st.status[v["status"]] += 1
            if v["status"] == "grader_error":
                st.grader_errors.append((s, v["message"]))
            gave_value = False
            k = v["kernel"]
            for ch in v["checks"]:
                gave_value |= not ch["ok"] and not _blank(ch["claimed"])
                cs = st.checks.setdefault(ch["name"], CheckStats(ch["name"]))
                cs.checked += 1
                cs.expected[_key(_canon(ch["expected"]))] += 1
                if ch["ok"]:
                    cs.correct += 1
                elif _blank(ch["claimed"]) and k is None:
                    cs.blank.append(s)
                else:  # a kernel check is never a blank answer: refused (with the reason) or failed (its message)
                    value = _canon(ch["claimed"]) if k is None else \
                        f"거부됨: {k['refused'][:160]}" if k["refused"] else ch["message"][:160]
                    w = cs.wrong.setdefault(_key(value), WrongAnswer(value))
                    w.students.append(s)
                    w.messages[ch["message"]] += 1
            if v["status"] in ("fail", "not_run") and not gave_value and k is None:
                st.blank.append(s)
                if not v["checks"]:
                    st.unchecked.setdefault(v["message"], []).append(s)
            if k is not None:
                st.kernel = st.kernel or KernelStats()
                st.kernel.students += 1
                if k["refused"]:
                    st.kernel.failed["compile_refused"].append((s, "", k["refused"]))
                elif not k["compile_ok"]:
                    st.kernel.failed["compile_error"].append((s, "", k["compile_message"]))
                for case in k["cases"]:
                    if not case["ok"] and not (k["refused"] and case["kind"] == "compile_refused"):
                        st.kernel.failed[case["kind"]].append((s, case["where"], case["reason"]))
                        if case["map"]:  # a failed visible case's error map (class_report_maps)
                            st.kernel.maps.append((s, case["where"], case["map"]))

    # hardest first; a cell mostly still awaiting manual grading goes after the graded ones
    ordered = sorted(stats.values(), key=lambda c: (
        c.graded == 0, len(c.pending) > c.graded, c.pass_rate if c.pass_rate is not None else 2.0,
        (c.mean_points or 0.0) / c.info.max_points if c.info.max_points else 1.0, c.info.order))
    review, collect_unreadable = _review_notes(course, assignment)
    return ClassReport(assignment=assignment, students=students, notebooks=notebooks, notebook_max=nb_max,
                       totals=totals, notebook_scores=nb_scores, cells=ordered, review=review,
                       unreadable=collect_unreadable + sorted(unreadable), ignored_verdicts=ignored)


# --------------------------------------------------------------------------------------- output


def _csv_cell(v) -> str:
    """A CSV cell a spreadsheet will not run as a formula."""
    text = "" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        try:
            float(text)
        except ValueError:
            return "'" + text
    return text


ITEM_COLUMNS = ["assignment", "notebook", "grade_id", "title", "description", "max_points", "handed_in",
                "graded", "full_points", "pass_rate", "mean_points", "pass", "fail", "grader_error", "not_run",
                "manual_pending", "blank_share", "top_wrong_check", "top_wrong_answer", "top_wrong_students",
                "top_wrong_message", "kernel_failures"]


def write_items_csv(report: ClassReport, path: Path) -> Path:
    """One row per graded cell, hardest first (wrong answers only when MIN_SHARED students gave them)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, ITEM_COLUMNS)
    w.writeheader()
    for c in report.cells:
        best = None
        for cs in c.checks.values():
            shown, _ = cs.top_wrong(MIN_SHARED)
            if shown and (best is None or len(shown[0].students) > len(best[1].students)):
                best = (cs.name, shown[0])
        kernel = "; ".join(f"{kind}: {len(ss)}" for kind, ss in c.kernel.students_by_kind()) if c.kernel else ""
        row = {
            "assignment": report.assignment, "notebook": c.info.notebook, "grade_id": c.info.grade_id,
            "title": c.info.title, "description": c.info.description, "max_points": c.info.max_points,
            "handed_in": c.handed_in, "graded": c.graded, "full_points": c.full,
            "pass_rate": c.pass_rate, "mean_points": c.mean_points,
            **{s: c.status.get(s, 0) for s in STATUSES}, "manual_pending": len(c.pending),
            "blank_share": c.blank_share, "top_wrong_check": best[0] if best else "",
            "top_wrong_answer": show(best[1].value) if best else "",
            "top_wrong_students": len(best[1].students) if best else "",
            "top_wrong_message": best[1].message if best else "", "kernel_failures": kernel}
        w.writerow({k: _csv_cell(v) for k, v in row.items()})
    return write_atomic(path, buf.getvalue())


@dataclass
class ReportFiles:
    instructor: Path
    class_copy: Path
    items_csv: Path
    figures: list


def build_report(course: Course, assignment: str, out_dir: Path | None = None, progress=None) -> ReportFiles:
    """Write the instructor's page, the class copy, the PNG figures and the items CSV of ``assignment``."""
    from autograder.reporting.class_report_html import render
    from autograder.reporting.class_report_plots import figures

    out = Path(out_dir or course.root / "autograder" / "report")
    report = analyze(course, assignment, progress=progress)
    paths, pages, shared, instructor_figs = [], {}, {}, {}
    for audience in ("instructor", "class"):
        anonymous = audience == "class"
        figs = figures(report, anonymous=anonymous, cache=shared)
        instructor_figs = instructor_figs or figs
        for name, png in figs.items():
            if not (anonymous and instructor_figs.get(name) == png):  # a class PNG only where it differs
                paths.append(write_atomic(out / f"{assignment}{'_class' if anonymous else ''}_{name}.png", png))
        pages[audience] = render(report, figs, anonymous=anonymous)
    return ReportFiles(
        instructor=write_atomic(out / f"{assignment}.html", pages["instructor"]),
        class_copy=write_atomic(out / f"{assignment}_class.html", pages["class"]),
        items_csv=write_items_csv(report, out / f"{assignment}_items.csv"), figures=paths)


def demo_reports(course: Course, assignments: list[str], out_dir: Path, out=None) -> list[Path]:
    """For `make demo`: the instructor pages of ``assignments`` under ``out_dir``. A failure is one line and
    removes that assignment's pages of an earlier demo (never a stale page); the demo goes on."""
    paths = []
    for a in assignments:
        try:
            paths.append(build_report(course, a, out_dir).instructor)
        except Exception as exc:  # the grading already done must still be compared and printed
            print(f"class report of {a} not written: {type(exc).__name__}: {exc}", file=out)
            for page in (Path(out_dir) / f"{a}.html", Path(out_dir) / f"{a}_class.html"):
                page.unlink(missing_ok=True)
    return paths


def cli(course: Course, assignments: list[str], out_dir: str | None = None) -> int:
    """`python -m autograder report [ASSIGNMENT ...] [--out DIR]`: the reports of ``assignments`` (default:
    every assignment with graded hand-ins); 0, or 2 with one line on bad use."""
    import sys

    try:
        if not assignments:
            _check_gradebook(course)
            assignments = [ag.name for ag in read_gradebook(course) if ag.score]
        if not assignments:
            raise ReportError("the gradebook holds no graded hand-in: run make autograde first")
        for a in assignments:
            t0 = time.monotonic()
            files = build_report(course, a, out_dir, progress=print)
            print(f"{a}: report in {time.monotonic() - t0:.1f}s -> {_rel(course, files.instructor)} "
                  f"(class copy {files.class_copy.name}, {files.items_csv.name}, {len(files.figures)} PNG)")
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
