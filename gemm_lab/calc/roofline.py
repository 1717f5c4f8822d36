"""The course's HBM roofline model of a tiled matmul (seed week 7, §5).

For ``C[M, N] = A[M, K] @ B[K, N]`` with ``BLOCK_M × BLOCK_N`` output tiles, ``BLOCK_K``-wide K steps,
``in_bytes`` per input element, ``out_bytes`` per output element and ``acc_bytes`` per accumulator element::

    F             = 2 M N K                                     FLOP
    grid          = cdiv(M, BM) × cdiv(N, BN)                   programs
    k_steps       = cdiv(K, BK)                                 K-loop trips per program
    stage_bytes   = in_bytes × (BM·BK + BK·BN)                  one A + B stage, bytes
    pipeline      = num_stages × stage_bytes                    textbook shared memory, bytes
    acc           = acc_bytes × BM × BN                         accumulator (registers), bytes
    threads       = 32 × num_warps;  acc_per_thread = BM·BN / threads
    Q_read        = grid × k_steps × stage_bytes                bytes (= 2MNK(1/BN + 1/BM) when tiles divide)
    Q_write       = out_bytes × M × N                           bytes
    Q             = Q_read + Q_write;   I = F / Q               FLOP/byte
    roof          = min(P, I × BW)                              TFLOP/s
    T_memory      = Q / BW;  T_compute = F / P;  T_ideal = max(T_memory, T_compute)    ms

Assumptions (seed §5.1): inputs are read once per output tile (no L2 reuse between tiles), C is written
once. When M, N or K is not a multiple of the tile, the model counts **whole tiles** (cdiv): masked and
padded lanes are counted in Q_read as if loaded, which over-estimates the traffic of edge tiles.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass

from ._validate import as_configs, as_int, as_str, is_power_of_two
from .devices import VIRTUAL_DEVICE, Device
from .tiling import cdiv

__all__ = ["TileConfig", "SEED_CONFIGS", "BLOG_CONFIG", "RooflineRow", "roofline", "roofline_table"]

_VALID_WARPS = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True)
class TileConfig:
    """A ``triton.Config`` of the matmul kernel. Block sizes must be powers of two (``tl.arange``
    requires it); ``num_stages >= 1``; ``num_warps`` in 1, 2, 4, 8, 16, 32."""

    BLOCK_M: int
    BLOCK_N: int
    BLOCK_K: int
    num_stages: int
    num_warps: int
    name: str = ""

    def __post_init__(self) -> None:
        for field in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
            v = as_int(field, getattr(self, field))
            if not is_power_of_two(v):
                raise ValueError(f"{field} must be a power of two (tl.arange needs it), got {v}")
        as_int("num_stages", self.num_stages)
        w = as_int("num_warps", self.num_warps)
        if w not in _VALID_WARPS:
            raise ValueError(f"num_warps must be one of {_VALID_WARPS}, got {w}")
        as_str("name", self.name)

    @property
    def label(self) -> str:
        """``name`` if set, else e.g. ``"64×32×32 s5 w2"``."""
        return self.name or self.shape_label

    @property
    def shape_label(self) -> str:
        return f"{self.BLOCK_M}×{self.BLOCK_N}×{self.BLOCK_K} s{self.num_stages} w{self.num_warps}"


SEED_CONFIGS: tuple[TileConfig, ...] = (
    TileConfig(64, 32, 32, num_stages=5, num_warps=2, name="후보 1"),
    TileConfig(128, 128, 32, num_stages=4, num_warps=4, name="후보 2"),
    TileConfig(128, 256, 64, num_stages=3, num_warps=8, name="후보 3"),
)
BLOG_CONFIG = TileConfig(128, 64, 32, num_stages=4, num_warps=4, name="blog")


@dataclass(frozen=True)
class RooflineRow:
    """One row of the seed's §5.2 table. Units: FLOP, programs, bytes, threads, FLOP/byte, TFLOP/s, ms."""

    flops: int
    grid: int
    k_steps: int
    stage_bytes: int
    pipeline_bytes: int
    acc_bytes: int
    threads: int
    acc_per_thread: int
    q_read: int
    q_write: int
    q_total: int
    intensity: float
    roof_tflops: float
    t_memory_ms: float
    t_compute_ms: float
    t_ideal_ms: float
    bound: str  # "memory" or "compute"
    name: str = ""  # the config's label


