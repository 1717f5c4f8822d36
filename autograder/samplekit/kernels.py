"""Typical kernel mistakes as variants of the master's kernel, and the kernels of autograder/samplekit/bad_kernels.py.

A mistake is a text edit of the master's solution cell (``MISTAKES``); it applies only where its pattern is
found, so the sample follows the master. Every mistake loses the notebook's kernel test cells (those the
exercise record reads from the master): the checks use sizes that are not tile multiples,
poisoned margins and a static check of the ``tl.load`` masks.
"""

from __future__ import annotations

import re

from .bad_kernels import by_name
from .model import Notebook, insert_cell, set_answer

_MASKED_LOAD = re.compile(r"tl\.load\((\w+), mask=[^()]*\)")
_TILE_LOOP = re.compile(r"^( *)for tile_id in .*\n", re.M)
_ACC_ZEROS = re.compile(r"^ *(acc\w* = tl\.zeros\(.*\))\n", re.M)


def _acc_before_tile_loop(s: str) -> str:
    """The persistent kernel with its accumulator made once, before the tile loop, instead of per tile."""
    loop, acc = _TILE_LOOP.search(s), _ACC_ZEROS.search(s)
    if loop is None or acc is None or acc.start() < loop.start():
        return s
    s = s[:acc.start()] + s[acc.end():]
    return s[:loop.start()] + loop.group(1) + acc.group(1) + "\n" + s[loop.start():]


# (case, kernel cell grade_id, description, edit of the solution text)
MISTAKES = [
    ("kernel_no_k_mask", "student_kernel", "K-loop tl.load without a mask (reads past K; unmasked load)",
     lambda s: _MASKED_LOAD.sub(r"tl.load(\1)", s)),
    ("kernel_no_store_mask", "student_kernel", "tl.store without c_mask (writes the tile's margin)",
     lambda s: s.replace("tl.store(c_ptrs, c, mask=c_mask)", "tl.store(c_ptrs, c)")),
    ("kernel_other_one", "student_kernel", "K-loop loads fill the K tail with other=1.0",
     lambda s: s.replace("other=0.0", "other=1.0")),
    ("kernel_k_wrap", "student_kernel", "K offsets wrapped with % K instead of a mask",
     lambda s: _MASKED_LOAD.sub(r"tl.load(\1)", s.replace(
         "offs_k = tl.arange(0, BLOCK_SIZE_K)", "offs_k = tl.arange(0, BLOCK_SIZE_K) % K"))),
    ("kernel_fp16_acc", "student_kernel", "accumulator in float16 instead of float32",
     lambda s: s.replace("dtype=tl.float32)", "dtype=tl.float16)")),
    ("kernel_loop_off_by_one", "student_kernel", "persistent loop stops one tile early (num_tiles - 1)",
     lambda s: s.replace("tl.range(pid, num_tiles, NUM_PROGRAMS)", "tl.range(pid, num_tiles - 1, NUM_PROGRAMS)")),
    ("kernel_acc_not_reset", "student_kernel",
     "persistent: the accumulator is made once before the tile loop, not reset per tile (wrong from a program's "
     "second tile on)", _acc_before_tile_loop),
    ("kernel_no_load_mask", "ex4_add_kernel", "vector add: tl.load without mask (unmasked load)",
     lambda s: s.replace("tl.load(x_ptr + offsets, mask=mask)", "tl.load(x_ptr + offsets)")
     .replace("tl.load(y_ptr + offsets, mask=mask)", "tl.load(y_ptr + offsets)")),
    ("kernel_other_zero", "ex4_softmax_kernel", "softmax row padded with other=0.0 instead of -inf",
     lambda s: s.replace('other=-float("inf")', "other=0.0")),
]
MISTAKE_NAMES = tuple(m[0] for m in MISTAKES)


def mistake(nb: Notebook, case: str):
    """The sample for mistake ``case`` on ``nb``, or None where the master has no such kernel/pattern."""
    (_, cell, desc, edit), = [m for m in MISTAKES if m[0] == case]
    if cell not in nb.solutions or not nb.kernel_tests():
        return None
    new = edit(nb.solutions[cell])
    if new == nb.solutions[cell]:
        return None
    return desc, set_answer(nb.full(), cell, new), nb.full_except(nb.kernel_tests())


def bad_kernel(nb: Notebook, name: str):
    """The hand-in of autograder/samplekit/bad_kernels.py's entry ``name`` (on its own notebook), or None elsewhere."""
    entry = by_name(name)
    if entry["notebook"] != nb.key:
        return None
    out = set_answer(nb.full(), entry["cell"], entry["source"])
    if entry["added_cell"]:
        insert_cell(out, nb.index_of(entry["added_after"]) + 1, entry["added_cell"])
    return f"bad_kernels.{name} ({entry['kind']}): {entry['reason']}", out, nb.full_except(entry["tests_lost"])
