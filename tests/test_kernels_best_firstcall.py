"""best_matmul's first call and later tuning, in the CPU interpreter (the GPU paths with ``current_arch``
set to sm_90 and a stand-in timer): the heuristic's pick runs at once, the candidates are timed at a later
call (never inside a CUDA-graph capture) or by ``best_matmul.tune``, within a budget; swap-AB, the
row-padded output view, the one-kernel split-K sum, the repeat-call fast path; odd shapes, views, bad
input."""

import pytest
import torch

import gemm_lab.kernels as K
from gemm_lab.kernels import best, best_tune
from gemm_lab.kernels.check import margins_intact, poisoned_view

ST = lambda M, N, Kd: (Kd, 1, N, 1, N, 1)  # noqa: E731  (contiguous A, B, C strides)


@pytest.fixture
def gpu_paths(monkeypatch, tmp_path):
    """sm_90 rules in the interpreter, a counting stand-in timer, an empty plan store, no plans."""
    timed = []

    def fake_time(fn):
        fn()
        timed.append(1)
        return 1.0 + 0.1 * len(timed)  # the first candidate timed is the fastest (no ties)

    monkeypatch.setattr(best_tune, "graph_time_ms", fake_time)
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    monkeypatch.setenv("GEMM_LAB_PLAN_DIR", str(tmp_path))
    monkeypatch.delenv("GEMM_LAB_TUNE", raising=False)
    monkeypatch.delenv("GEMM_LAB_TUNE_BUDGET_S", raising=False)
    best.clear_plans()
    yield timed
    best.clear_plans()


def _ab(M, N, Kd, dtype=torch.float16, seed=0):
    gen = torch.Generator().manual_seed(seed + M + N + Kd)
    return torch.randn(M, Kd, generator=gen).to(dtype), torch.randn(Kd, N, generator=gen).to(dtype)


def _plan(a, b, activation=None, out=None, tune_for="graph"):
    return best._PLANS[best._key(a, b, out, activation, tune_for)]


# ------------------------------------------------------------------------------------------- heuristic
@pytest.mark.parametrize("shape, small, large, want", [
    ((64, 16, 8192), True, False, "splitk"),             # 4 tiles, long K
    ((4096, 4096, 64), False, True, "tma"),               # large, short K: the whole-K TMA tile
    ((8192, 8192, 4096), False, True, "tma"),
    ((20, 3000, 700), True, False, "hinted_swap"),        # skinny M
    ((3000, 20, 300), True, False, "hinted"),             # narrow N (K too short for split-K)
    ((1500, 1500, 1000), False, False, "hinted"),
    ((1024, 1024, 1024), True, False, "hinted"),          # pointer kernel where the launch cost counts
])
def test_heuristic_picks_by_rule_from_the_list(shape, small, large, want):
    M, N, Kd = shape
    cands = best_tune.candidates(M, N, Kd, ST(M, N, Kd), "sm_90", small, tma_ok=True, large=large)
    kind, cfg = best_tune.heuristic(cands, M, N, Kd)
    assert (kind, cfg) in cands and kind == want
    if shape == (4096, 4096, 64):
        assert cfg == best_tune.SHORT_K_TMA
    if kind == "hinted_swap":
        assert cfg["BLOCK_SIZE_M"] == 128 and cfg["BLOCK_SIZE_N"] >= 16
    if shape == (3000, 20, 300):
        assert cfg["BLOCK_SIZE_N"] in (16, 32)
    if shape == (1024, 1024, 1024):  # 128 tiles of 64x128 for 132 SMs (64 of 128x128 would be half a wave)
        assert (cfg["BLOCK_SIZE_M"], cfg["BLOCK_SIZE_N"]) == (64, 128)


def test_heuristic_tile_follows_the_last_wave():
    # 2304^2: 18 x 9 = 162 tiles of 128x256 on 132 SMs (2 waves, 61 % busy) -> 128x128 (324 tiles, 82 %)
    cands = best_tune.candidates(2304, 2304, 2048, ST(2304, 2304, 2048), "sm_90", False, tma_ok=True, large=True)
    assert best_tune.heuristic(cands, 2304, 2304, 2048)[1]["BLOCK_N"] == 128
    # 4096^2: 512 tiles of 128x256, 4 waves at 97 % -> 128x256
    cands = best_tune.candidates(4096, 4096, 4096, ST(4096, 4096, 4096), "sm_90", False, tma_ok=True, large=True)
    assert best_tune.heuristic(cands, 4096, 4096, 4096)[1]["BLOCK_N"] == 256
    with pytest.raises(ValueError, match="at least one"):
        best_tune.heuristic([], 1, 1, 1)


