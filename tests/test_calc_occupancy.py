"""gemm_lab.calc.occupancy against the seed blog's RTX 5090 ncu report."""

import pytest

from gemm_lab.calc.occupancy import (
    SM_LIMITS,
    blocks_per_sm,
    get_sm_limits,
    persistent_grid,
    tiles_per_program,
    waves_per_sm,
)
from gemm_lab.calc.tiling import cdiv


def test_blog_block_limits():
    occ = blocks_per_sm(174, 4, 36864, "sm_120")
    # ncu: Block Limit Registers 2, Shared Mem 2, Warps 12, SM 24
    assert (occ.by_regs, occ.by_smem, occ.by_warps, occ.by_blocks, occ.blocks) == (2, 2, 12, 24, 2)
    assert occ.limiter == "registers + shared memory"
    assert occ.regs_per_warp == 176 * 32  # 174 → 176 registers per thread
    assert occ.smem_per_block_alloc == 36864 + 1024  # the runtime's 1 KiB
    assert occ.warps_per_sm == 8  # ncu: Theoretical Active Warps per SM 8
    assert f"{occ.occupancy * 100:.2f}" == "16.67"  # ncu: Theoretical Occupancy 16.67 %


def test_blog_hand_ratios():
    lim = SM_LIMITS["sm_120"]
    assert f"{lim.regs_per_sm / (174 * 128):.2f}" == "2.94"
    assert f"{lim.smem_per_sm / (36864 + 1024):.2f}" == "2.70"
    assert lim.smem_per_sm == 102400 and lim.max_warps_per_sm == 48


def test_tiled_kernel_128_regs():
    occ = blocks_per_sm(128, 4, 36864, "sm_120")
    assert occ.by_regs == 4 and occ.blocks == 2 and occ.limiter == "shared memory"


def test_register_granularity_matters():
    # 168 regs (already a multiple of 8): 5376/warp → 3 warps per sub-partition → 12 warps → 3 blocks of 4 warps
    assert blocks_per_sm(168, 4, 0, "sm_120").by_regs == 3
    # 169 regs round up to 176 → 2 warps per sub-partition → 2 blocks
    assert blocks_per_sm(169, 4, 0, "sm_120").by_regs == 2


def test_waves_and_tiles():
    assert f"{waves_per_sm(170, 170, 2):.2f}" == "0.50"
    assert f"{waves_per_sm(2048, 170, 2):.2f}" == "6.02"
    assert f"{2048 / 170:.3f}" == "12.047"
    num_tiles = cdiv(4096, 128) * cdiv(4096, 64)
    assert num_tiles == 2048
    grid = persistent_grid(170, 2, num_tiles)
    assert grid == 340 and waves_per_sm(grid, 170, 2) == 1.0
    split = tiles_per_program(num_tiles, grid)
    assert (split.min_tiles, split.max_tiles, split.programs_with_max) == (6, 7, 8)
    assert split.programs_with_max * 7 + (grid - split.programs_with_max) * 6 == 2048
    assert tiles_per_program(2048, 256) == type(split)(8, 8, 256)


def test_h200_limits_and_oversized_block():
    lim = get_sm_limits((9, 0))
    assert lim.smem_per_block_optin == 232448
    assert blocks_per_sm(128, 8, 262144, "sm_90").by_smem == 0  # facts: OutOfResources at 262,144
    assert blocks_per_sm(128, 8, 147456, "sm_90").by_smem == 1


def test_device_argument_and_table():
    from gemm_lab.calc.devices import DEVICES, VIRTUAL_DEVICE
    from gemm_lab.calc.occupancy import sm_limits_table

    assert blocks_per_sm(174, 4, 36864, DEVICES["rtx5090"]) == blocks_per_sm(174, 4, 36864, "sm_120")
    with pytest.raises(ValueError, match="no arch"):
        blocks_per_sm(174, 4, 36864, VIRTUAL_DEVICE)
    with pytest.raises(ValueError, match="unknown arch"):
        blocks_per_sm(64, 4, 0, DEVICES["kaggle-p100"])  # sm_60 has no SM_LIMITS entry
    df = sm_limits_table()
    assert list(df.index) == list(SM_LIMITS) and df.loc["sm_120", "max_blocks_per_sm"] == 24


def test_t4_no_reserved_smem():
    assert blocks_per_sm(64, 4, 32768, "sm_75").by_smem == 2


def test_bad_inputs():
    with pytest.raises(ValueError, match="255"):
        blocks_per_sm(256, 4, 0, "sm_90")
    with pytest.raises(ValueError):
        blocks_per_sm(128, 64, 0, "sm_90")
    with pytest.raises(ValueError):
        blocks_per_sm(128, 0, 0, "sm_90")
    with pytest.raises(ValueError):
        blocks_per_sm(128, 4, -1, "sm_90")
    with pytest.raises(ValueError, match="unknown arch"):
        blocks_per_sm(128, 4, 0, "sm_100")
    with pytest.raises(ValueError):
        waves_per_sm(100, 0, 2)
    with pytest.raises(TypeError):
        tiles_per_program(True, 3)


def test_max_regs_per_thread_candidate_2_on_h200():
    from gemm_lab import calc
    from gemm_lab.calc.occupancy import max_regs_per_thread

    # results/compiled_kernels.csv: candidate 2 on the H200 used 174 registers and 65,536 B
    occ = blocks_per_sm(174, 4, 65536, "sm_90")
    assert (occ.by_regs, occ.by_smem, occ.blocks, occ.limiter) == (2, 3, 2, "registers")
    assert max_regs_per_thread(4, 3, "sm_90") == 168  # 174 > 168: the third program does not fit
    assert max_regs_per_thread(4, 2, "sm_90") == 255
    assert blocks_per_sm(168, 4, 65536, "sm_90").blocks == 3
    assert blocks_per_sm(169, 4, 65536, "sm_90").blocks == 2
    # same rule as blocks_per_sm on the blog's GPU, and an odd warp count
    assert max_regs_per_thread(4, 3, "sm_120") == 168
    regs = max_regs_per_thread(3, 5, "sm_90")
    assert blocks_per_sm(regs, 3, 0, "sm_90").by_regs >= 5 > blocks_per_sm(regs + 1, 3, 0, "sm_90").by_regs
    # 9 blocks of 32 warps at the smallest allocation (256 registers per warp) need 73,728 > 65,536 registers
    assert max_regs_per_thread(32, 9, "sm_90") is None
    assert max_regs_per_thread(32, 8, "sm_90") == 8
    assert calc.max_regs_per_thread is max_regs_per_thread


def test_max_regs_per_thread_bad_input():
    from gemm_lab.calc.devices import VIRTUAL_DEVICE
    from gemm_lab.calc.occupancy import max_regs_per_thread

    with pytest.raises(ValueError):
        max_regs_per_thread(4, 0, "sm_90")
    with pytest.raises(ValueError, match="threads"):
        max_regs_per_thread(64, 1, "sm_90")
    with pytest.raises(TypeError):
        max_regs_per_thread(4, True, "sm_90")
    with pytest.raises(ValueError):
        max_regs_per_thread(4.0, 2, "sm_90")
    with pytest.raises(ValueError, match="unknown arch"):
        max_regs_per_thread(4, 2, "sm_100")
    with pytest.raises(ValueError, match="no arch"):
        max_regs_per_thread(4, 2, VIRTUAL_DEVICE)
