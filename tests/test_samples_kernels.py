"""The kernel-mistake samples (autograder/samplekit/kernels.py) lose what expected.csv says: each edited
master kernel is rejected by the check its notebook's kernel test cells call (visible and hidden cases),
with Korean feedback. The kernels are loaded as the notebook defines them (tests/test_grading_kernels.py)."""

from __future__ import annotations

import pytest

from gemm_lab import runtime  # noqa: F401  (before triton: kernels run in the CPU interpreter)

pytest.importorskip("triton")

from test_grading_kernels import CHECKS, kernel, master_source, rejects  # noqa: E402

from autograder.samplekit.kernels import MISTAKES  # noqa: E402
from gemm_lab.grading.kernels.exercises import EXERCISES  # noqa: E402

# the feedback each mistake gets (fp16 accumulation: the T4 compile step refuses tl.dot's fp16 accumulator
# before the precision check sees it, so only the failure itself is asserted)
WHY = {"kernel_no_k_mask": "마스크 없는 로드", "kernel_k_wrap": "마스크 없는 로드", "kernel_no_load_mask": "마스크 없는 로드",
       "kernel_no_store_mask": "여백", "kernel_other_one": "값이 다릅니다", "kernel_other_zero": "값이 다릅니다",
       "kernel_loop_off_by_one": "persistent_matmul"}
CELL = {ex: e.solution_cell for ex, e in EXERCISES.items()}


def _applicable():
    for case, cell, _, edit in MISTAKES:
        for ex, gid in CELL.items():
            if gid != cell:
                continue
            src = master_source(ex)
            if edit(src) != src:
                yield pytest.param(ex, edit(src), WHY.get(case, "❌"), id=f"{case}-{ex}")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(tmp_path_factory.getbasetemp() / "compile_cache"))


@pytest.mark.parametrize(("exercise", "source", "why"), list(_applicable()))
def test_every_kernel_mistake_is_rejected_visible_and_hidden(tmp_path, exercise, source, why):
    k = kernel(tmp_path, exercise, source)
    kw = {"num_programs": [1, 3, 40]} if exercise == "persistent" else {}
    msgs = [rejects(CHECKS[exercise], k, **kw), rejects(CHECKS[exercise], k, hidden=True, seed=1, **kw)]
    assert all(why in m for m in msgs), msgs