def _check_config(config: object) -> TileConfig:
    if not isinstance(config, TileConfig):
        raise TypeError(f"config must be a TileConfig, got {type(config).__name__}")
    return config


def _check_device(device: object) -> Device:
    if not isinstance(device, Device):
        raise TypeError(f"device must be a gemm_lab.calc.devices.Device, got {type(device).__name__}")
    if device.fp16_tflops is None:
        raise ValueError(f"device {device.name!r} has no fp16_tflops figure; the matmul roofline needs one")
    return device


def roofline(M: int, N: int, K: int, config: TileConfig, device: Device = VIRTUAL_DEVICE,
             in_bytes: int = 2, out_bytes: int = 2, acc_bytes: int = 4) -> RooflineRow:
    """The §5 model for one config (see the module docstring for every formula).

    ``bound`` is ``"compute"`` when ``T_compute >= T_memory`` (intensity at or right of the ridge
    ``P / BW``), else ``"memory"``. Seed: ``roofline(4096, 4096, 4096, SEED_CONFIGS[1])`` →
    intensity 63.0154, t_ideal_ms 2.1810, bound "memory".
    """
    M, N, K = as_int("M", M), as_int("N", N), as_int("K", K)
    config, device = _check_config(config), _check_device(device)
    in_bytes, out_bytes = as_int("in_bytes", in_bytes), as_int("out_bytes", out_bytes)
    acc_elem = as_int("acc_bytes", acc_bytes)
    BM, BN, BK = config.BLOCK_M, config.BLOCK_N, config.BLOCK_K
    flops = 2 * M * N * K
    grid = cdiv(M, BM) * cdiv(N, BN)
    k_steps = cdiv(K, BK)
    stage = in_bytes * (BM * BK + BK * BN)
    threads = 32 * config.num_warps
    q_read = grid * k_steps * stage
    q_write = out_bytes * M * N
    q_total = q_read + q_write
    intensity = flops / q_total
    peak = device.fp16_tflops * 1e12  # FLOP/s
    bw = device.bandwidth_gbs * 1e9  # B/s
    t_memory_ms = q_total / bw * 1e3
    t_compute_ms = flops / peak * 1e3
    roof = min(peak, intensity * bw) / 1e12
    return RooflineRow(
        flops=flops, grid=grid, k_steps=k_steps, stage_bytes=stage, pipeline_bytes=config.num_stages * stage,
        acc_bytes=acc_elem * BM * BN, threads=threads, acc_per_thread=(BM * BN) // threads,
        q_read=q_read, q_write=q_write, q_total=q_total, intensity=intensity, roof_tflops=roof,
        t_memory_ms=t_memory_ms, t_compute_ms=t_compute_ms, t_ideal_ms=max(t_memory_ms, t_compute_ms),
        bound="compute" if t_compute_ms >= t_memory_ms else "memory", name=config.label,
    )


def roofline_table(M: int, N: int, K: int, configs, device: Device = VIRTUAL_DEVICE):
    """DataFrame of :func:`roofline` rows, one per config, index = config label (``name``)."""
    from dataclasses import asdict

    import pandas as pd

    configs = as_configs(configs, TileConfig)
    rows = [roofline(M, N, K, c, device) for c in configs]
    df = pd.DataFrame([asdict(r) for r in rows]).set_index("name")
    df.index.name = "config"
    return df


class _CallableModule(types.ModuleType):
    """``gemm_lab.calc.roofline`` is both this module and, when called, the :func:`roofline` function,
    so ``calc.roofline(M, N, K, config)`` and ``calc.roofline.roofline_table(...)`` both work."""

    def __call__(self, *args, **kwargs) -> RooflineRow:
        return roofline(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
