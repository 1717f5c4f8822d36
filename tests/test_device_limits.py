"""gemm_lab.device_limits on the CPU: the installed Triton's own ``CompiledKernel._init_handles`` runs
against a fake driver (a 227 KiB "H200"), and the emulated T4 limit makes it raise ``OutOfResources``
exactly where ``metadata.shared`` exceeds 64 KiB; everything is put back on exit."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest

from gemm_lab import runtime  # noqa: F401  (before triton: decides TRITON_INTERPRET)

# isort: split
import triton
import triton.compiler as tc
import triton.compiler.compiler as cc
from triton.runtime.errors import OutOfResources

from gemm_lab import calc, device_limits
from gemm_lab.device_limits import emulate_device_shared_memory, emulate_shared_memory_limit

H200 = calc.get_device("h200").smem_per_block_optin
T4 = calc.get_device("colab-t4").smem_per_block_optin
_ids = itertools.count()


class FakeUtils:
    def __init__(self, max_shared):
        self.max_shared = max_shared
        self.loaded = []

    def get_device_properties(self, device):
        return {"max_shared_mem": self.max_shared, "multiprocessor_count": 132}

    def load_binary(self, name, kernel, shared, device):
        self.loaded.append((name, shared))
        return "module", "function", 64, 0, 1024  # module, function, n_regs, n_spills, n_max_threads


class FakeActive:
    def __init__(self, max_shared, device):
        self.utils = FakeUtils(max_shared)
        self.device = device

    def get_current_device(self):
        return self.device

    def launcher_cls(self, src, metadata):
        return "launcher"

    def get_current_target(self):
        return SimpleNamespace(backend="cuda", arch=90, warp_size=32)


@pytest.fixture
def fake_gpu(monkeypatch):
    """Triton's compiler module sees a fake driver with an H200's limit. Each test gets its own device
    id, so ``max_shared_mem``'s lru cache never answers from another test's (or a real GPU's) entry."""
    active = FakeActive(H200, f"fake-device-{next(_ids)}")
    monkeypatch.setattr(cc, "driver", SimpleNamespace(active=active))
    return active


def fake_kernel(shared: int, num_warps: int = 4):
    """Just what ``CompiledKernel._init_handles`` reads of a compiled kernel."""
    return SimpleNamespace(module=None, function=None, _run=None, src=None, name=f"k{shared}", kernel=b"",
                           metadata=SimpleNamespace(shared=shared, num_warps=num_warps), metadata_group={},
                           hash="0")


def load(kernel):
    cc.CompiledKernel._init_handles(kernel)
    return kernel


def test_installed_triton_reads_the_limit_through_max_shared_mem():
    assert device_limits.patch_point() == "triton.compiler.compiler.max_shared_mem"


def test_init_handles_raises_out_of_resources_under_the_t4_limit(fake_gpu):
    candidate3 = calc.textbook_smem(calc.SEED_CONFIGS[2])  # 147,456 B: sm_90's metadata.shared too
    assert load(fake_kernel(candidate3)).module == "module"  # fits the fake H200
    with emulate_shared_memory_limit(T4) as emu:
        with pytest.raises(OutOfResources) as err:
            load(fake_kernel(candidate3))
        assert (err.value.required, err.value.limit, err.value.name) == (candidate3, T4, "shared memory")
        assert load(fake_kernel(T4)).module == "module"  # shared > limit fails, shared == limit runs
        assert emu.queries == 2 and emu.real_limit == H200 and emu.limit == T4
        assert emu.patched == "triton.compiler.compiler.max_shared_mem"
    assert [s for _, s in fake_gpu.utils.loaded] == [candidate3, T4]
    assert load(fake_kernel(candidate3)).module == "module"  # the real limit again


def test_a_kernel_keeps_its_verdict_so_launch_fresh_ones(fake_gpu):
    big = calc.textbook_smem(calc.SEED_CONFIGS[2])
    loaded_before = load(fake_kernel(big))
    with emulate_shared_memory_limit(T4) as emu:
        failed = fake_kernel(big)
        with pytest.raises(OutOfResources):
            load(failed)
        load(loaded_before)  # already loaded: _init_handles returns before asking
        assert emu.queries == 1
    with pytest.raises(OutOfResources):
        failed._run()  # Triton keeps the error in _run: drop kernels that failed inside the block


def test_everything_is_restored(fake_gpu):
    # triton/__init__ lists max_shared_mem in __all__ but (3.6, 3.7) does not import it: patched where present
    originals = (cc.max_shared_mem, tc.max_shared_mem, getattr(triton, "max_shared_mem", None))
    assert originals[0] is originals[1] and originals[2] in (None, originals[0])
    with emulate_shared_memory_limit(T4):
        assert cc.max_shared_mem(fake_gpu.device) == T4
        assert tc.max_shared_mem is cc.max_shared_mem is not originals[0]
        assert getattr(triton, "max_shared_mem", None) in (None, cc.max_shared_mem)
        with emulate_shared_memory_limit(16 * 1024):  # nested: the inner one wins, then the outer is back
            assert cc.max_shared_mem(fake_gpu.device) == 16 * 1024
        assert cc.max_shared_mem(fake_gpu.device) == T4
    assert (cc.max_shared_mem, tc.max_shared_mem, getattr(triton, "max_shared_mem", None)) == originals
    with pytest.raises(RuntimeError, match="boom"), emulate_shared_memory_limit(T4):
        raise RuntimeError("boom")
    assert cc.max_shared_mem is originals[0]
    assert cc.max_shared_mem(fake_gpu.device) == H200


def test_a_limit_above_the_real_one_is_clamped(fake_gpu):
    with emulate_shared_memory_limit(10 * H200) as emu:
        assert cc.max_shared_mem(fake_gpu.device) == H200
        assert emu.real_limit == H200


def test_device_shortcut_takes_the_limit_from_calc(fake_gpu):
    with emulate_device_shared_memory("colab-t4") as emu:
        assert emu.limit == T4 == 65536
        assert cc.max_shared_mem(fake_gpu.device) == T4
    with pytest.raises(ValueError):
        emulate_device_shared_memory("no-such-gpu")


@pytest.mark.parametrize("bad, exc", [(True, TypeError), (65536.0, TypeError), ("64k", TypeError), (None, TypeError),
                                      (0, ValueError), (-1, ValueError)])
def test_bad_limits_are_refused(bad, exc):
    with pytest.raises(exc, match="limit_bytes"), emulate_shared_memory_limit(bad):
        pass


def test_fallback_wraps_the_device_properties(fake_gpu, monkeypatch):
    """A Triton whose _init_handles does not call max_shared_mem: the driver's properties are wrapped."""
    monkeypatch.setattr(device_limits, "patch_point", lambda: device_limits._PROPERTIES)
    utils = fake_gpu.utils
    assert "get_device_properties" not in vars(utils)
    assert cc.max_shared_mem(fake_gpu.device) == H200  # cached by lru_cache before the block
    with emulate_shared_memory_limit(T4) as emu:
        assert emu.patched.endswith("get_device_properties")
        assert utils.get_device_properties(fake_gpu.device)["max_shared_mem"] == T4
        assert utils.get_device_properties(fake_gpu.device)["multiprocessor_count"] == 132
        assert cc.max_shared_mem(fake_gpu.device) == T4  # the cache was cleared on entry
        with pytest.raises(OutOfResources):
            load(fake_kernel(T4 + 1))
    assert "get_device_properties" not in vars(utils)  # the class's method again
    assert cc.max_shared_mem(fake_gpu.device) == H200  # and the cache cleared on exit
