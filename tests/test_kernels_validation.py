"""Launcher arguments that would otherwise be silently replaced or crash with raw errors."""

import pytest
import torch

import gemm_lab.kernels as K
from gemm_lab.kernels._validate import overlaps


@pytest.fixture
def ab():
    torch.manual_seed(0)
    return torch.randn(20, 12), torch.randn(12, 24)


@pytest.mark.parametrize("name", ["BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"])
@pytest.mark.parametrize("bad", [0, False, True])
@pytest.mark.parametrize("variant", ["naive", "grouped"])
def test_persistent_tile_zero_or_bool_refused(ab, name, bad, variant):
    a, b = ab
    with pytest.raises((ValueError, TypeError), match=name):
        K.persistent_matmul(a, b, variant=variant, **{name: bad})


def test_persistent_none_still_means_default(ab):
    a, b = ab
    out = K.persistent_matmul(a, b, BLOCK_M=None, num_stages=None)
    torch.testing.assert_close(out, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("args, exc", [((0, 0, 0), ValueError), ((-5, 1, 1), ValueError), ((True, 1, 1), TypeError),
                                        ((1, 2.0, 1), TypeError), ((1, 1, "3"), TypeError)])
def test_interpreter_config_validates(args, exc):
    with pytest.raises(exc, match=r"\b[MNK]\b"):
        K.interpreter_config(*args)


def test_interpreter_config_still_shrinks_tiny_shapes():
    cfg = K.interpreter_config(3, 100, 7)
    assert (cfg["BLOCK_SIZE_M"], cfg["BLOCK_SIZE_N"], cfg["BLOCK_SIZE_K"]) == (16, 64, 16)


def test_huge_group_m_is_a_clear_value_error(ab):
    a, b = ab
    with pytest.raises(ValueError, match="GROUP_M"):
        K.matmul(a, b, GROUP_M=2**40)


@pytest.mark.parametrize("fn", [K.max_ulp_error, K.relative_error])
def test_error_metrics_refuse_bad_operands(fn):
    x = torch.randn(4, 5)
    with pytest.raises(ValueError, match="shapes differ"):
        fn(x, torch.randn(5, 4))
    with pytest.raises(TypeError, match="out must be a float"):
        fn(x.int(), x)
    with pytest.raises(TypeError, match="ref must be a float"):
        fn(x, x.long())
    with pytest.raises(TypeError, match="out must be a torch.Tensor"):
        fn(None, x)
    with pytest.raises(TypeError, match="ref must be a torch.Tensor"):
        fn(x, [1.0])
    assert fn(x, x) == 0.0


@pytest.mark.parametrize("arch, exc", [("sm_x", ValueError), ("90", ValueError), ("sm_", ValueError),
                                        (80, TypeError), ((9,), TypeError), (("9", "0"), TypeError)])
def test_configs_for_clear_messages(arch, exc):
    with pytest.raises(exc, match="arch must"):
        K.configs_for(arch)


def test_configs_for_valid_archs():
    assert K.configs_for("sm_90") == K.configs_for((9, 0))
    assert len(K.configs_for("sm_90")) > len(K.configs_for("sm_80"))


def test_overlap_is_exact():
    buf = torch.zeros(8, 20)
    assert not overlaps(buf[:, :10], buf[:, 10:])
    assert overlaps(buf[:, :11], buf[:, 10:])
    assert not overlaps(buf[:4], buf[4:])
    assert not overlaps(buf[:, ::2], buf[:, 1::2])          # interleaved columns: exact element check
    assert overlaps(buf[:, ::2], buf[:, 2::2])
    assert not overlaps(buf.t()[:5], buf.t()[5:])
    assert overlaps(buf.view(-1)[3:43].view(4, 10), buf[1:3, 2:5])
    assert not overlaps(buf.view(-1)[3:43].view(4, 10), buf[2:3, 4:5])
    half = torch.zeros(40, dtype=torch.float16)
    assert overlaps(buf.view(-1)[:1], half.view(torch.float32)[:1]) is False  # different buffers


def test_disjoint_column_slices_of_one_buffer_work_as_out(ab):
    a, b = ab
    buf = torch.full((20, 48 + 5), float("nan"))
    b_in = buf[:12, :24]
    b_in.copy_(b)
    out = buf[:, 24:48]
    K.matmul(a, b_in, out=out)
    torch.testing.assert_close(out, a @ b, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="out overlaps the memory of b"):
        K.matmul(a, b_in, out=buf[:, 20:44])
