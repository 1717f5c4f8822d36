"""best_matmul and split-K in the CPU interpreter: the choice rules, the reason, the plan cache, and
correct results for odd shapes, transposed/strided views and caller outputs."""

import pytest
import torch

import gemm_lab.kernels as K
from gemm_lab.kernels import best
from gemm_lab.kernels.check import margins_intact, poisoned_view


@pytest.mark.parametrize("shape, kernel", [
    ((4096, 4096, 4096), "tma_persistent"), ((8192, 8192, 8192), "tma_persistent"),
    ((2048, 2048, 2048), "tma_persistent"), ((1024, 1024, 1024), "autotuned_small"),
    ((500, 600, 300), "autotuned_small"), ((512, 512, 512), "autotuned_small"),
    ((2000, 1500, 64), "autotuned"), ((64, 64, 8192), "splitk"), ((16, 3000, 20000), "splitk"),
])
def test_hopper_choices_and_reasons(shape, kernel):
    ch = K.best_matmul.explain(*shape, torch.float16, arch="sm_90", num_sms=132)
    assert ch.kernel == kernel
    assert ch.reason and "\n" not in ch.reason and len(ch.reason) < 200
    if kernel == "splitk":
        assert 2 <= ch.params["split_k"] <= 64 and "split K" in ch.reason


def test_no_tma_before_hopper_or_for_fp32():
    assert K.best_matmul.explain(4096, 4096, 4096, torch.float16, arch="sm_80").kernel == "autotuned"
    assert K.best_matmul.explain(4096, 4096, 4096, torch.float32, arch="sm_90").kernel == "autotuned"


def test_interpreter_choice_is_safe_and_sized():
    ch = K.best_matmul.explain(5, 7, 3, torch.float16)  # arch None here: the interpreter
    assert ch.kernel == "tiled" and "interpreter" in ch.reason
    assert ch.params["BLOCK_SIZE_M"] == 16


@pytest.mark.parametrize("args, exc, word", [((0, 4, 4), ValueError, "M"), ((4, 4, -1), ValueError, "K"),
                                              ((4, True, 4), TypeError, "N"), ((4, 4, 4, torch.int32), TypeError, "dtype")])
def test_explain_validates(args, exc, word):
    with pytest.raises(exc, match=word):
        K.best_matmul.explain(*args)


