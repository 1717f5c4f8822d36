"""Every public launcher of gemm_lab.kernels fed hostile arguments (hypothesis): wrong types, zero /
negative / huge sizes, NaN tensors, wrong dtypes and devices, transposed and stride-0 views.

Each call either raises ValueError/TypeError whose message names one of the arguments of the call, or
returns a result equal to the torch reference (NaN where the reference has NaN). Examples are bounded
and tensors tiny, so no call can run long in the CPU interpreter."""

import math
import re

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gemm_lab.kernels as K

DTYPES = [torch.float16, torch.float32, torch.bfloat16, torch.float64, torch.int32, torch.bool]
HUGE = 2**31 + 5


@st.composite
def tensors(draw, dims=None, good=False):
    """A small tensor (or a view of one) with a random dtype, shape, layout, NaN content or device;
    ``good``: a float16/float32 CPU tensor of sizes 1..40 (plain, transposed, strided or with a NaN)."""
    nd = draw(st.sampled_from([1, 2, 3]) if dims is None else st.just(dims))
    shape = [draw(st.integers(1, 40) if good else st.integers(0, 9)) for _ in range(nd)]
    dtype = draw(st.sampled_from([torch.float16, torch.float32] if good else DTYPES))
    kinds = ["plain", "transposed", "strided", "nan"] if good else ["plain", "plain", "plain", "transposed",
                                                                   "strided", "nan", "meta", "huge", "expanded"]
    kind = draw(st.sampled_from(kinds))
    if kind == "meta":
        return torch.empty(shape, dtype=dtype, device="meta")
    if kind == "huge":  # a stride-0 view with a dimension past int32: no memory behind it
        return torch.zeros(1, dtype=dtype).expand(*([HUGE] + [max(s, 1) for s in shape[1:]]))
    if kind == "expanded" and nd >= 1:
        return torch.ones(1, dtype=dtype).expand(*shape)
    t = (torch.randn(shape) * 3).to(dtype) if dtype.is_floating_point else torch.randint(0, 3, shape).to(dtype)
    if kind == "nan" and dtype.is_floating_point and t.numel():
        t.view(-1)[draw(st.integers(0, t.numel() - 1))] = float("nan")
    if kind == "transposed" and nd == 2:
        t = t.t().contiguous().t()
    if kind == "strided" and nd >= 1:
        big = torch.zeros(*shape[:-1], 2 * shape[-1], dtype=dtype)
        big[..., ::2] = t
        t = big[..., ::2]
    return t


junk = st.one_of(st.none(), st.integers(-(2**40), 2**40), st.floats(allow_nan=True), st.booleans(),
                 st.text(max_size=4), st.lists(st.integers(), max_size=2), st.sampled_from([0, -1, 16, 3, 2**40]))
ints = st.one_of(st.sampled_from([0, -3, 1, 2, 3, 16, 32, 64, 2**40, True, False]), junk)


def matmul_kwargs(extra=()):
    names = ["BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages", *extra]
    return st.dictionaries(st.sampled_from(names), ints, max_size=2)


def _names_argument(exc: Exception, names) -> bool:
    msg = str(exc)
    return any(re.search(rf"\b{re.escape(n)}\b", msg) for n in names)


def _expect_correct(out, ref, ulps=None):
    assert tuple(out.shape) == tuple(ref.shape)
    o, r = out.double(), ref.double()
    assert torch.equal(torch.isnan(o), torch.isnan(r)), "NaN where the reference has none (or the reverse)"
    fin = torch.isfinite(r) & torch.isfinite(ref.to(out.dtype).double())  # overflow of out's dtype is allowed
    if fin.any():
        half = out.dtype in (torch.float16, torch.bfloat16)
        K.assert_close(out[fin].reshape(-1, 1), ref[fin].reshape(-1, 1).double(), rel=5e-3, ulps=ulps if half else None)


RAN: dict[str, int] = {}  # launcher -> calls that returned a (checked) result


def _call(fn, names, *args, **kwargs):
    try:
        res = fn(*args, **kwargs)
        key = getattr(fn, "__name__", "?")
        RAN[key] = RAN.get(key, 0) + 1
        return res, None
    except (ValueError, TypeError) as exc:
        assert _names_argument(exc, list(names) + list(kwargs)), f"error does not name an argument: {exc!r}"
        return None, exc


