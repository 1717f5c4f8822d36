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


# best_matmul has its own fuzz below (canaries around every operand, fresh tensors, explicit tuning)
# entry points that autotune every new shape (seconds each) are split into chunks that pytest-xdist runs on
# several workers at once; the shapes are the same as one long run's
FUZZ_CHUNKS = {"matmul_autotuned": 20}


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
        assert any(p.kernel is not None and p.kernel.launch._fast is not None for p in best._PLANS.values())


@pytest.mark.skipif(not runtime.on_gpu() or torch.cuda.get_device_capability() < (9, 0), reason="needs Hopper")
def test_fp8_matmul_on_hopper():
    """fp8_matmul as accurate as cuBLAS's like-for-like mode on the same inputs. Triton's fp8 ``tl.dot`` on
    sm_90 keeps wgmma's reduced-precision accumulator for the whole K loop (the backend's
    ``max_num_imprecise_acc_default`` is 2**30), as ``torch._scaled_mm(use_fast_accum=True)`` does: at 4096^3
    both are ~240 fp16 ulp from the fp32 reference (measured on the H200), far past the fp16 matmul
    tolerance of 4 ulp, so the bound is cuBLAS's own error, with a factor 2 and that tolerance as a floor.
    Shapes are multiples of 16 (_scaled_mm's rule) but not of the kernel's 128x256x64 tiles."""
    from gemm_lab.kernels.check import max_ulp_error, relative_error

    one = torch.tensor(1.0, device=_DEV)
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


# ------------------------------------------------------------------ best_matmul: canaries, fresh tensors
# Every operand is a view into a larger NaN-filled buffer; after each call the whole input buffers must be
# bit for bit what they were (inputs unchanged, nothing written into them) and every byte of the output's
# buffer outside the view must still be the NaN it was. Each call after a plan's first one gets new tensors
# of the same key; some cases tune explicitly on one pair and then run on another. GEMM_LAB_FUZZ_LOG (a
# file) collects one JSON line per case: what ran, elements written outside, inputs changed, wrong.
CANARY_LAYOUTS = ("contiguous", "colslice16", "colslice_off16", "transposed", "strided", "misaligned")
BEST_FUZZ_CASES = 96
BEST_FUZZ_CHUNKS = 8
_DEV = "cuda"


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view({2: torch.int16, 4: torch.int32}[t.element_size()])