def _check(fn, M, N, Kd, a_t=False, b_t=False, c_t=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    a0 = torch.randn(M, Kd, generator=g).half()
    b0 = torch.randn(Kd, N, generator=g).half()
    a, _, _ = poisoned_view((M, Kd), torch.float16, "cpu", transposed=a_t, values=a0)
    b, _, _ = poisoned_view((Kd, N), torch.float16, "cpu", transposed=b_t, values=b0)
    c, buf, mask = poisoned_view((M, N), torch.float16, "cpu", transposed=c_t)
    assert fn(a, b, c) is c
    K.assert_close(c, K.reference_matmul(a0, b0))
    assert margins_intact(buf, mask)


@pytest.mark.parametrize("shape", [(1, 1, 1), (5, 7, 3), (33, 17, 65), (70, 20, 130)])
@pytest.mark.parametrize("layout", [(False, False, False), (True, True, True), (True, False, True)])
def test_best_matmul_odd_shapes_and_views(shape, layout):
    _check(lambda a, b, out: K.best_matmul(a, b, out=out), *shape, *layout)


@pytest.mark.parametrize("split_k", [1, 2, 3, 7, 100])
def test_splitk_odd_shapes(split_k):
    _check(lambda a, b, out: K.splitk_matmul(a, b, split_k=split_k, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, out=out),
           19, 23, 150, a_t=split_k % 2 == 1, c_t=split_k == 3)


@pytest.mark.parametrize("split", [1, 3, 16, 127, 129, 300])
def test_splitk_reduce_sums_every_partial_in_steps(split):
    """The reduce kernel loads up to REDUCE_MAX_STEP partials at once and steps through longer splits: every
    partial counts once (splits around the step size and past it), into a strided fp16 view, nothing
    outside it written, the same bits twice."""
    from gemm_lab.kernels.splitk import REDUCE_MAX_STEP, reduce_into, reduce_launch

    assert reduce_launch(37, 29, split)[1]["SPLIT_STEP"] <= REDUCE_MAX_STEP
    g = torch.Generator().manual_seed(split)
    ws = torch.randn(split, 37, 29, generator=g)
    out, buf, mask = poisoned_view((37, 29), torch.float16, "cpu", transposed=split % 2 == 1)
    reduce_into(ws, out, None)
    torch.testing.assert_close(out.float(), ws.double().sum(0).float().half().float(), rtol=2e-3, atol=2e-3)
    assert margins_intact(buf, mask)
    first = out.clone()
    reduce_into(ws, out, None)
    assert torch.equal(out, first)


def test_splitk_activation_and_validation():
    a, b = torch.randn(9, 200), torch.randn(200, 11)
    torch.testing.assert_close(K.splitk_matmul(a, b, split_k=4, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16,
                                               activation="leaky_relu"),
                               K.reference_matmul(a, b, "leaky_relu"), rtol=1e-5, atol=1e-5)
    for bad, exc in ((0, ValueError), (True, TypeError), (2.0, TypeError), (10**6, ValueError)):
        with pytest.raises(exc, match="split_k"):
            K.splitk_matmul(a, b, split_k=bad)


def test_plan_is_cached_and_reused_per_key():
    best.clear_plans()
    a, b = torch.randn(21, 13), torch.randn(13, 9)
    c1 = K.best_matmul(a, b)
    assert len(best._PLANS) == 1
    c2 = K.best_matmul(a * 2, b)          # same key, new data: the same plan, a correct new result
    assert len(best._PLANS) == 1
    torch.testing.assert_close(c1 * 2, c2, rtol=1e-5, atol=1e-5)
    K.best_matmul(a.t().contiguous().t(), b)  # new strides: a new plan
    assert len(best._PLANS) == 2


def test_cached_plan_still_refuses_overlapping_output():
    best.clear_plans()
    buf = torch.zeros(8, 40)
    a, b = buf[:, :8], torch.randn(8, 8)
    a.copy_(torch.randn(8, 8))
    K.best_matmul(a, b, out=buf[:, 20:28])   # disjoint column slices of one buffer: allowed
    torch.testing.assert_close(buf[:, 20:28], a @ b, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="overlaps the memory of a"):
        K.best_matmul(a, b, out=buf[:, 4:12])  # same layout key as above, but it overlaps a
    K.best_matmul(a, b, out=buf[:, 20:28])   # the disjoint addresses again: checked once, then remembered
    assert best._PLANS[best._key(a, b, buf[:, 20:28], None)].checked_ptrs == (
        a.data_ptr(), b.data_ptr(), buf[:, 20:28].data_ptr())
    with pytest.raises(ValueError, match="overlaps the memory of a"):
        K.best_matmul(a, b, out=buf[:, 0:8])   # new addresses after a remembered pair: checked again


def test_descriptor_templates_hold_no_tensor():
    from gemm_lab.kernels import best_kernels

    if best_kernels.TensorDescriptor is None:
        pytest.skip("this triton has no TensorDescriptor")
    t = torch.zeros(64, 64, dtype=torch.float16)
    d = best_kernels.TensorDescriptor(t, t.shape, t.stride(), [32, 32])
    template = best_kernels._desc_like(d, None)
    other = torch.ones(64, 64, dtype=torch.float16)
    copy = best_kernels._desc_like(template, other)
    assert template.base is None and copy.base is other and copy is not template
    assert (copy.shape, copy.strides, copy.block_shape) == (d.shape, d.strides, d.block_shape)


def test_best_matmul_bad_input():
    a = torch.randn(4, 5)
    with pytest.raises(TypeError, match="a must be a torch.Tensor"):
        K.best_matmul([[1.0]], a)
    with pytest.raises(ValueError, match="inner dimensions"):
        K.best_matmul(a, a)
    with pytest.raises(ValueError, match="activation"):
        K.best_matmul(a, a.t(), activation="relu")
    with pytest.raises(ValueError, match="activation"):
        K.best_matmul(a, a.t(), activation=["x"])  # unhashable: full validation, still a clear error
    assert K.best_matmul(torch.empty(0, 5), a.t()).shape == (0, 4)
    assert torch.equal(K.best_matmul(torch.empty(3, 0), torch.empty(0, 2)), torch.zeros(3, 2))
    assert K.best_matmul.choice_for(torch.empty(0, 5), a.t()).kernel == "none"
