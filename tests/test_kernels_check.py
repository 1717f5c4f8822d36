"""The tolerance helpers in gemm_lab.kernels.check."""

import pytest
import torch

from gemm_lab.kernels.check import (
    assert_close,
    assert_close_fp16,
    layout_operand,
    margins_intact,
    max_ulp_error,
    poisoned_view,
    relative_error,
)


def test_relative_error_basic():
    ref = torch.tensor([3.0, 4.0])
    assert relative_error(ref, ref) == 0.0
    assert relative_error(torch.tensor([3.0, 4.5]), ref) == pytest.approx(0.1)
    assert relative_error(torch.zeros(2), torch.zeros(2)) == 0.0
    with pytest.raises(ValueError):
        relative_error(torch.zeros(2), torch.zeros(3))


def test_two_ulp_fp16_difference_passes_but_fails_the_seeds_atol():
    # the facts: correct kernels differ from torch by up to 0.03125 at magnitudes 16..32 (2 ulp)
    ref = torch.full((4, 4), 20.0)
    out = (ref + 0.03125).half()
    assert not torch.allclose(out.float(), ref, atol=1e-2, rtol=0)
    assert max_ulp_error(out, ref) == pytest.approx(2.0)
    assert_close_fp16(out, ref)


def test_real_errors_are_caught():
    ref = torch.randn(256, 256) * 4
    out = ref.half().clone()
    out[3, 5] = ref[3, 5] + 16 * 2.0 ** (torch.floor(torch.log2(ref[3, 5].abs())) - 10)
    assert relative_error(out, ref) < 1e-3  # one wrong element hides in the norm...
    with pytest.raises(AssertionError, match="ulp"):  # ...but not from the element-wise check
        assert_close_fp16(out, ref)
    out = ref.half().clone()
    out[0, 0] = float("nan")
    with pytest.raises(AssertionError, match="non-finite"):
        assert_close(out, ref)
    with pytest.raises(AssertionError, match="relative error"):
        assert_close(ref * 1.01, ref)
    with pytest.raises(AssertionError, match="shape"):
        assert_close(ref[:3], ref)


def test_poisoned_view_helpers():
    view, buf, mask = poisoned_view((3, 4), torch.float32, "cpu", values=torch.ones(3, 4))
    assert view.shape == (3, 4) and torch.equal(view, torch.ones(3, 4))
    assert margins_intact(buf, mask)
    buf[0, 0] = 1.0
    assert not margins_intact(buf, mask)
    tview, tbuf, tmask = poisoned_view((3, 4), torch.float32, "cpu", transposed=True, fill=-7.0)
    assert tview.stride(0) == 1 and margins_intact(tbuf, tmask, fill=-7.0)


def test_layout_operand_layouts():
    same = [layout_operand(5, 7, lay, torch.Generator().manual_seed(1)) for lay in ("contiguous", "strided",
                                                                                      "transposed")]
    assert all(torch.equal(t, same[0]) for t in same)
    assert same[0].is_contiguous() and same[1].stride() == (14, 2) and same[2].stride() == (1, 5)
    with pytest.raises(ValueError, match="layout"):
        layout_operand(5, 7, "diagonal", torch.Generator())
