"""gemm_lab.viz.pipeline: the stage table, marker search on artifacts, and the pipeline picture."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from gemm_lab.viz import pipeline  # noqa: E402

# Small stand-ins shaped like real artifacts (lines copied from a cross-compile for sm_80).
FAKE = {
    "source": "def my_kernel(a_ptr, b_ptr):\n    pass\n",
    "ttir": "%acc = tt.dot %a, %b, %acc0 : tensor<128x32xf16> * tensor<32x128xf16> -> tensor<128x128xf32>\n"
    "tt.store %c_ptrs, %c, %mask\n",
    "ttgir": "#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0}>\n"
    "#shared = #ttg.swizzled_shared<{vec = 8}>\n"
    "%a = ttg.local_alloc : () -> !ttg.memdesc<3x128x32xf16, #shared, #smem, mutable>\n"
    "%acc = tt.dot %x, %y, %z : tensor<128x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma}>>\n",
    "llir": "@global_smem = external addrspace(3) global [0 x i8], align 16\n"
    'tail call void asm sideeffect "cp.async.cg.shared.global [ $0 + 0 ]"\n'
    'call asm "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"\n',
    "ptx": ".target sm_80\ncp.async.cg.shared.global [%r1], [%rd1], 0x10;\n"
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r1}, {%r2};\nmma.sync.aligned.m16n8k16 x;\n"
    "st.global.v4.b32 [%rd2], {%r3};\n",
    "cubin": b"\x7fELF" + bytes(60),
    "metadata": {"shared": 49152},
    "target": "sm_80",
}
FAKE_SM90 = dict(FAKE, ptx=".target sm_90\nwgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%r1};\n", target="sm_90")


def test_pipeline_order_and_keys():
    assert pipeline.STAGE_KEYS == ("ast", "ttir", "ttgir", "llir", "ptx", "cubin")
    assert set(pipeline.TEXT_STAGES) < set(pipeline.STAGE_KEYS)
    for stage in pipeline.PIPELINE:
        assert stage.decides and stage.decides_ko and stage.level_ko


def test_stage_table_both_languages():
    ko = pipeline.stage_table()
    assert list(ko.index) == list(pipeline.STAGE_KEYS)
    assert "새로 결정되는 것" in ko.columns
    assert "#mma" in ko.loc["ttgir", "새로 결정되는 것"]
    en = pipeline.stage_table("en")
    assert "n_regs" in en.loc["cubin", "decides"]
    with pytest.raises(ValueError):
        pipeline.stage_table("fr")


def test_stage_text_reads_mappings_and_objects():
    obj = SimpleNamespace(**{k: v for k, v in FAKE.items()})
    for art in (FAKE, obj):
        assert pipeline.stage_text(art, "ttir").startswith("%acc = tt.dot")
        assert pipeline.stage_text(art, "ast").startswith("def my_kernel")
        assert pipeline.stage_text(art, "cubin") is None  # bytes are not text
    assert pipeline.stage_text({}, "ptx") is None
    with pytest.raises(ValueError):
        pipeline.stage_text(FAKE, "sass")


def test_first_stage_is_the_earliest_stage_in_pipeline_order():
    assert pipeline.first_stage(FAKE, "tt.dot") == "ttir"  # also in TTGIR, but TTIR comes first
    assert pipeline.stages_containing(FAKE, "tt.dot") == ["ttir", "ttgir"]
    assert pipeline.first_stage(FAKE, "#mma") == "ttgir"
    assert pipeline.first_stage(FAKE, "local_alloc") == "ttgir"
    assert pipeline.first_stage(FAKE, "cp.async") == "llir"  # inline asm in LLIR before PTX
    assert pipeline.first_stage(FAKE, "st.global") == "ptx"
    assert pipeline.first_stage(FAKE, "wgmma") is None
    assert pipeline.first_stage(FAKE_SM90, "wgmma") == "ptx"


def test_bad_markers_raise():
    with pytest.raises(TypeError):
        pipeline.first_stage(FAKE, 3)
    with pytest.raises(ValueError):
        pipeline.stages_containing(FAKE, "")
    with pytest.raises(ValueError):
        pipeline.find_lines(FAKE, "tt.dot", limit=0)


def test_find_lines_limits_and_strips():
    hits = pipeline.find_lines(FAKE, "mma.sync", limit=1)
    assert list(hits) == ["llir", "ptx"]
    assert hits["ptx"] == ["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r1}, {%r2};"]
    assert len(pipeline.find_lines(FAKE, "mma.sync", stages=("ptx",), limit=5)["ptx"]) == 2
    assert pipeline.find_lines(FAKE, "no-such-op") == {}


def test_marker_table_counts_lines_per_target_and_stage():
    table = pipeline.marker_table({"sm_80": FAKE, "sm_90": FAKE_SM90}, ["wgmma", "mma.sync", "#mma"])
    assert table.loc["wgmma", ("sm_90", "ptx")] == 1
    assert table.loc["wgmma", ("sm_80", "ptx")] == 0
    assert table.loc["mma.sync", ("sm_80", "ptx")] == 2
    assert table.loc["#mma", ("sm_80", "ttgir")] == 2  # the definition and the dot_op parent
    with pytest.raises(ValueError):
        pipeline.marker_table({}, ["x"])
    with pytest.raises(ValueError):
        pipeline.marker_table({"sm_80": FAKE}, [])


def test_evidence_lines_pick_telling_lines_and_cut_them():
    ev = pipeline.evidence_lines(FAKE, width=30)
    assert ev["ttir"].startswith("%acc = tt.dot")
    assert ev["ttgir"].startswith("#mma =")
    assert ev["ptx"].startswith("mma.sync")
    assert all(len(line) <= 30 for line in ev.values())
    assert pipeline.evidence_lines(FAKE_SM90)["ptx"].startswith("wgmma")
    with pytest.raises(ValueError):
        pipeline.evidence_lines(FAKE, width=3)


def test_draw_pipeline_with_and_without_artifacts():
    fig = pipeline.draw_pipeline()
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "TTGIR (ttg dialect)" in texts and "CUBIN (SASS)" in texts
    plt.close(fig)
    fig = pipeline.draw_pipeline(FAKE)
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "metadata.shared = 49,152 B" in texts
    assert "64 bytes of machine code" in texts
    assert "sm_80" in fig.axes[0].get_title()
    plt.close(fig)


def test_jit_cache_key_follows_tritons_specialization():
    """Triton's own binder: sizes count only through 'divisible by 16', constexprs/options/target count."""
    torch = pytest.importorskip("torch")
    from gemm_lab.kernels import matmul_kernel

    def args(M, N, K):
        a = torch.empty((M, K), dtype=torch.float16)
        b = torch.empty((K, N), dtype=torch.float16)
        c = torch.empty((M, N), dtype=torch.float16)
        return (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))

    meta = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, ACTIVATION="",
                num_warps=4, num_stages=4)
    base = pipeline.jit_cache_key(matmul_kernel, *args(4096, 4096, 4096), **meta)
    assert base.target == "sm_80"
    assert ("i32", "D") in base.specialization and ("constexpr", 128) in base.specialization
    assert pipeline.jit_cache_key(matmul_kernel, *args(2048, 2048, 2048), **meta).differences(base) == []
    assert pipeline.jit_cache_key(matmul_kernel, *args(500, 600, 300), **meta).differences(base) == ["specialization"]
    assert pipeline.jit_cache_key(matmul_kernel, *args(4096, 4096, 4096), **{**meta, "BLOCK_SIZE_M": 64}
                                  ).differences(base) == ["specialization"]
    assert pipeline.jit_cache_key(matmul_kernel, *args(4096, 4096, 4096), **{**meta, "num_warps": 8}
                                  ).differences(base) == ["options"]
    assert "target" in pipeline.jit_cache_key(matmul_kernel, *args(4096, 4096, 4096), target="sm_90",
                                              **meta).differences(base)
    # a view starting 2 bytes past a 16-byte boundary loses the pointer's "D" specialization
    a, b, c, *rest = args(4096, 4096, 4096)
    a_shifted = torch.empty(4096 * 4096 + 1, dtype=torch.float16)[1:].view(4096, 4096)
    shifted = pipeline.jit_cache_key(matmul_kernel, a_shifted, b, c, *rest, **meta)
    assert shifted.specialization[0] == ("*fp16", "")
    assert shifted.differences(base) == ["specialization"]


def test_jit_cache_key_rejects_bad_input():
    from gemm_lab.kernels import matmul_kernel

    with pytest.raises(ValueError):
        pipeline.jit_cache_key(matmul_kernel, target="ampere")
    with pytest.raises(TypeError):
        pipeline.jit_cache_key(object(), target="sm_80")
    with pytest.raises(TypeError):
        pipeline.jit_cache_key(matmul_kernel, 1, 2, target="sm_80")  # too few arguments
    with pytest.raises(TypeError):
        pipeline.JitCacheKey((), "", "sm_80", "").differences("not a key")


def test_decisions_answer_key_is_consistent():
    labels = [label for label, _, _ in pipeline.DECISIONS]
    assert len(labels) == len(set(labels)) == 8
    assert {stage for _, _, stage in pipeline.DECISIONS} == set(pipeline.STAGE_KEYS)  # every stage decides something
    for _, text, _ in pipeline.DECISIONS:
        assert text and not text.isascii()  # Korean statements for the notebooks
