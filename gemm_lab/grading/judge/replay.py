"""The grader's verdict on one test cell: the cell's own source run in the grader's process on the values
the student's kernel handed out (``handout``), with kernels and functions taken from the notebook's source
(``gate``) and run in a fresh worker (``remote``).

``grade_cell(source, payload, sources_before, run_seed)`` returns ``(outputs, verdict)``: the cell's new
outputs (the checks' ✅ lines; an ``AssertionError`` output when a check failed, which nbgrader scores 0)
and the verdict record the class report reads (format: ``verdict`` keys below).
"""

from __future__ import annotations

import builtins
import contextlib
import io

from .. import record
from ..codec import decode
from . import gate, remote

__all__ = ["grade_cell"]


def _error_output(message: str, ename: str = "AssertionError") -> dict:
    return {"output_type": "error", "ename": ename, "evalue": message, "traceback": [f"{ename}: {message}"]}


def _bind(payload: dict, sources_before, run_seed: int) -> tuple[dict, list]:
    names: dict = {}
    functions = []
    for name, enc in payload.get("claims", {}).items():
        if not isinstance(name, str) or not name.isidentifier():
            continue
        if isinstance(enc, dict) and "__kernel__" in enc:
            try:
                names[name] = remote.KernelSource(name, gate.module_for(sources_before, name), run_seed)
            except gate.Refused as exc:
                names[name] = remote.KernelSource(name, None, run_seed, refused=str(exc))
                names[name].not_triton = exc.not_triton  # only a refusal of non-Triton code is a review finding
        elif isinstance(enc, dict) and "__function__" in enc:
            try:
                fn = remote.FunctionSource(name, gate.function_module(sources_before, name))
            except gate.Refused as exc:
                fn = remote.FunctionSource(name, None, refused=str(exc))
            names[name] = fn
            functions.append(fn)
        else:
            names[name] = decode(enc)
    return names, functions


def given_imports(given_sources) -> dict:
    """What the given (locked) cells' top-level imports bind, imported here: a test cell that reads such a
    name (``fresh``, ``torch``) gets the grader's own object, never the hand-out's."""
    import ast

    glob: dict = {"__builtins__": builtins}
    for src in given_sources or ():
        tree = gate.cell_code(src)
        if tree is None:
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                try:
                    exec(compile(ast.Module(body=[node], type_ignores=[]), "<given>", "exec"), glob)  # noqa: S102
                except Exception:  # noqa: BLE001 - a given import that fails here fails in the cell itself
                    continue
    glob.pop("__builtins__", None)
    return glob


def _run(source: str, names: dict) -> tuple[str, BaseException | None]:
    glob = {"__name__": "__main__", "__builtins__": builtins, **names}
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "<test cell>", "exec"), glob)  # noqa: S102 - the course's own test cell
    except Exception as exc:  # noqa: BLE001 - every failure becomes the cell's verdict
        return out.getvalue(), exc
    return out.getvalue(), None


def _message(exc: BaseException, payload: dict) -> str:
    if isinstance(exc, AssertionError):
        return str(exc)
    if isinstance(exc, NameError):
        name = getattr(exc, "name", None) or str(exc)
        note = (payload.get("notes") or {}).get(name)
        if note:
            return f"❌ `{name}`을(를) 채점할 수 없습니다: {note}."
        return (f"❌ `{name}`이(가) 정의되지 않았습니다: 답을 적는 셀을 실행해 `{name}`을(를) 만들었는지 "
                "확인하세요.")
    if isinstance(exc, remote._StudentError):
        return f"❌ 함수가 오류를 냈습니다: {exc}"
    return f"❌ {type(exc).__name__}: {str(exc)[:300]}"


def grade_cell(source: str, payload: dict | None, sources_before, run_seed: int = 0,
               handout_error: str | None = None, given_sources=()) -> tuple[list, dict]:
    """Judge one test cell (see the module docstring). ``payload``: the hand-out (None when none came);
    ``given_sources``: the locked cells before it (their imports are bound from the grader's modules)."""
    verdict = {"status": "fail", "message": "", "checks": [], "seed": run_seed}
    if payload is None:
        why = f" ({handout_error})" if handout_error else ""
        msg = f"❌ 채점기가 이 셀의 답을 받지 못했습니다{why}. 노트북을 처음부터 다시 실행해 보세요."
        verdict["message"] = msg
        return [_error_output(msg)], verdict
    given = given_imports(given_sources)
    payload = dict(payload, claims={k: v for k, v in (payload.get("claims") or {}).items() if k not in given})
    names, functions = _bind(payload, sources_before, run_seed)
    names.update(given)
    if functions:
        with record.collecting_calls():
            _run(source, dict(names))
        for fn in functions:
            try:
                fn.run_calls()
            except remote.WorkerFailed as exc:
                fn.results = [{"error": str(exc)}] * len(fn.calls)
    with record.recording() as entries:
        text, exc = _run(source, names)
    verdict["checks"] = entries
    verdict["incidents"] = remote.take_incidents()
    outputs = [{"output_type": "stream", "name": "stdout", "text": text}] if text else []
    if exc is None:
        verdict["status"], verdict["message"] = "pass", text.strip()
        return outputs, verdict
    if isinstance(exc, remote.WorkerFailed):
        msg = f"❌ {exc}"
    else:
        msg = _message(exc, payload)
        if isinstance(exc, ImportError):  # the grader's own environment, not the student's answer
            verdict["status"] = "grader_error"
    verdict["message"] = msg
    return outputs + [_error_output(msg)], verdict
