"""The descriptor-caching launch path (``_launch_cache._descriptor_expander``) against a launcher laid out
as Triton 3.6's CUDA launcher is (13 base arguments, host tensor descriptors expanded per launch by
``make_tensordesc_arg``): the same kernel arguments, one encode per (position, base address, layout)."""

import types

from gemm_lab.kernels import _launch_cache as lc

_BASE_ARGS_FORMAT_LEN = 13
ENCODED = []


def make_tensordesc_arg(arg, metadata):  # what Triton 3.6 does, with an encode counter for the map
    ENCODED.append(arg.base.data_ptr())
    return [("map", arg.base.data_ptr(), metadata["block_size"]), *arg.shape, *arg.strides]


def wrap_handle_tensordesc(launcher, signature, tensordesc_meta):  # Triton 3.6's wrapper, as written there
    tensordesc_indices = {i for i, sig in enumerate(signature.values()) if sig.startswith("tensordesc")}

    def inner(*args):
        final_args = list(args[:_BASE_ARGS_FORMAT_LEN])
        tensordesc_idx = 0
        for i, arg in enumerate(args[_BASE_ARGS_FORMAT_LEN:]):
            if i in tensordesc_indices:
                final_args.extend(make_tensordesc_arg(arg, tensordesc_meta[tensordesc_idx]))
                tensordesc_idx += 1
            else:
                final_args.append(arg)
        return launcher(*final_args)

    return inner


class FakeLauncher:
    global_scratch_size = 0
    profile_scratch_size = 0
    launch_cooperative_grid = False
    launch_pdl = False

    def __init__(self, calls):
        sig = {"a": "tensordesc<fp16[64, 64]>", "b": "tensordesc<fp16[64, 32]>", "M": "i32", "BLOCK": "constexpr"}
        self.launch = wrap_handle_tensordesc(lambda *a: calls.append(a), sig,
                                             [dict(block_size=[64, 64]), dict(block_size=[64, 32])])


class Buf:
    def __init__(self, ptr):
        self.ptr = ptr

    def data_ptr(self):
        return self.ptr


def desc(ptr, shape=(100, 200), strides=(200, 1)):
    return types.SimpleNamespace(base=Buf(ptr), shape=list(shape), strides=list(strides), padding="zero")


def test_expander_gives_triton_s_arguments_and_encodes_once_per_address():
    calls = []
    run = FakeLauncher(calls)
    raw, coop, pdl, expand = lc._descriptor_expander(types.SimpleNamespace(run=run))
    base = (1, 1, 1, 7, "fn", coop, pdl, None, None, "meta", None, None, None)
    for ptrs, encodes in (((4096, 8192), 2), ((4096, 8192), 0), ((4096, 16384), 1), ((4096, 8192), 0)):
        args = (desc(ptrs[0]), desc(ptrs[1], (200, 50), (64, 1)), 100, 64)
        ENCODED.clear()
        run.launch(*base, *args)
        want, triton_encodes = calls.pop(), list(ENCODED)
        ENCODED.clear()
        raw(*base, *expand(args))
        assert calls.pop() == want
        assert len(triton_encodes) == 2 and len(ENCODED) == encodes
    ENCODED.clear()
    _, _, _, expand = lc._descriptor_expander(types.SimpleNamespace(run=run))
    expand((desc(32), desc(48), 5, 64))
    expand((desc(32), desc(48), 5, 64))
    expand((desc(32), desc(48, (200, 60)), 5, 64))  # another layout at the same address: encoded anew
    assert ENCODED == [32, 48, 48]


def test_expander_declines_launchers_it_does_not_know():
    run = FakeLauncher([])
    run.global_scratch_size = 128  # needs scratch memory per launch
    assert lc._descriptor_expander(types.SimpleNamespace(run=run)) is None
    plain = types.SimpleNamespace(launch=print, global_scratch_size=0, profile_scratch_size=0)
    assert lc._descriptor_expander(types.SimpleNamespace(run=plain)) is None  # no descriptors: a C launcher


def test_keyed_launch_builds_arguments_once_per_key(monkeypatch):
    import torch

    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda device: 7, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    from triton import knobs

    monkeypatch.setattr(knobs.runtime, "launch_enter_hook", None)  # Triton 3.6's default: no hook set
    monkeypatch.setattr(knobs.runtime, "launch_exit_hook", None)
    calls = []
    run = FakeLauncher(calls)
    compiled = types.SimpleNamespace(run=run, function="fn", packed_metadata="meta")
    fast = lc._direct(compiled, (3, 1, 1), (64,), lambda *a: calls.append(("runner", a)), lc._descriptor_expander(compiled))
    built = []

    def make(pa, pb):
        built.append((pa, pb))
        return desc(pa), desc(pb, (200, 50), (64, 1)), 100

    for pa, pb in ((4096, 8192), (4096, 8192), (4096, 16384), (4096, 8192)):
        ENCODED.clear()
        fast.keyed((pa, pb), lambda pa=pa, pb=pb: make(pa, pb))
        got = calls.pop()
        run.launch(3, 1, 1, 7, "fn", False, False, None, None, "meta", None, None, None, *make(pa, pb), 64)
        built.pop()
        assert got == calls.pop()  # what Triton's own launcher would have been given
    assert built == [(4096, 8192), (4096, 16384)]


def test_an_empty_hook_chain_counts_as_no_hook():
    from triton import knobs

    chain = type(knobs.runtime.launch_enter_hook)()  # Triton's HookChain, empty
    assert lc._unset(None) and lc._unset(chain)
    chain.add(print)
    assert not lc._unset(chain) and not lc._unset(print)
