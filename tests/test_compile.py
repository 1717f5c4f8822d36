"""gemm_lab.compile: cross-compiling the course's kernels (no GPU needed, TRITON_INTERPRET=1 set)."""

import pytest

from gemm_lab import compile as C
from gemm_lab import runtime
from gemm_lab.calc.roofline import BLOG_CONFIG, SEED_CONFIGS, TileConfig
from gemm_lab.calc.smem import compiler_smem

# measured in facts/h200-measurements-2026-12.md (cross-compiled, triton 3.7.1; sm_90 also on an H200)
FACTS_SHARED = {
    "sm_80": [24_576, 49_152, 98_304],
    "sm_90": [24_576, 65_536, 147_456],
}


# 8 compiles: about 5 s on 2 cores without triton's disk cache (the whole file: about 15 s)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_seed_and_blog_configs_shared_memory(arch):
    for config, facts in zip(list(SEED_CONFIGS) + [BLOG_CONFIG], FACTS_SHARED[arch] + [None], strict=True):
        art = C.compile_artifacts("matmul", config, target=arch)
        assert art.target == arch
        assert art.metadata["num_warps"] == config.num_warps
        assert art.metadata["num_stages"] == config.num_stages
        assert art.shared == compiler_smem(config, arch), (config, arch)
        if facts is not None:
            assert art.shared == facts


def test_stages_and_highlights_sm90():
    art = C.compile_artifacts("matmul", SEED_CONFIGS[1], target="sm_90")
    for stage in C.STAGES:
        assert art.stage(stage), stage
    assert isinstance(art.cubin, bytes) and art.cubin[:4] == b"\x7fELF"
    assert any("tt.dot" in ln for ln in art.highlights("ttir"))
    ttgir = art.highlights("ttgir")
    assert any(ln.startswith("#mma = #ttg.nvidia_mma<{versionMajor = 3") for ln in ttgir)
    assert any("nvmma_shared" in ln for ln in ttgir) and any(ln.startswith("#blocked") for ln in ttgir)
    assert any("local_alloc" in ln for ln in ttgir)
    ptx = art.highlights("ptx")
    assert any("wgmma.mma_async" in ln for ln in ptx) and any("cp.async" in ln for ln in ptx)
    row = art.summary()
    assert row["mma"] == "wgmma" and row["shared"] == 65_536 and row["wgmma"] > 0
    assert row["n_regs"] is None or runtime.on_gpu()  # registers exist only after loading on a GPU
    with pytest.raises(ValueError, match="stage"):
        art.stage("sass2")


def test_sm80_uses_mma_sync_and_sm75_falls_back_to_fma():
    config = SEED_CONFIGS[0]
    a80 = C.compile_artifacts("matmul", config, target="sm_80")
    assert a80.summary()["mma"] == "mma.sync" and a80.summary()["cp.async"] > 0
    assert any("#dot_op" in ln or "dot_op" in ln for ln in a80.highlights("ttgir"))
    a75 = C.compile_artifacts("matmul", config, target="sm_75")
    s75 = a75.summary()
    assert s75["mma"] == "fma" and s75["cp.async"] == 0  # no tensor cores, no pipelining on sm_75
    assert a75.shared == compiler_smem(config, "sm_75") == 8_192


# the calculator's compiler rule beyond the seed configs: T4, unaligned pointers, a 2-stage wgmma tile
@pytest.mark.parametrize(("arch", "config", "aligned"), [
    ("sm_75", SEED_CONFIGS[1], True),
    ("sm_80", SEED_CONFIGS[1], False),
    ("sm_90", SEED_CONFIGS[2], False),
    ("sm_90", TileConfig(128, 256, 16, 2, 8), True),
], ids=["sm75-cand2", "sm80-cand2-unaligned", "sm90-cand3-unaligned", "sm90-128x256x16-s2"])
def test_compiler_rule_of_calc_smem_matches_the_compiler(arch, config, aligned):
    art = C.compile_artifacts("matmul", config, target=arch, aligned=aligned)
    assert art.shared == compiler_smem(config, arch, aligned=aligned)


def test_unaligned_sizes_disable_pipelining():
    aligned = C.compile_artifacts("matmul", SEED_CONFIGS[1], target="sm_90", aligned=True)
    unaligned = C.compile_artifacts("matmul", SEED_CONFIGS[1], target="sm_90", aligned=False)
    assert unaligned.shared < aligned.shared
    assert unaligned.summary()["cp.async"] == 0


def test_cache_returns_the_same_object():
    a = C.compile_artifacts("matmul", SEED_CONFIGS[1], target="sm_90")
    b = C.compile_artifacts("matmul", dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, num_stages=4, num_warps=4),
                            target="sm_90a")
    assert a is b


