"""Which case runs on which notebook: the committed plans (``PLANS``) and the fixture's (``FIXTURE_PLAN``).

A plan maps a case name to the notebooks it uses (``ALL``: every notebook; ``FIRST``: the first; a case that
does not apply to a notebook — no kernel, no literal answer — is skipped there). Full marks, blank and all wrong run everywhere;
the rest where they teach something, chosen to keep ``make demo`` within its time budget.
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

# The attacks on an in-process grader (samplekit.attacks_inprocess), on these notebooks: week 6's 01 and week
# 7's 01, 03 and 06 (the kernel attacks where there is a graded kernel: 03 has none).
_INPROCESS_ANSWERS = ("frame_walk", "forged_handout")
_INPROCESS_KERNELS = ("kernel_calls_python", "special_shapes")
# The attacks on the grader's kernel workers (samplekit.attacks_worker), each where its kernel is.
_WORKER = {"week07": {"self_reported_ownership": [W7[5]], "poison_classmates": [W7[0]]},
           "week06": {"poison_classmates": [W6[0], W6[1]]}}
# The gate: Python hidden outside a kernel's body (every place, on every graded kernel in the -all plans) and
# honest kernels and answers written differently from the master.
_GATE = tuple(attacks_gate.CASES)
_HONEST_KERNEL = tuple(honest.KERNEL_VARIANTS)

FULL_PLANS = {
    "week07": {
        "full_marks": ALL, "blank": ALL, "all_wrong": ALL,
        "other_formats": [W7[1], W7[2]], "off_by_one": ALL,
        **{m: [W7[0]] for m in ("kernel_no_k_mask", "kernel_no_store_mask", "kernel_other_one", "kernel_k_wrap",
                                "kernel_fp16_acc")},
        "kernel_loop_off_by_one": [W7[5]], "kernel_acc_not_reset": [W7[5]],
        "bad_matmul_block_k_8": [W7[0]], "bad_matmul_fake_jit_object": [W7[0]],
        "bad_persistent_while_break": [W7[5]], "bad_persistent_own_compute_tile": [W7[5]],
        "redefined_launcher": [W7[5]],
        **{h: [W7[1]] for h in ("raises", "infinite_loop", "big_output", "sys_exit", "memory_hog", "fork_bomb",
                                "memory_fill", "disk_fill", "deleted_test", "edited_locked", "os_exit",
                                "kernel_crash", "tamper_checker", "tamper_compare", "snoop")},
        "deleted_test_after_locked": [W7[5]], "hidden_literal": [W7[2]], "duplicated_test": [W7[3]],
        "changed_grade_id": [W7[4]], "long_lines": [W7[3]], "history_snoop": [W7[4]],
        "frame_walk": [W7[2]], "forged_handout": [W7[0], W7[2], W7[5]], **{h: [W7[0], W7[5]] for h in _INPROCESS_KERNELS},
        **{h: [W7[0], W7[5]] for h in _GATE + _HONEST_KERNEL}, "iterable_answers": [W7[2], W7[3], W7[4]],
        **_WORKER["week07"],
    },
    "week06": {
        "full_marks": ALL, "blank": ALL, "all_wrong": ALL, "other_formats": [W6[0], W6[1]],
        "off_by_one": ALL, "last_digit_off": ALL,
        "kernel_no_load_mask": [W6[0]], "kernel_other_zero": [W6[1]],
        "bad_vector_add_dict": [W6[0]], "bad_vector_add_unmasked_loads": [W6[0]],
        "bad_vector_add_passes_launcher": [W6[0]], "bad_softmax_lambda": [W6[1]],
        "raises": [W6[0]], "tamper_checker": [W6[0]], "hidden_literal": [W6[1]], "duplicated_test": [W6[2]],
        "history_snoop": [W6[2]],
        **{h: [W6[0]] for h in (*_INPROCESS_ANSWERS, *_INPROCESS_KERNELS)},
        **{h: [W6[0], W6[1]] for h in _GATE + _HONEST_KERNEL}, "iterable_answers": [W6[0], W6[2]],
        **_WORKER["week06"],
    },
}

# The committed samples (what `make demo` grades, within its time budget): full marks, blank and all wrong on
# every notebook, plus the cases below; the rest of FULL_PLANS (`--plan week07-all`) is for a longer run.
_CORE = {
    "week07": ["other_formats", "off_by_one", "kernel_no_k_mask", "kernel_no_store_mask", "kernel_loop_off_by_one",
               "kernel_acc_not_reset", "bad_matmul_block_k_8", "redefined_launcher", "raises", "fork_bomb", "tamper_checker", "snoop",
               "deleted_test_after_locked", "duplicated_test", "changed_grade_id", "history_snoop",
               *_INPROCESS_ANSWERS, *_INPROCESS_KERNELS, *_WORKER["week07"]],
    "week06": ["off_by_one", "kernel_no_load_mask", "kernel_other_zero", "bad_softmax_lambda", "tamper_checker",
               "hidden_literal", *_INPROCESS_ANSWERS, *_INPROCESS_KERNELS, *_WORKER["week06"]],
}
# The committed week-7 plan places each attack of attacks_inprocess on one or two notebooks (together they cover
# 01, 03 and 06) so that make demo and the sample test stay within their time; the -all plans keep every one.
_GATE_W6 = ("gate_return_annotation", "gate_constant_annotation", "gate_decorator", "gate_default")
_GATE_W7 = ("gate_arg_annotation", "gate_posonly_annotation", "gate_kwonly_annotation", "gate_jit_keyword",
            "gate_tuner_argument")
_CORE["week06"] += [*_GATE_W6, *_HONEST_KERNEL, "iterable_answers"]
_CORE["week07"] += [*_GATE_W7, *_HONEST_KERNEL, "iterable_answers"]
_NARROW = {"week07": {"other_formats": [W7[1]],
                      "frame_walk": [W7[2]],
                      "kernel_calls_python": [W7[5]], "special_shapes": [W7[0], W7[5]], "forged_handout": [W7[2]],
                      **{h: [W7[0]] for h in _GATE_W7}, "kernel_alias": [W7[0]], "constexpr_from_constant": [W7[5]],
                      "triton_alias": [W7[5]], "autotune_one_config": [W7[0]], "iterable_answers": [W7[2], W7[3]]},
           "week06": {"off_by_one": [W6[0]], **{h: [W6[0]] for h in _GATE_W6}, "kernel_alias": [W6[1]],
                      "constexpr_from_constant": [W6[0]], "triton_alias": [W6[0]], "autotune_one_config": [W6[1]],
                      "iterable_answers": [W6[2]]}}
PLANS = {a: {c: _NARROW[a].get(c, w) for c, w in plan.items() if c in ("full_marks", "blank", "all_wrong", *_CORE[a])}
         for a, plan in FULL_PLANS.items()}
PLANS.update({f"{a}-all": plan for a, plan in FULL_PLANS.items()})


# Any assignment without a plan of its own (the tests' fixture): full marks on every notebook, the rest on the first.
FIXTURE_PLAN = {"full_marks": ALL, **{c: FIRST for c in (
    "blank", "all_wrong", "other_formats", "raises", "infinite_loop", "big_output", "sys_exit", "memory_hog",
    "deleted_test", "edited_locked", "os_exit", "kernel_crash", "tamper_checker", "tamper_compare", "snoop")}}