MATMULS = {
    "matmul": (K.matmul, ()),
    "matmul_autotuned": (lambda a, b, **kw: K.matmul_autotuned(a, b, **{k: v for k, v in kw.items()
                                                                         if k in ("activation", "out")}), ()),
    "naive_tiled_matmul": (K.naive_tiled_matmul, ()),
    "persistent_matmul": (K.persistent_matmul, ("programs_per_sm", "num_sms", "variant")),
    "tma_persistent_matmul": (K.tma_persistent_matmul, ("programs_per_sm", "num_sms")),
    "splitk_matmul": (K.splitk_matmul, ("split_k",)),
    "best_matmul": (lambda a, b, **kw: K.best_matmul(a, b, **{k: v for k, v in kw.items()
                                                              if k in ("activation", "out")}), ()),
}
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _ran_during(names, examples) -> None:
    """Run the examples and check some of them were well-formed calls that reached the kernels."""
    before = {n: RAN.get(n, 0) for n in names}
    examples()
    for n in names:
        assert RAN.get(n, 0) - before[n] >= 3, f"{n}: too few examples returned a result ({RAN})"


@pytest.mark.parametrize("name", list(MATMULS))
def test_matmul_launchers(name):
    _ran_during([name], lambda: _matmul_examples(name))


@SETTINGS
@given(data=st.data())
def _matmul_examples(name, data):
    fn, extra = MATMULS[name]
    a = data.draw(st.one_of(tensors(2), tensors(), junk), label="a")
    b = data.draw(st.one_of(tensors(2), tensors(), junk), label="b")
    if data.draw(st.integers(0, 2), label="well-formed") > 0:  # most examples: valid operands, kernels run
        a = data.draw(tensors(2, good=True), label="a2")
        b = torch.randn(a.shape[1], data.draw(st.integers(1, 40)), dtype=a.dtype)
        if data.draw(st.booleans(), label="b transposed"):
            b = b.t().contiguous().t()
    kw = data.draw(st.sampled_from([0, 1, 2]).flatmap(lambda i: matmul_kwargs(extra) if i == 0 else st.just({})),
                   label="kwargs")
    if data.draw(st.booleans(), label="activation"):
        kw["activation"] = data.draw(st.sampled_from([None, "leaky_relu", "relu", 3]))
    if data.draw(st.booleans(), label="out"):
        kw["out"] = data.draw(st.one_of(tensors(2), junk))
    fn.__name__ = name
    res, exc = _call(fn, ["a", "b", "activation", "out", "variant", "dtype", "int32", "workspace", "product"],
                     a, b, **kw)
    if exc is None:
        ref = K.reference_matmul(a, b, kw.get("activation"))
        if kw.get("out") is not None:
            assert res is kw["out"]
        _expect_correct(res, ref)


def test_vector_add():
    _ran_during(["vector_add"], _vector_add_examples)


@SETTINGS
@given(x=st.one_of(tensors(), junk), y=st.one_of(tensors(), junk), same=st.integers(0, 3), data_x=tensors(good=True),
       block=st.one_of(st.just(1024), st.just(1024), st.just(128), ints),
       out=st.one_of(st.none(), st.none(), st.none(), tensors()))
def _vector_add_examples(x, y, same, data_x, block, out):
    if same:  # most examples: a well-formed x, and y of its shape and dtype
        x = data_x
    if same and isinstance(x, torch.Tensor) and x.device.type == "cpu":
        y = torch.randn(x.shape).to(x.dtype) if x.dtype.is_floating_point else x.clone()
    res, exc = _call(K.vector_add, ["x", "y", "out", "BLOCK_SIZE"], x, y, out=out, BLOCK_SIZE=block)
    if exc is None:
        _expect_correct(res, (x.double() + y.double()).to(x.dtype).double())


def test_softmax():
    _ran_during(["softmax", "naive_softmax"], _softmax_examples)


@SETTINGS
@given(x=st.one_of(tensors(2, good=True), tensors(2, good=True), tensors(2), tensors(), junk),
       out=st.one_of(st.none(), st.none(), st.none(), tensors(2)))
