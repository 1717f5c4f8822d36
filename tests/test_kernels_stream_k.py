"""Stream-K on the TMA kernel (``stream_k``, the ``"streamk"`` kind), in the CPU interpreter: which tiles go
by K steps, the product in every layout with tiles split among one to four programs, nothing written
outside ``out``, the same bits on every run, and where the candidate lists time it."""

import pytest
import torch

import gemm_lab.kernels as K
from gemm_lab.kernels import best, best_kernels, best_tune
from gemm_lab.kernels._schedule import INTERPRETER_NUM_SMS
from gemm_lab.kernels.check import layout_operand, margins_intact, poisoned_view
from gemm_lab.kernels.stream_k import stream_k_tiles


@pytest.mark.parametrize("tiles, programs, k_tiles, want", [
    (960, 132, 44, 36 + 132),   # 7563x4040 in 128x256 tiles: the part-empty wave and one whole wave
    (200, 132, 66, 200),        # fewer than two waves: every tile
    (85, 132, 33, 85),          # fewer tiles than programs
    (264, 132, 10, 0),          # every wave full
    (5, 132, 10, 0),            # 50 K steps for 132 programs: ranges shorter than two steps
    (1, 4, 12, 1),
])
def test_stream_k_tiles(tiles, programs, k_tiles, want):
    assert stream_k_tiles(tiles, programs, k_tiles) == want


# (M, N, K, tile): 9 tiles on 4 programs (5 shared: one part-empty wave and one whole), one tile shared by
# all four programs, two tiles by two each, edge tiles with M, N, K off the block sizes
CASES = [(40, 70, 90, (16, 32, 16)), (10, 20, 190, (16, 32, 16)), (16, 64, 190, (16, 32, 16)),
         (37, 61, 200, (16, 32, 16)), (70, 40, 50, (32, 32, 16))]


@pytest.mark.parametrize("M, N, Kd, tile", CASES)
@pytest.mark.parametrize("a_layout, b_layout", [("contiguous", "contiguous"), ("transposed", "strided"),
                                                ("strided", "transposed")])
