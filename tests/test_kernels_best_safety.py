"""best_matmul never writes a wrong byte, in the CPU interpreter (the GPU paths with ``current_arch`` set to
sm_90 and a stand-in timer): where a descriptor store may go (a row's 16-byte chunks, not only its stride),
plans shared by any tensors of one key, tuning that checks every candidate against the reference and
changes no input, settings refused when a plan is made, candidates that fit the shared memory."""

import itertools

import pytest
import torch

import gemm_lab.kernels as K
from gemm_lab.kernels import best, best_kernels, best_tune
from gemm_lab.kernels.persistent_tma import _descriptor_ok, _store_ok


@pytest.fixture
def gpu_paths(monkeypatch, tmp_path):
    """sm_90 rules in the interpreter, a stand-in timer (the last candidate timed wins, so that the pick is
    not the one pinned first), no plan store."""
    timed = []

    def fake_time(fn):
        fn()
        timed.append(1)
        return 10.0 - 0.1 * len(timed)

    monkeypatch.setattr(best_tune, "graph_time_ms", fake_time)
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    monkeypatch.setenv("GEMM_LAB_PLAN_DIR", str(tmp_path))
    for var in ("GEMM_LAB_TUNE", "GEMM_LAB_TUNE_BUDGET_S"):
        monkeypatch.delenv(var, raising=False)
    best.clear_plans()
    yield timed
    best.clear_plans()


def _column_view(rows: int, cols: int, *, stride: int, offset: int = 0, dtype=torch.float16, fill=float("nan")):
    """buf[:, offset:offset + cols] of a (rows, stride) buffer filled with ``fill``: (view, buffer)."""
    buf = torch.full((rows, stride), fill, dtype=dtype)
    return buf[:, offset:offset + cols], buf


# ------------------------------------------------------------------------------------------- descriptor extent
@pytest.mark.parametrize("cols, stride, offset, dtype, load, store", [
    (2999, 3000, 0, torch.float16, True, False),   # aligned stride, 5998-byte rows: the last chunk crosses
    (2999, 3008, 0, torch.float16, True, False),
    (3000, 3008, 0, torch.float16, True, True),    # 6000-byte rows: whole chunks
    (24, 40, 8, torch.float16, True, True),        # offset 16 bytes: aligned base
    (24, 40, 3, torch.float16, False, False),      # offset 6 bytes: no descriptor at all
    (21, 24, 0, torch.float32, True, False),       # 84-byte rows
    (20, 24, 0, torch.float32, True, True),
    (17, 17, 0, torch.float16, False, False),      # 34-byte row stride
])
def test_store_needs_whole_16_byte_chunks(cols, stride, offset, dtype, load, store):
    view, _ = _column_view(5, cols, stride=stride, offset=offset, dtype=dtype)
    assert _descriptor_ok(view) is load and _store_ok(view) is store
    # an output of our own (best_matmul's row-padded new output) may take the chunk past its last column
    assert best_kernels.out_ok(view, owns_out=True) is load
    assert best_kernels.out_ok(view, owns_out=False) is store
    assert not _store_ok(view.t()) and not best_kernels.out_ok(view.t(), owns_out=True)


@pytest.mark.parametrize("kind", ["tma", "dtma"])
def test_tma_kinds_never_store_into_a_callers_partial_chunk(monkeypatch, kind):
    """out = buf[:, :N] with a 16-byte row stride but N*2 % 16 != 0: the TMA kinds compute into a padded
    buffer of their own and copy N columns back; the caller's columns past N keep their NaN."""
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    M, N, Kd = 40, 21, 48
    gen = torch.Generator().manual_seed(5)
    a, b = torch.randn(M, Kd, generator=gen).half(), torch.randn(Kd, N, generator=gen).half()
    out, buf = _column_view(M, N, stride=32)
    plan = best._Plan(best.explain(M, N, Kd, torch.float16, arch="sm_90"), M, N, Kd, "")
    cand = next(c for c in plan._candidates(a, b, out) if c[0] == kind)
    plan._pin(cand, a, b, out)
    assert plan.kernel.modes[2] is False
    plan.go(a, b, out)
    K.assert_close(out, K.reference_matmul(a, b))
    assert torch.isnan(buf[:, N:]).all()
    # the plan's own padded output: stored into directly
    own = best._Plan(plan.choice, M, N, Kd, "", out_cols=24, owns_out=True)
    c = own.new_out(a)
    own._pin(cand, a, b, c)
    assert own.kernel.modes[2] is True
    own.go(a, b, c)
    K.assert_close(c, K.reference_matmul(a, b))


