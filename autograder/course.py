"""The course layout (mirrors nbgrader_config.py) and thin helpers around the nbgrader CLI."""

from __future__ import annotations

import csv
import io
import json
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder import nbgrader_fork

REPO_ROOT = Path(__file__).resolve().parent.parent
IGNORE = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py"]


# The course-directory part of the nbgrader_config.py written into a scratch course (grading, feedback);
# formatted with root, db_url and ignore; each caller appends its own preprocessors.
SCRATCH_COURSE_CONFIG = """\
c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "gemm-lab"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = {db_url!r}
c.CourseDirectory.ignore = {ignore!r}
"""


class _Under:
    """A path under the course root, by its place in the layout (``Course.work``: ``<root>/autograder/work``)."""

    def __init__(self, rel: str):
        self.rel = rel

    def __get__(self, course, owner=None) -> Path:
        return self if course is None else course.root / self.rel


@dataclass(frozen=True)
class Course:
    """Paths of one course folder (the repository, or a copy of its layout in a test)."""

    root: Path

    @classmethod
    def at(cls, root: str | os.PathLike | None = None) -> Course:
        return cls(Path(root or REPO_ROOT).resolve())

    def scratch(self, root: str | os.PathLike, assignments=(), *, released: bool = False) -> Course:
        """A private course at ``root`` (made if missing) with this course's nbgrader_config.py and a copy of
        each of ``assignments``' source; ``released``: each is also released there (release/ and gradebook)."""
        course = Course.at(root)
        course.source.mkdir(parents=True, exist_ok=True)
        shutil.copy(self.root / "nbgrader_config.py", course.root / "nbgrader_config.py")
        for a in assignments:
            shutil.copytree(self.source / a, course.source / a)
        for a in assignments if released else ():
            release(course, a)
        return course

    source = _Under("source")
    release = _Under("release")
    submitted = _Under("autograder/submitted")
    autograded = _Under("autograder/autograded")
    feedback = _Under("autograder/feedback")
    gradebook = _Under("autograder/gradebook.db")
    work = _Under("autograder/work")
    logs = _Under("autograder/logs")
    grades_csv = _Under("autograder/grades.csv")
    review_json = _Under("autograder/logs/review.json")  # review notes per student and notebook (autograde)

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.gradebook}"

    def assignments(self) -> list[str]:
        """Assignments that have master notebooks in source/ (sorted)."""
        if not self.source.is_dir():
            return []
        return sorted(p.name for p in self.source.iterdir()
                      if p.is_dir() and (any(p.glob("*.ipynb")) or any(p.glob("*.py"))))

    def notebooks(self, assignment: str, where: str = "release") -> list[str]:
        """Notebook names (without .ipynb) of an assignment in release/ or source/."""
        base = self.release if where == "release" else self.source
        return sorted(p.stem for p in (base / assignment).glob("*.ipynb"))


def run_nbgrader(args: list[str], cwd: Path, env: dict | None = None, timeout: float | None = None,
                 log: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "nbgrader", *args]
    full_env = dict(os.environ)
    full_env.update(env or {})
    # nbgrader runs `alembic` from PATH: put this interpreter's bin/ (the venv) first
    full_env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), full_env.get("PATH", "")])
    if nbgrader_fork.enabled():
        proc = nbgrader_fork.run(args, cwd, full_env, timeout)
    else:
        proc = subprocess.run(cmd, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=nbgrader_fork.die_with_parent)
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"$ {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    if check and proc.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc


def release(course: Course, assignment: str, *, release_dir: Path | None = None) -> None:
    """nbgrader generate_assignment: writes release/ASSIGNMENT and records it in the gradebook.

    With ``release_dir`` the student versions go there instead (used to (re)fill the gradebook without
    touching the committed release/).
    """
    course.gradebook.parent.mkdir(parents=True, exist_ok=True)
    args = ["generate_assignment", assignment, "--force"]
    if release_dir is not None:
        args.append(f"--CourseDirectory.release_directory={release_dir}")
    run_nbgrader(args, cwd=course.root)


def read_notebook(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_atomic(path: Path, text: str | bytes) -> Path:
    """Replace ``path`` with ``text`` (str as UTF-8) in one step (a temporary file beside it, synced, then
    renamed): a reader, or a run killed midway, sees the old file or the new one, never a part. The file gets
    the mode a plain write would (0666 less the umask; ``mkstemp`` would make every page owner-only)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8") if isinstance(text, str) else text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_csv(path: Path, rows: list[list], quote_all: bool = False) -> Path:
    """``rows`` as a CSV file written in one step (``write_atomic``)."""
    buf = io.StringIO(newline="")
    csv.writer(buf, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL).writerows(rows)
    return write_atomic(path, buf.getvalue())
