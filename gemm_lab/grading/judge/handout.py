"""Answers leave the student's kernel as plain data: the hand-out of a test cell in grading mode.

While the autograder runs a notebook, a test cell does not run its checks in the student's kernel. The
grader sends :func:`handout_source` instead: it encodes the values of the notebook names the test cell
reads (:func:`read_names`) with ``codec.encode`` and displays them as JSON with the mime type :data:`MIME`.
What comes out is a *claim*: the grader decodes it (``codec.decode``, plain JSON, nothing executed) and runs
the test cell's own source in its own process (``judge.replay``). Forging the hand-out only claims an answer,
which is what answering is. A ``@triton.jit`` kernel or a Python function is handed out as a reference by
name; the grader takes its source from the notebook file, never from the kernel process.
"""

from __future__ import annotations

import json

from ..codec import TooBig, encode

__all__ = ["MIME", "read_names", "emit", "handout_source", "claims_from_outputs", "MAX_BYTES"]

MIME = "application/vnd.gemm-lab.claims+json"
MAX_BYTES = 512 * 1024  # per test cell: answers are numbers, short lists and small tables


# --------------------------------------------------------------------------- which names a test cell reads


def read_names(source: str) -> list[str]:
    """Notebook names a test cell reads (``audit.cell_audit.notebook_reads``, the rule the masters' test cells
    are audited by): not bound in the cell before the read, not builtins; [] when it does not parse."""
    from ..audit.cell_audit import notebook_reads

    try:
        return sorted(notebook_reads(source))
    except (SyntaxError, ValueError):
        return []


# --------------------------------------------------------------------------- in the student's kernel


def emit(namespace: dict, names) -> None:
    """Display the claims: ``{name: encoded value}`` (a name not defined is left out)."""
    claims, missing, notes = {}, [], {}
    for n in names:
        if n not in namespace:
            missing.append(n)
            continue
        try:
            claims[n] = encode(namespace[n], name=n)
        except TooBig as exc:
            notes[n] = f"too large to grade ({exc})"
        except Exception as exc:  # noqa: BLE001 - the student's object broke its own hand-out
            notes[n] = f"could not be read ({type(exc).__name__})"
    payload = {"claims": claims, "missing": missing, "notes": notes}
    text = json.dumps(payload, ensure_ascii=False)
    if len(text.encode()) > MAX_BYTES:
        payload = {"claims": {}, "missing": [], "notes": {n: "answers too large to grade" for n in names}}
    from IPython.display import display

    display({MIME: payload, "text/plain": "(채점기에 답을 넘겼습니다)"}, raw=True)


def handout_source(names) -> str:
    """The code sent to the kernel in place of a test cell."""
    return ("from gemm_lab.grading.judge.handout import emit as _gemm_lab_emit\n"
            f"_gemm_lab_emit(globals(), {list(names)!r})\n"
            "del _gemm_lab_emit\n")


def claims_from_outputs(outputs) -> dict | None:
    """The last hand-out payload among a cell's outputs, or None when the cell handed nothing out."""
    found = None
    for out in outputs or []:
        data = out.get("data") if isinstance(out, dict) else None
        if isinstance(data, dict) and MIME in data:
            payload = data[MIME]
            if isinstance(payload, str):
                try:
                    payload = json.loads(payload)
                except ValueError:
                    continue
            if isinstance(payload, dict) and isinstance(payload.get("claims"), dict):
                found = payload
    return found
