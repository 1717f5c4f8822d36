"""Names of hand-ins: student ids (sanitized, collision-free), LMS download names, Colab copy names.

An LMS download (Blackboard style, as ``nbgrader zip_collect`` expects it) names each file
``<prefix>_<student>_attempt_<timestamp>_<file>.ipynb``. The student id is everything between the
prefix and ``_attempt_`` (it may hold ``_``, ``-``, digits, Hangul). The prefix is the assignment name
(``week06_``) when the file starts with it, otherwise the first ``_``-separated word (the LMS's own
assignment title, e.g. ``hw``). ``LMS_REGEXP`` is the same rule for nbgrader's ``named_regexp``
(nbgrader_config.py; tests/test_collect.py checks that both agree).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

MAX_ID_LEN = 64
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_HASH_LEN = 8

LMS_REGEXP = (r"^(?P<prefix>[^_]*)_(?P<student_id>.+?)_attempt_(?P<timestamp>[0-9][0-9\-]*)"
              r"_(?P<file_id>.+\.ipynb)$")
_LMS_TAIL = re.compile(r"^(?P<head>.+?)_attempt_(?P<timestamp>[0-9][0-9\-]*)_(?P<file_id>.+)$")


def _digest(text: str, n: int = _HASH_LEN) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]


def sanitize_student_id(raw: str, hash_len: int = _HASH_LEN) -> str:
    """A student id safe as a folder name and in nbgrader: ASCII ``[A-Za-z0-9_.-]``, at most 64 chars.

    An id that is already safe and short is kept as it is; any other gets ``_`` + a hash of the raw id
    (so ``김철수``, ``a b`` and ``a_b`` stay distinct, and two long ids that differ only after the cut
    do not collide).
    """
    if not isinstance(raw, str):
        raise TypeError(f"raw: expected a str student id, got {type(raw).__name__}")
    if not isinstance(hash_len, int) or not 6 <= hash_len <= 40:
        raise ValueError(f"hash_len: expected an int in [6, 40], got {hash_len!r}")
    raw = unicodedata.normalize("NFC", raw)  # a macOS (NFD) name is the same student as its NFC twin
    text = unicodedata.normalize("NFKC", raw).strip()
    safe = _SAFE.sub("_", text).strip("._-")
    if safe and safe == raw and len(safe) <= MAX_ID_LEN:
        return safe
    base = safe[:MAX_ID_LEN - hash_len - 1].rstrip("._-") or "s"
    return f"{base}_{_digest(raw, hash_len)}"


@dataclass(frozen=True)
class LmsName:
    """The parts of an LMS file name: ``prefix``, raw ``student`` id, ``timestamp`` (ints), ``file_id``."""

    prefix: str
    student: str
    timestamp: tuple
    file_id: str


def parse_timestamp(text: str) -> tuple | None:
    """``2026-12-01-10-00-00`` -> (2026, 12, 1, 10, 0, 0); None when it is not a date."""
    parts = [p for p in text.split("-") if p]
    if len(parts) < 3 or not all(p.isdigit() for p in parts):
        return None
    nums = tuple(int(p) for p in parts[:6])
    if not (1 <= nums[1] <= 12 and 1 <= nums[2] <= 31):
        return None
    return nums + (0,) * (6 - len(nums))


def parse_lms_name(name: str, assignment: str) -> LmsName | None:
    """Split an LMS file name (see the module docstring); None when ``name`` is not one."""
    m = _LMS_TAIL.match(name)
    if not m or not name.endswith(".ipynb"):
        return None
    stamp = parse_timestamp(m["timestamp"])
    if stamp is None:
        return None
    head = m["head"]
    if assignment and head.startswith(assignment + "_") and len(head) > len(assignment) + 1:
        prefix, student = assignment, head[len(assignment) + 1:]
    elif "_" in head:
        prefix, student = head.split("_", 1)
    else:
        return None
    if not student.strip():
        return None
    return LmsName(prefix, student, stamp, m["file_id"])


_COPY_NOISE = [re.compile(p) for p in (r"^copy of ", r"^copy_of_", r"^사본 - ", r"\.ipynb의 사본$", r"의 사본$",
                                       r" \(\d+\)$", r"-\d+$", r"_copy$")]


def clean_stem(stem: str) -> str:
    """A notebook file stem without Colab/Drive/browser copy marks, lower case."""
    s = stem.strip()
    for _ in range(3):
        for pat in _COPY_NOISE:
            s = pat.sub("", s, count=1) if pat.pattern.startswith("^") else pat.sub("", s)
        s = s.strip()
    return s.lower()