def test_candidates_add_swap_ab_short_k_and_deeper_splitk(monkeypatch):
    monkeypatch.setenv("GEMM_LAB_DEVICE_TMA", "0")
    assert not any(k == "dtma" for k, _ in best_tune.candidates(3000, 900, 100, ST(3000, 900, 100), "sm_90", False,
                                                                tma_ok=True))
    monkeypatch.delenv("GEMM_LAB_DEVICE_TMA")
    skinny = best_tune.candidates(20, 3000, 2000, ST(20, 3000, 2000), "sm_90", True, tma_ok=True)
    assert [c for k, c in skinny if k == "hinted_swap"] == best_tune.SWAP_AB
    assert not any(k == "hinted_swap" for k, _ in best_tune.candidates(
        300, 3000, 2000, ST(300, 3000, 2000), "sm_90", True, tma_ok=True))
    mid = best_tune.candidates(3000, 900, 100, ST(3000, 900, 100), "sm_90", False, tma_ok=True)
    assert all(c in [c for k, c in mid if k == "hinted"] for c in best_tune.SHORT_K_HINTED)
    assert any(k == "dtma" for k, _ in mid)

    sk = best_tune.splitk_configs(64, 16, 8192)
    splits = sorted({c["split_k"] for c in sk})
    assert len(splits) == 3 and any(c["BLOCK_K"] == 128 for c in sk)
    wide = best_tune.splitk_configs(127, 4096, 4096)  # 128 tiles of 64x64, 32 of 128x128: split those
    assert [(c["BLOCK_M"], c["BLOCK_N"]) for c in wide] == [(128, 128)]
    assert all(2 <= c["split_k"] <= 16 for c in wide)
    assert best_tune.splitk_configs(300, 4096, 4096) == [] and best_tune.splitk_configs(127, 4096, 1000) == []


@pytest.mark.parametrize("M, N, Kd, small", [(3508, 25, 2366, True), (64, 16, 8192, True), (127, 4096, 4096, False)])
def test_splitk_is_listed_right_after_the_first_candidate(M, N, Kd, small):
    """Few output tiles and a long K: the split-K configs follow the first candidate, so a tuning budget
    that runs out in the long pointer-kernel list has timed them."""
    cands = best_tune.candidates(M, N, Kd, ST(M, N, Kd), "sm_90", small, tma_ok=True)
    sk = [("splitk", c) for c in best_tune.splitk_configs(M, N, Kd)]
    assert sk and cands[1:1 + len(sk)] == sk and cands[0][0] != "splitk"


# ------------------------------------------------------------------------------------------- first call
def test_first_call_runs_the_heuristic_and_a_later_call_tunes(gpu_paths, monkeypatch):
    timed = gpu_paths
    a, b = _ab(37, 45, 29)
    ref = K.reference_matmul(a, b)
    K.assert_close(K.best_matmul(a, b), ref)
    plan = _plan(a, b)
    assert timed == [] and plan.source == "heuristic" and plan.fast is None and plan.tuned is None
    monkeypatch.setattr(best, "_capturing", lambda t: True)   # inside a CUDA-graph capture: no timing
    K.assert_close(K.best_matmul(a, b), ref)
    assert timed == [] and plan.source == "heuristic"
    monkeypatch.setattr(best, "_capturing", lambda t: False)
    K.assert_close(K.best_matmul(a, b), ref)
    assert len(timed) == plan.report["timed"] > 1 and plan.source == "tuned" and plan.fast is not None
    assert plan.report["picked"] == plan.report["heuristic"]  # the stand-in timer ranks the first timed first
    n = len(timed)
    K.assert_close(K.best_matmul(a, b), ref)
    assert len(timed) == n


def test_policies_first_and_off_and_explicit_tune(gpu_paths, monkeypatch):
    timed = gpu_paths
    a, b = _ab(40, 24, 32)
    monkeypatch.setenv("GEMM_LAB_TUNE", "off")
    for _ in range(3):
        K.assert_close(K.best_matmul(a, b), K.reference_matmul(a, b))
    plan = _plan(a, b)
    assert timed == [] and plan.source.startswith("heuristic") and plan.fast is not None
    report = K.best_matmul.tune(a, b)
    assert report["source"] == "tuned" and report["timed"] == len(timed) > 1 and report["seconds"] >= 0
    assert report["skipped"] == 0 and report["candidates"] == report["timed"]
    assert K.best_matmul.tune(a, b) == report and len(timed) == report["timed"]  # not timed again
    monkeypatch.setenv("GEMM_LAB_TUNE", "first")
    a2, b2 = _ab(41, 24, 32)
    K.assert_close(K.best_matmul(a2, b2), K.reference_matmul(a2, b2))
    assert _plan(a2, b2).source == "tuned"


