"""nbgrader's Execute preprocessor with a per-notebook time limit and a kernel that may die.

Loaded by the per-student nbgrader process that autograder/grade.py starts (see its generated
nbgrader_config.py). Differences from nbgrader's Execute:

* every cell's time limit is min(per-cell limit, time left for the notebook); once the notebook's time
  is spent, the remaining code cells are not run and get an error output (so their tests score zero);
* when the kernel dies (``os._exit``, a segfault), the remaining code cells get an error output instead of
  the whole notebook failing to grade;
* the kernel is started by :class:`autograder.sandbox.SandboxKernelManager` (bwrap) when the driver set
  ``GEMM_LAB_SANDBOX``; without it only an explicit ``GEMM_LAB_UNSANDBOXED=1`` lets the kernel run.
"""

from __future__ import annotations

import math
import os
from time import monotonic

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Integer

from .sandbox import ENV_SPEC, PlainIpcKernelManager, SandboxKernelManager

STOP_ENAME = "GraderStop"
GUARD_MARK = "gemm-lab GuardedExecute"


def _stop_output(reason_ko: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=STOP_ENAME, evalue=reason_ko,
                        traceback=[f"{STOP_ENAME}: {reason_ko}"])


class GuardedExecute(Execute):
    notebook_timeout = Integer(600, help="Seconds for the whole notebook (all cells).").tag(config=True)

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

    def preprocess(self, nb, resources=None, km=None):
        self._deadline = monotonic() + self.notebook_timeout
        self._stop_reason = None
        nb, resources = super().preprocess(nb, resources, km=km)
        resources.setdefault("gemm_lab", {})["stop_reason"] = self._stop_reason
        return nb, resources

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
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._stop_reason = "kernel_died"
            self.log.warning("Kernel died in cell %s: remaining cells are not run", index)
            cell.outputs = list(cell.get("outputs", [])) + [
                _stop_output("이 셀을 실행하는 중 커널이 종료되었습니다.")]
            return cell, self.resources
        except CellTimeoutError:
            # the kernel did not come back after the interrupt: this cell fails, the next ones still run
            self.log.warning("Cell %s timed out and the kernel did not settle", index)
            cell.outputs = list(cell.get("outputs", [])) + [NotebookNode(
                output_type="error", ename="CellTimeoutError", evalue="",
                traceback=["CellTimeoutError: 셀 시간 제한을 넘었습니다."])]
            return cell, self.resources
