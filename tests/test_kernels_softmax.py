"""Fused softmax (Tutorial 02) and the naive five-pass version, in the interpreter."""

import pytest
import torch

from gemm_lab import kernels as K
from gemm_lab import runtime
from gemm_lab.kernels.check import margins_intact, poisoned_view

DEV = runtime.device()


@pytest.mark.parametrize("shape", [(1, 1), (7, 10), (33, 100), (4, 781), (2, 1024)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_softmax_matches_torch(shape, dtype):
    x = (torch.randn(shape) * 5).to(dtype).to(DEV)
    y = K.softmax(x)
    assert y.dtype == dtype
    K.assert_close(y, torch.softmax(x.double(), dim=1), rel=1e-3 if dtype == torch.float16 else 1e-5)
    assert torch.allclose(y.double().sum(dim=1), torch.ones(shape[0], dtype=torch.float64, device=DEV), atol=1e-2)


def test_bf16_on_gpu_refused_in_interpreter():
    x = torch.randn(5, 50).to(torch.bfloat16).to(DEV)
    if runtime.INTERPRET:
        with pytest.raises(TypeError, match="interpreter"):
            K.softmax(x)
    else:
        K.assert_close(K.softmax(x), torch.softmax(x.double(), dim=1), rel=1e-2)


def test_any_row_stride_and_poisoned_output():
    big = torch.randn(20, 300, device=DEV)
    x = big[::2, 10:210]                      # row stride 600
    out, buf, mask = poisoned_view((10, 200), torch.float32, DEV)
    K.softmax(x, out=out)
    K.assert_close(out, torch.softmax(x.double(), dim=1), rel=1e-5)
    assert margins_intact(buf, mask)
    xt = torch.randn(50, 12, device=DEV).t()  # column stride 12 (transposed)
    K.assert_close(K.softmax(xt), torch.softmax(xt.double(), dim=1), rel=1e-5)


def test_padding_uses_minus_infinity():
    # rows of very negative numbers: padding with 0 instead of -inf would win the max and break the sum
    x = torch.full((3, 10), -1000.0, device=DEV) + torch.arange(10.0, device=DEV)
    K.assert_close(K.softmax(x), torch.softmax(x.double(), dim=1), rel=1e-5)


def test_naive_softmax():
    x = torch.randn(9, 33, device=DEV)
    assert torch.allclose(K.naive_softmax(x), torch.softmax(x, dim=1), atol=1e-6)


def test_bad_input():
    with pytest.raises(ValueError, match="2-D"):
        K.softmax(torch.randn(5, device=DEV))
    with pytest.raises(TypeError, match="int64"):
        K.softmax(torch.ones(2, 2, dtype=torch.int64, device=DEV))
    with pytest.raises(ValueError, match="0 columns"):
        K.softmax(torch.randn(3, 0, device=DEV))
    with pytest.raises(ValueError, match="fit"):
        K.softmax(torch.randn(1, 70_000, device=DEV))
    x = torch.randn(4, 4, device=DEV)
    with pytest.raises(ValueError, match="overlaps"):
        K.softmax(x, out=x)
    with pytest.raises(TypeError, match="dtype"):
        K.softmax(x, out=torch.empty(4, 4, dtype=torch.float16, device=DEV))