def test_other_course_kernels_compile():
    for kernel in ("blog_tiled", "persistent", "grouped_persistent"):
        art = C.compile_artifacts(kernel, BLOG_CONFIG, target="sm_90", num_sms=132)
        assert art.summary()["mma"] == "wgmma", kernel
    assert C.compile_artifacts("vector_add", target="sm_80").summary()["ld.global"] > 0
    assert C.compile_artifacts("softmax", {"BLOCK_SIZE": 1024}, target="sm_80").summary()["st.global"] > 0


def test_compile_jit_student_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)

    art = C.compile_jit(scale_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256}, "sm_80")
    assert art.kernel == "scale_kernel" and art.metadata["num_warps"] == 4
    assert any("ld.global" in ln for ln in art.highlights("ptx"))
    assert C.compile_jit(scale_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256},
                         "sm_80") is art
    with pytest.raises(ValueError, match="neither"):
        C.compile_jit(scale_kernel, {"x_ptr": "*fp32"}, {"BLOCK": 256}, "sm_80")


def test_bad_arguments():
    with pytest.raises(ValueError, match="kernel"):
        C.compile_artifacts("gemm")
    with pytest.raises(ValueError, match="target"):
        C.compile_artifacts("matmul", SEED_CONFIGS[0], target="ampere")
    with pytest.raises(ValueError, match="compute capability"):
        C.compile_artifacts("matmul", SEED_CONFIGS[0], target="sm_70")
    with pytest.raises(ValueError, match="power of two"):
        C.compile_artifacts("matmul", dict(BLOCK_M=96, BLOCK_N=64, BLOCK_K=32, num_stages=3, num_warps=4))
    with pytest.raises(ValueError, match="lacks"):
        C.compile_artifacts("matmul", dict(BLOCK_M=64))
    with pytest.raises(ValueError, match="dtype"):
        C.compile_artifacts("matmul", SEED_CONFIGS[0], dtype="int8")
    assert C.parse_target((9, 0)) == ("sm_90", 90) and C.parse_target(80) == ("sm_80", 80)


def test_default_target():
    expected = C.live_target()[0] if runtime.on_gpu() else C.DEFAULT_CPU_TARGET
    assert C.compile_artifacts("vector_add").target == expected


@pytest.mark.skipif(not runtime.INTERPRET, reason="interpreter interplay")
def test_compile_between_interpreter_runs():
    import torch

    from gemm_lab import kernels as K

    a = torch.randn(40, 30).half()
    b = torch.randn(30, 20).half()
    K.assert_close(K.matmul(a, b, activation="leaky_relu"), K.reference_matmul(a, b, "leaky_relu"))  # nested @jit
    art = C.compile_artifacts("grouped_persistent", BLOG_CONFIG, target="sm_80", num_sms=8)
    assert art.summary()["mma"] == "mma.sync"
    K.assert_close(K.persistent_matmul(a, b, variant="grouped", num_sms=2, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16),
                   K.reference_matmul(a, b))


# Blackwell: sm_100 (B200) issues tcgen05 MMAs out of Tensor Memory; sm_120 (RTX 50 / RTX Pro 6000) has neither
# tcgen05 nor wgmma and keeps Ampere's mma.sync. A triton without the target is skipped, not passed.
def _blackwell(target, kernel="matmul", config=None, **kw):
    try:
        return C.compile_artifacts(kernel, config or SEED_CONFIGS[1], target=target, **kw)
    except Exception as exc:  # an older triton has no backend for the target
        if "tcgen05" in str(exc) or target[3:] in str(exc) or "not supported" in str(exc).lower():
            pytest.skip(f"this triton cannot compile for {target}: {str(exc)[:120]}")
        raise


def test_sm100_uses_tcgen05_and_tensor_memory():
    art = _blackwell("sm_100")
    s = art.summary()
    assert s["mma"] == "tcgen05" and s["tcgen05.mma"] > 0 and s["wgmma"] == 0 and s["mma.sync"] == 0
    assert ".target sm_100a" in art.ptx and art.count(r"\btcgen05\.alloc\b") > 0  # Tensor Memory for the accumulator
    assert any("tc_gen5_mma" in ln for ln in art.highlights("ttgir"))
    assert s["cp.async"] > 0 and s["cp.async.bulk.tensor"] == 0  # pointer loads: no TMA without descriptors
    assert art.shared > 0


def test_sm120_keeps_mma_sync():
    art = _blackwell("sm_120")
    s = art.summary()
    assert s["mma"] == "mma.sync" and s["tcgen05.mma"] == 0 and s["wgmma"] == 0
    assert ".target sm_120a" in art.ptx and s["cp.async"] > 0 and art.shared > 0
    assert "sm_100" in C.TARGETS and "sm_120" in C.TARGETS
