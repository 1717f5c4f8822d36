"""The TMA kinds' padded operand copies (``best_pad``), in the CPU interpreter: the copy equals its source
in any layout, its rows start on ``ROW_ALIGN_BYTES`` boundaries (a descriptor takes it), one launch
copies one or both operands, the source is never written, and the TMA kinds on such operands are right."""

import pytest
import torch

import gemm_lab.kernels as K
from gemm_lab.kernels import best, best_kernels
from gemm_lab.kernels.best_pad import ROW_ALIGN_BYTES, PadCopies, padded_cols
from gemm_lab.kernels.check import layout_operand
from gemm_lab.kernels.persistent_tma import _descriptor_ok


@pytest.mark.parametrize("cols, es, want", [(1, 2, 64), (64, 2, 64), (65, 2, 128), (4023, 2, 4032),
                                            (1574, 2, 1600), (7, 4, 32), (33, 4, 64), (300, 1, 384)])
def test_padded_cols_rounds_rows_up_to_the_alignment(cols, es, want):
    assert padded_cols(cols, es) == want
    assert (padded_cols(cols, es) * es) % ROW_ALIGN_BYTES == 0 and padded_cols(cols, es) >= cols


@pytest.mark.parametrize("a_shape, b_shape", [((5, 7), (7, 9)), ((33, 301), (301, 3)), ((2, 513), (513, 130))])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed"])
@pytest.mark.parametrize("pad_a, pad_b", [(True, True), (True, False), (False, True), (False, False)])
def test_pad_copies_equal_their_sources_and_take_a_descriptor(a_shape, b_shape, layout, pad_a, pad_b):
    gen = torch.Generator().manual_seed(sum(a_shape) + sum(b_shape))
    a, b = layout_operand(*a_shape, layout, gen), layout_operand(*b_shape, "contiguous", gen)
    a0, b0 = a.clone(), b.clone()
    pads = PadCopies(a, b, pad_a, pad_b)
    for _ in range(2):  # the second call goes through the cached launch
        pa, pb = pads(a, b)
        for src, copy, padded, i in ((a, pa, pad_a, 0), (b, pb, pad_b, 1)):
            if not padded:
                assert copy is src
                continue
            assert copy.shape == src.shape and torch.equal(copy, src)
            assert copy.stride() == (padded_cols(src.shape[1], 2), 1) == (pads.stride(i, src), 1)
            assert _descriptor_ok(copy) and copy.data_ptr() != src.data_ptr()
            rows, pitch = copy.shape[0], copy.stride(0)
            assert (copy.as_strided((rows, pitch), (pitch, 1))[:, src.shape[1]:] == 0).all()  # zeroed padding
        assert torch.equal(a, a0) and torch.equal(b, b0)


@pytest.mark.parametrize("kind", ["tma", "dtma"])
@pytest.mark.parametrize("M, N, Kd", [(37, 21, 45), (64, 33, 17)])
def test_tma_kinds_on_padded_copies_are_right(monkeypatch, kind, M, N, Kd):
    """K and N odd: neither operand takes a descriptor, both go through one padded-copy launch."""
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    gen = torch.Generator().manual_seed(M * N + Kd)
    a, b = torch.randn(M, Kd, generator=gen).half(), torch.randn(Kd, N, generator=gen).half()
    plan = best._Plan(best.explain(M, N, Kd, torch.float16, arch="sm_90"), M, N, Kd, "", out_cols=(N + 7) // 8 * 8,
                      owns_out=True)
    _both_copied_and_right(plan, lambda c: c[0] == kind, a, b, plan.new_out(a))
    assert isinstance(plan.kernel, best_kernels.KERNELS[kind])


def _both_copied_and_right(plan, which, a, b, out):
    """Pin the first candidate ``which`` accepts: both operands go through one padded-copy launch, and two
    runs into a NaN-poisoned ``out`` give the product."""
    plan._pin(next(c for c in plan._candidates(a, b, out) if which(c)), a, b, out)
    assert plan.kernel.modes[:2] == (2, 2) and plan.kernel.pads.which == (0, 1)
    for _ in range(2):
        out.fill_(float("nan"))
        plan.go(a, b, out)
        K.assert_close(out, K.reference_matmul(a, b))


