"""Tutorial-03 matmul launcher (and the autotuned one) in the interpreter: small shapes that are not
multiples of the tiles, transposed / strided inputs, outputs inside poisoned buffers, bad input."""

import pytest
import torch

from gemm_lab import kernels as K
from gemm_lab import runtime
from gemm_lab.kernels.check import margins_intact, poisoned_view

DEV = runtime.device()
SHAPES = [(100, 70, 50), (64, 64, 64), (33, 17, 65), (1, 1, 1), (16, 130, 40)]


def _inputs(M, N, Kd, dtype=torch.float16, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(M, Kd, generator=g).to(dtype).to(DEV)
    b = torch.randn(Kd, N, generator=g).to(dtype).to(DEV)
    return a, b


@pytest.mark.parametrize("M,N,Kd", SHAPES)
def test_matmul_fp16_matches_fp32_reference(M, N, Kd):
    a, b = _inputs(M, N, Kd, seed=M + N + Kd)
    c = K.matmul(a, b)
    assert c.dtype == torch.float16 and c.shape == (M, N)
    K.assert_close_fp16(c, K.reference_matmul(a, b))


@pytest.mark.parametrize("cfg", [dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16), dict(BLOCK_M=32, BLOCK_N=64, BLOCK_K=32),
                                 dict(BLOCK_M=128, BLOCK_N=32, BLOCK_K=64, GROUP_M=3)])
def test_matmul_tile_configs(cfg):
    a, b = _inputs(90, 75, 70, seed=3)
    K.assert_close_fp16(K.matmul(a, b, **cfg), K.reference_matmul(a, b))


def test_fp32_inputs_exact_in_interpreter():
    a, b = _inputs(50, 40, 30, torch.float32)
    c = K.matmul(a, b)
    assert c.dtype == torch.float32
    tol = 1e-6 if runtime.INTERPRET else 2e-3  # the interpreter's dot is exact fp32; GPUs use TF32
    assert K.relative_error(c, K.reference_matmul(a, b)) < tol


@pytest.mark.parametrize("a_t,b_t", [(True, False), (False, True), (True, True)])
def test_transposed_inputs_in_poisoned_buffers(a_t, b_t):
    M, N, Kd = 45, 70, 38
    a0, b0 = _inputs(M, N, Kd, seed=7)
    a, abuf, amask = poisoned_view((M, Kd), torch.float16, DEV, transposed=a_t, values=a0)
    b, bbuf, bmask = poisoned_view((Kd, N), torch.float16, DEV, transposed=b_t, values=b0)
    assert (a.stride(0) == 1) == a_t and (b.stride(0) == 1) == b_t
    c, cbuf, cmask = poisoned_view((M, N), torch.float16, DEV)
    K.matmul(a, b, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, out=c)
    K.assert_close_fp16(c, K.reference_matmul(a0, b0))  # a NaN read from a margin would show here
    assert margins_intact(cbuf, cmask), "the kernel wrote outside the output view"
    assert margins_intact(abuf, amask) and margins_intact(bbuf, bmask)


def test_strided_inputs_and_transposed_output():
    a_big, b_big = _inputs(60, 80, 90, seed=11)
    a = a_big[:, ::3]          # [60, 30], column stride 3
    b = b_big[::3, :][:, 1::2]  # [30, 40], row stride 240, column stride 2
    c, cbuf, cmask = poisoned_view((60, 40), torch.float16, DEV, transposed=True)
    K.matmul(a, b, BLOCK_M=32, BLOCK_N=16, BLOCK_K=16, out=c)
    K.assert_close_fp16(c, K.reference_matmul(a, b))
    assert margins_intact(cbuf, cmask)


def test_fp32_output_for_fp16_inputs():
    a, b = _inputs(40, 30, 20)
    out = torch.full((40, 30), float("nan"), dtype=torch.float32, device=DEV)
    K.matmul(a, b, out=out, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    assert K.relative_error(out, K.reference_matmul(a, b)) < 1e-6 if runtime.INTERPRET else 1e-3


def test_leaky_relu_epilogue():
    a, b = _inputs(70, 50, 40, seed=5)
    c = K.matmul(a, b, activation="leaky_relu", BLOCK_M=32, BLOCK_N=32, BLOCK_K=16)
    ref = K.reference_matmul(a, b, "leaky_relu")
    K.assert_close_fp16(c, ref)
    plain = K.reference_matmul(a, b)
    assert (plain < 0).any() and ((c < 0) == (plain < 0)).all()
    neg = plain < -1
    assert torch.allclose(c[neg].float(), 0.01 * plain[neg], rtol=1e-2)


@pytest.mark.parametrize("cfg", [dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16), dict(BLOCK_M=32, BLOCK_N=16, BLOCK_K=32)])
def test_group_m_changes_order_not_result(cfg):
    a, b = _inputs(80, 70, 24, seed=9)
    ref = K.matmul(a, b, GROUP_M=1, **cfg)
    for g in (2, 3, 8, 64):
        assert torch.equal(K.matmul(a, b, GROUP_M=g, **cfg), ref)


