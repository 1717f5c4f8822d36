"""gemm_lab.grading.compile_answers: the answer keys of w7/04-05 come from the compiler and Triton's own binder."""

import pytest

from gemm_lab import runtime  # noqa: F401  (interpreter decided before triton is imported)
from gemm_lab.grading import fresh


@pytest.fixture(scope="module")
def ca():
    return fresh().compile_answers


@pytest.fixture(scope="module")
def config():
    return fresh().calc.SEED_CONFIGS[1]  # 128x128x32 s4 w4


def test_recompiles_follow_the_16_divisibility_specialization(ca):
    got = ca.recompiles()
    assert set(got) == set(ca.SCENARIOS)
    # 2048 keeps every size 16-divisible: same key; 500x600x300 does not; constexpr, option and target changes do
    assert got["same"] is False and got["shape_2048"] is False
    assert all(got[k] for k in ("shape_500x600x300", "block_m_64", "leaky_relu", "num_warps_8", "target_sm_90"))


def test_specialization_changes_name_the_arguments_that_lost_divisibility(ca):
    assert ca.specialization_changes((4096, 4000, 1000)) == {"K", "stride_am"}  # 1000 % 16 = 8, 4000 % 16 = 0
    assert ca.specialization_changes((500, 600, 300)) == set(ca.INT_ARGS)
    assert ca.specialization_changes((2048, 2048, 2048)) == set()


def test_stage_and_target_answers_read_the_artifacts(ca, config):
    stages = ca.first_stages("sm_80", config, ["tt.dot", "#mma", "cp.async", "no such marker"])
    assert stages == {"tt.dot": "ttir", "#mma": "ttgir", "cp.async": "llir", "no such marker": None}
    assert ca.targets_with(config, "wgmma") == {"sm_90"}
    assert ca.targets_with(config, "mma.sync", "wgmma") == {"sm_80", "sm_90"}
    stage = 2 * (config.BLOCK_M * config.BLOCK_K + config.BLOCK_K * config.BLOCK_N)
    # sm_90 keeps num_stages buffers, sm_80 one fewer (w7/04 exercise 4)
    assert ca.shared_bytes("sm_90", config) == config.num_stages * stage
    assert ca.shared_bytes("sm_80", config) == (config.num_stages - 1) * stage


def test_bad_arguments_are_refused_by_name(ca, config):
    with pytest.raises(ValueError, match="target"):
        ca.shared_bytes("sm_100", config)
    with pytest.raises(ValueError, match="shape"):
        ca.cache_key((4096, 4096))
    with pytest.raises(ValueError, match="instructions"):
        ca.targets_with(config)


