"""best_matmul at any shape, in the CPU interpreter: autograd against torch, the tuner's new candidates
(TMA on padded copies of unaligned operands, split-K, narrow tiles, the large-output list) pinned by a
stand-in timer and checked at odd shapes, views and bad input; and the random-shape benchmark's drawing."""

import pytest
import torch

import gemm_lab.kernels as K
from gemm_lab.bench import random_shapes as R
from gemm_lab.kernels import best, best_tune
from gemm_lab.kernels.check import margins_intact, poisoned_view


# ------------------------------------------------------------------------------------------- autograd
def _grads(fn, a0, b0, seed):
    a = a0.clone().requires_grad_(True)
    b = b0.clone().requires_grad_(True)
    c = fn(a, b)
    g = torch.randn(c.shape, generator=torch.Generator().manual_seed(seed)).to(c.dtype)
    c.backward(g)
    return c.detach(), a.grad, b.grad, g


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape, activation", [((33, 17, 45), None), ((7, 40, 19), "leaky_relu"),
                                               ((64, 16, 31), None)])
def test_backward_matches_torch(dtype, shape, activation):
    M, N, Kd = shape
    gen = torch.Generator().manual_seed(M * N)
    a0, b0 = torch.randn(M, Kd, generator=gen).to(dtype), torch.randn(Kd, N, generator=gen).to(dtype)

    def ref(a, b):
        c = a.double() @ b.double()
        return torch.nn.functional.leaky_relu(c, 0.01) if activation else c

    c, ga, gb, g = _grads(lambda a, b: K.best_matmul(a, b, activation=activation), a0, b0, 1)
    cr, gar, gbr, _ = _grads(ref, a0, b0, 1)
    assert ga.dtype == dtype and gb.dtype == dtype and ga.shape == a0.shape and gb.shape == b0.shape
    # fp16 gradients are sums of products of rounded values (gradient, operands): judged by the norm-wise
    # relative error, element-wise ulp counts blow up where terms cancel
    tol = 1e-6 if dtype == torch.float32 else 2e-3
    for got, want in ((c, cr), (ga, gar), (gb, gbr)):
        assert K.relative_error(got, want) < tol


def test_backward_on_views_one_input_and_sum():
    gen = torch.Generator().manual_seed(3)
    big = torch.randn(50, 60, generator=gen)
    a = big[3:40:2, 5:34].detach().requires_grad_(True)        # strided view (19 x 29)
    b = torch.randn(23, 29, generator=gen).t()                   # transposed, no grad
    K.best_matmul(a, b).sum().backward()                         # expanded (stride 0) upstream gradient
    ref = torch.ones(19, 23) @ b.t()
    K.assert_close(a.grad, ref)
    with torch.no_grad():                                        # no grad mode: no graph, out= allowed
        out = torch.empty(19, 23)
        assert K.best_matmul(a, b, out=out) is out and not out.requires_grad


def test_autograd_bad_use_is_refused_clearly():
    a = torch.randn(8, 8, requires_grad=True)
    with pytest.raises(ValueError, match="out="):
        K.best_matmul(a, torch.randn(8, 8), out=torch.empty(8, 8))
    with pytest.raises(ValueError, match="inner dimensions"):
        K.best_matmul(a, torch.randn(7, 8))
    with pytest.raises(ValueError, match="tune_for"):
        K.best_matmul(a, torch.randn(8, 8), tune_for="fast")


