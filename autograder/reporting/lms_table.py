"""A grade file as an LMS wrote it, read and written back in the same form.

An LMS's own download is the file its importer is sure to accept; filling in scores must change nothing else:
the encoding and byte-order mark (Moodle writes UTF-8 with a BOM, Blackboard's Grade Center download is
tab-delimited UTF-16), the delimiter, the line ends, whether every field is quoted, and every other cell.
Only the cells :func:`write_table` is given new values for differ in the file it writes.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import write_atomic

MAX_BYTES = 64 * 2**20  # a class's grade file is kilobytes; anything this large is not one
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


@dataclass
class Table:
    rows: list[list[str]]
    encoding: str = "utf-8"
    bom: bytes = b""
    delimiter: str = ","
    newline: str = "\n"
    quote_all: bool = False
    final_newline: bool = True
    path: Path | None = field(default=None, compare=False)

    @property
    def header(self) -> list[str]:
        return self.rows[0] if self.rows else []


def read_table(path: str | os.PathLike) -> Table:
    """The rows of a delimited text file (comma, tab or semicolon) and how it was written.

    Raises ValueError when it is not readable as one (not text, empty, too large)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    data = path.read_bytes()
    if len(data) > MAX_BYTES:
        raise ValueError(f"{path}: {len(data)} bytes, not a grade file")
    bom, encoding = next(((mark, enc) for mark, enc in _BOMS if data.startswith(mark)), (b"", None))
    data = data[len(bom):]
    text = None
    for enc in [encoding] if encoding else ["utf-8", "cp949"]:  # Excel in Korean saves CP949
        try:
            text = data.decode(enc)
            encoding = enc
            break
        except UnicodeDecodeError:
            continue
    if text is None or "\x00" in text:
        raise ValueError(f"{path}: not a text file in UTF-8, UTF-16 or CP949 (save it as CSV)")
    first = text.split("\n", 1)[0]
    if not first.strip():
        raise ValueError(f"{path}: empty, or its first line (the header) is blank")
    delimiter = max((",", "\t", ";"), key=first.count)
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    return Table(rows=rows, encoding=encoding, bom=bom, delimiter=delimiter,
                 newline="\r\n" if first.endswith("\r") else "\n", quote_all=first.startswith('"'),
                 final_newline=text.endswith(("\n", "\r")), path=path)


def write_table(table: Table, path: str | os.PathLike) -> Path:
    """Write ``table`` to ``path`` in its own form (atomically: a half-written grade file is never left)."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, delimiter=table.delimiter, lineterminator=table.newline,
                        quoting=csv.QUOTE_ALL if table.quote_all else csv.QUOTE_MINIMAL)
    writer.writerows(table.rows)
    text = buf.getvalue()
    if not table.final_newline and text.endswith(table.newline):
        text = text[:-len(table.newline)]
    return write_atomic(path, table.bom + text.encode(table.encoding))
