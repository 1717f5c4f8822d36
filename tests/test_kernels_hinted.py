"""The divisibility-hinted kernel (gemm_lab.kernels.hinted) and best_matmul's tuner (best_tune) on the CPU:
results in the interpreter on odd shapes and views, the hints, what the sm_90 compiler makes of them
(cross-compiled: vector loads, cp.async pipelining, vector stores at 500x600x300 where the Tutorial-03
kernel gets 2-byte loads), and the tuner's choice logic with a stand-in timer."""

import pytest
import torch

import gemm_lab.kernels as K
from gemm_lab.compile.hints import best_small_configs, hint_ptx_table, ptx_counts
from gemm_lab.kernels import best, best_tune
from gemm_lab.kernels.check import margins_intact, poisoned_view
from gemm_lab.kernels.hinted import HINTED_NAMES, even_flags, hint, hinted_args


@pytest.mark.parametrize("x, d", [(0, 1), (1, 1), (3, 1), (2, 2), (6, 2), (300, 4), (600, 8), (4096, 8), (24, 8)])
def test_hint_is_the_largest_power_of_two_up_to_8(x, d):
    assert hint(x) == d and x % d == 0


def test_hinted_args_round_trip():
    a = torch.empty(500, 300, dtype=torch.float16)
    b = torch.empty(600, 300, dtype=torch.float16).t()
    c = torch.empty(500, 600, dtype=torch.float16)
    q, h = hinted_args(500, 600, 300, a, b, c)
    values = (500, 600, 300, 300, 1, 1, 300, 600, 1)
    assert [qq * h[f"D_{n}"] for qq, n in zip(q, HINTED_NAMES, strict=True)] == list(values)
    assert h["D_stride_am"] == 4 and h["D_N"] == 8 and h["D_stride_ak"] == 1


def test_even_flags():
    cfg = dict(BLOCK_SIZE_M=64, BLOCK_SIZE_N=32, BLOCK_SIZE_K=16)
    assert even_flags(128, 32, 48, cfg) == dict(EVEN_M=True, EVEN_N=True, EVEN_K=True)
    assert even_flags(100, 33, 40, cfg) == dict(EVEN_M=False, EVEN_N=False, EVEN_K=False)


@pytest.mark.parametrize("shape", [(1, 1, 1), (5, 7, 3), (33, 17, 65), (64, 32, 32), (70, 20, 130), (48, 96, 24)])
@pytest.mark.parametrize("layout", [(False, False, False), (True, True, True), (True, False, True), (False, True, False)])
def test_hinted_matmul_odd_shapes_views_and_margins(shape, layout):
    M, N, Kd = shape
    g = torch.Generator().manual_seed(M * N + Kd)
    a0 = torch.randn(M, Kd, generator=g).half()
    b0 = torch.randn(Kd, N, generator=g).half()
    a, _, _ = poisoned_view((M, Kd), torch.float16, "cpu", transposed=layout[0], values=a0)
    b, _, _ = poisoned_view((Kd, N), torch.float16, "cpu", transposed=layout[1], values=b0)
    c, buf, mask = poisoned_view((M, N), torch.float16, "cpu", transposed=layout[2])
    assert K.hinted_matmul(a, b, BLOCK_M=16, BLOCK_N=32, BLOCK_K=16, out=c) is c
    K.assert_close(c, K.reference_matmul(a0, b0))
    assert margins_intact(buf, mask)


def test_hinted_matmul_strided_inputs_and_activation():
    a = torch.randn(40, 2 * 36)[:, ::2].half()
    b = torch.randn(36, 3 * 50)[:, 1::3].half()
    c = K.hinted_matmul(a, b, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, activation="leaky_relu")
    K.assert_close(c, K.reference_matmul(a, b, "leaky_relu"))


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(BLOCK_M=48), ValueError, "BLOCK_M"), (dict(num_warps=0), ValueError, "num_warps"),
    (dict(activation="relu"), ValueError, "activation"), (dict(GROUP_M=1.5), TypeError, "GROUP_M"),
])
def test_hinted_matmul_bad_config(kwargs, exc, word):
    a = torch.randn(8, 8).half()
    with pytest.raises(exc, match=word):
        K.hinted_matmul(a, a, **kwargs)


def test_hinted_matmul_bad_inputs():
    with pytest.raises(TypeError):
        K.hinted_matmul(torch.randn(4, 4).half(), torch.randn(4, 4).float())
    with pytest.raises(ValueError, match="inner"):
        K.hinted_matmul(torch.randn(4, 5).half(), torch.randn(4, 4).half())
    with pytest.raises(TypeError):
        K.hinted_matmul([[1.0]], torch.randn(1, 1).half())