def _canary(shape, dtype, layout, values=None):
    """(view, buffer, mask): a (rows, cols) view of ``layout`` into a NaN-filled buffer with room around
    it; ``mask`` marks the view's elements in the buffer. ``colslice16``: the first columns of rows whose
    stride and base are 16-byte aligned (a TMA descriptor takes it; its last 16-byte chunk holds canary
    elements when cols * elsize % 16 != 0); ``colslice_off16``: the same one chunk to the right;
    ``transposed``: column-major; ``strided``: every other column; ``misaligned``: 3 elements in."""
    rows, cols = shape
    per16 = 16 // torch.tensor([], dtype=dtype).element_size()
    wide = -(-cols // per16) * per16 + per16
    if layout == "contiguous":
        buf = torch.full((rows + 2, cols), float("nan"), dtype=dtype, device=_DEV)
        view = buf[1:1 + rows]
    elif layout in ("colslice16", "colslice_off16"):
        buf = torch.full((rows + 2, wide + per16), float("nan"), dtype=dtype, device=_DEV)
        c0 = per16 if layout == "colslice_off16" else 0
        view = buf[1:1 + rows, c0:c0 + cols]
    elif layout == "transposed":
        per = -(-rows // per16) * per16 + per16
        buf = torch.full((cols + 2, per), float("nan"), dtype=dtype, device=_DEV)
        view = buf[1:1 + cols, :rows].t()
    elif layout == "strided":
        buf = torch.full((rows + 2, 2 * cols + 2), float("nan"), dtype=dtype, device=_DEV)
        view = buf[1:1 + rows, 1:1 + 2 * cols:2]
    else:
        view, buf, _ = poisoned_view((rows, cols), dtype, _DEV)
    mask = torch.zeros(buf.shape, dtype=torch.bool, device=_DEV)
    mask.as_strided(view.shape, view.stride(), view.storage_offset() - buf.storage_offset()).fill_(True)
    if values is not None:
        view.copy_(values)
    return view, buf, mask


def _operands(M, N, Kd, dtype, layouts, seed):
    """Fresh inputs (values a0, b0; views a, b with their buffers) and a fresh output view."""
    a0, b0 = _data(M, N, Kd, dtype, seed)
    a, abuf, _ = _canary((M, Kd), dtype, layouts[0], a0)
    b, bbuf, _ = _canary((Kd, N), dtype, layouts[1], b0)
    c, cbuf, cmask = _canary((M, N), dtype, layouts[2])
    return dict(a0=a0, b0=b0, a=a, b=b, c=c, abuf=abuf, bbuf=bbuf, cbuf=cbuf, cmask=cmask,
                abits=_bits(abuf).clone(), bbits=_bits(bbuf).clone(), cbits=_bits(cbuf).clone())


def _verdict(ops, out, what):
    """(elements written outside out, inputs changed, wrong): counted, not asserted, so a case reports
    everything it found before it fails."""
    torch.cuda.synchronize()
    outside = int((_bits(ops["cbuf"]) != ops["cbits"])[~ops["cmask"]].sum()) if out is ops["c"] else 0
    changed = int((_bits(ops["abuf"]) != ops["abits"]).sum() + (_bits(ops["bbuf"]) != ops["bbits"]).sum())
    try:
        K.assert_close(out, K.reference_matmul(ops["a0"], ops["b0"]), name=what)
        wrong = ""
    except AssertionError as exc:
        wrong = str(exc)[:300]
    return outside, changed, wrong


def _best_case(rng, i):
    """(M, N, K) log-uniform in 1..3000, or a large output (TMA class) for one case in four; a dtype;
    layouts of a, b, out; whether out is given; the script (plain calls, or an explicit tune between)."""
    if i % 4 == 3:
        M, N = (int(rng.uniform(1500, 4000)) for _ in range(2))
        Kd = int(round(3000 ** rng.random()))
    else:
        M, N, Kd = (int(round(3000 ** rng.random())) for _ in range(3))
    dtype = rng.choice((torch.float16, torch.float16, torch.bfloat16, torch.float32))
    layouts = (rng.choice(CANARY_LAYOUTS), rng.choice(CANARY_LAYOUTS),
               rng.choice(("contiguous", "colslice16", "colslice16", "colslice_off16", "transposed", "misaligned")))
    return dict(M=M, N=N, K=Kd, dtype=dtype, layouts=layouts, given_out=rng.random() < 0.75,
                explicit_tune=i % 3 == 1, policy=rng.choice(("deferred", "deferred", "first", "off")),
                tune_for=rng.choice(("graph", "graph", "eager")))


@pytest.mark.parametrize("chunk", range(BEST_FUZZ_CHUNKS))
def test_best_matmul_canary_fuzz(chunk, monkeypatch, tmp_path):
    import json
    import os
    import random

    from gemm_lab.kernels import best

    monkeypatch.setenv("GEMM_LAB_PLAN_DIR", str(tmp_path))
    monkeypatch.setenv("GEMM_LAB_TUNE_BUDGET_S", os.environ.get("GEMM_LAB_FUZZ_TUNE_BUDGET_S", "2"))
    rng = random.Random(4321)
    cases = [_best_case(rng, i) for i in range(BEST_FUZZ_CASES)]
    log = os.environ.get("GEMM_LAB_FUZZ_LOG")
    failures = []
    for i in range(chunk, BEST_FUZZ_CASES, BEST_FUZZ_CHUNKS):
        case = cases[i]
        M, N, Kd, dtype = case["M"], case["N"], case["K"], case["dtype"]
        monkeypatch.setenv("GEMM_LAB_TUNE", case["policy"])
        best.clear_plans()
        tf = case["tune_for"]
        calls = []
        # call 1 makes the plan; every later call gets new tensors of the same key
        steps = ["call", "tune", "call", "call"] if case["explicit_tune"] else ["call", "call", "call"]
        plan = None
        for step_no, step in enumerate(steps):
            ops = _operands(M, N, Kd, dtype, case["layouts"], seed=1000 * i + step_no)
            out = ops["c"] if case["given_out"] else None
            if step == "tune":
                report = K.best_matmul.tune(ops["a"], ops["b"], out=out, tune_for=tf)
                res = out
                if report.get("wrong"):
                    failures.append(f"#{i} tune: candidates wrong {report['wrong']}")
            else:
                res = K.best_matmul(ops["a"], ops["b"], out=out, tune_for=tf)
            plan = best._PLANS.get(best._key(ops["a"], ops["b"], out, None, tf))
            what = (f"#{i} {step}{step_no} {M}x{N}x{Kd} {dtype} {case['layouts']} out={case['given_out']} "
                    f"{case['policy']} {tf} -> {plan.pinned if plan else None} ({plan.source if plan else ''})")
            if res is None:  # tune() without out=: its scratch output is not ours to check
                outside, changed, wrong = 0, _verdict(ops, ops["c"], what)[1], ""
            else:
                outside, changed, wrong = _verdict(ops, res if out is not None else res, what)
            calls.append(dict(step=step, pinned=str(plan.pinned[0]) if plan and plan.pinned else None,
                              source=plan.source if plan else None, outside=outside, inputs_changed=changed,
                              wrong=bool(wrong)))
            if outside or changed or wrong:
                failures.append(f"{what}: {outside} elements written outside out, {changed} input elements "
                                f"changed{', ' + wrong if wrong else ''}")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps(dict(test="fuzz", case=i, M=M, N=N, K=Kd, dtype=str(dtype),
                                        layouts=case["layouts"], given_out=case["given_out"],
                                        explicit_tune=case["explicit_tune"], policy=case["policy"],
                                        tune_for=tf, calls=calls)) + "\n")
    assert not failures, "\n".join(failures)


# shapes where each kind is in the candidate list: skinny M (swap-AB, split-K), narrow N with long K,
# the large unaligned outputs of the bug reports, short K, aligned squares (Tutorial 03), odd small shapes,
# a large output whose 16-byte aligned rows are not whole 128-byte lines and whose 128x256 tiles leave a
# part-empty last wave after two whole ones (the line-padded TMA configs, stream-K on them)
KIND_SHAPES = ((37, 3000, 700), (654, 20, 3420), (1499, 2999, 128), (2515, 2999, 2039), (23, 127, 1811),
               (64, 64, 64), (1024, 1024, 1024), (500, 600, 300), (64, 64, 8192), (4997, 2125, 113),
               (4000, 2100, 1000))
KIND_LAYOUTS = (("contiguous", "contiguous", "colslice16"), ("strided", "transposed", "colslice_off16"),
                ("colslice16", "colslice16", "transposed"), ("transposed", "strided", "misaligned"))


@pytest.mark.parametrize("shape", KIND_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_every_candidate_kind_pinned_with_canaries(shape):
    """Each kind of the shape's candidate list (first and last config of each, the line-padded TMA configs
    apart), pinned on one set of tensors and run on it and on a fresh set, in every layout of KIND_LAYOUTS,
    fp16 and bf16."""
    import json
    import os

    from gemm_lab.kernels import best

    M, N, Kd = shape
    log = os.environ.get("GEMM_LAB_FUZZ_LOG")
    failures, runs = [], []
    for dtype in (torch.float16, torch.bfloat16):
        for li, layouts in enumerate(KIND_LAYOUTS):
            ops = _operands(M, N, Kd, dtype, layouts, seed=li)
            plan = best._Plan(best.explain(M, N, Kd, dtype), M, N, Kd, "")
            cands = plan._candidates(ops["a"], ops["b"], ops["c"])
            picks = {}
            for cand in cands:
                picks.setdefault(cand[0] + ("+pad" if cand[1].get("pad") else ""), []).append(cand)
            for kind, group in picks.items():
                for cand in {id(c): c for c in (group[0], group[-1])}.values():
                    plan._pin(cand, ops["a"], ops["b"], ops["c"])
                    for fresh in range(2):
                        o = ops if fresh == 0 else _operands(M, N, Kd, dtype, layouts, seed=100 + li)
                        plan.go(o["a"], o["b"], o["c"])
                        what = f"{M}x{N}x{Kd} {dtype} {layouts} {cand}{' fresh' if fresh else ''}"
                        outside, changed, wrong = _verdict(o, o["c"], what)
                        runs.append(dict(kind=kind, outside=outside, inputs_changed=changed, wrong=bool(wrong)))
                        if outside or changed or wrong:
                            failures.append(f"{what}: {outside} outside, {changed} input elements changed "
                                            f"{wrong}")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(dict(test="kinds", M=M, N=N, K=Kd, runs=runs)) + "\n")
    assert not failures, "\n".join(failures[:20])
