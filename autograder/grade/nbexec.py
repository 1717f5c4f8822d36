"""nbgrader's Execute preprocessor with a per-notebook time limit and a kernel that may die.

Loaded by the per-student nbgrader process that autograder/grade/autograde.py starts (see its generated
nbgrader_config.py). Differences from nbgrader's Execute:

* every cell's time limit is min(per-cell limit, time left for the notebook); once the notebook's time
  is spent, the remaining code cells are not run and get an error output (so their tests score zero);
* when the kernel dies (``os._exit``, a segfault), the remaining code cells get an error output instead of
  the whole notebook failing to grade;
* a kernel killed by a signal (OOM killer, an admin's kill -9; the exit status of the sandbox says which)
  is reported as "killed by signal N" and the notebook is flagged for manual grading by autograde.py; a
  kernel that exited by itself (the student's ``os._exit``) is reported with its exit code;
* a test cell (nbgrader ``grade: true`` code cell) is not judged in the student's kernel: the kernel runs
  its hand-out (``gemm_lab.grading.judge.handout``: the values the cell reads, as data), then the cell's own
  source runs here, in the grader's process (``gemm_lab.grading.judge.replay``), with kernels and function
  answers taken from the notebook's source and run in sandboxed workers of this notebook alone
  (``autograder/sandbox/worker.py``; closed at its end, bounded by its deadline); the cell's outputs become
  the grader's ✅/❌ lines and its metadata ``gemm_lab.verdict`` records the verdict;
* the notebooks of one hand-in share one kernel (autograder/grade/shared_kernel.py), reset between
  notebooks; a notebook that timed out, stopped or lost its kernel hands the next one a fresh kernel;
* outputs are capped in bytes per cell and per notebook (autograder/grade/output_limits.py);
* the kernel is started by :class:`autograder.sandbox.kernel.SandboxKernelManager` (bwrap) when the driver set
  ``GEMM_LAB_SANDBOX``; without it only an explicit ``GEMM_LAB_UNSANDBOXED=1`` lets the kernel run.
"""

from __future__ import annotations

import math
import os
import re
import secrets
import subprocess
from time import monotonic

import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat.notebooknode import NotebookNode
from nbformat.v4 import output_from_msg
from nbgrader.preprocessors import Execute
from traitlets import Integer

from autograder import cells as nbcells
from autograder.grade import shared_kernel
from autograder.grade.output_limits import (
    DEFAULT_CELL_BYTES,
    DEFAULT_NOTEBOOK_BYTES,
    OutputBudget,
    notice,
    output_bytes,
)
from autograder.grade.shared_kernel import BASELINE_SOURCE, RESET_SOURCE
from autograder.sandbox.bwrap import ENV_SPEC, SANDBOX_CWD
from autograder.sandbox.kernel import PlainIpcKernelManager, SandboxKernelManager
from autograder.sandbox.limits import signal_name, signal_of
from gemm_lab.grading.judge import handout, remote, replay

STOP_ENAME = "GraderStop"
GUARD_MARK = "gemm-lab GuardedExecute"
SIGNAL_NOTE = "killed by signal"
SIGNAL_RE = re.compile(SIGNAL_NOTE + r" \d+ \([A-Z0-9]+\)")  # a signal death as death_reason words it


def death_reason(returncode: int | None) -> tuple[str, int | None]:
    """(English reason, signal number or None) from the exit status of the kernel's process: a signal
    (``limits.signal_of``: -N, or 128+N through bwrap), else an exit code the kernel chose."""
    if returncode is None:
        return "kernel died (exit status unknown)", None
    sig = signal_of(returncode)
    if sig is None:
        return f"kernel exited with code {returncode}", None
    return f"{SIGNAL_NOTE} {sig} ({signal_name(sig)})", sig


def _handout_error(outputs) -> str | None:
    for out in outputs or []:
        if out.get("output_type") == "error":
            return f"{out.get('ename', '')}: {str(out.get('evalue', ''))[:200]}"
    return None


def _run_silently(kc, code: str) -> str | None:
    """Run ``code`` in the kernel without output or history; None when it ended ok, else the error's name."""
    reply = run_sync(kc.execute_interactive)(code, silent=True, store_history=False, timeout=30,
                                             output_hook=lambda msg: None)
    content = reply.get("content", {})
    return None if content.get("status") == "ok" else str(content.get("ename"))