def test_hints_give_vector_loads_async_copies_and_vector_stores_at_500x600x300():
    """The point of the hints, checked on the sm_90 compiler's PTX (no GPU needed)."""
    hinted = hint_ptx_table(500, 600, 300)[1]
    plain = hint_ptx_table(500, 600, 300)[0]
    assert hinted["ld.global 2 B"] == 0 and hinted["cp.async 8 B"] > 0 and hinted["cp.async 16 B"] > 0
    assert hinted["st.global vector"] > 0 and hinted["st.global scalar"] == 0
    assert plain["ld.global 2 B"] > 0 and plain["cp.async 8 B"] + plain["cp.async 16 B"] + plain["cp.async 4 B"] == 0
    assert plain["st.global scalar"] > 0
    aligned = hint_ptx_table(512, 512, 512)  # all multiples of 16: both kernels get 16-byte async copies
    assert all(r["cp.async 16 B"] > 0 and r["ld.global 2 B"] == 0 for r in aligned)


def test_ptx_counts_and_best_small_configs():
    ptx = ("cp.async.ca.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x8, %r2;\n"
           "cp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x10, %r2;\n"
           "@%p1 ld.global.b16 { %rs1 }, [ %rd2 + 0 ];\n@%p2 st.global.v4.b32 [ %rd3 + 0 ], { %r1, %r2, %r3, %r4 };\n")
    assert ptx_counts(ptx) == {"ld.global 2 B": 1, "cp.async 4 B": 0, "cp.async 8 B": 1, "cp.async 16 B": 1,
                               "st.global vector": 1, "st.global scalar": 0}
    import pandas as pd

    df = pd.DataFrame([dict(M=5, N=6, K=3, dtype="fp16", kernel=k, config=c, graph_ms=t, graph_ratio_to_torch=1 / t)
                       for k, c, t in (("torch.matmul", "cuBLAS", 1.0), ("hinted", "a", 0.5), ("hinted", "b", 0.4),
                                       ("tutorial03", "a", 2.0), ("tutorial03", "b", float("nan")))])
    best_rows = best_small_configs(df)
    assert sorted(zip(best_rows.kernel, best_rows.config, strict=True)) == [("hinted", "b"), ("tutorial03", "a")]


def test_candidates_add_tutorial03_only_when_aligned():
    unaligned = best_tune.candidates(500, 600, 300, (300, 1, 600, 1, 600, 1), "sm_90", small=True)
    assert {k for k, _ in unaligned} == {"hinted"} and len(unaligned) == len(best_tune.SMALL_HINTED)
    al = best_tune.candidates(512, 512, 512, (512, 1, 512, 1, 512, 1), "sm_90", small=True)
    assert {k for k, _ in al} == {"hinted", "tutorial03", "splitk"}  # 64 tiles of 64x64 for 132 SMs
    assert [c for k, c in al if k == "splitk"] == best_tune.splitk_configs(512, 512, 512)
    mid = best_tune.candidates(2000, 1500, 64, (64, 1, 1500, 1, 1500, 1), "sm_80", small=False)
    assert len(mid) == len(K.configs_for("sm_80")) + len(best_tune.SHORT_K_HINTED)  # K <= 128: whole-K tiles


def test_pick_fastest_skips_failures_and_raises_when_none_runs():
    def run(c):
        if c == "bad":
            raise RuntimeError("OutOfResources")
    times = {"a": 3.0, "b": 1.0, "c": 2.0}
    best_c, ms, timings = best_tune.pick_fastest(["a", "bad", "b", "c"], run, time_fn=lambda f: times[f.__defaults__[0]])
    assert best_c == "b" and ms == 1.0 and len(timings) == 4
    with pytest.raises(RuntimeError, match="none of 1"):
        best_tune.pick_fastest(["bad"], run, time_fn=lambda f: 0.0)


