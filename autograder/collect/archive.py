"""Entries of a zip upload, checked BEFORE anything is unpacked; members are streamed with a byte cap.

Refused before extracting (one report line each): member paths that are absolute or hold a ``..``
part, symbolic links, encrypted members, members declaring more than ``max_member`` bytes or a
compression ratio above ``max_ratio`` (past 4 MiB), and whole archives with more than ``max_members``
members or declaring more than ``max_total`` bytes in all. A member is read up to one byte past its cap
and dropped when it passes it (a header that lies cannot make it larger). Corrupt archives and members
are reported, never raised.
"""

from __future__ import annotations

import io
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from autograder.collect.check import MAX_NOTEBOOK_BYTES, open_regular
from autograder.collect.sources import Entry

_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class ZipLimits:
    max_member: int = MAX_NOTEBOOK_BYTES
    max_total: int = 2 * 2**30
    max_ratio: float = 100.0
    max_members: int = 20_000
    ratio_floor: int = 4 * 2**20  # a notebook of repeated output lines may compress 200:1 without harm


def member_problem(info: zipfile.ZipInfo, limits: ZipLimits) -> str | None:
    """Why a member is refused before extracting (None when it may be read)."""
    name = info.filename.replace("\\", "/")
    if name.startswith("/") or _DRIVE.match(name):
        return "absolute path in zip: refused"
    if ".." in name.split("/"):
        return "path with '..' in zip: refused"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "symbolic link in zip: refused"
    if info.flag_bits & 0x1:
        return "encrypted zip member: refused"
    if info.file_size > limits.max_member:
        return f"unpacks to {info.file_size} bytes (limit {limits.max_member}): refused before extracting"
    if info.file_size > limits.ratio_floor and info.file_size > limits.max_ratio * max(info.compress_size, 1):
        ratio = info.file_size / max(info.compress_size, 1)
        return f"compression ratio {ratio:.0f}:1 (limit {limits.max_ratio:.0f}:1, zip bomb?): refused before extracting"
    return None


def member_name(info: zipfile.ZipInfo) -> str:
    """The member's name as its author saw it. Without the zip's UTF-8 flag Python reads names as CP437;
    Windows Explorer (Korean) writes CP949 and macOS/Drive write UTF-8 without the flag: try those."""
    name = info.filename
    if info.flag_bits & 0x800 or name.isascii():
        return name
    try:
        raw = name.encode("cp437")
    except UnicodeEncodeError:
        return name
    for codec in ("utf-8", "cp949"):
        try:
            return raw.decode(codec)
        except UnicodeDecodeError:
            continue
    return name


def _member_reader(zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int):
    def read():
        try:
            with zf.open(info) as f:
                data = f.read(cap + 1)  # inflates no more than that, whatever the header says
        except (*_CORRUPT, RuntimeError) as exc:
            return None, f"corrupt zip member ({type(exc).__name__}: {str(exc)[:80]})"
        return (None, f"unpacks past {cap} bytes: refused") if len(data) > cap else (data, None)
    return read


def _declared_members(f) -> int | None:
    """Member count from the end-of-central-directory record, read before zipfile parses every entry."""
    try:
        end = zipfile._EndRecData(f)  # noqa: SLF001 (the stdlib's own reader of that record)
        return int(end[zipfile._ECD_ENTRIES_TOTAL]) if end else None
    except (OSError, ValueError, IndexError, AttributeError, TypeError):
        return None


_CORRUPT = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError)


def _zipfile(f, label: str, skipped: list, limits: ZipLimits, what: str = "corrupt zip") -> zipfile.ZipFile | None:
    """The archive in the binary file ``f``, or None with a report line (too many members, corrupt)."""
    declared = _declared_members(f)
    if declared is not None and declared > limits.max_members:
        skipped.append((label, f"{declared} members (limit {limits.max_members}): refused before extracting"))
        return None
    try:
        f.seek(0)
        return zipfile.ZipFile(f)
    except _CORRUPT as exc:
        skipped.append((label, f"{what} ({type(exc).__name__}): not collected"))
        return None


@contextmanager
def open_zip(path: Path, skipped: list, limits: ZipLimits) -> Iterator[zipfile.ZipFile | None]:
    """The archive at ``path`` (a regular file, never a link), or None with a report line."""
    f, why = open_regular(path)
    if why:
        skipped.append((str(path), why))
        yield None
        return
    with f:
        zf = _zipfile(f, str(path), skipped, limits)
        if zf is None:
            yield None
            return
        with zf:
            yield zf


def student_zip_entries(entry: Entry, skipped: list, limits: ZipLimits) -> list[Entry]:
    """The notebooks in a zip a student handed in (one level: a zip in it is reported, not opened), read
    with the same checks as an upload; each carries the zip's name as its ``container``."""
    data, why = entry.read()
    if why or data is None:
        skipped.append((entry.where, f"a student's zip: {why or 'unreadable'}"))
        return []
    zf = _zipfile(io.BytesIO(data), entry.where, skipped, limits, "a student's zip, corrupt")
    if zf is None:
        return []
    container = entry.parts[:-1] + (entry.name[:-len(".zip")] + ".ipynb",)
    out = []
    for inner in zip_entries(zf, entry.where, skipped, limits):
        if inner.name.lower().endswith(".zip"):
            skipped.append((inner.where, "zip inside a student's zip: not opened"))
            continue
        inner.parts = entry.parts + inner.parts
        inner.origin, inner.container = entry.origin, container
        out.append(inner)
    if not any(e.name.lower().endswith(".ipynb") for e in out):
        skipped.append((entry.where, "a student's zip without a notebook: nothing collected"))
    return out


def zip_entries(zf: zipfile.ZipFile, label: str, skipped: list, limits: ZipLimits) -> list[Entry]:
    """Checked entries of an open archive (see the module docstring); refusals go to ``skipped``."""
    infos = [i for i in zf.infolist() if not i.is_dir()]
    if len(infos) > limits.max_members:
        skipped.append((label, f"{len(infos)} members (limit {limits.max_members}): refused before extracting"))
        return []
    total = sum(i.file_size for i in infos)
    if total > limits.max_total:
        skipped.append((label, f"unpacks to {total} bytes (limit {limits.max_total}): refused before extracting"))
        return []
    out = []
    for info in infos:
        name = member_name(info)
        where = f"{label}:{name}"
        why = member_problem(info, limits)
        if why:
            skipped.append((where, why))
            continue
        parts = tuple(p for p in name.replace("\\", "/").split("/") if p not in ("", "."))
        if not parts:
            continue
        if parts[0] == "__MACOSX":
            skipped.append((where, "macOS metadata: ignored"))
            continue
        when = tuple(info.date_time) + (0.0,)
        out.append(Entry(parts, where, when, _member_reader(zf, info, limits.max_member),
                         origin=label))
    return out
