"""Tile and wave quantization of a non-persistent tiled matmul (NVIDIA Matmul Background, §3
"Dimension Quantization Effects").

A non-persistent kernel launches one program per output tile, ``tiles = cdiv(M, BLOCK_M) × cdiv(N, BLOCK_N)``.
Two roundings waste work:

* **tile quantization**: the edge tiles are computed in full even where they hang past ``M`` or ``N``;
  the useful fraction of the computed output is ``M × N / (tiles × BLOCK_M × BLOCK_N)``.
* **wave quantization**: the GPU runs ``slots = num_sms × programs_per_sm`` programs at a time; the
  tiles run in ``num_waves = cdiv(tiles, slots)`` waves, and the last wave is only partly full. The
  busy fraction of the slots over all waves is ``tiles / (num_waves × slots)``.

``programs_per_sm`` is how many programs of this kernel fit on one SM at once (occupancy; 1 for the
large tiles of the course's candidates on most GPUs). A persistent kernel (week 7, ⑥) launches only
``slots`` programs and loops over tiles, which removes the launch of extra waves but not the uneven
share of the last tiles.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._validate import as_int
from .tiling import cdiv

__all__ = ["WaveQuantization", "wave_quantization"]


@dataclass(frozen=True)
class WaveQuantization:
    """Tile and wave quantization of one launch; see :func:`wave_quantization`."""

    M: int
    N: int
    BLOCK_M: int
    BLOCK_N: int
    num_sms: int
    programs_per_sm: int
    num_pid_m: int
    num_pid_n: int
    tiles: int  # programs launched (output tiles)
    tile_efficiency: float  # M × N / (tiles × BLOCK_M × BLOCK_N)
    slots: int  # programs resident at once: num_sms × programs_per_sm
    waves: float  # tiles / slots (fractional)
    num_waves: int  # cdiv(tiles, slots)
    full_waves: int  # waves with every slot busy
    last_wave_tiles: int  # programs in the last wave (== slots when the last wave is full)
    last_wave_fill: float  # last_wave_tiles / slots
    wave_efficiency: float  # tiles / (num_waves × slots)
    efficiency: float  # tile_efficiency × wave_efficiency: useful share of the slot-time launched


def wave_quantization(M: int, N: int, BLOCK_M: int, BLOCK_N: int, num_sms: int,
                      programs_per_sm: int = 1) -> WaveQuantization:
    """Tile and wave quantization of ``C[M, N]`` cut into ``BLOCK_M × BLOCK_N`` tiles on ``num_sms`` SMs.

    4096 × 4096 with 128 × 128 tiles on 132 SMs (H100/H200), one program per SM: 1,024 tiles in
    8 waves (7.76), the last wave 100 of 132 slots, wave efficiency 1024 / 1056 = 96.97 %.
    500 × 600 with 128 × 128 tiles: 20 tiles, one wave using 20 of 132 SMs (15.2 %), and only
    300,000 / 327,680 = 91.55 % of the computed tile area is inside C.
    """
    M, N = as_int("M", M), as_int("N", N)
    BLOCK_M, BLOCK_N = as_int("BLOCK_M", BLOCK_M), as_int("BLOCK_N", BLOCK_N)
    num_sms = as_int("num_sms", num_sms)
    programs_per_sm = as_int("programs_per_sm", programs_per_sm)
    num_pid_m, num_pid_n = cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)
    tiles = num_pid_m * num_pid_n
    slots = num_sms * programs_per_sm
    num_waves = cdiv(tiles, slots)
    full_waves = tiles // slots
    last = tiles - (num_waves - 1) * slots
    tile_eff = (M * N) / (tiles * BLOCK_M * BLOCK_N)
    wave_eff = tiles / (num_waves * slots)
    return WaveQuantization(
        M=M, N=N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_sms=num_sms, programs_per_sm=programs_per_sm,
        num_pid_m=num_pid_m, num_pid_n=num_pid_n, tiles=tiles, tile_efficiency=tile_eff, slots=slots,
        waves=tiles / slots, num_waves=num_waves, full_waves=full_waves, last_wave_tiles=last,
        last_wave_fill=last / slots, wave_efficiency=wave_eff, efficiency=tile_eff * wave_eff,
    )
