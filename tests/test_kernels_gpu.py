"""Kernels on a real GPU (skipped without one; run through scripts/gpu_check.py on the device):
fresh random data, shapes that are not tile multiples, large squares, tall-skinny, transposed and
strided inputs, fp16 / bf16 / fp32, outputs poisoned before every run, margins checked after."""

import pytest
import torch

from gemm_lab import kernels as K
from gemm_lab import runtime
from gemm_lab.kernels.check import margins_intact, poisoned_view

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not runtime.on_gpu(), reason="needs a CUDA GPU")]

SHAPES = [(500, 600, 300), (512, 512, 512), (1000, 1000, 1000), (4096, 128, 1024), (64, 3000, 520), (1, 77, 4096)]
DTYPES = [torch.float16, torch.bfloat16, torch.float32]


def _launchers(dtype=torch.float16):
    bk = 32 if dtype == torch.float32 else 64  # 128x256x64 fp32 tiles need 288 KiB: more than any GPU has
    return {
        "matmul_default": lambda a, b, out: K.matmul(a, b, out=out),
        "matmul_128x256x64": lambda a, b, out: K.matmul(a, b, BLOCK_M=128, BLOCK_N=256, BLOCK_K=bk, num_stages=3,
                                                        num_warps=8, out=out),
        "matmul_G1_64x32": lambda a, b, out: K.matmul(a, b, BLOCK_M=64, BLOCK_N=32, BLOCK_K=32, GROUP_M=1,
                                                      num_stages=5, num_warps=2, out=out),
        "autotuned": lambda a, b, out: K.matmul_autotuned(a, b, out=out),
        "blog_tiled": lambda a, b, out: K.naive_tiled_matmul(a, b, out=out),
        "persistent_naive": lambda a, b, out: K.persistent_matmul(a, b, variant="naive", programs_per_sm=2, out=out),
        "persistent_grouped": lambda a, b, out: K.persistent_matmul(a, b, variant="grouped", out=out),
        "persistent_tma": lambda a, b, out: K.persistent_matmul(a, b, variant="tma", out=out),
        # 128x256 fp32 tiles without the split epilogue need 272 KiB: use 128x128 there
        "persistent_tma_nosub": lambda a, b, out: K.tma_persistent_matmul(
            a, b, BLOCK_N=128 if dtype == torch.float32 else 256, epilogue_subtile=False, out=out),
        "persistent_tma_flatten": lambda a, b, out: K.tma_persistent_matmul(
            a, b, epilogue_subtile=dtype == torch.float32, flatten=True, out=out),
    }