# ------------------------------------------------------------------------------------------- candidates
def test_candidate_lists_follow_the_shape():
    st = lambda M, N, Kd: (Kd, 1, N, 1, N, 1)  # noqa: E731
    narrow = best_tune.candidates(3000, 20, 2400, st(3000, 20, 2400), "sm_90", small=True, tma_ok=True)
    kinds = {k for k, _ in narrow}
    assert {"hinted", "tma", "splitk"} <= kinds and "tutorial03" not in kinds
    assert all(c in [c for k, c in narrow if k == "hinted"] for c in best_tune.NARROW_N)
    assert not any(c in [c for k, c in narrow if k == "hinted"] for c in best_tune.NARROW_M)
    large = best_tune.candidates(6500, 1850, 1430, st(6500, 1850, 1430), "sm_90", small=False, tma_ok=True,
                                 large=True)
    assert [c for k, c in large if k == "tma"] == best_tune.LARGE_TMA
    assert [c for k, c in large if k == "hinted"] == best_tune.LARGE_HINTED   # unaligned: hinted timed too
    large_al = best_tune.candidates(4096, 4096, 64, st(4096, 4096, 64), "sm_90", small=False, tma_ok=True, large=True)
    assert best_tune.SHORT_K_TMA in [c for k, c in large_al if k == "tma"]
    assert [c for k, c in large_al if k == "hinted"] == best_tune.SHORT_K_HINTED   # aligned: only whole-K tiles
    assert best_tune.splitk_configs(4096, 4096, 4096) == []                 # enough tiles already
    sk = best_tune.splitk_configs(64, 16, 8192)
    assert sk and all(c["BLOCK_N"] == 32 and 2 <= c["split_k"] <= 128 for c in sk)
    # a skinny side up to 64 whose narrow tiles already fill half the SMs: 128x128 tiles split, and one
    # tile across the skinny side (32 or 64) by 64, split to about four programs an SM
    for (M, N, Kd), tile in (((6065, 38, 3983), (64, 64)), ((5324, 30, 3983), (64, 32)),
                             ((60, 5875, 5474), (64, 64))):
        skinny = best_tune.splitk_configs(M, N, Kd, sms=132)
        assert [(c["BLOCK_M"], c["BLOCK_N"]) for c in skinny] == [(128, 128), tile]
        programs = -(-M // tile[0]) * -(-N // tile[1]) * skinny[1]["split_k"]
        assert 2 <= skinny[1]["split_k"] and programs <= 4 * 132
    # a skinny side from 65 to 128: the 128x128 split only (a 128-wide tile by 64 ran slower on the H100)
    for M, N, Kd in ((95, 5875, 5474), (5324, 96, 3983), (127, 4096, 4096)):
        assert [(c["BLOCK_M"], c["BLOCK_N"]) for c in best_tune.splitk_configs(M, N, Kd, sms=132)] == [(128, 128)]


def _tune_pinning(monkeypatch, M, N, Kd, winner, a_t=False, b_t=False, c_t=False, activation=""):
    """Run a plan's tuner in the interpreter with a timer that ranks ``winner(plan)`` first; check the
    tuned result and a repeat call on poisoned views."""
    plan = None

    def fake_time(fn):
        fn()
        return 0.5 if winner(plan) else 2.0

    monkeypatch.setattr(best_tune, "graph_time_ms", fake_time)
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    gen = torch.Generator().manual_seed(M + N + Kd)
    a0, b0 = torch.randn(M, Kd, generator=gen).half(), torch.randn(Kd, N, generator=gen).half()
    ref = K.reference_matmul(a0, b0, activation or None)
    plan = best._Plan(best.explain(M, N, Kd, torch.float16, arch="sm_90"), M, N, Kd, activation)
    for _ in range(2):  # tuning run, then the pinned run
        a, _, _ = poisoned_view((M, Kd), torch.float16, "cpu", transposed=a_t, values=a0)
        b, _, _ = poisoned_view((Kd, N), torch.float16, "cpu", transposed=b_t, values=b0)
        c, buf, mask = poisoned_view((M, N), torch.float16, "cpu", transposed=c_t)
        plan.run(a, b, c)
        K.assert_close(c, ref)
        assert margins_intact(buf, mask)
    return plan


@pytest.mark.parametrize("shape, layout", [((45, 37, 29), (False, False, False)), ((33, 50, 70), (True, False, True))])
def test_tma_on_padded_copies_of_unaligned_operands(monkeypatch, shape, layout):
    plan = _tune_pinning(monkeypatch, *shape, lambda p: p.kernel.kind == "tma" and p.kernel.cfg["BLOCK_M"] == 128,
                         *layout)
    assert plan.tuned[0] == "tma" and plan.kernel.cfg is plan.tuned[1]


@pytest.mark.parametrize("shape", [(40, 20, 700), (17, 9, 900)])
def test_splitk_candidate_can_be_pinned(monkeypatch, shape):
    plan = _tune_pinning(monkeypatch, *shape, lambda p: p.kernel.kind == "splitk" and p.kernel.splits > 2,
                         activation="leaky_relu")
    assert plan.tuned[0] == "splitk" and plan.kernel.splits > 2


# ------------------------------------------------------------------------------------------- random bench
def test_random_shapes_are_reproducible_and_meet_the_quotas():
    for seed in (R.DEFAULT_SEED, 0, 7):
        shapes = R.draw_shapes(seed)
        assert shapes == R.draw_shapes(seed) and len(shapes) == 40
        assert all(R.LO <= d <= R.HI for s in shapes for d in s)
        assert sum(any(d % 16 for d in s) for s in shapes) >= len(shapes) / 3
        assert sum(min(s) <= 128 for s in shapes) >= len(shapes) / 4
    assert R.draw_shapes(1) != R.draw_shapes(2)
    jobs = R.jobs_for(5, n=40, n_bf16=10)
    assert len(jobs) == 50 and sum(d == "bf16" for _, _, d in jobs) == 10


@pytest.mark.parametrize("kwargs, exc", [(dict(seed=1.5), TypeError), (dict(n=0), ValueError),
                                         (dict(hi=100), ValueError), (dict(n=True), TypeError)])
def test_random_shapes_bad_input(kwargs, exc):
    with pytest.raises(exc):
        R.draw_shapes(**kwargs)


def test_shape_classes():
    assert R.shape_class(5000, 20, 4000).startswith("skinny")
    assert R.shape_class(4096, 4096, 64).startswith("short K")
    assert R.shape_class(6500, 1850, 1430).startswith("unaligned")
    assert R.shape_class(512, 512, 512).startswith("aligned, small")
    assert R.shape_class(4096, 4096, 4096) == "aligned, large"


def test_summary_medians_per_class_and_host_ratio():
    pd = pytest.importorskip("pandas")
    rows = []
    for i, (M, N, Kd) in enumerate([(4096, 4096, 4096), (5000, 20, 4000), (6000, 20, 300)]):
        rows.append(dict(gpu="G", torch="t", triton="tr", date="d", seed=9, M=M, N=N, K=Kd, dtype="fp16",
                         shape_class=R.shape_class(M, N, Kd), graph_ratio_to_best_peer=[1.2, 0.8, 1.0][i],
                         graph_ratio_to_torch=1.0, graph_ratio_to_inductor=1.0, eager_ratio_to_torch=1.0,
                         eager_ratio_to_best_peer=1.0, first_call_s=[0.5, 2.0, 3.0][i], inductor_first_call_s=8.0))
    host = [dict(call="torch.matmul", host_us=10.0), dict(call="best_matmul", host_us=12.0),
            dict(call="torch.matmul", host_us=11.0), dict(call="best_matmul", host_us=13.0)]
    s = R.summary(pd.DataFrame(rows), host)
    peer = s[(s.metric == "graph_ratio_to_best_peer") & (s.shape_class == "all")].iloc[0]
    assert (peer["min"], peer["median"], peer["max"], peer["below_1"], peer["shapes"]) == (0.8, 1.0, 1.2, 1, 3)
    skinny = s[(s.metric == "first_call_s") & s.shape_class.str.startswith("skinny")].iloc[0]
    assert skinny["median"] == 2.5 and skinny["shapes"] == 2
    assert s[s.metric == "host_ratio_best_to_torch"]["median"].iloc[0] == pytest.approx(12.5 / 10.5)
    assert (s.seed == 9).all() and R.summary(pd.DataFrame()).empty


def test_plot_writes_a_png(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    df = pd.DataFrame([dict(gpu="G", torch="t", triton="tr", date="d", seed=1, M=M, N=N, K=Kd, dtype=dt,
                            shape_class=R.shape_class(M, N, Kd), graph_ratio_to_best_peer=r, graph_ratio_to_torch=r)
                       for (M, N, Kd), dt, r in [((64, 64, 64), "fp16", 0.9), ((5000, 20, 300), "bf16", 1.2)]])
    path = R.plot(df, str(tmp_path / "r.png"))
    assert (tmp_path / "r.png").stat().st_size > 1000 and path.endswith("r.png")


# ------------------------------------------------------------------------------------------- plans on disk
def test_tuned_plan_persists_on_disk_and_skips_timing(monkeypatch, tmp_path):
    from gemm_lab.kernels import best_store

    timed = []

    def fake_time(fn):
        fn()
        timed.append(1)
        return 0.5 if len(timed) == 2 else 2.0

    monkeypatch.setenv("GEMM_LAB_PLAN_DIR", str(tmp_path))
    monkeypatch.setattr(best_tune, "graph_time_ms", fake_time)
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    a, b = torch.randn(37, 29).half(), torch.randn(29, 21).half()
    best.clear_plans()
    K.assert_close(K.best_matmul(a, b), K.reference_matmul(a, b))  # first call: the heuristic, no timing
    assert timed == [] and not (tmp_path / best_store.FILE).exists()
    K.assert_close(K.best_matmul(a, b), K.reference_matmul(a, b))  # the next call times (deferred)
    n_timed = len(timed)
    first = best._PLANS[best._key(a, b, None, None)].tuned
    assert n_timed > 2 and (tmp_path / best_store.FILE).exists()
    best.clear_plans()  # a "second process": no plan in memory, the file on disk
    K.assert_close(K.best_matmul(a, b), K.reference_matmul(a, b))
    again = best._PLANS[best._key(a, b, None, None)].tuned
    assert len(timed) == n_timed and again[:2] == first[:2] and again[2] != again[2]  # nothing timed, ms NaN
    (tmp_path / best_store.FILE).write_text("{not json")  # a broken file reads as empty: tuned again
    best.clear_plans()
    K.best_matmul(a, b)
    K.best_matmul(a, b)
    assert len(timed) == 2 * n_timed
    best.clear_plans()


def test_plan_store_off_foreign_and_unwritable(monkeypatch, tmp_path):
    from gemm_lab.kernels import best_store

    monkeypatch.setenv("GEMM_LAB_PLAN_DIR", "off")
    assert best_store.store_dir() is None and best_store.load(("k",)) is None and not best_store.save(("k",), "x", {})
    monkeypatch.delenv("GEMM_LAB_PLAN_DIR")
    assert best_store.store_dir() is None  # interpreter, no folder named: off, nothing written to $HOME
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("GEMM_LAB_PLAN_DIR", str(blocker / "sub"))  # a folder under a file cannot be made
    assert best_store.save(("k",), "hinted", {"a": 1}) is False
    monkeypatch.setenv("GEMM_LAB_PLAN_DIR", str(tmp_path))
    assert best_store.save(("k", 1), "hinted", {"a": 1}) and best_store.load(("k", 1)) == ("hinted", {"a": 1})
    monkeypatch.setattr(best_store, "section", lambda: "another GPU|sms=1|torch=x|triton=y")
    assert best_store.load(("k", 1)) is None
