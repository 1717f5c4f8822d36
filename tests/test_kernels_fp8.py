"""fp8 e4m3 matmul in the CPU interpreter (descriptors and fp8 values emulated): against the fp32/fp64
reference of the same fp8 values, odd shapes, both B layouts, scales, and bad input."""

import pytest
import torch

import gemm_lab.kernels as K
from gemm_lab.kernels.fp8 import fp8_matmul, reference_fp8_matmul

E4M3 = torch.float8_e4m3fn
SMALL = dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=32, num_warps=4)


def _fp8(*shape, seed=0, scale=2.0):
    return (torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale).to(E4M3)


@pytest.mark.parametrize("shape", [(32, 48, 64), (33, 40, 70), (5, 7, 16), (1, 1, 1)])
@pytest.mark.parametrize("k_major_b", [True, False])
def test_fp8_matches_reference(shape, k_major_b):
    M, N, Kd = shape
    a = _fp8(M, Kd, seed=1)
    bt = _fp8(N, Kd, seed=2)
    b = bt.t() if k_major_b else bt.t().contiguous()
    K.assert_close(fp8_matmul(a, b, **SMALL), reference_fp8_matmul(a, b))


def test_fp8_scales_fp32_output_and_poisoned_out():
    a, bt = _fp8(20, 48, seed=3), _fp8(24, 48, seed=4)
    ref = reference_fp8_matmul(a, bt.t(), 0.25, 3.0)
    K.assert_close(fp8_matmul(a, bt.t(), scale_a=0.25, scale_b=3.0, out_dtype=torch.float32, **SMALL), ref)
    out = torch.full((24, 20), float("nan"), dtype=torch.float16).t()   # column-major output view
    assert fp8_matmul(a, bt.t(), scale_a=0.25, scale_b=3.0, out=out, **SMALL) is out
    K.assert_close(out, ref)


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(a=torch.randn(4, 16)), TypeError, "a has dtype"),
    (dict(b=torch.randn(16, 4).half()), TypeError, "b has dtype"),
    (dict(scale_a=0.0), ValueError, "scale_a"), (dict(scale_b=float("nan")), ValueError, "scale_b"),
    (dict(scale_a=True), TypeError, "scale_a"), (dict(out_dtype=torch.int8), TypeError, "out_dtype"),
    (dict(out_dtype=torch.bfloat16), TypeError, "out_dtype"), (dict(BLOCK_K=0), ValueError, "BLOCK_K"),
    (dict(BLOCK_N=512), ValueError, "256"), (dict(b=_fp8(15, 4)), ValueError, "inner dimensions"),
])
def test_fp8_bad_input(kwargs, exc, word):
    args = dict(a=_fp8(4, 16), b=_fp8(16, 4))
    args.update(kwargs)
    with pytest.raises(exc, match=word):
        fp8_matmul(args.pop("a"), args.pop("b"), **args)


def test_fp8_empty_products():
    assert fp8_matmul(_fp8(0, 16), _fp8(16, 4)).shape == (0, 4)
    assert torch.equal(fp8_matmul(_fp8(3, 0), _fp8(0, 2)), torch.zeros(3, 2, dtype=torch.float16))