# ------------------------------------------------------------------------------------------- plan keys
def _layout(t0: torch.Tensor, layout: str, pad_value=float("nan")) -> torch.Tensor:
    """``t0``'s values in a new tensor of layout: contiguous, transposed (column-major), strided (every
    other column of a wider buffer) or colslice (the first columns of a 16-byte-aligned wider buffer)."""
    r, c = t0.shape
    if layout == "contiguous":
        t = t0.clone()
    elif layout == "transposed":
        t = t0.t().contiguous().t()
    elif layout == "strided":
        t = torch.full((r, 2 * c), pad_value, dtype=t0.dtype)[:, ::2]
        t.copy_(t0)
    else:
        t = torch.full((r, (c + 15) // 8 * 8 + 8), pad_value, dtype=t0.dtype)[:, :c]
        t.copy_(t0)
    return t


LAYOUTS = ("contiguous", "transposed", "strided", "colslice")


@pytest.mark.parametrize("shape", [(23, 40, 61), (64, 32, 64)])
@pytest.mark.parametrize("a_layout, b_layout", [("strided", "contiguous"), ("transposed", "colslice"),
                                                ("colslice", "transposed"), ("contiguous", "contiguous")])
def test_a_plan_is_right_for_every_tensor_pair_of_its_key(gpu_paths, shape, a_layout, b_layout):
    """Plan made by a plain call on one pair, tuned on a second, run on a third: every pair fresh, of the
    same key, each result right; tuning leaves its inputs as they were."""
    M, N, Kd = shape
    pairs = []
    for seed in range(3):
        gen = torch.Generator().manual_seed(seed * 100 + M)
        a0, b0 = torch.randn(M, Kd, generator=gen).half(), torch.randn(Kd, N, generator=gen).half()
        pairs.append((a0, b0, _layout(a0, a_layout), _layout(b0, b_layout)))
    keys = {best._key(a, b, None, None) for _, _, a, b in pairs}
    assert len(keys) == 1
    (a0, b0, a, b), (a20, b20, a2, b2), (a30, b30, a3, b3) = pairs
    K.assert_close(K.best_matmul(a, b), K.reference_matmul(a0, b0))
    before = (a2.clone(), b2.clone())
    report = K.best_matmul.tune(a2, b2)
    assert report["source"] == "tuned" and report["wrong"] == [] and report["timed"] > 1
    assert torch.equal(a2, before[0]) and torch.equal(b2, before[1])
    K.assert_close(K.best_matmul(a2, b2), K.reference_matmul(a20, b20))
    K.assert_close(K.best_matmul(a3, b3), K.reference_matmul(a30, b30))


def test_plan_keys_tell_layouts_apart():
    a0, b0 = torch.randn(24, 40).half(), torch.randn(40, 16).half()
    keys = {best._key(_layout(a0, la), _layout(b0, lb), None, None) for la, lb in itertools.product(LAYOUTS, LAYOUTS)}
    assert len(keys) == len(LAYOUTS) ** 2
    out = torch.empty(24, 16).half()
    assert best._key(a0, b0, out, None) != best._key(a0, b0, None, None)  # a caller's out: another plan
    col, _ = _column_view(24, 16, stride=24)
    assert best._key(a0, b0, col, None) != best._key(a0, b0, out, None)


# ------------------------------------------------------------------------------------------- checked plans
def _broken(kind, how):
    """A stand-in for ``kind`` that runs the real kernel and then spoils its result."""
    real = best_kernels.KERNELS[kind]

    class Broken(real):
        def __call__(self, a, b, out):
            super().__call__(a, b, out)
            if how == "nan":
                out[0, 0] = float("nan")
            elif how == "skip":
                out[-1, -1] = float("nan")  # stands for an element the kernel never wrote (out is poisoned)
            else:
                out.mul_(-1)

    return Broken


@pytest.mark.parametrize("how", ["nan", "skip", "negate"])
def test_tuning_leaves_out_candidates_that_give_wrong_results(gpu_paths, monkeypatch, how):
    monkeypatch.setitem(best_kernels.KERNELS, "hinted", _broken("hinted", how))
    a, b = torch.randn(37, 29).half(), torch.randn(29, 45).half()
    with pytest.warns(RuntimeWarning, match="wrong result"):
        c = K.best_matmul(a, b)  # the rules pick a hinted config: checked, found wrong, the others timed
    K.assert_close(c, K.reference_matmul(a, b))
    plan = best._PLANS[best._key(a, b, None, None)]
    assert plan.source == "tuned" and plan.pinned[0] != "hinted" and plan.checked
    assert plan.report["wrong"] and all(k == "hinted" for k, _ in plan.report["wrong"])
    K.assert_close(K.best_matmul(a, b), K.reference_matmul(a, b))


def test_a_stored_pick_is_checked_before_it_is_final(gpu_paths, monkeypatch):
    a, b = torch.randn(33, 20).half(), torch.randn(20, 44).half()
    report = K.best_matmul.tune(a, b)
    best.clear_plans()
    monkeypatch.setitem(best_kernels.KERNELS, report["picked"][0], _broken(report["picked"][0], "negate"))
    with pytest.warns(RuntimeWarning) as caught:
        c = K.best_matmul(a, b)  # the stored pick, wrong here: refused, the candidates timed
    said = " ".join(str(w.message) for w in caught)
    assert "first pick" in said and "left out" in said
    K.assert_close(c, K.reference_matmul(a, b))
    assert best._PLANS[best._key(a, b, None, None)].source == "tuned"


def test_policy_off_pins_only_after_the_check(gpu_paths, monkeypatch):
    monkeypatch.setenv("GEMM_LAB_TUNE", "off")
    a, b = torch.randn(16, 24).half(), torch.randn(24, 40).half()
    K.best_matmul(a, b)
    plan = best._PLANS[best._key(a, b, None, None)]
    assert plan.checked and plan.fast is plan.go and gpu_paths == []


def test_capture_runs_the_pick_unchecked_and_the_next_call_checks(gpu_paths, monkeypatch):
    monkeypatch.setenv("GEMM_LAB_TUNE", "off")
    monkeypatch.setattr(best, "_capturing", lambda t: True)
    a, b = torch.randn(16, 24).half(), torch.randn(24, 40).half()
    K.assert_close(K.best_matmul(a, b), K.reference_matmul(a, b))
    plan = best._PLANS[best._key(a, b, None, None)]
    assert not plan.checked and plan.fast is None
    monkeypatch.setattr(best, "_capturing", lambda t: False)
    K.best_matmul(a, b)
    assert plan.checked and plan.fast is plan.go


def test_agreement_rule():
    ref = torch.randn(30, 20) * 10
    assert best._agrees(ref.half(), ref) and best._agrees(ref.bfloat16(), ref)
    bad = ref.half()
    bad[3, 4] = float("nan")
    assert not best._agrees(bad, ref)
    bad = ref.half()
    bad[7, 1] += 0.2 * ref.abs().max()
    assert not best._agrees(bad, ref)
    assert not best._agrees(torch.zeros_like(ref).half(), ref)
    big = ref.clone()
    big[0, 0], big[1, 1] = float("inf"), 1e6  # not judged: no finite reference / beyond fp16
    out = big.half()
    out[1, 1] = 0
    assert best._agrees(out, big)
    assert best._agrees(torch.zeros(4, 4).half(), torch.zeros(4, 4))


# ------------------------------------------------------------------------------------------- shared memory
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("shape", [(4096, 4096, 64), (3000, 900, 100), (1024, 1024, 1024), (20, 3000, 700),
                                   (2000, 1500, 64), (6000, 6000, 4096)])
def test_no_candidate_and_no_first_pick_exceeds_the_shared_memory(shape, dtype):
    M, N, Kd = shape
    es = torch.tensor([], dtype=dtype).element_size()
    ch = best.explain(M, N, Kd, dtype, arch="sm_90")
    st = (Kd, 1, N, 1, N, 1)
    cands = best_tune.candidates(M, N, Kd, st, "sm_90", M * N <= best.SMALL_MN, dtype != torch.float32,
                                 large=ch.kernel == "tma_persistent", elem_size=es)
    assert cands and all(best_tune.smem_bytes(k, c, es) <= best_tune.SMEM_LIMIT for k, c in cands)
    kind, cfg = best_tune.heuristic(cands, M, N, Kd)
    assert best_tune.smem_bytes(kind, cfg, es) <= best_tune.SMEM_LIMIT
    if dtype == torch.float32 and Kd <= 128:  # 128x128x128 at 2 stages: 262,144 B of fp32 tiles
        assert ("hinted", best_tune.SHORT_K_HINTED[0]) not in cands


def test_smem_rule_matches_measured_kernels():
    # sm_90, fp16 (calc.smem.MEASURED_SHARED and the TMA kernel's OutOfResources report)
    assert best_tune.smem_bytes("hinted", dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64,
                                               num_stages=3)) == 147456
    assert best_tune.smem_bytes("tma", best_tune._tma(128, 256, 64, 4, 8)) == 229376  # 262,176 B unsplit


def test_tune_of_a_plan_timed_before_still_writes_out(gpu_paths, monkeypatch):
    monkeypatch.setenv("GEMM_LAB_TUNE", "first")
    a, b = torch.randn(20, 12).half(), torch.randn(12, 30).half()
    K.best_matmul(a, b, out=torch.empty(20, 30).half())  # tuned at once
    a2, b2 = torch.randn(20, 12).half(), torch.randn(12, 30).half()
    out = torch.full((20, 30), float("nan")).half()
    n = len(gpu_paths)
    assert K.best_matmul.tune(a2, b2, out=out)["source"] == "tuned" and len(gpu_paths) == n
    K.assert_close(out, K.reference_matmul(a2, b2))
