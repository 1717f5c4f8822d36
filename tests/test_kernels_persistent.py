"""Persistent matmul variants (naive, grouped, tensor-descriptor) and the blog's naive tiled kernel,
in the interpreter with a forced small number of SMs."""

import pytest
import torch

from gemm_lab import kernels as K
from gemm_lab import runtime
from gemm_lab.kernels.check import margins_intact, poisoned_view
from gemm_lab.kernels.persistent import INTERPRETER_NUM_SMS, num_programs

DEV = runtime.device()
SMALL = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16)


def _inputs(M, N, Kd, dtype=torch.float16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(M, Kd, generator=g).to(dtype).to(DEV), torch.randn(Kd, N, generator=g).to(dtype).to(DEV))


def test_naive_tiled_blog_kernel():
    a, b = _inputs(100, 90, 70, seed=1)
    K.assert_close_fp16(K.naive_tiled_matmul(a, b, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16), K.reference_matmul(a, b))


@pytest.mark.parametrize("variant", ["naive", "grouped", "tma"])
@pytest.mark.parametrize("num_sms,programs_per_sm", [(1, 1), (3, 1), (2, 2), (64, 4)])
def test_persistent_variants(variant, num_sms, programs_per_sm):
    a, b = _inputs(100, 75, 50, seed=num_sms + programs_per_sm)
    c, cbuf, cmask = poisoned_view((100, 75), torch.float16, DEV)
    K.persistent_matmul(a, b, variant=variant, num_sms=num_sms, programs_per_sm=programs_per_sm, out=c, **SMALL)
    K.assert_close_fp16(c, K.reference_matmul(a, b))
    assert margins_intact(cbuf, cmask)


@pytest.mark.parametrize("variant", ["naive", "grouped", "tma"])
def test_persistent_transposed_inputs_and_output(variant):
    M, N, Kd = 70, 50, 40
    a0, b0 = _inputs(M, N, Kd, seed=4)
    a, abuf, amask = poisoned_view((M, Kd), torch.float16, DEV, transposed=True, values=a0)
    b, bbuf, bmask = poisoned_view((Kd, N), torch.float16, DEV, transposed=True, values=b0)
    c, cbuf, cmask = poisoned_view((M, N), torch.float16, DEV, transposed=True)
    K.persistent_matmul(a, b, variant=variant, num_sms=3, out=c, **SMALL)
    K.assert_close_fp16(c, K.reference_matmul(a0, b0))
    assert margins_intact(cbuf, cmask) and margins_intact(abuf, amask) and margins_intact(bbuf, bmask)


@pytest.mark.parametrize("variant", ["grouped", "tma"])
def test_persistent_epilogue_and_fp32(variant):
    a, b = _inputs(60, 64, 48, seed=8)
    c = K.persistent_matmul(a, b, variant=variant, num_sms=2, activation="leaky_relu", **SMALL)
    K.assert_close_fp16(c, K.reference_matmul(a, b, "leaky_relu"))
    a32, b32 = a.float(), b.float()
    c32 = K.persistent_matmul(a32, b32, variant=variant, num_sms=2, **SMALL)
    assert K.relative_error(c32, K.reference_matmul(a32, b32)) < (1e-6 if runtime.INTERPRET else 2e-3)


def test_grouped_order_and_flatten_do_not_change_result():
    a, b = _inputs(96, 80, 32, seed=12)
    ref = K.persistent_matmul(a, b, variant="grouped", GROUP_M=1, num_sms=3, **SMALL)
    for g, flat in ((2, False), (8, True)):
        got = K.persistent_matmul(a, b, variant="grouped", GROUP_M=g, flatten=flat, num_sms=3, **SMALL)
        assert torch.equal(got, ref)


def test_tma_unaligned_rows_are_staged():
    # fp16 K = 30 -> 60-byte rows: not a valid descriptor stride, the launcher copies into a padded buffer
    a, b = _inputs(40, 36, 30, seed=3)
    for subtile in (True, False):
        c, cbuf, cmask = poisoned_view((40, 36), torch.float16, DEV)
        K.persistent_matmul(a, b, variant="tma", num_sms=2, out=c, epilogue_subtile=subtile, **SMALL)
        K.assert_close_fp16(c, K.reference_matmul(a, b))
        assert margins_intact(cbuf, cmask)


def test_num_programs_is_the_blogs_grid():
    assert num_programs(4096, 4096, 128, 64, 1, num_sms=132) == 132
    assert num_programs(4096, 4096, 128, 64, 3, num_sms=132) == 396
    assert num_programs(100, 100, 64, 64, 4, num_sms=132) == 4  # never more programs than tiles
    if runtime.INTERPRET:
        assert num_programs(1024, 1024, 64, 64) == INTERPRETER_NUM_SMS


def test_persistent_bad_input():
    a, b = _inputs(16, 16, 16)
    with pytest.raises(ValueError, match="variant"):
        K.persistent_matmul(a, b, variant="stream-k")
    with pytest.raises(ValueError, match="programs_per_sm"):
        K.persistent_matmul(a, b, programs_per_sm=0)
    with pytest.raises(ValueError, match="num_sms"):
        K.persistent_matmul(a, b, num_sms=0)
    with pytest.raises(ValueError, match="activation"):
        K.persistent_matmul(a, b, variant="naive", activation="leaky_relu")
    with pytest.raises(TypeError, match="unexpected keyword"):
        K.persistent_matmul(a, b, variant="naive", epilogue_subtile=True)
    with pytest.raises(ValueError, match="inner dimensions"):
        K.persistent_matmul(a, b[:8], variant="tma")
    with pytest.raises(ValueError, match="256"):
        K.persistent_matmul(a, b, variant="tma", BLOCK_M=512)
    with pytest.raises(ValueError, match="inner dimensions"):
        K.naive_tiled_matmul(a, b[:3])