def test_plan_tunes_in_the_interpreter_with_a_stand_in_timer(monkeypatch):
    """The tuning path of best_matmul (GPU-only in use), run in the interpreter: every candidate runs on
    the caller's tensors, the stand-in timer's fastest is pinned, and the result is right."""
    order = []

    def fake_time(fn):
        fn()
        order.append(best_plan.pinned)
        return 1.0 if len(order) == 3 else 2.0 + len(order)

    monkeypatch.setattr(best_tune, "graph_time_ms", fake_time)
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    M, N, Kd = 40, 24, 32
    a, b = torch.randn(M, Kd).half(), torch.randn(Kd, N).half()
    c, buf, mask = poisoned_view((M, N), torch.float16, "cpu")
    ch = best.explain(M, N, Kd, torch.float16, arch="sm_90")
    best_plan = best._Plan(ch, M, N, Kd, "", "graph", "first")  # time at the first call
    best_plan.run(a, b, c)
    K.assert_close(c, K.reference_matmul(a, b))
    assert margins_intact(buf, mask)
    kernel, cfg, ms, timings = best_plan.tuned
    assert ms == 1.0 and (kernel, cfg) == timings[2][0]  # the third candidate timed fastest
    assert best_plan.pinned == (kernel, cfg) and best_plan.kernel.launch.constexprs["BLOCK_SIZE_M"] == cfg["BLOCK_SIZE_M"]
    c2, buf2, mask2 = poisoned_view((M, N), torch.float16, "cpu")  # same layout: the plan's key fixes it
    best_plan.run(a, b, c2)  # the pinned launch, no tuning again
    K.assert_close(c2, K.reference_matmul(a, b))
    assert margins_intact(buf2, mask2)
    assert len(order) == len(timings)


def test_candidates_add_tma_only_when_allowed():
    strides = (512, 1, 512, 1, 512, 1)
    with_tma = best_tune.candidates(512, 512, 512, strides, "sm_90", small=True, tma_ok=True)
    assert [c for k, c in with_tma if k == "tma"] == best_tune.SMALL_TMA
    assert all(k != "tma" for k, _ in best_tune.candidates(512, 512, 512, strides, "sm_90", small=True))


def test_plan_can_pin_the_tma_kernel_in_the_interpreter(monkeypatch):
    """Hopper-like tuning in the interpreter: with aligned fp16 operands the TMA candidates are timed too;
    when the stand-in timer ranks one first, later calls run the TMA kernel with its descriptors."""
    def fake_time(fn):
        fn()
        kind, cfg = plan.pinned
        return 0.5 if kind == "tma" and cfg["BLOCK_M"] == 128 else 2.0

    monkeypatch.setattr(best_tune, "graph_time_ms", fake_time)
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    M, N, Kd = 48, 64, 32
    a, b = torch.randn(M, Kd).half(), torch.randn(Kd, N).half()
    plan = best._Plan(best.explain(M, N, Kd, torch.float16, arch="sm_90"), M, N, Kd, "", "graph", "first")
    out = torch.full((M, N), float("nan"), dtype=torch.float16)
    plan.run(a, b, out)
    K.assert_close(out, K.reference_matmul(a, b))
    kernel, cfg, ms, timings = plan.tuned
    assert kernel == "tma" and cfg["BLOCK_M"] == 128 and ms == 0.5 and plan.pinned == ("tma", cfg)
    assert plan.kernel.descs is not None  # ran with its descriptors
    assert any(k == "hinted" for (k, _), _ in timings) and any(k == "tutorial03" for (k, _), _ in timings)
    out2 = torch.full((M, N), float("nan"), dtype=torch.float16)
    plan.run(a, b, out2)
    K.assert_close(out2, K.reference_matmul(a, b))


def test_eager_tuning_weighs_the_launch_cost():
    """tune_for='eager': per call max(GPU time, the kernel's launch CPU time), ties broken by GPU time; a
    kernel 3 % faster on the GPU whose launch costs 4x its GPU time loses to a cheap launch (the H200's
    1024^3 case, in round numbers), and among one kernel's configs the fastest on the GPU wins even when
    its own host timing came out noisier (the launch cost is the kernel's median)."""
    gpu = {("tma", 1): 5.8, ("tiled", 1): 6.2, ("tiled", 2): 6.0, ("tiled", 3): 6.5}
    host = {("tma", 1): 22.0, ("tiled", 1): 9.0, ("tiled", 2): 11.0, ("tiled", 3): 8.0}
    name = lambda f: f.__defaults__[0]  # noqa: E731 - the candidate bound into the timed lambda
    pick = lambda eager: best_tune.pick_fastest(list(gpu), lambda c: None, lambda f: gpu[name(f)],  # noqa: E731
                                                eager=eager, host_fn=lambda f: host[name(f)])
    assert pick(False)[:2] == (("tma", 1), 5.8)
    assert pick(True)[:2] == (("tiled", 2), 9.0)


def test_tune_for_is_validated_and_keyed():
    a = torch.randn(8, 8).half()
    with pytest.raises(ValueError, match="tune_for"):
        K.best_matmul(a, a, tune_for="fast")
    best.clear_plans()
    K.best_matmul(a, a)
    K.best_matmul(a, a, tune_for="eager")
    assert {key[-1] for key in best._PLANS} == {"graph", "eager"}