def test_budget_bounds_the_tuning(gpu_paths, monkeypatch):
    timed = gpu_paths
    a, b = _ab(33, 50, 70)
    report = K.best_matmul.tune(a, b, budget_s=1e-9)  # the heuristic's pick is always timed, nothing after
    assert report["timed"] == 1 == len(timed) and report["skipped"] == report["candidates"] - 1 > 0
    assert report["picked"] == report["heuristic"]
    K.assert_close(K.best_matmul(a, b), K.reference_matmul(a, b))
    clock = iter(range(100))
    pick, _, timings = best_tune.pick_fastest(["a", "b", "c", "d"], lambda c: None, time_fn=lambda f: 1.0,
                                              budget_s=1.5, clock=lambda: next(clock))
    assert pick == "a" and len(timings) == 2  # started at 0, "b" at 1, "c" would start at 2 > 1.5


def test_tune_and_policy_bad_input(gpu_paths, monkeypatch):
    a, b = _ab(16, 16, 16)
    for bad in (0, -1.0, "5", True):
        with pytest.raises(ValueError, match="budget_s"):
            K.best_matmul.tune(a, b, budget_s=bad)
    with pytest.raises(ValueError, match="tune_for"):
        K.best_matmul.tune(a, b, tune_for="fast")
    with pytest.raises(TypeError):
        K.best_matmul.tune([[1.0]], b)
    with pytest.raises(ValueError, match="inner dimensions"):
        K.best_matmul.tune(a, torch.randn(17, 16).half())
    monkeypatch.setenv("GEMM_LAB_TUNE", "sometimes")
    with pytest.raises(ValueError, match="GEMM_LAB_TUNE must be one of"):
        K.best_matmul(a, b)
    monkeypatch.setenv("GEMM_LAB_TUNE", "deferred")
    for bad in ("soon", "0", "-3", "nan"):  # refused by the first call, which makes the plan
        monkeypatch.setenv("GEMM_LAB_TUNE_BUDGET_S", bad)
        with pytest.raises(ValueError, match="GEMM_LAB_TUNE_BUDGET_S"):
            K.best_matmul(a, b)
        with pytest.raises(ValueError, match="GEMM_LAB_TUNE_BUDGET_S"):
            K.best_matmul(torch.empty(0, 5).half(), torch.empty(5, 3).half())  # an empty product too
    assert best._PLANS == {}
    monkeypatch.setenv("GEMM_LAB_TUNE_BUDGET_S", "2.5")
    K.best_matmul(a, b)
    assert _plan(a, b).budget_s == 2.5
    monkeypatch.delenv("GEMM_LAB_TUNE_BUDGET_S")
    empty = K.best_matmul.tune(torch.empty(0, 5).half(), torch.empty(5, 3).half())
    assert empty["source"] == "none" and empty["timed"] == 0


def test_stored_pick_is_the_first_call_of_a_second_process(gpu_paths, tmp_path):
    timed = gpu_paths
    a, b = _ab(37, 29, 21)
    report = K.best_matmul.tune(a, b)
    n = len(timed)
    best.clear_plans()
    K.assert_close(K.best_matmul(a, b), K.reference_matmul(a, b))
    plan = _plan(a, b)
    assert plan.source == "store" and plan.pinned == report["picked"] and len(timed) == n and plan.fast is not None
    assert K.best_matmul.tune(a, b)["source"] == "store"


# ------------------------------------------------------------------------------------------- new paths
def _pin_and_check(M, N, Kd, cand_kind, a_t=False, b_t=False, c_t=False, activation="", pred=None):
    """Pin the first candidate of ``cand_kind`` on a plan and run it twice on poisoned views."""
    gen = torch.Generator().manual_seed(M * 7 + N + Kd)
    a0, b0 = torch.randn(M, Kd, generator=gen).half(), torch.randn(Kd, N, generator=gen).half()
    ref = K.reference_matmul(a0, b0, activation or None)
    plan = best._Plan(best.explain(M, N, Kd, torch.float16, arch="sm_90"), M, N, Kd, activation)
    for i in range(2):
        a, _, _ = poisoned_view((M, Kd), torch.float16, "cpu", transposed=a_t, values=a0)
        b, _, _ = poisoned_view((Kd, N), torch.float16, "cpu", transposed=b_t, values=b0)
        c, buf, mask = poisoned_view((M, N), torch.float16, "cpu", transposed=c_t)
        if i == 0:
            cands = plan._candidates(a, b, c)
            plan._pin(next(x for x in cands if x[0] == cand_kind and (pred is None or pred(x[1]))), a, b, c)
        plan.go(a, b, c)
        K.assert_close(c, ref)
        assert margins_intact(buf, mask)
    return plan


