"""Vector add (Tutorial 01) in the interpreter."""

import pytest
import torch

from gemm_lab import kernels as K
from gemm_lab import runtime

DEV = runtime.device()


@pytest.mark.parametrize("n", [1, 98_432 // 64, 1000, 4097])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
def test_vector_add(n, dtype):
    x = (torch.randn(n) * 100).to(dtype).to(DEV)
    y = (torch.randn(n) * 100).to(dtype).to(DEV)
    assert torch.equal(K.vector_add(x, y), x + y)


def test_bf16_exact_on_gpu_refused_in_interpreter():
    x = torch.randn(777).to(torch.bfloat16).to(DEV)
    y = torch.randn(777).to(torch.bfloat16).to(DEV)
    if runtime.INTERPRET:
        with pytest.raises(TypeError, match="interpreter"):
            K.vector_add(x, y)
    else:
        assert torch.equal(K.vector_add(x, y), x + y)


def test_strided_views_and_out_with_poisoned_margins():
    buf = torch.full((3000,), float("nan"), device=DEV)
    x = torch.randn(2000, device=DEV)[::2]
    y = torch.randn(3000, device=DEV)[::3]
    out = buf[5:5 + 2 * 1000:2]
    K.vector_add(x, y, out=out, BLOCK_SIZE=64)
    assert torch.equal(out, x + y)
    untouched = torch.ones(3000, dtype=torch.bool)
    untouched[5:2005:2] = False
    assert torch.isnan(buf[untouched.to(DEV)]).all()


def test_contiguous_nd():
    x = torch.randn(5, 7, 3, device=DEV)
    y = torch.randn(5, 7, 3, device=DEV)
    assert torch.equal(K.vector_add(x, y), x + y)


def test_bad_input():
    x = torch.randn(10, device=DEV)
    with pytest.raises(ValueError, match="same shape"):
        K.vector_add(x, torch.randn(11, device=DEV))
    with pytest.raises(TypeError, match="same dtype"):
        K.vector_add(x, x.half())
    with pytest.raises(TypeError, match="torch.Tensor"):
        K.vector_add(x, [1.0] * 10)
    with pytest.raises(TypeError, match="bool"):
        K.vector_add(x > 0, x > 0)
    with pytest.raises(ValueError, match="non-contiguous"):
        m = torch.randn(4, 6, device=DEV)
        K.vector_add(m.t(), m.t())
    with pytest.raises(ValueError, match="overlaps"):
        K.vector_add(x, x.clone(), out=x)
    with pytest.raises(ValueError, match="power of two"):
        K.vector_add(x, x.clone(), BLOCK_SIZE=100)
    with pytest.raises(ValueError, match="shape"):
        K.vector_add(x, x.clone(), out=torch.empty(5, device=DEV))
