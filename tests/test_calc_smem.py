"""gemm_lab.calc.smem: textbook vs compiler shared memory, Triton's limit test, seed exercise 2 (§9.2)."""

import pytest

from gemm_lab.calc.roofline import BLOG_CONFIG, SEED_CONFIGS, TileConfig
from gemm_lab.calc.smem import (
    KNOWN_MISSES,
    MEASURED_SHARED,
    best_fitting,
    compiler_buffers,
    compiler_smem,
    fits,
    measured_shared_table,
    normalize_arch,
    smem_verdicts,
    textbook_smem,
)

KIB = 1024


def test_textbook_seed_configs():
    assert [textbook_smem(c) for c in SEED_CONFIGS] == [30720, 65536, 147456]
    assert [textbook_smem(c) // KIB for c in SEED_CONFIGS] == [30, 64, 144]
    assert textbook_smem(SEED_CONFIGS[0], "fp32") == 2 * 30720


@pytest.mark.parametrize("arch, expected", [
    ("sm_75", [8192, 16384, 65536]),  # facts: cross-compiled table
    ("sm_80", [24576, 49152, 98304]),
    ("sm_90", [24576, 65536, 147456]),
])
def test_compiler_rule_matches_facts(arch, expected):
    assert [compiler_smem(c, arch) for c in SEED_CONFIGS] == expected


def test_buffers_s_vs_s_minus_1():
    assert [compiler_buffers(c, "sm_90") for c in SEED_CONFIGS] == [4, 4, 3]  # 2 warps → S−1
    assert [compiler_buffers(c, "sm_80") for c in SEED_CONFIGS] == [4, 3, 2]
    assert [compiler_buffers(c, "sm_90", aligned=False) for c in SEED_CONFIGS] == [1, 1, 1]
    assert compiler_buffers(TileConfig(64, 64, 32, 1, 4), "sm_80") == 1  # never 0 buffers


def test_blog_config():
    assert compiler_smem(BLOG_CONFIG, "sm_90") == 49152  # S = 4 buffers (facts)
    assert compiler_smem(BLOG_CONFIG, (12, 0)) == 36864  # S−1 = 3 buffers (blog's RTX 5090)
    assert compiler_smem(BLOG_CONFIG, "sm_120") == 3 * 12288


def test_unaligned_is_one_stage_on_hopper():
    # facts: "any config at 500×600×300: one stage only" (H200)
    assert [compiler_smem(c, "sm_90", aligned=False) for c in SEED_CONFIGS] == [6144, 16384, 49152]


def test_model_reproduces_every_measurement():
    df = measured_shared_table()
    assert len(df) == len(MEASURED_SHARED) >= 90
    keys = [tuple(m[:8]) for m in MEASURED_SHARED]
    assert len(set(keys)) == len(keys)  # no duplicate measurements
    for m in MEASURED_SHARED:
        arch, bm, bn, bk, s, w, dt, aligned, shared, _ = m
        model = compiler_smem(TileConfig(bm, bn, bk, s, w), arch, dt, aligned)
        key = tuple(m[:8])
        if key in KNOWN_MISSES:
            assert model == KNOWN_MISSES[key] != shared, key  # still a miss, as documented
        else:
            assert model == shared, key
    assert int((~df.model_ok).sum()) == len(KNOWN_MISSES) == 2
    # and the textbook formula is not the same thing: it disagrees on most of them
    assert (df.measured != df.textbook).sum() > len(df) // 2


def test_fits_like_triton():
    assert fits(65536, 65536)  # exactly the limit fits: Triton fails only when shared > limit
    assert not fits(65537, 65536)
    assert fits(0, 1)


def test_exercise2_textbook_verdicts():
    df = smem_verdicts(SEED_CONFIGS, 64 * KIB)
    assert list(df.columns) == ["config", "shared", "limit", "fits"]
    assert list(df["shared"]) == [30720, 65536, 147456]
    assert list(df["fits"]) == [True, True, False]
    assert list(smem_verdicts(SEED_CONFIGS, 164 * KIB)["fits"]) == [True, True, True]


def test_exercise2_compiler_verdicts_on_t4():
    df = smem_verdicts(SEED_CONFIGS, 64 * KIB, rule="compiler", arch="sm_75")
    assert list(df["shared"]) == [8192, 16384, 65536]
    assert list(df["fits"]) == [True, True, True]  # facts: candidate 3 fits a T4 exactly with triton 3.7.1


def test_exercise2_best_fitting():
    best = best_fitting(4096, 4096, 4096, SEED_CONFIGS, 64 * KIB)
    assert best.name == "후보 2"
    assert f"{best.intensity:.4f}" == "63.0154"
    assert f"{best.t_ideal_ms:.4f}" == "2.1810"
    assert best_fitting(4096, 4096, 4096, SEED_CONFIGS, 164 * KIB).name == "후보 3"
    with pytest.raises(ValueError, match="no config fits"):
        best_fitting(4096, 4096, 4096, SEED_CONFIGS, 16 * KIB)


def test_bad_inputs():
    with pytest.raises(ValueError, match="unknown dtype"):
        textbook_smem(SEED_CONFIGS[0], "int4")
    with pytest.raises(ValueError, match="unknown arch"):
        compiler_smem(SEED_CONFIGS[0], "sm_70")
    with pytest.raises(TypeError):
        compiler_smem(SEED_CONFIGS[0], 9.0)
    with pytest.raises(TypeError):
        compiler_smem(SEED_CONFIGS[0], "sm_90", aligned=1)
    with pytest.raises(ValueError, match="needs arch"):
        smem_verdicts(SEED_CONFIGS, 65536, rule="compiler")
    with pytest.raises(ValueError, match="unknown rule"):
        smem_verdicts(SEED_CONFIGS, 65536, rule="guess")
    with pytest.raises(ValueError):
        fits(-1, 65536)
    with pytest.raises(TypeError):
        textbook_smem((64, 32, 32, 5, 2))
    assert normalize_arch("sm90") == normalize_arch(90) == normalize_arch((9, 0)) == "sm_90"