@pytest.mark.parametrize("act", ["", "leaky_relu"])
def test_stream_k_is_right_writes_only_out_and_repeats_its_bits(M, N, Kd, tile, a_layout, b_layout, act):
    gen = torch.Generator().manual_seed(M * 1000 + N + Kd)
    a, b = layout_operand(M, Kd, a_layout, gen), layout_operand(Kd, N, b_layout, gen)
    a0, b0 = a.clone(), b.clone()
    BM, BN, BK = tile
    cfg = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=2, num_stages=2, num_warps=4, flatten=False)
    out, buf, mask = poisoned_view((M, N), torch.float16, "cpu")  # any byte written beside it shows
    kern = best_kernels.StreamK(best_kernels.Spec(M, N, Kd, act), cfg, a, b, out)
    tiles = -(-M // BM) * -(-N // BN)
    assert kern.sk_tiles == stream_k_tiles(tiles, INTERPRETER_NUM_SMS, -(-Kd // BK)) > 0
    ref = K.reference_matmul(a, b, activation=act or None)
    results = []
    for _ in range(2):
        out.fill_(float("nan"))
        kern(a, b, out)
        K.assert_close(out, ref)
        results.append(out.clone())
    assert torch.equal(results[0], results[1])  # parts summed in program order, whoever arrives last
    assert margins_intact(buf, mask)
    assert torch.equal(a, a0) and torch.equal(b, b0)


def _large_plan(monkeypatch, M, N, Kd):
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    monkeypatch.setattr(best, "TensorDescriptor", best_kernels.TensorDescriptor)
    return best._Plan(best._choice("tma_persistent", best.TMA_CONFIG, "large"), M, N, Kd, "", owns_out=True)


def test_candidates_time_stream_k_second_where_the_last_wave_is_part_empty():
    """132 SMs: 7563x4040 in 128x256 tiles leaves the 8th wave 27 % full (its rows split 128-byte lines: the
    line-padded config is the one shared out); 1920x7744 (whole lines) 52 %; 4096^2 fills every wave; where
    every tile would be shared (fewer than two waves: 1002x6281, or any mid-size output such as 2124x1144)
    it is not listed."""
    def cands(M, N, Kd, large):
        return best_tune.candidates(M, N, Kd, (Kd, 1, N, 1, N, 1), "sm_90", False, True, large=large, sms=132)

    big = cands(7563, 4040, 2776, True)
    assert big[1] == ("streamk", best_tune.PAD_TMA[0])
    assert [k for k, _ in big].count("streamk") == 1
    plain = cands(1920, 7744, 3968, True)  # whole 128-byte lines: the config as it is
    assert plain[1] == ("streamk", best_tune.LARGE_TMA[0])
    for M, N, Kd, large in ((4096, 4096, 4096, True), (1002, 6281, 4185, True), (2124, 1144, 2071, False),
                            (5324, 320, 896, False)):
        assert not any(k == "streamk" for k, _ in cands(M, N, Kd, large)), (M, N, Kd)
    # no TMA at all (fp32 or before sm_90): no stream-K either
    assert not any(k == "streamk" for k, _ in best_tune.candidates(
        7563, 4040, 2776, (2776, 1, 4040, 1, 4040, 1), "sm_90", False, False, large=True, sms=132))


def test_stream_k_needs_the_shared_memory_of_the_tma_kernel():
    cfg = best_tune.LARGE_TMA[0]
    assert best_tune.smem_bytes("streamk", cfg) == best_tune.smem_bytes("tma", cfg) > 0


def test_plan_pins_stream_k_and_computes_the_product(monkeypatch):
    """Through a plan, as the tuner pins it (the candidate's 128x256 tile, 4 interpreter programs)."""
    M, N, Kd = 300, 260, 200
    plan = _large_plan(monkeypatch, M, N, Kd)
    gen = torch.Generator().manual_seed(3)
    a, b = torch.randn(M, Kd, generator=gen).half(), torch.randn(Kd, N, generator=gen).half()
    out = plan.new_out(a)
    cand = ("streamk", best_tune.LARGE_TMA[0])
    plan._pin(cand, a, b, out)
    assert isinstance(plan.kernel, best_kernels.StreamK) and plan.kernel.sk_tiles == 6
    out.fill_(float("nan"))
    plan.go(a, b, out)
    K.assert_close(out, K.reference_matmul(a, b))


@pytest.mark.parametrize("cfg", [best_tune.LARGE_TMA[0], best_tune.LARGE_TMA[1]],
                         ids=lambda c: f"{c['BLOCK_M']}x{c['BLOCK_N']}x{c['BLOCK_K']}s{c['num_stages']}")
def test_stream_k_compiles_for_sm90_in_the_shared_memory_the_rule_says(cfg):
    """Cross-compiled for sm_90 on this machine: its two loops (whole waves, shared tiles) reuse one set of
    pipeline buffers and one epilogue staging, so it needs what the TMA kernel needs (the rule
    ``smem_bytes``, plus a few bytes of barriers), within the H100/H200 limit."""
    from gemm_lab.compile import compile_jit
    from gemm_lab.kernels.stream_k import tma_stream_k_kernel

    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    sig = {"a_desc": f"tensordesc<fp16[{bm}, {bk}]>", "b_desc": f"tensordesc<fp16[{bk}, {bn}]>",
           "c_desc": f"tensordesc<fp16[{bm}, {bn // 2}]>", "ws_ptr": "*fp32", "count_ptr": "*i32",
           "M": "i32", "N": "i32", "K": "i32", "SK_TILES": "i32"}
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, NUM_PROGRAMS=132, A_TRANS=False, B_TRANS=False,
                  FLATTEN=cfg["flatten"], ACTIVATION="")
    art = compile_jit(tma_stream_k_kernel, sig, consts, "sm_90", num_warps=cfg["num_warps"],
                      num_stages=cfg["num_stages"], cache=False)
    rule = best_tune.smem_bytes("streamk", cfg)
    assert rule <= art.shared <= rule + 256 and art.shared <= best_tune.SMEM_LIMIT
    assert "atom.global" in art.ptx and "cp.async.bulk.tensor" in art.ptx  # the counters, and TMA loads