@pytest.mark.parametrize("shape, layout", [((17, 90, 45), (False, False, False)), ((9, 70, 33), (True, True, True))])
def test_swap_ab_at_odd_shapes_and_views(monkeypatch, shape, layout):
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    plan = _pin_and_check(*shape, "hinted_swap", *layout, activation="leaky_relu")
    assert plan.kernel.kind == plan.pinned[0] == "hinted_swap"


@pytest.mark.parametrize("shape, layout, deep", [((20, 9, 1100), (False, False, True), True),
                                                 ((33, 17, 700), (True, False, True), False)])
def test_splitk_sums_in_one_kernel_into_views(monkeypatch, shape, layout, deep):
    from gemm_lab.kernels.splitk import splitk_reduce_kernel

    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    plan = _pin_and_check(*shape, "splitk", *layout, activation="leaky_relu",
                          pred=lambda c: (c["BLOCK_K"] == 128) == deep)
    assert plan.kernel.splits >= 2 and plan.kernel.reduce.kernel is splitk_reduce_kernel
    a, b = _ab(*shape)
    out = torch.empty(shape[1], shape[0]).half().t()  # the public split-K launcher sums with it too
    K.assert_close(K.splitk_matmul(a, b, split_k=5, activation="leaky_relu", out=out),
                   K.reference_matmul(a, b, "leaky_relu"))