def _stop_output(reason_ko: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=STOP_ENAME, evalue=reason_ko,
                        traceback=[f"{STOP_ENAME}: {reason_ko}"])


class GuardedExecute(Execute):
    notebook_timeout = Integer(600, help="Seconds for the whole notebook (all cells).").tag(config=True)
    max_cell_output_bytes = Integer(DEFAULT_CELL_BYTES, help="Bytes of output kept per cell.").tag(config=True)
    max_notebook_output_bytes = Integer(DEFAULT_NOTEBOOK_BYTES,
                                        help="Bytes of output kept per notebook.").tag(config=True)

    def __init__(self, *args, **kwargs):
        if os.environ.get(ENV_SPEC):
            kwargs["kernel_manager_class"] = SandboxKernelManager
        elif os.environ.get("GEMM_LAB_UNSANDBOXED") == "1":
            kwargs["kernel_manager_class"] = PlainIpcKernelManager
        else:
            raise RuntimeError(f"{ENV_SPEC} is not set and GEMM_LAB_UNSANDBOXED is not 1: refusing to "
                               "run student code")
        super().__init__(*args, **kwargs)
        self.log.info("%s: kernel manager %s", GUARD_MARK, kwargs["kernel_manager_class"].__name__)
        self._deadline = None
        self._stop_reason = None
        self._reused = self._timed_out = self._baseline_ok = False
        self._budget = OutputBudget(self.max_cell_output_bytes, self.max_notebook_output_bytes)

    def preprocess(self, nb, resources=None, km=None):
        self._deadline = monotonic() + self.notebook_timeout
        self._stop_reason = None
        self._run_seed = secrets.randbits(31)
        self._install_worker_runner()
        self._budget = OutputBudget(self.max_cell_output_bytes, self.max_notebook_output_bytes)
        self._reused = self._timed_out = self._baseline_ok = False
        self._path = ((resources or {}).get("metadata") or {}).get("path")
        remote.set_deadline(self._deadline)
        try:
            nb, resources = super().preprocess(nb, resources, km=km)
        finally:
            remote.set_deadline(None)
        resources.setdefault("gemm_lab", {})["stop_reason"] = self._stop_reason
        return nb, resources

    def create_kernel_manager(self):
        # called by nbclient's synchronous setup_kernel (no event loop running), so run_sync is safe here
        km = shared_kernel.take(self._path) if shared_kernel.enabled() else None
        if km is not None and self._reset_kept(km):
            self._reused = True
            self.log.info("%s: the kept kernel runs this notebook (namespace reset)", GUARD_MARK)
            self.km = km
            return km
        if km is not None:
            shared_kernel.shut(km)
        return super().create_kernel_manager()

    def _reset_kept(self, km) -> bool:
        """A fresh session in the kept kernel; False if it does not answer ok in a few seconds."""
        kc = km.client()
        try:
            kc.start_channels()
            run_sync(kc.wait_for_ready)(timeout=30)
            why = _run_silently(kc, RESET_SOURCE % (self._kernel_cwd(),))
        except Exception as e:  # noqa: BLE001 - any failure means a fresh kernel
            why = type(e).__name__
        try:
            kc.stop_channels()
        except Exception:  # noqa: BLE001
            pass
        if why:
            self.log.info("%s: the kept kernel did not reset (%s): starting a fresh one", GUARD_MARK, why)
        return not why

    def start_new_kernel_client(self):
        kc = super().start_new_kernel_client()
        if not self._reused and shared_kernel.enabled():
            try:
                self._baseline_ok = _run_silently(self.kc, BASELINE_SOURCE) is None
            except Exception:  # noqa: BLE001 - this kernel is then simply not kept
                self._baseline_ok = False
        return kc

    def _flagged(self) -> bool:
        """The review scan flags this notebook's student code (import hooks, written modules, the grader's
        internals...): its kernel is not handed to the next notebook, whatever it left there."""
        try:
            from autograder.grade.review import review_notebook

            return bool(review_notebook(self.nb))
        except Exception:  # noqa: BLE001 - a scan that fails keeps nothing
            return True

    def _kernel_cwd(self) -> str:
        return SANDBOX_CWD if os.environ.get(ENV_SPEC) else (self._path or ".")

    async def _async_handle_timeout(self, timeout, cell=None):
        self._timed_out = True
        return await super()._async_handle_timeout(timeout, cell)

    async def _async_cleanup_kernel(self) -> None:
        """Keep the kernel for the hand-in's next notebook when this one ended cleanly, else shut it."""
        km = self.km
        keep = (shared_kernel.enabled() and km is not None and self._stop_reason is None
                and not self._timed_out and (self._reused or self._baseline_ok) and not self._flagged())
        if keep:
            try:
                keep = bool(await ensure_async(km.is_alive()))
            except Exception:  # noqa: BLE001
                keep = False
        if not keep:  # (a kept kernel was taken out of the slot when this notebook started)
            await super()._async_cleanup_kernel()
            return
        if getattr(self, "kc", None) is not None:
            try:
                self.kc.stop_channels()
            finally:
                self.kc = None
        shared_kernel.keep(km, self._path)
        self.km = None

    _cleanup_kernel = run_sync(_async_cleanup_kernel)  # nbclient binds its own at class creation

    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        if self._deadline is None:
            return timeout
        left = max(1, math.ceil(self._deadline - monotonic()))  # ends at or after the deadline
        return left if timeout is None else min(timeout, left)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or not cell.source.strip():
            return super().preprocess_cell(cell, resources, index)
        if self._stop_reason is None and self._deadline is not None and self._deadline - monotonic() < 1:
            self._stop_reason = "notebook_timeout"
            self.log.warning("Notebook time limit (%ss) reached: remaining cells are not run",
                             self.notebook_timeout)
        if self._stop_reason == "notebook_timeout":
            cell.outputs = [_stop_output(f"노트북 전체 시간 제한({self.notebook_timeout}초)을 넘어 "
                                         "이 셀은 실행되지 않았습니다.")]
            return cell, self.resources
        if self._stop_reason == "kernel_died":
            cell.outputs = [_stop_output("앞 셀에서 커널이 종료되어(os._exit, 충돌 등) 이 셀은 실행되지 "
                                         "않았습니다.")]
            return cell, self.resources
        self._budget.start_cell()
        try:
            if nbcells.is_autograded_test(cell):
                return self._grade_test_cell(cell, resources, index)
            cell, resources = super().preprocess_cell(cell, resources, index)
            before = list(cell.get("outputs", []))
            cell.outputs = self._budget.settle(before)
            self._remap_display_ids(index, before, cell.outputs)
            return cell, resources
        except DeadKernelError:
            self._stop_reason = "kernel_died"
            reason, sig = death_reason(self._kernel_exit_status())
            limits = self._sandbox_limits()
            self.log.warning("Kernel died in cell %s (%s; %s): remaining cells are not run", index, reason,
                             limits or "no sandbox limit hit")
            if limits:  # the hand-in's own limit (memory, processes, ...): scores what it deserves, no flag
                text = f"이 셀을 실행하는 중 커널이 자원 제한으로 종료되었습니다({limits})."
            elif sig is not None:
                text = (f"이 셀을 실행하는 중 커널이 외부 신호 {sig}번으로 종료되었습니다({reason}: 메모리 부족, "
                        "관리자의 종료 등). 강사가 직접 채점합니다.")
            else:
                text = f"이 셀을 실행하는 중 커널이 종료되었습니다({reason})."
            cell.outputs = list(cell.get("outputs", [])) + [_stop_output(text)]
            return cell, self.resources
        except CellTimeoutError:
            # the kernel did not come back after the interrupt: this cell fails, the next ones still run
            self.log.warning("Cell %s timed out and the kernel did not settle", index)
            cell.outputs = list(cell.get("outputs", [])) + [NotebookNode(
                output_type="error", ename="CellTimeoutError", evalue="",
                traceback=["CellTimeoutError: 셀 시간 제한을 넘었습니다."])]
            return cell, self.resources

    def output(self, outs, msg, display_id, cell_index):
        out = super().output(outs, msg, display_id, cell_index)
        if out is not None:
            self._budget.admit(outs, out)
            if display_id and not any(o is out for o in outs):  # dropped: forget where it would have been
                idxs = self._display_id_map.get(display_id, {}).get(cell_index, [])
                if idxs and (idxs[-1] >= len(outs) or outs[idxs[-1]] is not out):
                    idxs.pop()
        return out

    def _remap_display_ids(self, cell_index: int, before: list, after: list) -> None:
        """Display ids point at output positions: follow the outputs the byte cap kept, drop the others."""
        pos = {id(o): i for i, o in enumerate(after)}
        for cells in self._display_id_map.values():
            if cell_index in cells:
                cells[cell_index] = [pos[id(before[i])] for i in cells[cell_index]
                                     if 0 <= i < len(before) and id(before[i]) in pos]

    def _update_display_id(self, display_id, msg):
        """nbclient's update of a displayed output, bounds-checked and capped (an update can grow an
        output of an earlier, already measured cell)."""
        cells = self._display_id_map.get(display_id)
        if not cells:
            return
        if msg["header"]["msg_type"] == "update_display_data":
            msg["header"]["msg_type"] = "display_data"
        try:
            out = output_from_msg(msg)
        except ValueError:
            return
        data, meta = out["data"], out["metadata"]
        budget = self._budget
        if output_bytes(out) > budget.cell_bytes:
            data, meta = {"text/plain": notice(budget.cell_bytes, budget.notebook_bytes)["text"]}, {}
        for cell_idx, idxs in cells.items():
            outputs = self.nb["cells"][cell_idx].get("outputs", [])
            for i in idxs:
                if 0 <= i < len(outputs) and "data" in outputs[i]:
                    outputs[i]["data"] = data
                    outputs[i]["metadata"] = meta

    def _install_worker_runner(self) -> None:
        """How this process starts workers (sandboxed like the notebook's kernel); each notebook gets its own
        (``preprocess`` closes them at its end)."""
        timeout = float(self.timeout or 60) * 4
        spec = os.environ.get(ENV_SPEC)
        key = (spec, timeout)
        if getattr(remote.runner(), "gemm_lab_key", None) == key:
            return
        if spec:
            from autograder.sandbox.worker import SandboxRunner

            new = SandboxRunner(spec, timeout)
        else:
            new = remote.SubprocessRunner(timeout)
        new.gemm_lab_key = key
        remote.set_runner(new)

    def _grade_test_cell(self, cell, resources, index):
        """Hand-out in the kernel, verdict here (see the module docstring)."""
        source = cell.source
        cell.source = handout.handout_source(handout.read_names(source))
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        finally:
            cell.source = source
        payload = handout.claims_from_outputs(cell.get("outputs", []))
        before = [c for c in self.nb.cells[:index] if c.get("cell_type") == "code" and not nbcells.is_autograded_test(c)]
        given = [c.source for c in before if (c.metadata.get("nbgrader") or {}).get("locked")]
        t0 = monotonic()
        outputs, verdict = replay.grade_cell(source, payload, [c.source for c in before], self._run_seed,
                                             None if payload else _handout_error(cell.get("outputs")), given)
        meta = cell.metadata.get("nbgrader") or {}
        verdict.update(grade_id=meta.get("grade_id"), max_points=meta.get("points"),
                       seconds=round(monotonic() - t0, 2))
        self.log.info("graded %s in the grader: %s (%.1fs)", meta.get("grade_id"), verdict["status"],
                      verdict["seconds"])
        if verdict["status"] == "fail":  # the error map of a failed visible kernel case, under the ❌
            from gemm_lab.viz import error_map

            outputs = outputs + error_map.notebook_outputs(verdict["checks"])
        cell.outputs = [nbformat.from_dict(o) for o in outputs]
        cell.metadata.setdefault("gemm_lab", {})["verdict"] = verdict
        return cell, resources

    def _sandbox_limits(self) -> str:
        """The sandbox's limit hits (autograder/sandbox/limits.py codes ``LIMIT_*``), '' when none or unknown."""
        reason = getattr(self.km, "limit_reason", None)
        try:
            text = reason() if callable(reason) else ""
        except Exception as exc:  # the report is best effort: never lose the notebook over it
            self.log.warning("sandbox outcome unreadable: %s", exc)
            return ""
        return "; ".join(p for p in str(text or "").split("; ") if p.startswith("LIMIT_"))

    def _kernel_exit_status(self) -> int | None:
        proc = getattr(getattr(self.km, "provisioner", None), "process", None)
        try:
            return None if proc is None else proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None