@pytest.mark.parametrize("strides, es, want", [
    ((2776, 1, 4040, 1, 4040, 1), 2, True),     # both rows 16-byte aligned, neither whole 128-byte lines
    ((3968, 1, 7744, 1, 7744, 1), 2, False),    # every row whole lines
    ((1, 2776, 4096, 1, 4096, 1), 2, True),     # A transposed: its rows are the other stride
    ((4023, 1, 4096, 1, 4096, 1), 2, False),    # A not 16-byte aligned: copied anyway, not "split"
    ((64, 2, 4040, 1, 4040, 1), 2, True),       # A neither row- nor column-major: B decides
    ((1000, 1, 64, 1, 64, 1), 4, True),         # fp32: 4000-byte rows
])
def test_lines_split_finds_aligned_rows_that_are_not_whole_lines(strides, es, want):
    from gemm_lab.kernels.best_tune import lines_split
    assert lines_split(strides, es) is want


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("cols", [72, 64, 77])
def test_load_mode_pads_only_operands_whose_rows_split_lines(layout, cols):
    """``pad``: an operand a descriptor takes (as it is, or transposed) is copied when its rows are not whole
    128-byte lines; one whose rows are whole lines keeps its mode; one a descriptor can't take is copied anyway."""
    t = layout_operand(40, cols, layout, torch.Generator().manual_seed(cols))
    plain = best_kernels._load_mode(t)
    row = (t.stride(0) if plain == 0 else t.stride(1)) * t.element_size()
    padded = best_kernels._load_mode(t, pad=True)
    if plain == 2:
        assert padded == 2
    else:
        assert padded == (2 if row % ROW_ALIGN_BYTES else plain)


def _sm90_large(monkeypatch, M, N, Kd, a, b):
    monkeypatch.setattr(best, "current_arch", lambda: "sm_90")
    monkeypatch.setattr(best, "TensorDescriptor", best_kernels.TensorDescriptor)
    choice = best._choice("tma_persistent", best.TMA_CONFIG, "large")
    plan = best._Plan(choice, M, N, Kd, "", owns_out=True)
    return plan, plan.new_out(a)


def test_large_candidates_list_padded_tma_only_when_rows_split_lines(monkeypatch):
    from gemm_lab.kernels.best_tune import LARGE_TMA, PAD_TMA
    for Kd, N, want in ((72, 40, True), (64, 64, False)):
        a, b = torch.empty(8, Kd, dtype=torch.float16), torch.empty(Kd, N, dtype=torch.float16)
        plan, out = _sm90_large(monkeypatch, 8, N, Kd, a, b)
        cands = plan._candidates(a, b, out)
        pads = [c for k, c in cands if k == "tma" and c.get("pad")]
        assert pads == (PAD_TMA if want else [])
        if want:  # timed third and fourth: within any budget that times the first two large configs
            assert [c for _, c in cands[:4]] == LARGE_TMA[:2] + PAD_TMA


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_tma_on_line_padded_copies_is_right(monkeypatch, layout):
    """K = 40 and N = 24 fp16 (80- and 48-byte rows: a descriptor takes them, 128-byte lines split): the pad
    configs copy both into 128-byte rows and compute the same product; the sources are never written."""
    M, N, Kd = 33, 24, 40
    gen = torch.Generator().manual_seed(7)
    a, b = layout_operand(M, Kd, layout, gen), layout_operand(Kd, N, "contiguous", gen)
    a0, b0 = a.clone(), b.clone()
    plan, out = _sm90_large(monkeypatch, M, N, Kd, a, b)
    _both_copied_and_right(plan, lambda c: c[0] == "tma" and c[1].get("pad"), a, b, out)
    assert torch.equal(a, a0) and torch.equal(b, b0)
