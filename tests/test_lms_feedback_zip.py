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
    "canvas_kimminsu": {"name": "kimminsu", "ids": {"canvas": "10234"}, "moodle": {},
                        "attachments": {"week07": {"01_pointer_blocks": "880011", "02_program_order_l2": "880012"}}},
    "s_1a2b3c4d": {"name": "김 철수", "ids": {}, "moodle": {"week07": "501"}},
    # one zip handed in for both notebooks: one attachment id for both pages
    "lee_young": {"name": "Lee_Young Hee", "ids": {"canvas": "10235"}, "moodle": {"week07": "502"},
                  "attachments": {"week07": {"02_program_order_l2": "880020"}}},
    # collected from Canvas before attachment ids were kept: no feedback file Canvas would attach
    "old_canvas": {"name": "old", "ids": {"canvas": "10236"}, "moodle": {}},
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


def canvas_comment_context(filename: str) -> tuple[str | None, str | None]:
    """Canvas's own reading of a re-uploaded file name (instructure/canvas-lms, app/models/assignment.rb,
    ``Assignment#infer_comment_context_from_filename``)::

        split_filename = filename.split('_')
        user_id, attachment_id = split_filename.grep(/^\\d+$/).take(2)
        attachment_id = nil if split_filename.last =~ /^link/ || filename =~ /^\\._/
        ...
        if !attachment || !submission || ... || !submission.attachments.where(:id => attachment_id).exists?
          @ignored_files << fullpath

    i.e. the first two all-digit ``_`` pieces are the user id and the attachment id, and the file is
    ignored unless that attachment belongs to the user's submission."""
    pieces = filename.split("_")
    digits = [p for p in pieces if re.fullmatch(r"\d+", p)]
    user_id, attachment_id = (digits + [None, None])[:2]
    if pieces[-1].startswith("link") or filename.startswith("._"):
        attachment_id = None
    return user_id, attachment_id


def test_canvas_zip_names_carry_user_and_attachment_ids_canvas_accepts(tmp_path):
    course = _course(tmp_path)
    result = build_zip(course, "week07", "canvas")
    assert result.path == tmp_path / "autograder" / "feedback_canvas_week07.zip"
    assert sorted(result.missing_id) == ["old_canvas", "s_1a2b3c4d"] and result.students == 2
    submissions = {"10234": {"880011", "880012"}, "10235": {"880020"}}  # user id -> submission attachments
    with zipfile.ZipFile(result.path) as zf:
        names = sorted(zf.namelist())
        assert names == ["kimminsu_10234_880011_week07-01-pointer-blocks.html",
                         "kimminsu_10234_880012_week07-02-program-order-l2.html",
                         "leeyounghee_10235_880020_week07-01-pointer-blocks.html",
                         "leeyounghee_10235_880020_week07-02-program-order-l2.html"]
        for n in names:
            user, attachment = canvas_comment_context(n)
            assert attachment in submissions[user], n  # Canvas attaches it instead of ignoring it
        assert zf.read(names[0]).decode() == "<html>canvas_kimminsu 01_pointer_blocks.html</html>"


def test_moodle_zip_has_a_folder_per_participant(tmp_path):
    course = _course(tmp_path)
    result = build_zip(course, "week07", "moodle")
    assert sorted(result.missing_id) == ["canvas_kimminsu", "old_canvas"] and result.students == 2
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


def _handin(course, nb: str, marker: str) -> str:
    data = json.loads((course.source / "demo01" / f"{nb}.ipynb").read_text(encoding="utf-8"))
    data["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": marker})
    return json.dumps(data)


def _zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(zipfile.ZipInfo(name, (2026, 12, 1, 10, 0, 0)), text)
    return path


def test_canvas_feedback_for_a_collected_download_names_the_downloaded_attachment(course, tmp_path):
    """Collect a Canvas download (a re-submission, a late one), write feedback pages, zip them: every page
    names the user id and the attachment id of the file Canvas holds for that notebook."""
    from autograder.collect.handins import collect
    from autograder.collect.roster import load_roster

    nbs = ("01_counts", "02_vectors")
    up, want = {}, {}
    for k, (name, uid) in enumerate((("kimminsu", 10234), ("davelee", 10235), ("parkjiwoo", 10236))):
        for j, nb in enumerate(nbs):
            aid = 5550000 + 10 * k + j
            up[f"{name}_{uid}_{aid}_{nb}.ipynb"] = _handin(course, nb, f"{name} {nb}")
            want[(str(uid), nb)] = str(aid)
    up["davelee_LATE_10235_5559999_01_counts-1.ipynb"] = _handin(course, "01_counts", "dave again")  # newest
    want[("10235", "01_counts")] = "5559999"
    report = collect(course, "demo01", _zip(tmp_path / "submissions.zip", up))
    assert len(report.collected) == 3
    roster = load_roster(course)
    for sid in report.collected:
        for nb in nbs:
            page = course.feedback / sid / "demo01" / f"{nb}.html"
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(f"<p>{sid} {nb}</p>", encoding="utf-8")
    result = build_zip(course, "demo01", "canvas")
    assert result.students == 3 and not result.missing_id
    by_uid = {e["ids"]["canvas"]: sid for sid, e in roster.items()}
    with zipfile.ZipFile(result.path) as zf:
        assert len(zf.namelist()) == 6
        for member in zf.namelist():
            user, attachment = canvas_comment_context(member)
            nb = next(n for n in nbs if member.endswith(f"demo01-{n.replace('_', '-')}.html"))
            assert attachment == want[(user, nb)], member
            assert zf.read(member).decode() == f"<p>{by_uid[user]} {nb}</p>"


def test_canvas_anonymous_download_is_one_student_per_anonymous_id(course, tmp_path):
    from autograder.collect.handins import collect
    from autograder.collect.roster import load_roster

    up = {}
    for k, anon in enumerate(("aB3xY", "Qz9kP", "12345")):  # an anonymous id may be all digits
        up[f"anon_{anon}_{7770000 + k}_01_counts.ipynb"] = _handin(course, "01_counts", f"{anon} 1")
        up[f"anon_{anon}_LATE_{7770100 + k}_02_vectors.ipynb"] = _handin(course, "02_vectors", f"{anon} 2")
    report = collect(course, "demo01", _zip(tmp_path / "anon.zip", up))
    assert sorted(report.collected) == ["anon_12345", "anon_Qz9kP", "anon_aB3xY"], report.summary()
    assert all(sorted(v) == ["01_counts", "02_vectors"] for v in report.collected.values())
    roster = load_roster(course)
    assert roster["anon_aB3xY"]["ids"] == {"canvas_anon": "aB3xY"}
    assert any("anonymous" in n for n in report.notes["anon_aB3xY"])
    assert "Canvas (anonymous grading): 6" in report.summary()
    # no Canvas user id: no feedback file Canvas could attach, and the zip says who was left out
    page = course.feedback / "anon_aB3xY" / "demo01" / "01_counts.html"
    page.parent.mkdir(parents=True)
    page.write_text("<p>x</p>", encoding="utf-8")
    result = build_zip(course, "demo01", "canvas")
    assert result.path is None and result.missing_id == ["anon_aB3xY"]
