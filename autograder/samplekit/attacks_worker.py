"""Hostile hand-ins against the grader's kernel workers (the processes that compile or run a kernel's source)
and what hand-ins share: the grader takes no word from a worker and no state from another hand-in.

Payloads that ran inside a worker came in through an annotation of the ``@triton.jit`` function (Python that
runs when a module holding it is imported); the gate refuses every such place before a worker sees it
(``attacks_gate``), so the payloads that forged a worker's compile verdict, its outputs or the next notebook's
launch are not repeated here. Expected scores are what the work deserves.

* ``self_reported_ownership`` — week 7's persistent loop where program 0 computes every tile while each program
  calls ``record_tile`` for the tiles it should have computed: right values, right records, wrong work (pure
  Triton, not flagged: a wrong answer).
* ``poison_classmates`` — a payload and a notebook cell that write "does not compile" for the master's kernels
  into every compile cache and shared folder they can name (the grader's worker-compile folder, the Triton
  cache, the compile-check cache); flagged (the gate's refusal, a written module); a test grades honest
  hand-ins after it (tests/test_worker_attacks.py).
"""

from __future__ import annotations

import ast

from .model import Notebook, helper_cell, insert_cell, on_kernel, payloads, set_answer

# Run in the worker when it imports the kernel's module (the annotation's value), and in a written module.
POISON = payloads("attacks_worker")["POISON"]


def _with_payload(source: str, name: str, payload: str) -> str:
    """``source`` (a cell) with ``def name(...)``'s return annotation running ``payload`` on import."""
    head = f"def {name}("
    at = source.index(head)
    close = source.index("):", at)
    return source[:close] + f") -> exec({payload!r}):" + source[close + 2:]


_OWN_LOOP = "for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS):"
_RECORD = "        record_tile(tile_id, visits_ptr, owner_ptr)"


@on_kernel("vector_add", "softmax", "matmul")
def self_reported_ownership(nb: Notebook, _ex, gid, fn):
    src = nb.solutions[gid]
    if _OWN_LOOP not in src or _RECORD not in src:
        raise ValueError(f"{nb.key}: the master's persistent loop changed; update attacks_worker")
    body = src.replace(_OWN_LOOP, "for tile_id in tl.range(0, num_tiles * (pid == 0).to(tl.int32)):")
    body = "\n".join(line for line in body.splitlines() if line != _RECORD)
    end = next(n.end_lineno for n in ast.parse(body).body if getattr(n, "name", None) == fn.name)
    lines = body.splitlines()
    tail = ["    # 채점 기록은 각 program이 자기 tile에 남긴다", "    " + _OWN_LOOP, _RECORD]
    body = "\n".join(lines[:end] + tail + lines[end:]) + "\n"
    lost = [g for g in nb.kernel_tests() if g == "every_tile_once_by_its_program"]
    return ("program 0 computes every tile; each program calls record_tile for the tiles it should have computed",
            set_answer(nb.full(), gid, body), nb.full_except(lost))


@on_kernel()
def poison_classmates(nb: Notebook, _ex, gid, fn):
    out = set_answer(nb.full(), gid, _with_payload(nb.solutions[gid], fn.name, POISON))
    insert_cell(out, nb.index_of(gid), helper_cell("nb_cache_warm", POISON, ""))
    return ("the master's kernel with a return annotation (and a written module) that writes 'does not compile' into "
            "every compile cache and shared folder it can name", out, nb.full_except(nb.kernel_tests()))


CASES = {"self_reported_ownership": self_reported_ownership, "poison_classmates": poison_classmates}
REVIEW = {"poison_classmates"}
