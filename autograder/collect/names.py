"""Names of hand-ins: student ids (sanitized, collision-free), LMS times, Colab copy names."""

from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_ID_LEN = 64
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_HASH_LEN = 8


def sanitize_student_id(raw: str, hash_len: int = _HASH_LEN) -> str:
    """A student id safe as a folder name and in nbgrader: ASCII ``[A-Za-z0-9_.-]``, at most 64 chars.

    An id that is already safe and short is kept as it is; any other gets ``_`` + a hash of the raw id
    (so ``김철수``, ``a b`` and ``a_b`` stay distinct, and two long ids that differ only after the cut
    do not collide).
    """
    if not isinstance(raw, str):
        raise TypeError(f"raw: expected a str student id, got {type(raw).__name__}")
    raw = unicodedata.normalize("NFC", raw)  # a macOS (NFD) name is the same student as its NFC twin
    text = unicodedata.normalize("NFKC", raw).strip()
    safe = _SAFE.sub("_", text).strip("._-")
    if safe and safe == raw and len(safe) <= MAX_ID_LEN:
        return safe
    base = safe[:MAX_ID_LEN - hash_len - 1].rstrip("._-") or "s"
    return f"{base}_{hashlib.sha1(raw.encode('utf-8', 'surrogatepass')).hexdigest()[:hash_len]}"


def parse_timestamp(text: str) -> tuple | None:
    """``2026-12-01-10-00-00`` -> (2026, 12, 1, 10, 0, 0); None when it is not a date."""
    parts = [p for p in text.split("-") if p]
    if len(parts) < 3 or not all(p.isdigit() for p in parts):
        return None
    nums = tuple(int(p) for p in parts[:6])
    if not (1 <= nums[1] <= 12 and 1 <= nums[2] <= 31):
        return None
    return nums + (0,) * (6 - len(nums))


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

