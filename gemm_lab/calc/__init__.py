"""Pure-Python calculators behind every number the course grades (stdlib + pandas, no torch/triton).

Submodules: :mod:`.tiling`, :mod:`.ordering`, :mod:`.roofline`, :mod:`.smem`, :mod:`.occupancy`,
:mod:`.autotune`, :mod:`.softmax`, :mod:`.devices`. pandas is imported lazily inside the functions that
return tables, so ``import gemm_lab.calc`` is cheap.

Argument policy: sizes must be ``int`` (``bool`` → ``TypeError``; any ``float``, even ``4.0`` →
``ValueError``; other types → ``TypeError``); zero/negative sizes, unknown dtypes/archs, group sizes < 1,
windows larger than the grid, pids out of range, sizes above ``2**48``, tables of more than
``2**18`` cells → ``ValueError`` (see :mod:`._validate`).

Note: ``gemm_lab.calc.roofline`` is the *module*, made callable: ``calc.roofline(M, N, K, config)`` calls
``gemm_lab.calc.roofline.roofline``. Every other public function is also re-exported here.
"""

from . import autotune, devices, occupancy, ordering, roofline, smem, softmax, tiling
from .autotune import (
    OOR_STATEMENTS,
    SEED_EXERCISE3,
    break_even_calls,
    exercise3_answers,
    exercise3_table,
    oor_true_statements,
    speedup,
    tflops,
    total_time_ms,
)
from .devices import DEVICES, VIRTUAL_DEVICE, VIRTUAL_DEVICE_FP32, Device, devices_table, get_device
from .occupancy import (
    SM_LIMITS,
    SMLimits,
    blocks_per_sm,
    max_regs_per_thread,
    persistent_grid,
    tiles_per_program,
    waves_per_sm,
)
from .ordering import compare_orders, order_grid, order_table, pid_to_tile, unique_input_tiles
from .roofline import BLOG_CONFIG, SEED_CONFIGS, TileConfig, roofline_table
from .smem import best_fitting, compiler_smem, fits, smem_verdicts, textbook_smem
from .softmax import block_offsets, effective_gbps, naive_softmax_passes, softmax_traffic
from .tiling import cdiv, edge_tile, k_tail, padding_error, tile_grid
from .waves import WaveQuantization, wave_quantization  # noqa: F401  (tile and wave quantization)

__all__ = [
    "autotune", "devices", "occupancy", "ordering", "roofline", "smem", "softmax", "tiling",
    "OOR_STATEMENTS", "SEED_EXERCISE3", "break_even_calls", "exercise3_answers", "exercise3_table",
    "oor_true_statements",
    "speedup", "tflops", "total_time_ms",
    "DEVICES", "VIRTUAL_DEVICE", "VIRTUAL_DEVICE_FP32", "Device", "devices_table", "get_device",
    "SM_LIMITS", "SMLimits", "blocks_per_sm", "max_regs_per_thread", "persistent_grid", "tiles_per_program", "waves_per_sm",
    "compare_orders", "order_grid", "order_table", "pid_to_tile", "unique_input_tiles",
    "BLOG_CONFIG", "SEED_CONFIGS", "TileConfig", "roofline_table",
    "best_fitting", "compiler_smem", "fits", "smem_verdicts", "textbook_smem",
    "block_offsets", "effective_gbps", "naive_softmax_passes", "softmax_traffic",
    "cdiv", "edge_tile", "k_tail", "padding_error", "tile_grid",
]
