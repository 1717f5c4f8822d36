"""Which case runs on which notebook: the committed plans and their longer "-all" runs (``PLANS``), and the
fixture's (``FIXTURE_PLAN``).

A plan maps a case name to the notebooks it uses (``ALL``: every notebook; ``FIRST``: the first; a case that
does not apply to a notebook — no kernel, no literal answer — is skipped there).
"""

from __future__ import annotations

import functools

from . import attacks_gate, attacks_inprocess, attacks_sandbox, attacks_worker, honest, kernels
from .bad_kernels import BAD_KERNELS

ALL, FIRST = "*", "1"
# Every case by name: f(Notebook) -> (description, notebook json, expected points) | None.
CASES = {**honest.CASES, **attacks_sandbox.CASES, **attacks_inprocess.CASES, **attacks_worker.CASES,
         **attacks_gate.CASES, **{m: functools.partial(kernels.mistake, case=m) for m in kernels.MISTAKE_NAMES},
         **{f"bad_{e['name']}": functools.partial(kernels.bad_kernel, name=e["name"]) for e in BAD_KERNELS}}
# Which cases must be flagged for review, and what their review column must hold.
REVIEW = {*attacks_sandbox.REVIEW, *attacks_inprocess.REVIEW, *attacks_worker.REVIEW, *attacks_gate.REVIEW}
REVIEW_CONTAINS = attacks_sandbox.REVIEW_CONTAINS


def case_function(case: str):
    """The function building ``case`` for one notebook."""
    if case not in CASES:
        raise ValueError(f"unknown sample case {case!r}; known: {', '.join(CASES)}")
    return CASES[case]


W7 = ("01_pointer_blocks", "02_program_order_l2", "03_tile_configs_roofline", "04_compile_pipeline",
      "05_artifacts_benchmarks", "06_persistent_loop")
W6 = ("01_block_model", "02_fusion_softmax", "03_check_benchmark")

_GATE_W6 = ("gate_return_annotation", "gate_constant_annotation", "gate_decorator", "gate_default")
_GATE_W7 = ("gate_arg_annotation", "gate_posonly_annotation", "gate_kwonly_annotation", "gate_jit_keyword",
            "gate_tuner_argument")
_SANDBOX_W7 = ("infinite_loop", "big_output", "sys_exit", "memory_hog", "memory_fill", "disk_fill", "deleted_test",
               "edited_locked", "os_exit", "kernel_crash", "tamper_compare")
# Every graded kernel: the gate's attacks (Python hidden outside a kernel's body) and the honest kernel variants.
_ON_KERNELS = (*attacks_gate.CASES, *honest.KERNEL_VARIANTS)

# The committed samples (what `make demo` grades, within its time budget): full marks, blank and all wrong on
# every notebook, each other case on one or two notebooks where it teaches something.
PLANS = {
    "week07": {
        "full_marks": ALL, "blank": ALL, "all_wrong": ALL, "other_formats": [W7[1]], "off_by_one": ALL,
        "kernel_no_k_mask": [W7[0]], "kernel_no_store_mask": [W7[0]], "kernel_loop_off_by_one": [W7[5]],
        "kernel_acc_not_reset": [W7[5]], "bad_matmul_block_k_8": [W7[0]], "redefined_launcher": [W7[5]],
        **{h: [W7[1]] for h in ("raises", "fork_bomb", "tamper_checker", "snoop")},
        "deleted_test_after_locked": [W7[5]], "duplicated_test": [W7[3]], "changed_grade_id": [W7[4]],
        "history_snoop": [W7[4]], "frame_walk": [W7[2]], "forged_handout": [W7[2]], "kernel_calls_python": [W7[5]],
        "special_shapes": [W7[0], W7[5]], **{h: [W7[0]] for h in _GATE_W7}, "kernel_alias": [W7[0]],
        "constexpr_from_constant": [W7[5]], "triton_alias": [W7[5]], "autotune_one_config": [W7[0]],
        "iterable_answers": [W7[2], W7[3]], "self_reported_ownership": [W7[5]], "poison_classmates": [W7[0]],
    },
    "week06": {
        "full_marks": ALL, "blank": ALL, "all_wrong": ALL, "off_by_one": [W6[0]], "kernel_no_load_mask": [W6[0]],
        "kernel_other_zero": [W6[1]], "bad_softmax_lambda": [W6[1]], "tamper_checker": [W6[0]],
        "hidden_literal": [W6[1]], **{h: [W6[0]] for h in ("frame_walk", "forged_handout", "kernel_calls_python",
                                                           "special_shapes", *_GATE_W6)},
        "kernel_alias": [W6[1]], "constexpr_from_constant": [W6[0]], "triton_alias": [W6[0]],
        "autotune_one_config": [W6[1]], "iterable_answers": [W6[2]], "poison_classmates": [W6[0], W6[1]],
    },
}
# A longer run (`--plan week07-all`): every case, the attacks on every notebook they apply to.
PLANS["week07-all"] = {
    **PLANS["week07"], "other_formats": [W7[1], W7[2]],
    **{m: [W7[0]] for m in ("kernel_other_one", "kernel_k_wrap", "kernel_fp16_acc", "bad_matmul_fake_jit_object")},
    "bad_persistent_while_break": [W7[5]], "bad_persistent_own_compute_tile": [W7[5]],
    **{h: [W7[1]] for h in _SANDBOX_W7}, "hidden_literal": [W7[2]], "long_lines": [W7[3]],
    "forged_handout": [W7[0], W7[2], W7[5]], **{h: [W7[0], W7[5]] for h in ("kernel_calls_python", *_ON_KERNELS)},
    "iterable_answers": [W7[2], W7[3], W7[4]],
}
PLANS["week06-all"] = {
    **PLANS["week06"], "other_formats": [W6[0], W6[1]], "off_by_one": ALL, "last_digit_off": ALL,
    **{b: [W6[0]] for b in ("bad_vector_add_dict", "bad_vector_add_unmasked_loads", "bad_vector_add_passes_launcher",
                            "raises")},
    "duplicated_test": [W6[2]], "history_snoop": [W6[2]], **{h: [W6[0], W6[1]] for h in _ON_KERNELS},
    "iterable_answers": [W6[0], W6[2]],
}


# Any assignment without a plan of its own (the tests' fixture): full marks on every notebook, the rest on the first.
FIXTURE_PLAN = {"full_marks": ALL, **{c: FIRST for c in (
    "blank", "all_wrong", "other_formats", "raises", "infinite_loop", "big_output", "sys_exit", "memory_hog",
    "deleted_test", "edited_locked", "os_exit", "kernel_crash", "tamper_checker", "tamper_compare", "snoop")}}
