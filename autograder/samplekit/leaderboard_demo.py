"""Demo hand-ins for the leaderboard (what produced ``results/leaderboard_week07_demo.csv`` on an H200).

    python -m autograder.samplekit.leaderboard_demo [OUT]        # default autograder/work/leaderboard_demo
    python -m autograder leaderboard --hand-ins autograder/work/leaderboard_demo --out results

Each ``OUT/<name>/01_pointer_blocks.ipynb`` is the release notebook with its ``student_kernel`` cell
replaced: the master's solution (without its solution markers), two edits of it (FP16 accumulator; row/column masks instead of ``% M``,
``% N``), two interpreter-only kernels of ``autograder/samplekit/bad_kernels.py`` and the untouched release stub.

The committed CSV (H200, 2026-12-03, with the stricter correctness check of ``autograder/reporting/leaderboard.py``):
master_solution 604 TFLOP/s (0.81 of torch.matmul), masked_rows_no_modulo 549 (0.74), fp16_accumulator
"not timed: wrong result", block_k_8 CompilationError, while_break and the release stub
UnsupportedLanguageConstruct.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

from autograder.course import REPO_ROOT as ROOT
from autograder.samplekit import bad_kernels
from autograder.samplekit.model import Notebook, set_answer
from gemm_lab.grading.kernels.exercises import EXERCISES

MATMUL = EXERCISES["matmul"]


def _edit(src: str, *pairs) -> str:
    for old, new in pairs:
        if old not in src:
            raise ValueError(f"the master's kernel no longer contains {old!r}")
        src = src.replace(old, new)
    return src


def variants() -> dict[str, str | None]:
    """name -> kernel cell source (None: the release stub as it is)."""
    m = Notebook.load(ROOT, MATMUL.notebook).solutions[MATMUL.solution_cell] + "\n"
    return {
        "master_solution": m,
        "masked_rows_no_modulo": _edit(
            m, (") % M", ")"), (") % N", ")"),
            ("a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)",
             "a = tl.load(a_ptrs, mask=(offs_am[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_SIZE_K), other=0.0)"),
            ("b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)",
             "b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_SIZE_K) & (offs_bn[None, :] < N), other=0.0)")),
        "fp16_accumulator": _edit(
            m, ("dtype=tl.float32)", "dtype=tl.float16)"),
            ("accumulator = tl.dot(a, b, accumulator)", "accumulator += tl.dot(a, b, out_dtype=tl.float16)")),
        "block_k_8": bad_kernels.by_name("matmul_block_k_8")["source"],
        "while_break": bad_kernels.by_name("matmul_while_break")["source"],
        "release_stub": None,
    }


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else ROOT / "autograder" / "work" / "leaderboard_demo"
    book = Notebook.load(ROOT, MATMUL.notebook)
    for name, src in variants().items():
        nb = copy.deepcopy(book.release)
        if src is not None:
            set_answer(nb, MATMUL.solution_cell, src)
        (out / name).mkdir(parents=True, exist_ok=True)
        (out / name / f"{book.name}.ipynb").write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {len(variants())} hand-ins under {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
