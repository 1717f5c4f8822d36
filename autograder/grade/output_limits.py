"""Byte caps on what a hand-in's cells print (nbgrader's LimitOutput counts lines only).

A few long lines made a 52 MB autograded notebook and feedback file; so every output is measured in
bytes (its JSON form, images included) against a per-cell and a per-notebook budget. What passes the
budget is cut (text is shortened, other outputs dropped) and one Korean notice says so in the cell.
:class:`OutputBudget` is used twice by autograder/grade/nbexec.py: while the kernel's messages arrive (so the
grader's memory stays bounded) and once more on each finished cell (display updates can grow an
earlier output).
"""

from __future__ import annotations

import json

from nbformat.notebooknode import NotebookNode

DEFAULT_CELL_BYTES = 512 << 10
DEFAULT_NOTEBOOK_BYTES = 3 << 20


def output_bytes(out) -> int:
    return len(json.dumps(out, ensure_ascii=False, default=str).encode("utf-8"))


def notice(cell_bytes: int, notebook_bytes: int) -> NotebookNode:
    text = (f"\n[출력 제한] 출력이 너무 커서 여기서 잘렸습니다 (셀당 {cell_bytes // 1024} KiB, "
            f"노트북 전체 {notebook_bytes // 1024} KiB 제한).\n")
    return NotebookNode(output_type="stream", name="stderr", text=text)


def is_notice(out) -> bool:
    return out.get("output_type") == "stream" and str(out.get("text", "")).startswith("\n[출력 제한]")


def _shorten(out, room: int):
    """A text output cut to about ``room`` bytes, or None when it is not text or no room is left."""
    if room < 64 or out.get("output_type") != "stream":
        return None
    text = out.get("text", "")
    text = "".join(text) if isinstance(text, list) else str(text)
    short = NotebookNode(output_type="stream", name=out.get("name", "stdout"), text="")
    keep = room - output_bytes(short)
    while keep > 0:
        short["text"] = text.encode("utf-8")[:keep].decode("utf-8", errors="ignore")
        over = output_bytes(short) - room
        if over <= 0:
            return short
        keep -= max(over, 16)  # JSON escapes made it longer than its UTF-8 bytes
    return None


class OutputBudget:
    """Bytes left for one notebook; ``start_cell()`` before each cell."""

    def __init__(self, cell_bytes: int = DEFAULT_CELL_BYTES, notebook_bytes: int = DEFAULT_NOTEBOOK_BYTES):
        if cell_bytes <= 0 or notebook_bytes <= 0:
            raise ValueError("cell_bytes and notebook_bytes must be positive")
        self.cell_bytes, self.notebook_bytes = int(cell_bytes), int(notebook_bytes)
        self.notebook_used = 0
        self.start_cell()

    def start_cell(self) -> None:
        self.cell_used = 0
        self.cut = False

    def _room(self) -> int:
        return min(self.cell_bytes - self.cell_used, self.notebook_bytes - self.notebook_used)

    def admit(self, outs: list, out) -> None:
        """``out`` was just appended to ``outs``: keep it, shorten it, or drop it (with one notice)."""
        if out is None or not outs or outs[-1] is not out:
            return
        if self.cut:
            outs.pop()
            return
        size = output_bytes(out)
        if size <= self._room():
            self.cell_used += size
            self.notebook_used += size
            return
        outs.pop()
        short = _shorten(out, self._room())
        if short is not None:
            outs.append(short)
            used = output_bytes(short)
            self.cell_used += used
            self.notebook_used += used
        outs.append(notice(self.cell_bytes, self.notebook_bytes))
        self.cut = True

    def settle(self, outputs: list) -> list:
        """Re-measure a finished cell's outputs (display updates may have grown them); return the capped list."""
        total = sum(output_bytes(o) for o in outputs)
        self.notebook_used -= self.cell_used
        if total <= min(self.cell_bytes, self.notebook_bytes - self.notebook_used):
            self.cell_used = total
            self.notebook_used += total
            return outputs
        kept: list = []
        self.cell_used, self.cut = 0, False
        for out in outputs:
            if is_notice(out):
                continue
            kept.append(out)
            self.admit(kept, out)
            if self.cut:
                break
        if not self.cut and any(is_notice(o) for o in outputs):  # cut while streaming: say so still
            kept.append(notice(self.cell_bytes, self.notebook_bytes))
            self.cut = True
        return kept