def _softmax_examples(x, out):
    for fn in (K.softmax, K.naive_softmax):
        res, exc = _call(fn, ["x", "out", "rows", "columns", "row"], x, **({"out": out} if fn is K.softmax else {}))
        if exc is None:
            # naive_softmax runs five fp16 torch passes when x is fp16: a few ulp more than the fused kernel
            _expect_correct(res, torch.softmax(x.double(), dim=1), ulps=16.0 if fn is K.naive_softmax else None)


def test_error_metrics():
    _ran_during(["relative_error", "max_ulp_error"], _error_metric_examples)


@SETTINGS
@given(out=st.one_of(tensors(good=True), tensors(good=True), tensors(), junk), ref=st.one_of(tensors(), junk),
       same=st.sampled_from([True, True, True, False]))  # mostly well-formed pairs
def _error_metric_examples(out, ref, same):
    if same and isinstance(out, torch.Tensor) and out.dtype.is_floating_point and out.device.type == "cpu":
        ref = torch.randn(out.shape, dtype=torch.float64)
    for fn in (K.relative_error, K.max_ulp_error):
        res, exc = _call(fn, ["out", "ref", "dtype"], out, ref)
        if exc is None:
            assert isinstance(res, float) and (math.isnan(res) or res >= 0)


@SETTINGS
@given(M=ints, N=ints, Kd=ints, arch=st.one_of(junk, st.sampled_from(["sm_75", "sm_90", "sm_", (9, 0), (8,)])))
def test_config_helpers(M, N, Kd, arch):
    res, exc = _call(K.interpreter_config, ["M", "N", "K"], M, N, Kd)
    if exc is None:
        assert all(16 <= res[k] <= 64 for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"))
    res, exc = _call(K.configs_for, ["arch"], arch)
    assert exc is not None or (isinstance(res, list) and res)
    res, exc = _call(K.best_matmul.explain, ["M", "N", "K", "dtype", "arch"], M, N, Kd, torch.float16, arch)
    assert exc is not None or res.reason



def test_reference_and_assert_close():
    _ran_during(["reference_matmul", "assert_close"], _reference_examples)


@SETTINGS
@given(a=st.one_of(tensors(2, good=True), tensors(), junk), b=st.one_of(tensors(2, good=True), tensors(), junk),
       fit=st.booleans())
def _reference_examples(a, b, fit):
    if fit and isinstance(a, torch.Tensor) and a.dim() == 2 and a.device.type == "cpu" and a.shape[1] < HUGE:
        b = torch.randn(a.shape[1], 3, dtype=a.dtype if a.is_floating_point() else torch.float32)
    ref, exc = _call(K.reference_matmul, ["a", "b"], a, b)
    if exc is None:
        assert ref.dtype == torch.float32 and ref.shape == (a.shape[0], b.shape[1])
    _call(K.assert_close, ["out", "ref"], a, a)  # a tensor against itself passes; junk is refused
    try:
        _call(K.assert_close, ["out", "ref"], a, b)
    except AssertionError as err:  # a real mismatch report: shape or values
        assert "output" in str(err)


def test_fp8_launcher():
    _ran_during(["fp8_matmul"], _fp8_examples)


@SETTINGS
@given(a=st.one_of(tensors(2), junk), b=st.one_of(tensors(2), junk), good=st.integers(0, 2),
       M=st.integers(1, 20), N=st.integers(1, 20), Kd=st.integers(1, 40),
       kw=st.one_of(st.just({}), st.just({}), st.dictionaries(
           st.sampled_from(["scale_a", "scale_b", "out_dtype", "BLOCK_K", "num_warps"]),
           st.one_of(ints, st.sampled_from([torch.float32, torch.int8, torch.bfloat16])), max_size=2)))
def _fp8_examples(a, b, good, M, N, Kd, kw):
    if good:
        a = torch.randn(M, Kd).to(torch.float8_e4m3fn)
        b = torch.randn(N, Kd).to(torch.float8_e4m3fn).t()
    kw = dict(dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=32, num_warps=4), **kw)
    res, exc = _call(K.fp8_matmul, ["a", "b", "out", *kw], a, b, **kw)
    if exc is None:
        _expect_correct(res, K.reference_fp8_matmul(a, b, kw.get("scale_a", 1.0), kw.get("scale_b", 1.0)))
