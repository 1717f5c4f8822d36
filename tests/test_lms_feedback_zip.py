"""Feedback zips in the upload layout of Canvas and Moodle, built from a tiny course (no nbgrader run)."""

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.course import Course
from autograder.reporting.feedback_zip import build_zip

ROOT = Path(__file__).resolve().parents[1]
ROSTER = {
    "canvas_kimminsu": {"name": "kimminsu", "ids": {"canvas": "10234"}, "moodle": {}},
    "s_1a2b3c4d": {"name": "김 철수", "ids": {}, "moodle": {"week07": "501"}},
    "lee_young": {"name": "Lee_Young Hee", "ids": {"canvas": "10235"}, "moodle": {"week07": "502"}},
}
PAGES = ["01_pointer_blocks.html", "02_program_order_l2.html"]


def _course(tmp_path: Path) -> Course:
    course = Course.at(tmp_path)
    (tmp_path / "autograder" / "logs").mkdir(parents=True)
    (tmp_path / "autograder" / "logs" / "roster.json").write_text(json.dumps(ROSTER, ensure_ascii=False),
                                                                   encoding="utf-8")
    for sid in ROSTER:
        d = tmp_path / "autograder" / "feedback" / sid / "week07"
        d.mkdir(parents=True)
        for page in PAGES:
            (d / page).write_text(f"<html>{sid} {page}</html>", encoding="utf-8")
    return course


def _canvas_ids(member: str) -> tuple[str | None, str | None]:
    """What Canvas's re-upload reads from a file name: the first two all-digit `_` pieces."""
    digits = [p for p in member.split("_") if re.fullmatch(r"\d+", p)]
    return (digits + [None, None])[0], (digits + [None, None])[1]


def test_canvas_zip_names_carry_the_user_id_and_nothing_canvas_misreads(tmp_path):
    course = _course(tmp_path)
    result = build_zip(course, "week07", "canvas")
    assert result.path == tmp_path / "autograder" / "feedback_canvas_week07.zip"
    assert result.missing_id == ["s_1a2b3c4d"] and result.students == 2
    with zipfile.ZipFile(result.path) as zf:
        names = sorted(zf.namelist())
        assert names == ["kimminsu_10234_week07-01-pointer-blocks.html",
                         "kimminsu_10234_week07-02-program-order-l2.html",
                         "leeyounghee_10235_week07-01-pointer-blocks.html",
                         "leeyounghee_10235_week07-02-program-order-l2.html"]
        for n in names:
            user, attachment = _canvas_ids(n)
            assert user in {"10234", "10235"} and attachment is None
        assert zf.read(names[0]).decode() == "<html>canvas_kimminsu 01_pointer_blocks.html</html>"


def test_moodle_zip_has_a_folder_per_participant(tmp_path):
    course = _course(tmp_path)
    result = build_zip(course, "week07", "moodle")
    assert result.missing_id == ["canvas_kimminsu"] and result.students == 2
    with zipfile.ZipFile(result.path) as zf:
        names = sorted(zf.namelist())
        assert names == sorted(f"{folder}/{p}" for folder in
                               ("김 철수_501_assignsubmission_file_", "Lee Young Hee_502_assignsubmission_file_")
                               for p in PAGES)
        for n in names:  # Moodle reads the participant id as the piece after the first `_`
            folder = n.split("/")[0]
            assert folder.split("_")[1] in {"501", "502"} and folder.endswith("_assignsubmission_file_")
            assert zf.getinfo(n).flag_bits & 0x800 or n.isascii()


def test_no_id_for_the_lms_writes_no_zip(tmp_path):
    course = _course(tmp_path)
    (tmp_path / "autograder" / "logs" / "roster.json").write_text("{}", encoding="utf-8")
    result = build_zip(course, "week07", "moodle")
    assert result.path is None and sorted(result.missing_id) == sorted(ROSTER)
    assert not list((tmp_path / "autograder").glob("*.zip"))
    with pytest.raises(ValueError, match="LMS must be one of"):
        build_zip(course, "week07", "blackboard")


@pytest.mark.parametrize("args, needle", [(["--lms", "blackboard"], "LMS must be one of"),
                                          ([], "nothing autograded yet")])
def test_make_feedback_bad_use_is_one_line(tmp_path, args, needle):
    proc = subprocess.run([sys.executable, "-m", "autograder", "feedback", *args],
                          capture_output=True, text=True, cwd=ROOT,
                          env={"GEMM_LAB_COURSE_ROOT": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode != 0 and needle in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
