"""`collect` on honest and hostile uploads.

No nbgrader run: the fixture course is not released, so collect matches hand-ins against source/.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from autograder.collect import handins as col
from autograder.collect import lms
from autograder.collect.archive import ZipLimits
from autograder.collect.names import sanitize_student_id
from autograder.collect.summary import report_path
from autograder.course import Course
from autograder.reporting.grade_table import grade_table, review_flags, write_grades_csv
from autograder.samplekit.fixture import ASSIGNMENT, make_course

ROOT = Path(__file__).resolve().parent.parent

NB1, NB2 = "01_counts", "02_vectors"  # the `course` fixture (scratch course, not released): conftest.py


def _nb(course: Course, name: str, marker: str = "") -> dict:
    nb = json.loads((course.source / ASSIGNMENT / f"{name}.ipynb").read_text())
    if marker:
        nb["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": marker})
    return nb


def _text(course: Course, name: str, marker: str = "") -> str:
    return json.dumps(_nb(course, name, marker))


def _write(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def _handed_in(course: Course, student: str, name: str) -> str:
    return (course.submitted / student / ASSIGNMENT / f"{name}.ipynb").read_text(encoding="utf-8")


def _reasons(report) -> dict[str, str]:
    return {Path(w.split(":", 1)[-1] if ".zip:" in w else w).name: why for w, why in report.skipped}


# ---------------------------------------------------------------- names (items 3, 4)

LMS_IDS = ["kim_cs", "lee_cs", "park-2", "o_3_x", "2024123", "김_철수", "a_attempt_b"]


@pytest.mark.parametrize("prefix", [ASSIGNMENT, "hw"])
def test_lms_ids_are_everything_between_prefix_and_attempt(prefix):
    ctx = lms.Context(ASSIGNMENT, {NB1.lower()})
    for raw in LMS_IDS:
        got = lms.read_name((f"{prefix}_{raw}_attempt_2026-12-01-10-00-00_{NB1}.ipynb",), "", ctx)
        assert got.fmt == "blackboard" and got.lms_id == raw and got.stem == NB1
        assert got.when == (2026, 12, 1, 10, 0, 0, 0.0)
    assert "malformed time" in lms.read_name(("hw_kim_attempt_notadate_x.ipynb",), "", ctx)


def test_nbgrader_named_regexp_agrees_with_collect():
    import re

    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    regexp = cfg.FileNameCollectorPlugin.named_regexp  # a manual zip_collect names the student as collect does
    for raw in LMS_IDS:
        name = f"hw_{raw}_attempt_2026-12-01-10-00-00_Copy of {NB1}.ipynb"
        got = lms.read_name((name,), "", lms.Context("week99", {NB1.lower()}))
        assert re.match(regexp, name)["student_id"] == got.lms_id == raw


def test_lms_zip_keeps_ids_with_underscores_apart(course, tmp_path):
    z = tmp_path / "lms.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for raw in LMS_IDS:
            zf.writestr(f"hw_{raw}_attempt_2026-12-01-10-00-00_{NB1}.ipynb", _text(course, NB1, f"by {raw}"))
    report = col.collect(course, ASSIGNMENT, z)
    assert len(report.collected) == len(LMS_IDS)
    for raw in LMS_IDS:
        sid = sanitize_student_id(raw)
        assert report.raw_ids[sid] == raw
        first = json.loads(_handed_in(course, sid, NB1))["cells"][0]["source"]
        assert first == f"by {raw}"  # kim_cs holds kim's notebook, lee_cs lee's


@pytest.mark.parametrize("raw, want", [
    ("alice", "alice"), ("Bob.Smith-2", "Bob.Smith-2"), ("kim_cs", "kim_cs"), ("../../etc", None),
    ("김철수", None), ("a b", None), ("", None), (".hidden", None), ("ａlice", None), ("alice ", None),
])
def test_sanitize_student_id(raw, want):
    got = sanitize_student_id(raw)
    assert got and "/" not in got and not got.startswith(".") and got.isascii() and len(got) <= 64
    assert got not in (".", "..")
    if want is not None:
        assert got == want
    assert sanitize_student_id(raw) == got  # deterministic


def test_sanitize_keeps_distinct_ids_distinct():
    ids = ["김철수", "김영희", "a b", "a_b", "a/b", "alice", "ａlice", "alice ", "😀", "😁"]
    long = ["x" * 64 + "_section_a", "x" * 64 + "_section_b", "x" * 71]  # differ only after char 64
    got = {sanitize_student_id(s) for s in ids + long}
    assert len(got) == len(ids + long)
    assert all(len(sanitize_student_id(s)) <= 64 for s in long)
    with pytest.raises(TypeError, match="raw"):
        sanitize_student_id(None)


def test_long_ids_differing_after_the_cut_are_two_students(course, tmp_path):
    a, b = "s" * 65 + "_one", "s" * 65 + "_two"
    drop = tmp_path / "drop"
    _write(drop / f"{a}__{NB1}.ipynb", _text(course, NB1, "one"))
    _write(drop / f"{b}__{NB1}.ipynb", _text(course, NB1, "two"))
    report = col.collect(course, ASSIGNMENT, drop)
    assert len(report.collected) == 2 and not report.dropped
    assert "one" in _handed_in(course, sanitize_student_id(a), NB1)
    assert "two" in _handed_in(course, sanitize_student_id(b), NB1)


def test_two_raw_ids_never_share_a_student_silently(course, tmp_path, monkeypatch):
    real = col.sanitize_student_id
    monkeypatch.setattr(col, "sanitize_student_id", lambda raw, hash_len=8: "same" if hash_len == 8 else
                        real(raw, hash_len))  # force the (hash) collision
    drop = tmp_path / "drop"
    _write(drop / f"ann__{NB1}.ipynb", _text(course, NB1, "ann's"))
    _write(drop / f"ben__{NB1}.ipynb", _text(course, NB1, "ben's"))
    report = col.collect(course, ASSIGNMENT, drop)
    assert len(report.collected) == 2 and not report.dropped
    (other,) = set(report.collected) - {"same"}
    assert "already used by 'ann'" in " ".join(report.notes[other])
    assert "ben's" in _handed_in(course, other, NB1) and "ann's" in _handed_in(course, "same", NB1)


# ---------------------------------------------------------------- layouts, newest wins (item 5)

def test_folder_layouts(course, tmp_path):
    drop = tmp_path / "drop"
    _write(drop / "alice" / f"{NB1}.ipynb", _text(course, NB1))  # <student>/<notebook>.ipynb
    _write(drop / "alice" / f"Copy of {NB2}.ipynb", _text(course, NB2))  # Colab's name for a copy
    _write(drop / f"bob__{NB1}.ipynb", _text(course, NB1))  # <student>__<notebook>.ipynb
    _write(drop / f"bob__{NB2} (1).ipynb", _text(course, NB2))
    _write(drop / "김철수__whatever.ipynb", _text(course, NB2))  # name unknown: identified by its cell ids
    _write(drop / "erin" / "sub" / f"{NB1}.ipynb", _text(course, NB1))  # a subfolder: collected, noted
    report = col.collect(course, ASSIGNMENT, drop)
    kim = sanitize_student_id("김철수")
    assert {s: sorted(v) for s, v in report.collected.items()} == {
        "alice": [NB1, NB2], "bob": [NB1, NB2], kim: [NB2], "erin": [NB1]}
    assert (course.submitted / kim / ASSIGNMENT / f"{NB2}.ipynb").exists()
    assert any("subfolder sub" in n for n in report.notes["erin"])
    assert not report.skipped


def test_single_notebook_assignment(tmp_path):
    root = make_course(tmp_path / "c")
    (root / "source" / ASSIGNMENT / f"{NB2}.ipynb").unlink()
    course = Course.at(root)
    drop = tmp_path / "drop"
    _write(drop / "carol.ipynb", _text(course, NB1))
    _write(drop / "Dave Lee.ipynb", _text(course, NB1))
    _second_assignment(course)
    _write(drop / "eve.ipynb", (course.source / "other01" / "09_other.ipynb").read_text())
    report = col.collect(course, ASSIGNMENT, drop)
    assert set(report.collected) == {"carol", sanitize_student_id("Dave Lee")}
    assert (course.submitted / "carol" / ASSIGNMENT / f"{NB1}.ipynb").exists()
    assert _reasons(report) == {"eve.ipynb": f"a notebook of other01/09_other, not of {ASSIGNMENT}"}


def test_same_student_twice_in_a_folder_newest_wins(course, tmp_path):
    drop = tmp_path / "drop"
    t = 1_790_000_000
    _write(drop / f"alice__{NB1}.ipynb", _text(course, NB1, "oldest"), t)
    _write(drop / f"alice__{NB1} (1).ipynb", _text(course, NB1, "newest"), t + 300)
    _write(drop / f"alice__{NB1} (2).ipynb", _text(course, NB1, "middle"), t + 100)
    _write(drop / "alice" / f"{NB1}.ipynb", _text(course, NB1, "older"), t + 50)
    report = col.collect(course, ASSIGNMENT, drop)
    assert "newest" in _handed_in(course, "alice", NB1)
    dropped = sorted(Path(w).name for w, _ in report.dropped)
    assert dropped == [f"{NB1}.ipynb", f"alice__{NB1} (2).ipynb", f"alice__{NB1}.ipynb"]
    assert all(f"alice__{NB1} (1).ipynb" in why for _, why in report.dropped)
    assert any("newest of 4" in n for n in report.notes["alice"])


def test_same_student_twice_in_a_zip_newest_lms_time_wins(course, tmp_path):
    z = tmp_path / "lms.zip"
    with zipfile.ZipFile(z, "w") as zf:  # the newer attempt sorts first by name and comes first
        zf.writestr(f"hw_kim_cs_attempt_2026-12-02-09-00-00_{NB1}.ipynb", _text(course, NB1, "second try"))
        zf.writestr(f"hw_kim_cs_attempt_2026-12-01-23-00-00_{NB1}.ipynb", _text(course, NB1, "first try"))
        for n in ("a", "b"):  # no LMS time, equal zip times: kept by name, and said so
            zf.writestr(zipfile.ZipInfo(f"lee/{NB1} ({n}).ipynb", (2026, 12, 1, 8, 0, 0)), _text(course, NB1, n))
    report = col.collect(course, ASSIGNMENT, z)
    assert "second try" in _handed_in(course, "kim_cs", NB1)
    assert (course.submitted / "kim_cs" / ASSIGNMENT / "timestamp.txt").read_text() == "2026-12-02 09:00:00\n"
    assert not (course.submitted / "lee" / ASSIGNMENT / "timestamp.txt").exists()  # no LMS time
    assert '"b"' in _handed_in(course, "lee", NB1)
    why = dict((w.rsplit(":", 1)[1], r) for w, r in report.dropped)
    assert "older hand-in" in why[f"hw_kim_cs_attempt_2026-12-01-23-00-00_{NB1}.ipynb"]
    assert "same time" in why[f"lee/{NB1} (a).ipynb"]


# ---------------------------------------------------------------- unreadable hand-ins

DEEP = "[" * 200_000 + "]" * 200_000
BAD = {
    "cells_str": ('{"cells": "x", "nbformat": 4, "metadata": {}}', "cells is str"),
    "cells_ints": ('{"cells": [1, 2, 3], "nbformat": 4, "metadata": {}}', "cell 0: a int"),
    "nbgrader_meta": (None, "nbgrader metadata is not an object"),
    "no_nbformat": ('{"cells": []}', "nbformat is None"),
    "invalid": ('{"cells": [', "invalid JSON"),
    "empty": ("", "empty file"),
    "nbformat3": ('{"nbformat": 3, "nbformat_minor": 0, "worksheets": [{"cells": []}], "metadata": {}}',
                  "nbformat 3"),
    "deep": (DEEP, "nested too deeply"),
    "text": ("print('hello')  # saved as .ipynb", "invalid JSON"),
    "binary": (None, "not UTF-8"),
    "list": ("[]", "not an object"),
}


def _bad_bytes(course, kind: str) -> bytes:
    text, _ = BAD[kind]
    if kind == "nbgrader_meta":
        nb = _nb(course, NB1)
        nb["cells"][1]["metadata"]["nbgrader"] = "locked"
        text = json.dumps(nb)
    if kind == "binary":
        return b"\x89PNG\r\n\x1a\n\xff\xfe" + bytes(range(256))
    return text.encode()


@pytest.mark.parametrize("kind", sorted(BAD))
def test_structurally_bad_notebooks_are_skipped_with_a_reason(course, tmp_path, kind):
    drop = tmp_path / "drop"
    _write(drop / f"alice__{NB1}.ipynb", _text(course, NB1))
    (drop / f"zed__{NB1}.ipynb").write_bytes(_bad_bytes(course, kind))  # sorts after alice: no half-copy
    report = col.collect(course, ASSIGNMENT, drop)
    assert report.collected == {"alice": [NB1]}
    assert BAD[kind][1] in _reasons(report)[f"zed__{NB1}.ipynb"]
    assert not (course.submitted / "zed").exists()
    assert report.unreadable() == ["zed"]


def test_bad_members_of_a_zip_are_skipped_too(course, tmp_path):
    z = tmp_path / "lms.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for i, kind in enumerate(sorted(BAD)):
            zf.writestr(f"hw_s{i}_{kind}_attempt_2026-12-01-10-00-00_{NB1}.ipynb", _bad_bytes(course, kind))
        zf.writestr(f"hw_ok_attempt_2026-12-01-10-00-00_{NB1}.ipynb", _text(course, NB1))
    report = col.collect(course, ASSIGNMENT, z)
    assert report.collected == {"ok": [NB1]}
    reasons = _reasons(report)
    for i, kind in enumerate(sorted(BAD)):
        assert BAD[kind][1] in reasons[f"hw_s{i}_{kind}_attempt_2026-12-01-10-00-00_{NB1}.ipynb"]


def _run_with_deadline(fn, seconds=30):
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "collect blocked"
    return out["r"]


@pytest.mark.parametrize("kind", ["fifo", "socket", "device"])
def test_special_files_named_ipynb_are_never_opened(course, tmp_path, kind):
    drop = tmp_path / "drop"
    _write(drop / f"alice__{NB1}.ipynb", _text(course, NB1))
    target = drop / f"bob__{NB1}.ipynb"
    sock = None
    if kind == "fifo":
        os.mkfifo(target)  # open() for reading would block forever: nobody writes
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(target))
    else:
        try:
            os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero: endless bytes
        except PermissionError:
            pytest.skip("creating a device node needs CAP_MKNOD (root)")
    try:
        report = _run_with_deadline(lambda: col.collect(course, ASSIGNMENT, drop))
    finally:
        if sock:
            sock.close()
        # Never leave a FIFO or a device node behind under /tmp: other tests (the unsandboxed snoop
        # probe of test_autograder_e2e) walk /tmp and would block on it or read endless bytes.
        target.unlink(missing_ok=True)
    assert report.collected == {"alice": [NB1]}
    assert "not a regular file: not opened" in _reasons(report)[target.name]
    assert report.unreadable() == ["bob"]


def test_interrupted_collect_leaves_submitted_as_it_was(course, tmp_path, monkeypatch):
    drop = tmp_path / "drop"
    for s in ("ann", "ben", "cat"):
        _write(drop / f"{s}__{NB1}.ipynb", _text(course, NB1))
    _write(course.submitted / "ann" / ASSIGNMENT / f"{NB1}.ipynb", "previous")
    calls = []
    real = col._Run.take

    def crash_on_third(self, entry):
        calls.append(entry.name)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, entry)

    monkeypatch.setattr(col._Run, "take", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        col.collect(course, ASSIGNMENT, drop)
    assert sorted(p.name for p in course.submitted.iterdir()) == ["ann"]
    assert _handed_in(course, "ann", NB1) == "previous"
    assert not list(course.work.glob("collect-*"))  # the staging folder is gone


# ---------------------------------------------------------------- links (item 7)

def test_links_are_never_followed(course, tmp_path):
    drop = tmp_path / "drop"
    _write(drop / f"alice__{NB1}.ipynb", _text(course, NB1))
    (drop / "mallory").symlink_to(course.source / ASSIGNMENT)  # a student folder linking to the masters
    (drop / "eve").symlink_to("/etc")
    (drop / f"trudy__{NB1}.ipynb").symlink_to(course.source / ASSIGNMENT / f"{NB1}.ipynb")
    (drop / "oscar").mkdir()
    (drop / "oscar" / f"{NB1}.ipynb").symlink_to(course.source / ASSIGNMENT / f"{NB1}.ipynb")
    (drop / "oscar" / "up").symlink_to(tmp_path)
    report = col.collect(course, ASSIGNMENT, drop)
    assert report.collected == {"alice": [NB1]}
    reasons = {Path(w).relative_to(drop).as_posix(): why for w, why in report.skipped}
    for rel in ("mallory", "eve", f"trudy__{NB1}.ipynb", f"oscar/{NB1}.ipynb", "oscar/up"):
        assert reasons[rel] == "symbolic link: not followed"
    assert sorted(p.name for p in course.submitted.iterdir()) == ["alice"]


def test_symlink_member_of_a_zip_is_refused(course, tmp_path):
    z = tmp_path / "up.zip"
    with zipfile.ZipFile(z, "w") as zf:
        link = zipfile.ZipInfo(f"mallory/{NB1}.ipynb")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, str(course.source / ASSIGNMENT / f"{NB1}.ipynb"))
        zf.writestr(f"alice/{NB1}.ipynb", _text(course, NB1))
    report = col.collect(course, ASSIGNMENT, z)
    assert report.collected == {"alice": [NB1]}
    assert _reasons(report)[f"{NB1}.ipynb"] == "symbolic link in zip: refused"


# ---------------------------------------------------------------- zips (items 8, 9)

def test_zip_paths_outside_are_refused(course, tmp_path):
    z = tmp_path / "up.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr(f"../../escaped__{NB1}.ipynb", _text(course, NB1))
        zf.writestr(f"/tmp/abs__{NB1}.ipynb", _text(course, NB1))
        zf.writestr(f"ok/../../up__{NB1}.ipynb", _text(course, NB1))
        zf.writestr(f"C:\\win__{NB1}.ipynb", _text(course, NB1))
        zf.writestr(f"alice/{NB1}.ipynb", _text(course, NB1))
    report = col.collect(course, ASSIGNMENT, z)
    assert report.collected == {"alice": [NB1]}
    why = sorted(r for _, r in report.skipped)
    assert why == ["absolute path in zip: refused"] * 2 + ["path with '..' in zip: refused"] * 2
    assert not (tmp_path / f"escaped__{NB1}.ipynb").exists() and not Path(f"/tmp/abs__{NB1}.ipynb").exists()


def test_zip_bomb_is_refused_before_extracting(course, tmp_path, monkeypatch):
    z = tmp_path / "bomb.zip"
    with zipfile.ZipFile(z, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"bob/{NB1}.ipynb", b"\0" * (48 * 2**20))  # 48 MiB of zeros in ~50 KB
        zf.writestr(f"alice/{NB1}.ipynb", _text(course, NB1))
    assert z.stat().st_size < 2**20
    opened = []
    real_open = zipfile.ZipFile.open
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda self, name, *a, **k: (
        opened.append(getattr(name, "filename", name)), real_open(self, name, *a, **k))[1])
    report = col.collect(course, ASSIGNMENT, z)
    assert report.collected == {"alice": [NB1]}
    assert "zip bomb?): refused before extracting" in _reasons(report)[f"{NB1}.ipynb"]
    assert opened == [f"alice/{NB1}.ipynb"]  # the bomb was never opened
    # the declared sizes of the whole archive are checked too
    report = col.collect(course, ASSIGNMENT, z, limits=ZipLimits(max_total=2**20))
    assert report.skipped == [(str(z), f"unpacks to {48 * 2**20 + len(_text(course, NB1))} bytes "
                                       f"(limit {2**20}): refused before extracting")]
    report = col.collect(course, ASSIGNMENT, z, limits=ZipLimits(max_members=1))  # from the end record
    assert report.skipped == [(str(z), "2 members (limit 1): refused before extracting")]
    big = ZipLimits(max_member=2**20, max_ratio=10**6)
    report = col.collect(course, ASSIGNMENT, z, limits=big)
    assert "(limit 1048576): refused before extracting" in _reasons(report)[f"{NB1}.ipynb"]


def _zip_bytes(members) -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def test_a_students_own_zip_is_read_as_the_notebooks_it_holds(course, tmp_path):
    """Students zip their notebooks: in a Canvas download the zip's LMS name says who, in a folder per
    student the folder does, at the top of an upload ``<student>.zip`` does; one level deep only."""
    handin = _zip_bytes([(f"{NB1}.ipynb", _text(course, NB1, "park")), (f"my work/{NB2}.ipynb", _text(course, NB2)),
                         ("notes.txt", "hi"), ("deeper.zip", _zip_bytes([(f"{NB1}.ipynb", _text(course, NB1))]))])
    z = tmp_path / "canvas.zip"
    z.write_bytes(_zip_bytes([("parksj_late_555_666_handin.zip", handin),
                              (f"leejh_777_888_{NB1}.ipynb", _text(course, NB1))]))
    report = col.collect(course, ASSIGNMENT, z)
    assert report.collected == {"leejh_777": [NB1], "parksj_555": [NB1, NB2]}
    assert "park" in _handed_in(course, "parksj_555", NB1)
    reasons = {w.rsplit(":", 1)[-1]: why for w, why in report.skipped}
    assert reasons["deeper.zip"] == "zip inside a student's zip: not opened"
    assert report.roster["parksj_555"]["lms_id"] == "555" and report.formats == {"Canvas": 3}
    notes = " ".join(report.notes["parksj_555"])
    assert "taken from the zip parksj_late_555_666_handin.zip" in notes and "late" in notes
    # a folder per student: the folder says who, whatever the zip is called
    drop = tmp_path / "drop"
    (drop / "alice").mkdir(parents=True)
    (drop / "alice" / "handin.zip").write_bytes(handin)
    _write(drop / "bob" / f"{NB2}.ipynb", _text(course, NB2))
    report = col.collect(course, ASSIGNMENT, drop)
    assert report.collected == {"alice": [NB1, NB2], "bob": [NB2]}
    # <student>.zip at the top of an upload
    top = tmp_path / "top.zip"
    top.write_bytes(_zip_bytes([("carol.zip", handin)]))
    assert col.collect(course, ASSIGNMENT, top).collected == {"carol": [NB1, NB2]}


def test_broken_student_zips_are_reported_and_their_limits_hold(course, tmp_path):
    bomb = _zip_bytes([(f"{NB1}.ipynb", b"\0" * (48 * 2**20))])
    z = tmp_path / "canvas.zip"
    z.write_bytes(_zip_bytes([("choi_1_2_x.zip", b"PK\x03\x04 not a zip"),
                              ("kang_3_4_empty.zip", _zip_bytes([("readme.txt", "hi")])),
                              ("yoon_5_6_bomb.zip", bomb),
                              (f"leejh_7_8_{NB1}.ipynb", _text(course, NB1))]))
    report = col.collect(course, ASSIGNMENT, z)
    assert report.collected == {"leejh_7": [NB1]}
    reasons = {w.rsplit(":", 1)[-1]: why for w, why in report.skipped}
    assert reasons["choi_1_2_x.zip"].startswith("a student's zip, corrupt")
    assert reasons["kang_3_4_empty.zip"] == "a student's zip without a notebook: nothing collected"
    assert "zip bomb?): refused before extracting" in reasons[f"{NB1}.ipynb"]


def test_member_whose_header_lies_is_reported_not_read_past_its_size(course, tmp_path):
    z = tmp_path / "liar.zip"
    payload = _text(course, NB1).encode()
    with zipfile.ZipFile(z, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"bob/{NB1}.ipynb", payload)
    raw = bytearray(z.read_bytes())
    true_size = len(payload).to_bytes(4, "little")
    assert raw.count(true_size) == 2  # the local header and the central directory
    raw[:] = raw.replace(true_size, (100).to_bytes(4, "little"))
    z.write_bytes(bytes(raw))
    report = col.collect(course, ASSIGNMENT, z)
    assert report.collected == {}
    assert "corrupt zip member" in _reasons(report)[f"{NB1}.ipynb"]


@pytest.mark.parametrize("content", [b"PK\x03\x04 not really a zip", b"", b"\0" * 100])
def test_corrupt_zip_is_reported(course, tmp_path, content):
    drop = tmp_path / "drop"
    _write(drop / f"alice__{NB1}.ipynb", _text(course, NB1))
    (drop / "lms.zip").write_bytes(content)
    report = col.collect(course, ASSIGNMENT, drop)
    assert report.collected == {"alice": [NB1]}
    assert _reasons(report)["lms.zip"].startswith("corrupt zip")


def test_truncated_zip_is_reported(course, tmp_path):
    z = tmp_path / "lms.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr(f"hw_kim_attempt_2026-12-01-10-00-00_{NB1}.ipynb", _text(course, NB1))
    z.write_bytes(z.read_bytes()[:200])
    report = col.collect(course, ASSIGNMENT, z)
    assert report.collected == {} and report.skipped[0][1].startswith("corrupt zip")


def _second_assignment(course: Course) -> None:
    other = course.source / "other01"
    other.mkdir()
    nb = _nb(course, NB1)
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader")
        if meta:
            meta["grade_id"] = "other_" + meta["grade_id"]
    (other / "09_other.ipynb").write_text(json.dumps(nb))


def test_silent_outcomes_get_a_line(course, tmp_path):
    _second_assignment(course)
    z = tmp_path / "up.zip"
    other = (course.source / "other01" / "09_other.ipynb").read_text()
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr(f"course/alice/sub/{NB1}.ipynb", _text(course, NB1))  # one top folder, then a subfolder
        zf.writestr(f"course/alice/.hidden__{NB1}.ipynb", _text(course, NB1))
        zf.writestr("course/alice/notes.txt", "my notes")
        zf.writestr("course/bob/09_other.ipynb", other)
        zf.writestr(f"course/carol/{NB2}.ipynb", "not json, only text")
        zf.writestr("__MACOSX/._x", "")
    report = col.collect(course, ASSIGNMENT, z)
    assert report.collected == {"alice": [NB1]}
    assert (course.submitted / "alice" / ASSIGNMENT / f"{NB1}.ipynb").exists()
    assert not list(course.submitted.rglob("sub"))
    assert any("subfolder sub" in n for n in report.notes["alice"])
    r = _reasons(report)
    assert r[f".hidden__{NB1}.ipynb"] == "hidden file: not collected"
    assert r["notes.txt"] == "not a notebook: ignored"
    assert r["09_other.ipynb"] == f"a notebook of other01/09_other, not of {ASSIGNMENT}"
    assert r[f"{NB2}.ipynb"].startswith("not a notebook (invalid JSON")
    assert r["._x"] == "macOS metadata: ignored"
    assert sorted(report.unreadable()) == ["bob", "carol"]


def test_folder_non_notebooks_and_hidden_files_are_listed(course, tmp_path):
    drop = tmp_path / "drop"
    _write(drop / f"alice__{NB1}.ipynb", _text(course, NB1))
    _write(drop / f".hidden__{NB1}.ipynb", _text(course, NB1))
    _write(drop / "readme.txt", "hi")
    _write(drop / "alice" / "data.csv", "1,2")
    _write(drop / "alice" / ".ipynb_checkpoints" / f"{NB1}-checkpoint.ipynb", _text(course, NB1))
    report = col.collect(course, ASSIGNMENT, drop)
    assert report.collected == {"alice": [NB1]}
    r = _reasons(report)
    assert r[f".hidden__{NB1}.ipynb"] == "hidden file: not collected"
    assert r["readme.txt"] == r["data.csv"] == "not a notebook: ignored"
    assert r[".ipynb_checkpoints"] == "Jupyter checkpoint folder: ignored"


@pytest.mark.parametrize("raw", ["Dave Lee", "김철수", "😀 emoji", "a..b", "x" * 80])
def test_odd_names_in_folders_and_zips(course, tmp_path, raw):
    drop = tmp_path / "drop"
    _write(drop / f"{raw}__{NB1}.ipynb", _text(course, NB1, "flat"))
    _write(drop / raw / f"{NB2}.ipynb", _text(course, NB2))
    z = drop / "lms.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr(f"hw_{raw}_attempt_2026-12-01-10-00-00_{NB1}.ipynb", _text(course, NB1, "from the zip"))
    report = col.collect(course, ASSIGNMENT, drop)
    sid = sanitize_student_id(raw)
    assert {s: sorted(v) for s, v in report.collected.items()} == {sid: [NB1, NB2]}
    assert report.raw_ids[sid] == raw
    assert len(report.dropped) == 1  # the same notebook twice: newest wins, reported


# ---------------------------------------------------------------- containment, persistence

def _tree_digest(base: Path, skip: tuple[str, ...] = (), dir_times: bool = True) -> dict[str, str]:
    """path -> content hash and mtime (folders: mode, and mtime unless ``dir_times`` is False)."""
    out = {}
    for p in sorted(base.rglob("*")):
        rel = p.relative_to(base).as_posix()
        if any(rel == s or rel.startswith(s + "/") for s in skip):
            continue
        st = p.lstat()
        if stat.S_ISREG(st.st_mode):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() + f"@{st.st_mtime_ns}"
        else:
            out[rel] = stat.filemode(st.st_mode) + (f"@{st.st_mtime_ns}" if dir_times else "")
    return out


def test_upload_is_never_modified_and_nothing_else_is_written(course, tmp_path):
    drop = tmp_path / "drop"
    _write(drop / f"alice__{NB1}.ipynb", _text(course, NB1))
    _write(drop / "bob" / f"{NB2}.ipynb", "{bad")
    (drop / "link").symlink_to(course.source)
    with zipfile.ZipFile(drop / "lms.zip", "w") as zf:
        zf.writestr(f"hw_kim_cs_attempt_2026-12-01-10-00-00_{NB1}.ipynb", _text(course, NB1))
        zf.writestr(f"../../evil__{NB1}.ipynb", _text(course, NB1))
    course.work.mkdir(parents=True)
    upload_before = _tree_digest(drop)
    kept = {"skip": ("autograder/submitted", "autograder/logs"), "dir_times": False}
    course_before = _tree_digest(course.root, **kept)
    outside_before = sorted(p.name for p in tmp_path.iterdir())
    report = col.collect(course, ASSIGNMENT, drop)
    assert sorted(report.collected) == ["alice", "kim_cs"]
    assert _tree_digest(drop) == upload_before
    assert _tree_digest(course.root, **kept) == course_before  # the staging folder is gone again
    assert sorted(p.name for p in course.logs.iterdir()) == [f"collect_{ASSIGNMENT}.json", "roster.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == outside_before


def test_unreadable_student_gets_a_zero_row_in_grades_csv(course, tmp_path):
    drop = tmp_path / "drop"
    _write(drop / f"alice__{NB1}.ipynb", _text(course, NB1))
    _write(drop / f"alice__{NB2}.ipynb", "")
    _write(drop / f"mallory__{NB1}.ipynb", "{not json")
    _write(drop / f"mallory__{NB2}.ipynb", "")
    col.collect(course, ASSIGNMENT, drop)
    saved = json.loads(report_path(course, ASSIGNMENT).read_text())
    assert saved["students"]["mallory"]["collected"] == []
    rows = {r["student_id"]: r for r in csv.DictReader(write_grades_csv(course).open(encoding="utf-8"))}
    assert rows["mallory"]["total"] == "0"
    assert "no readable hand-in" in rows["mallory"]["review"] and "invalid JSON" in rows["mallory"]["review"]
    assert "alice" not in rows  # collected: her row comes from the gradebook once graded
    assert review_flags(course)["alice"] == [f"{ASSIGNMENT}: alice__{NB2}.ipynb: empty file"]
    # a later collect where mallory's hand-in is readable replaces the note
    drop2 = tmp_path / "drop2"
    _write(drop2 / f"mallory__{NB1}.ipynb", _text(course, NB1))
    col.collect(course, ASSIGNMENT, drop2)
    saved = json.loads(report_path(course, ASSIGNMENT).read_text())
    assert saved["students"]["mallory"] == {"raw": "mallory", "collected": [NB1], "notes": []}
    assert "alice" in saved["students"] and len(saved["runs"]) == 2


@pytest.mark.filterwarnings("ignore:.*not in session")  # nbgrader add_submission, known and harmless
def test_unreadable_student_row_beside_graded_students(course, tmp_path, monkeypatch):
    """With a gradebook: the unreadable student gets 0 in every notebook column, the graded one her score."""
    from nbgrader.api import Gradebook, GradeCell, Notebook

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # alembic
    drop = tmp_path / "drop"
    _write(drop / f"alice__{NB1}.ipynb", _text(course, NB1))
    _write(drop / f"mallory__{NB1}.ipynb", "")
    col.collect(course, ASSIGNMENT, drop)
    course.gradebook.parent.mkdir(parents=True, exist_ok=True)
    with Gradebook(course.db_url, "gemm-lab") as gb:  # what autograde would leave: alice graded, 2 of 5
        a = gb.update_or_create_assignment(ASSIGNMENT)
        for name, pts in ((NB1, 5), (NB2, 4)):
            gb.db.add(GradeCell(name=f"t_{name}", notebook=Notebook(name=name, assignment=a), max_score=pts,
                                cell_type="code"))
        gb.db.commit()
        gb.add_student("alice")
        gb.add_submission(ASSIGNMENT, "alice")
        gb.find_grade(f"t_{NB1}", NB1, ASSIGNMENT, "alice").auto_score = 2
        gb.db.commit()
    rows = list(csv.reader(write_grades_csv(course).open(encoding="utf-8")))
    assert rows[0] == ["student_id", f"{ASSIGNMENT}/{NB1}", f"{ASSIGNMENT}/{NB2}", "total", "review"]
    by = {r[0]: r for r in rows[1:]}
    assert by["alice"][1:4] == ["2", "0", "2"] and by["max"][1:4] == ["5", "4", "9"]
    assert by["mallory"][1:4] == ["0", "0", "0"]
    assert by["mallory"][4] == f"{ASSIGNMENT}: no readable hand-in, 0 points (mallory__{NB1}.ipynb: empty file)"
    (line,) = [x for x in grade_table(course).splitlines() if x.startswith("mallory")]
    assert line.split()[1:4] == ["0", "0", "0"] and "no readable hand-in" in line


# ---------------------------------------------------------------- entry points

def test_collect_script_and_no_import_circle(course, tmp_path):
    drop = tmp_path / "drop"
    _write(drop / f"alice__{NB1}.ipynb", _text(course, NB1))
    env = dict(os.environ, GEMM_LAB_COURSE_ROOT=str(course.root))
    r = subprocess.run([sys.executable, "-m", "autograder", "collect", ASSIGNMENT, str(drop)], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "collected 1 notebooks of 1 students" in r.stdout
    probe = ("import sys, autograder.collect.handins, autograder.demo, autograder.samplekit.compare\n"
             "print('autograder.__main__' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "False", r.stderr


def test_bad_arguments_are_named(course, tmp_path):
    with pytest.raises(FileNotFoundError, match="source"):
        col.collect(course, ASSIGNMENT, tmp_path / "nowhere")
    with pytest.raises(ValueError, match="assignment"):
        col.collect(course, "../x", tmp_path)
    with pytest.raises(FileNotFoundError, match="assignment"):
        col.collect(course, "week99", tmp_path)