def _data(M, N, Kd, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(M, Kd, device="cuda", generator=g).to(dtype)
    b = torch.randn(Kd, N, device="cuda", generator=g).to(dtype)
    return a, b


@pytest.mark.parametrize("name", list(_launchers()))
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16", "fp32"])
def test_all_launchers_all_shapes(name, dtype):
    fn = _launchers(dtype)[name]
    shapes = SHAPES
    if name == "autotuned" and dtype != torch.float16:  # each new key re-tunes 13 configs: keep it short
        shapes = SHAPES[:1]
    for i, (M, N, Kd) in enumerate(shapes):
        a, b = _data(M, N, Kd, dtype, seed=100 * i + len(name))
        c, buf, mask = poisoned_view((M, N), dtype, "cuda")
        fn(a, b, c)
        torch.cuda.synchronize()
        K.assert_close(c, K.reference_matmul(a, b), name=f"{name} {M}x{N}x{Kd} {dtype}")
        assert margins_intact(buf, mask), f"{name} wrote outside the output at {M}x{N}x{Kd}"


@pytest.mark.parametrize("name", list(_launchers()))
@pytest.mark.parametrize("a_t,b_t,c_t", [(True, False, False), (False, True, True), (True, True, False)])
def test_transposed_views_in_poisoned_buffers(name, a_t, b_t, c_t):
    fn = _launchers()[name]
    M, N, Kd = 333, 257, 192
    for dtype in (torch.float16,) if name == "autotuned" else (torch.float16, torch.bfloat16):
        a0, b0 = _data(M, N, Kd, dtype, seed=7)
        a, abuf, amask = poisoned_view((M, Kd), dtype, "cuda", transposed=a_t, values=a0)
        b, bbuf, bmask = poisoned_view((Kd, N), dtype, "cuda", transposed=b_t, values=b0)
        c, cbuf, cmask = poisoned_view((M, N), dtype, "cuda", transposed=c_t)
        fn(a, b, c)
        torch.cuda.synchronize()
        K.assert_close(c, K.reference_matmul(a0, b0), name=f"{name} {dtype}")
        assert margins_intact(cbuf, cmask) and margins_intact(abuf, amask) and margins_intact(bbuf, bmask)


def test_strided_inputs():
    big_a, big_b = _data(600, 900, 800, torch.float16, seed=3)
    a = big_a[:300, ::4]     # [300, 200], column stride 4
    b = big_b[::4, 1::2]     # [200, 450], row stride 3600, column stride 2
    for name, fn in _launchers().items():
        c, buf, mask = poisoned_view((300, 450), torch.float16, "cuda")
        fn(a, b, c)
        torch.cuda.synchronize()
        K.assert_close(c, K.reference_matmul(a, b), name=name)
        assert margins_intact(buf, mask), name


def test_epilogue_activation_on_gpu():
    a, b = _data(1000, 700, 300, torch.float16, seed=5)
    ref = K.reference_matmul(a, b, "leaky_relu")
    K.assert_close(K.matmul(a, b, activation="leaky_relu"), ref)
    K.assert_close(K.matmul_autotuned(a, b, activation="leaky_relu"), ref)
    K.assert_close(K.persistent_matmul(a, b, variant="grouped", activation="leaky_relu"), ref)
    K.assert_close(K.persistent_matmul(a, b, variant="tma", activation="leaky_relu"), ref)


def test_vector_add_and_softmax_on_gpu():
    for dtype in DTYPES:
        x = torch.randn(98_432, device="cuda").to(dtype)
        y = torch.randn(98_432, device="cuda").to(dtype)
        assert torch.equal(K.vector_add(x, y), x + y)
        s = torch.randn(1823, 781, device="cuda").to(dtype)
        K.assert_close(K.softmax(s), torch.softmax(s.double(), dim=1),
                       rel=1e-2 if dtype == torch.bfloat16 else 2e-3)
    big = torch.randn(64, 5000, device="cuda")[:, 3:4003:2]
    K.assert_close(K.softmax(big), torch.softmax(big.double(), dim=1), rel=1e-5)


def test_warp_specialized_tma_if_supported():
    a, b = _data(2048, 2048, 2048, torch.float16, seed=9)
    try:
        c = K.tma_persistent_matmul(a, b, warp_specialize=True)
    except Exception as exc:  # not every triton/arch combination supports it: report, don't hide
        pytest.skip(f"warp_specialize unsupported here: {exc.__class__.__name__}: {str(exc)[:200]}")
    K.assert_close(c, K.reference_matmul(a, b))


# ------------------------------------------------------------------ random-shape fuzz, every entry point
FUZZ_SHAPES = 200
FUZZ_ENTRY_POINTS = {
    "best_matmul": lambda a, b, out: K.best_matmul(a, b, out=out),
    "matmul": lambda a, b, out: K.matmul(a, b, out=out),
    "splitk_matmul": lambda a, b, out: K.splitk_matmul(a, b, split_k=3, out=out),
    "persistent_naive": lambda a, b, out: K.persistent_matmul(a, b, variant="naive", out=out),
    "persistent_grouped": lambda a, b, out: K.persistent_matmul(a, b, variant="grouped", out=out),
    "tma_persistent": lambda a, b, out: K.tma_persistent_matmul(a, b, out=out),
    "naive_tiled": lambda a, b, out: K.naive_tiled_matmul(a, b, out=out),
    "hinted_matmul": lambda a, b, out: K.hinted_matmul(a, b, out=out),
    "hinted_matmul_128x64x64": lambda a, b, out: K.hinted_matmul(a, b, BLOCK_M=128, BLOCK_N=64, BLOCK_K=64, out=out),
    # every new (M, N, K) re-tunes 13 configs (~1 s each key): run in chunks on several workers
    "matmul_autotuned": lambda a, b, out: K.matmul_autotuned(a, b, out=out),
}


def _fuzz_case(rng, i):
    """(M, N, K) log-uniform in 1..3000, a dtype, and layouts of a, b and the poisoned output."""
    M, N, Kd = (int(round(3000 ** rng.random())) for _ in range(3))
    dtype = (torch.float16, torch.bfloat16)[i % 2]
    layout = rng.choice(["contiguous", "a_t", "b_t", "both_t", "strided"])
    return M, N, Kd, dtype, layout, rng.random() < 0.3


# entry points that autotune every new shape (seconds each) are split into chunks that pytest-xdist runs on
# several workers at once; the shapes are the same as one long run's
FUZZ_CHUNKS = {"best_matmul": 20, "matmul_autotuned": 20}


@pytest.mark.parametrize("name,chunk", [(n, c) for n in FUZZ_ENTRY_POINTS for c in range(FUZZ_CHUNKS.get(n, 1))])
def test_fuzz_random_shapes(name, chunk):
    import random

    rng = random.Random(1234 + len(name))
    fn = FUZZ_ENTRY_POINTS[name]
    n = FUZZ_SHAPES
    cases = [_fuzz_case(rng, i) for i in range(n)]
    per = -(-n // FUZZ_CHUNKS.get(name, 1))
    for i in range(chunk * per, min(n, (chunk + 1) * per)):
        M, N, Kd, dtype, layout, out_t = cases[i]
        a0, b0 = _data(M, N, Kd, dtype, seed=i)
        if layout == "strided":
            a = torch.empty((M, 2 * Kd), device="cuda", dtype=dtype)[:, ::2]
            b = torch.empty((Kd, 3 * N), device="cuda", dtype=dtype)[:, 1::3]
            a.copy_(a0)
            b.copy_(b0)
        else:
            a = a0.t().contiguous().t() if layout in ("a_t", "both_t") else a0
            b = b0.t().contiguous().t() if layout in ("b_t", "both_t") else b0
        c, buf, mask = poisoned_view((M, N), dtype, "cuda", transposed=out_t)
        fn(a, b, c)
        torch.cuda.synchronize()
        what = f"{name} #{i} {M}x{N}x{Kd} {dtype} {layout} out_t={out_t}"
        K.assert_close(c, K.reference_matmul(a0, b0), name=what)
        assert margins_intact(buf, mask), f"{what}: wrote outside the output"


def test_best_matmul_repeat_calls_use_the_plan_and_stay_correct():
    from gemm_lab.kernels import best

    for M, N, Kd in ((1024, 1024, 1024), (4096, 4096, 512), (64, 64, 8192), (500, 600, 300)):
        a, b = _data(M, N, Kd, torch.float16, seed=M)
        ref = K.reference_matmul(a, b)
        for _ in range(3):  # first call plans (and tunes), later calls launch through the cached handle
            c, buf, mask = poisoned_view((M, N), torch.float16, "cuda")
            K.best_matmul(a, b, out=c)
            torch.cuda.synchronize()
            K.assert_close(c, ref, name=f"best_matmul {M}x{N}x{Kd}")
            assert margins_intact(buf, mask)
        K.assert_close(K.best_matmul(a, b), ref)  # cached key without out
        assert any(p.launch is not None and p.launch._fast is not None for p in best._PLANS.values())


@pytest.mark.skipif(not runtime.on_gpu() or torch.cuda.get_device_capability() < (9, 0), reason="needs Hopper")
def test_fp8_matmul_on_hopper():
    """fp8_matmul as accurate as cuBLAS's like-for-like mode on the same inputs. Triton's fp8 ``tl.dot`` on
    sm_90 keeps wgmma's reduced-precision accumulator for the whole K loop (the backend's
    ``max_num_imprecise_acc_default`` is 2**30), as ``torch._scaled_mm(use_fast_accum=True)`` does: at 4096^3
    both are ~240 fp16 ulp from the fp32 reference (measured on the H200), far past the fp16 matmul
    tolerance of 4 ulp, so the bound is cuBLAS's own error, with a factor 2 and that tolerance as a floor.
    Shapes are multiples of 16 (_scaled_mm's rule) but not of the kernel's 128x256x64 tiles."""
    from gemm_lab.kernels.check import max_ulp_error, relative_error

    one = torch.tensor(1.0, device="cuda")
    for M, N, Kd in ((4096, 4096, 4096), (1008, 3008, 528), (80, 144, 48)):
        g = torch.Generator(device="cuda").manual_seed(M)
        a = torch.randn(M, Kd, device="cuda", generator=g).to(torch.float8_e4m3fn)
        bt = torch.randn(N, Kd, device="cuda", generator=g).to(torch.float8_e4m3fn)
        ref = K.reference_fp8_matmul(a, bt.t(), 0.5, 2.0)
        cublas = torch._scaled_mm(a, bt.t(), scale_a=one * 0.5, scale_b=one * 2.0, out_dtype=torch.float16,
                                  use_fast_accum=True)
        ulps = max(4.0, 2 * max_ulp_error(cublas, ref, torch.float16))
        rel = max(2e-3, 2 * relative_error(cublas, ref))
        for b in (bt.t(), bt.t().contiguous()):
            c, buf, mask = poisoned_view((M, N), torch.float16, "cuda")
            K.fp8_matmul(a, b, scale_a=0.5, scale_b=2.0, out=c)
            torch.cuda.synchronize()
            K.assert_close(c, ref, rel=rel, ulps=ulps, name=f"fp8 {M}x{N}x{Kd} (bound: 2x cuBLAS fast-accum)")
            assert margins_intact(buf, mask)