def test_empty_dimensions():
    a, b = _inputs(5, 6, 0)
    out = torch.full((5, 6), float("nan"), dtype=torch.float16, device=DEV)
    assert torch.equal(K.matmul(a, b, out=out), torch.zeros(5, 6, dtype=torch.float16, device=DEV))
    a, b = _inputs(0, 6, 4)
    assert K.matmul(a, b).shape == (0, 6)


def test_autotuned_launcher_in_this_environment():
    a, b = _inputs(100, 70, 50, seed=2)
    K.assert_close_fp16(K.matmul_autotuned(a, b), K.reference_matmul(a, b))
    K.assert_close_fp16(K.matmul_autotuned(a, b, activation="leaky_relu"), K.reference_matmul(a, b, "leaky_relu"))
    c, cbuf, cmask = poisoned_view((100, 70), torch.float16, DEV)
    K.matmul_autotuned(a, b, out=c)
    assert margins_intact(cbuf, cmask)
    K.assert_close_fp16(c, K.reference_matmul(a, b))


def test_autotune_config_lists():
    from gemm_lab.kernels.autotuned import TUTORIAL_CONFIGS

    assert K.configs_for("sm_80") == TUTORIAL_CONFIGS and len(TUTORIAL_CONFIGS) == 8
    assert all(c in K.configs_for("sm_90") for c in TUTORIAL_CONFIGS)
    for c in K.configs_for((7, 5)):  # the textbook buffer must fit a T4's 64 KiB
        stage = 2 * (c["BLOCK_SIZE_M"] * c["BLOCK_SIZE_K"] + c["BLOCK_SIZE_K"] * c["BLOCK_SIZE_N"])
        assert c["num_stages"] * stage <= 64 * 1024
    small = K.interpreter_config(10, 20, 8)
    assert (small["BLOCK_SIZE_M"], small["BLOCK_SIZE_N"], small["BLOCK_SIZE_K"]) == (16, 32, 16)
    assert K.interpreter_config(4096, 4096, 4096)["BLOCK_SIZE_M"] == 64


# ---------------------------------------------------------------- bad input: clear errors
def test_bad_inputs_raise_clear_errors():
    a, b = _inputs(8, 8, 8)
    with pytest.raises(TypeError, match="torch.Tensor"):
        K.matmul(a.tolist(), b)
    with pytest.raises(ValueError, match="2-D"):
        K.matmul(a[0], b)
    with pytest.raises(ValueError, match="2-D"):
        K.matmul(a[None], b)
    with pytest.raises(ValueError, match="inner dimensions"):
        K.matmul(a, b[:5])
    with pytest.raises(TypeError, match="same dtype"):
        K.matmul(a, b.float())
    with pytest.raises(TypeError, match="int32"):
        K.matmul(a.int(), b.int())
    with pytest.raises(ValueError, match="activation"):
        K.matmul(a, b, activation="relu")
    with pytest.raises(ValueError, match="power of two"):
        K.matmul(a, b, BLOCK_M=48)
    with pytest.raises(ValueError, match="BLOCK_K"):
        K.matmul(a, b, BLOCK_K=8)
    with pytest.raises(ValueError, match="GROUP_M"):
        K.matmul(a, b, GROUP_M=0)
    with pytest.raises(TypeError, match="num_warps"):
        K.matmul(a, b, num_warps=4.0)
    with pytest.raises(ValueError, match="device|on meta"):
        K.matmul(a.to("meta"), b.to("meta"))


def test_bad_outputs_raise_clear_errors():
    a, b = _inputs(8, 6, 4)
    with pytest.raises(ValueError, match="shape"):
        K.matmul(a, b, out=torch.empty(6, 8, dtype=torch.float16, device=DEV))
    with pytest.raises(TypeError, match="dtype"):
        K.matmul(a, b, out=torch.empty(8, 6, dtype=torch.int16, device=DEV))
    with pytest.raises(ValueError, match="stride 0"):
        K.matmul(a, b, out=torch.empty(1, 6, dtype=torch.float16, device=DEV).expand(8, 6))
    with pytest.raises(ValueError, match="overlaps"):
        buf = torch.randn(8, 8, device=DEV).half()
        K.matmul(buf[:, :4], b[:4, :4].contiguous(), out=buf[:, 2:6])


@pytest.mark.skipif(not runtime.INTERPRET, reason="interpreter limitation")
def test_bf16_refused_in_interpreter():
    a, b = _inputs(8, 8, 8, torch.bfloat16)
    with pytest.raises(TypeError, match="11584"):
        K.matmul(a, b)
    with pytest.raises(TypeError, match="11584"):
        K.matmul_autotuned(a, b)