@pytest.mark.parametrize("N", [21, 37])
def test_unaligned_output_is_a_view_of_a_padded_buffer(gpu_paths, monkeypatch, N):
    monkeypatch.setenv("GEMM_LAB_TUNE", "off")
    a, b = _ab(45, N, 29)
    c = K.best_matmul(a, b, activation="leaky_relu")
    K.assert_close(c, K.reference_matmul(a, b, "leaky_relu"))
    assert c.shape == (45, N) and c.stride() == ((N + 7) // 8 * 8, 1) and not c.is_contiguous()
    c2 = K.best_matmul(a, b, activation="leaky_relu")  # the fast path allocates the same layout
    assert c2.stride() == c.stride() and torch.equal(c2, c)
    out = torch.empty(45, N).half()  # a given out= is written as it is (contiguous, no view)
    assert K.best_matmul(a, b, out=out) is out
    K.assert_close(out, K.reference_matmul(a, b))
    a8, b8 = _ab(45, 24, 29)
    assert K.best_matmul(a8, b8).is_contiguous()  # aligned rows: a plain output


@pytest.mark.parametrize("shape, layout", [((33, 21, 45), (False, True, False)), ((48, 64, 32), (True, True, True)),
                                           ((64, 128, 64), (False, False, False))])
def test_device_descriptor_tma_at_odd_shapes_and_views(monkeypatch, shape, layout):
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    plan = _pin_and_check(*shape, "dtma", *layout, activation="leaky_relu")
    assert plan.kernel.kind == "dtma" and plan.kernel.launch.kernel.__name__ == "device_tma_persistent_kernel"
    a, b = _ab(*shape)  # fresh contiguous tensors: descriptors straight on them (no copies)
    plan = best._Plan(best.explain(*shape, torch.float16, arch="sm_90"), *shape, "")
    out = torch.empty(shape[0], shape[1]).half()
    plan._pin(next(x for x in plan._candidates(a, b, out) if x[0] == "dtma"), a, b, out)
    plan.go(a, b, out)
    K.assert_close(out, K.reference_matmul(a, b))
    assert plan.kernel.modes == ((0, 0, True) if shape[1] % 8 == 0 and shape[2] % 8 == 0 else plan.kernel.modes)


def test_graph_ranking_breaks_near_ties_by_launch_cost():
    times = {("tma", 1): 1.00, ("dtma", 1): 1.01, ("hinted", 1): 1.005, ("hinted", 2): 1.5, ("splitk", 1): 0.99}
    pick, ms, timings = best_tune.pick_fastest(list(times), lambda c: None, time_fn=lambda f: times[f.__defaults__[0]])
    assert pick == ("hinted", 1) and ms == 1.005 and len(timings) == 5  # within 2 % of 0.99: cheapest launch
    times[("hinted", 1)] = 1.2
    assert best_tune.pick_fastest(list(times), lambda c: None,
                                  time_fn=lambda f: times[f.__defaults__[0]])[0] == ("splitk", 1)  # rank 1, faster
    times[("splitk", 1)] = 1.3
    assert best_tune.pick_fastest(list(times), lambda c: None,
                                  time_fn=lambda f: times[f.__defaults__[0]])[0] == ("dtma", 1)


def test_tma_into_an_unaligned_out_copies_back_and_pads_operands(monkeypatch):
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    plan = _pin_and_check(33, 21, 45, "tma", b_t=True, pred=lambda c: c["BLOCK_M"] == 64)
    assert plan.kernel.modes[2] is False and plan.kernel.modes[0] == 2  # out rows of 42 bytes; A rows of 90: copied


def test_repeat_call_takes_the_fast_path(gpu_paths, monkeypatch):
    monkeypatch.setenv("GEMM_LAB_TUNE", "off")
    a, b = _ab(24, 40, 16)
    K.best_matmul(a, b)
    calls = []
    monkeypatch.setattr(best, "_plan_for", lambda *x: calls.append(x) or pytest.fail("slow path taken"))
    K.assert_close(K.best_matmul(a, b), K.reference_matmul(a, b))
    assert calls == []
    monkeypatch.setattr(best, "_plan_for", best._plan_for.__wrapped__ if hasattr(best._plan_for, "__wrapped__")
                        else _REAL_PLAN_FOR)
    c = K.best_matmul(a.clone().requires_grad_(True), b)  # grad: the autograd path, not the fast path
    assert c.grad_fn is not None
    K.assert_close(c.detach(), K.reference_matmul(a, b))
    monkeypatch.setattr(best, "_plan_for", lambda *x: calls.append(x) or pytest.fail("slow path taken"))
    with torch.no_grad():  # weights that require grad, used under no_grad: the fast path, no graph
        c = K.best_matmul(a.clone().requires_grad_(True), b)
    assert c.grad_fn is None and calls == []


_REAL_PLAN_FOR = best._plan_for


# ------------------------------------------------------------------------------------------- smoke check
def test_smoke_rows_run_every_candidate_kind_in_the_interpreter(monkeypatch):
    """The pre-benchmark check (GPU-only in use), at small odd shapes with the timer and GPU guard
    stood in: every kind the candidate list offers is pinned, run and compared with the reference."""
    from gemm_lab.bench import random_shapes as R

    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    monkeypatch.setattr(R, "require_gpu", lambda: None)
    monkeypatch.setattr(R, "graph_bench_ms", lambda fn, rep=10: (fn(), 1.0)[1])
    monkeypatch.setattr(R, "env_info", lambda: dict(gpu="cpu"))
    rows = R.smoke_rows(shapes=((20, 90, 600), (33, 21, 45)))
    kinds = {(r["M"], r["kind"]) for r in rows}
    assert {(20, "hinted_swap"), (20, "splitk"), (20, "dtma"), (20, "tma"), (20, "heuristic"), (33, "hinted")} <= kinds
    assert all(r["error"] == "" and r["rel_err"] < 1e-2 and r["graph_ratio_to_torch"] == 1.0 for r in rows)


# ------------------------------------------------------------------------------------------- neighbours
def test_nearest_stored_pick_of_the_same_class(monkeypatch, tmp_path):
    from gemm_lab.kernels import best_store

    monkeypatch.setenv("GEMM_LAB_PLAN_DIR", str(tmp_path))
    assert best_store.nearest("c", 10, 10, 10) is None  # no file yet
    best_store.save(("k1",), "hinted", {"x": 1}, dict(M=100, N=200, K=300, cls="c"))
    best_store.save(("k2",), "tma", {"x": 2}, dict(M=400, N=200, K=300, cls="c"))
    best_store.save(("k3",), "splitk", {"x": 3}, dict(M=110, N=200, K=300, cls="other"))
    best_store.save(("k4",), "hinted", {"x": 4})  # no shape: never a neighbour
    assert best_store.nearest("c", 120, 200, 300) == (("hinted", {"x": 1}), (100, 200, 300))
    assert best_store.nearest("c", 350, 210, 300) == (("tma", {"x": 2}), (400, 200, 300))
    assert best_store.nearest("c", 5000, 5000, 300) is None        # too far from both
    assert best_store.nearest("none", 100, 200, 300) is None
    assert best_store.load(("k1",)) == ("hinted", {"x": 1}) and best_store.load(("k4",)) == ("hinted", {"x": 4})
    monkeypatch.setenv("GEMM_LAB_PLAN_DIR", "off")
    assert best_store.nearest("c", 100, 200, 300) is None


def test_first_call_borrows_the_nearest_tuned_pick(gpu_paths, monkeypatch):
    timed = gpu_paths
    state = {}

    def fake_time(fn):
        fn()
        timed.append(1)
        return 0.5 if len(timed) == 3 else 2.0  # the third candidate timed wins (not the rules' pick)

    monkeypatch.setattr(best_tune, "graph_time_ms", fake_time)
    a, b = _ab(40, 24, 32)
    report = K.best_matmul.tune(a, b)
    state["won"] = report["picked"]
    assert report["picked"] != report["heuristic"]
    a2, b2 = _ab(44, 24, 40)  # same class (rows 16-byte aligned too), near: starts from that pick
    K.assert_close(K.best_matmul(a2, b2), K.reference_matmul(a2, b2))
    plan = _plan(a2, b2)
    assert plan.pinned == state["won"] and plan.near == (40, 24, 32) and plan.source == "heuristic"
    a3, b3 = _ab(44, 24, 40, dtype=torch.float32)  # another dtype: another class, the rules' pick
    K.best_matmul(a3, b3)
    assert _plan(a3, b3).near is None


def test_host_rows_file_and_summary_metrics(monkeypatch, tmp_path):
    pd = pytest.importorskip("pandas")
    from gemm_lab.bench import random_shapes as R

    us = {"torch.matmul": 10.0, "best_matmul": 12.0, "best_matmul(tune_for='eager')": 11.0}
    calls = []
    monkeypatch.setattr(R, "env_info", lambda: dict(gpu="G", torch="t", triton="tr", date="d"))
    monkeypatch.setattr(R, "host_us", lambda fn, n: (calls.append(1), 0.0)[1])
    monkeypatch.setattr(R, "do_bench_ms", lambda fn, w, r: 0.0)
    rows = R.host_rows(size=16, n=3, rounds=2, csv_path=str(tmp_path / "host.csv"))
    assert len(rows) == 6 and len(calls) == 6 and (tmp_path / "host.csv").exists()
    for r in rows:  # stand-in numbers: torch 10 us and 0.010 ms, best 12 us and 0.012 ms, eager-tuned 11 us
        r.update(host_us=us[r["call"]], eager_ms=us[r["call"]] / 1000)
    df = pd.DataFrame([dict(gpu="G", torch="t", triton="tr", date="d", seed=3, M=64, N=64, K=64, dtype="fp16",
                            shape_class="x", graph_ratio_to_best_peer=1.0, tune_s=2.0)])
    s = R.summary(df, rows)
    s = s[s.shape_class.isin(["all", "1024^3"])].set_index("metric")
    assert s.loc["host_ratio_best_to_torch", "median"] == pytest.approx(1.2)
    assert s.loc["host_ratio_best_eager_to_torch", "median"] == pytest.approx(1.1)
    assert s.loc["eager_ratio_best_to_torch", "median"] == pytest.approx(10 / 12)
    assert s.loc["tune_s", "median"] == 2.0 and "untuned_graph_ratio_to_torch" not in s.index


def test_a_first_pick_that_fails_here_falls_back_to_timing(gpu_paths, monkeypatch):
    """The untimed first pick may not compile or launch on this GPU (shared memory, an old Triton): the
    call still returns the right product, from the fastest candidate that runs, and says so."""
    real_pin, pins = best._Plan._pin, []

    def pin(self, cand, a, b, out, kernel=None):
        real_pin(self, cand, a, b, out, kernel)
        pins.append(cand)
        if len(pins) == 1:
            def broken(*args):
                raise RuntimeError("out of resource: shared memory")
            self.go = broken

    monkeypatch.setattr(best._Plan, "_pin", pin)
    a, b = _ab(37, 45, 29)
    with pytest.warns(RuntimeWarning, match="first pick"):
        c = K.best_matmul(a, b)
    K.assert_close(c, K.reference_matmul(a, b))
    plan = _plan(a, b)
    assert plan.source == "tuned" and len(gpu_paths) > 1 and len(pins) > 1
