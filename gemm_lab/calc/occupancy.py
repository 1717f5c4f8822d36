"""Occupancy: how many programs (CUDA blocks) of a kernel fit on one SM, and what that means for a grid.

Per-SM limits (:data:`SM_LIMITS`) are from the CUDA C++ Programming Guide, "Technical Specifications per
Compute Capability" (``devices.CUDA_GUIDE_URL``), and the allocation rules from the CUDA occupancy
calculator (``CUDA_Occupancy_Calculator.xls`` / ``cuda_occupancy.h``: register allocation unit 256 per
warp, shared-memory allocation unit, runtime shared memory per block 1,024 B from cc 8.0 on):

* registers: a warp's registers are allocated in units of 256 (``regs_per_thread`` rounded up to a
  multiple of 8: 174 → 176), from the register file of one of the SM's 4 sub-partitions;
  ``by_regs = 4 × ⌊(regs_per_sm / 4) / regs_per_warp⌋ // num_warps`` (0 when one block needs more than
  ``max_regs_per_block``);
* shared memory: the block's bytes rounded up to 128 B (256 B on cc 7.5) plus the 1 KiB the CUDA runtime reserves per
  block (cc >= 8.0; 0 on cc 7.5): ``by_smem = ⌊smem_per_sm / (smem + reserved)⌋`` with the SM's largest
  shared-memory carve-out (0 when the block needs more than the opt-in per-block maximum);
* warps: ``⌊max_warps_per_sm / num_warps⌋``; the SM's own block limit ``max_blocks_per_sm``.

``blocks = min(by_regs, by_smem, by_warps, by_blocks)``. The seed blog's RTX 5090 persistent kernel
(174 regs, 4 warps, 36,864 B): 2 / 2 / 12 / 24 → 2 blocks per SM, as ncu reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._validate import as_int
from .devices import CUDA_GUIDE_URL, Device
from .smem import normalize_arch
from .tiling import cdiv

__all__ = ["SMLimits", "SM_LIMITS", "get_sm_limits", "sm_limits_table", "Occupancy", "blocks_per_sm",
           "max_regs_per_thread", "waves_per_sm", "TileSplit", "tiles_per_program", "persistent_grid"]

KIB = 1024


@dataclass(frozen=True)
class SMLimits:
    """Per-SM resource limits of one compute capability (bytes, registers, warps, blocks)."""

    arch: str
    max_warps_per_sm: int
    max_blocks_per_sm: int
    regs_per_sm: int
    max_regs_per_block: int
    max_regs_per_thread: int
    smem_per_sm: int  # largest shared-memory carve-out per SM
    smem_per_block_optin: int
    reserved_smem_per_block: int  # the CUDA runtime's share of each block
    reg_alloc_unit: int = 256  # registers per warp are allocated in these units
    smem_alloc_unit: int = 128
    sub_partitions: int = 4
    max_threads_per_block: int = 1024
    source: str = CUDA_GUIDE_URL
    notes: str = ""


def _limits(arch: str, warps: int, blocks: int, smem_sm_kib: int, optin_kib: int, reserved: int,
            notes: str = "", smem_unit: int = 128) -> SMLimits:
    return SMLimits(arch, warps, blocks, 65536, 65536, 255, smem_sm_kib * KIB, optin_kib * KIB, reserved,
                    smem_alloc_unit=smem_unit, notes=notes)


SM_LIMITS: dict[str, SMLimits] = {
    "sm_75": _limits("sm_75", 32, 16, 64, 64, 0, smem_unit=256),
    "sm_80": _limits("sm_80", 64, 32, 164, 163, 1024),
    "sm_86": _limits("sm_86", 48, 16, 100, 99, 1024),
    "sm_89": _limits("sm_89", 48, 24, 100, 99, 1024),
    "sm_90": _limits("sm_90", 64, 32, 228, 227, 1024),
    "sm_120": _limits("sm_120", 48, 24, 100, 99, 1024,
                      notes="max_blocks_per_sm: ncu reports 24 on an RTX 5090 (seed blog: 'Block Limit SM 24'); "
                            "the programming guide's table lists 32"),
}


def sm_limits_table():
    """DataFrame of :data:`SM_LIMITS`, one row per arch (index)."""
    from dataclasses import asdict

    import pandas as pd

    return pd.DataFrame([asdict(v) for v in SM_LIMITS.values()]).set_index("arch")


def get_sm_limits(arch) -> SMLimits:
    """:data:`SM_LIMITS` entry for ``"sm_90"``, ``(9, 0)``, …; ``ValueError`` for an unknown arch."""
    return SM_LIMITS[normalize_arch(arch)]


@dataclass(frozen=True)
class Occupancy:
    """Blocks per SM allowed by each resource and the binding one.

    ``limiter`` names the smallest limit(s): ``"registers"``, ``"shared memory"``, ``"warps"``,
    ``"blocks"``; ties are joined with ``" + "`` (the blog's case: ``"registers + shared memory"``).
    ``warps_per_sm = blocks × num_warps``; ``occupancy = warps_per_sm / max_warps_per_sm`` (0…1).
    """

    by_regs: int
    by_smem: int
    by_warps: int
    by_blocks: int
    blocks: int
    limiter: str
    regs_per_warp: int = 0  # allocated registers per warp (multiple of 256)
    smem_per_block_alloc: int = 0  # bytes charged per block incl. the runtime's reserve
    warps_per_sm: int = 0
    occupancy: float = 0.0


def _resolve_limits(sm) -> SMLimits:
    if isinstance(sm, SMLimits):
        return sm
    if isinstance(sm, Device):
        if sm.arch is None:
            raise ValueError(f"device {sm.name!r} has no arch, so no SM limits")
        return get_sm_limits(sm.arch)
    return get_sm_limits(sm)


def blocks_per_sm(regs_per_thread: int, num_warps: int, smem_per_block: int, sm) -> Occupancy:
    """Theoretical blocks per SM (see the module docstring for the rules).

    ``sm`` is an :class:`SMLimits`, a :class:`~gemm_lab.calc.devices.Device` or an arch (``"sm_120"``). ``smem_per_block`` in bytes (Triton's
    ``metadata.shared``), ``regs_per_thread`` as reported (``n_regs``), 1 … 255.
    """
    limits = _resolve_limits(sm)
    regs = as_int("regs_per_thread", regs_per_thread)
    warps = as_int("num_warps", num_warps)
    smem = as_int("smem_per_block", smem_per_block, minimum=0)
    if regs > limits.max_regs_per_thread:
        raise ValueError(f"regs_per_thread={regs} exceeds the hardware maximum of {limits.max_regs_per_thread}")
    if warps * 32 > limits.max_threads_per_block:
        raise ValueError(f"num_warps={warps} gives {warps * 32} threads, more than {limits.max_threads_per_block} per block")

    regs_per_warp = cdiv(regs * 32, limits.reg_alloc_unit) * limits.reg_alloc_unit
    if regs_per_warp * warps > limits.max_regs_per_block:
        by_regs = 0
    else:
        per_partition = (limits.regs_per_sm // limits.sub_partitions) // regs_per_warp
        by_regs = per_partition * limits.sub_partitions // warps

    smem_alloc = cdiv(smem, limits.smem_alloc_unit) * limits.smem_alloc_unit + limits.reserved_smem_per_block
    if smem > limits.smem_per_block_optin:
        by_smem = 0
    elif smem_alloc == 0:
        by_smem = limits.max_blocks_per_sm
    else:
        by_smem = limits.smem_per_sm // smem_alloc

    by_warps = limits.max_warps_per_sm // warps
    by_blocks = limits.max_blocks_per_sm
    counts = {"registers": by_regs, "shared memory": by_smem, "warps": by_warps, "blocks": by_blocks}
    blocks = min(counts.values())
    limiter = " + ".join(k for k, v in counts.items() if v == blocks)
    return Occupancy(by_regs, by_smem, by_warps, by_blocks, blocks, limiter, regs_per_warp, smem_alloc,
                     blocks * warps, blocks * warps / limits.max_warps_per_sm)


def max_regs_per_thread(num_warps: int, programs_per_sm: int, sm) -> int | None:
    """The most registers per thread with which ``programs_per_sm`` programs of ``num_warps`` warps still
    fit one SM by registers (the allocation rules of :func:`blocks_per_sm`); ``None`` when none does.

    The seed's candidate 2 (4 warps) on sm_90: 3 programs need at most 168 registers per thread, 2
    programs at most 255 (so with 174 registers two fit, although shared memory alone would allow three).
    """
    limits = _resolve_limits(sm)
    warps = as_int("num_warps", num_warps)
    wanted = as_int("programs_per_sm", programs_per_sm)
    if warps * 32 > limits.max_threads_per_block:
        raise ValueError(f"num_warps={warps} gives {warps * 32} threads, more than {limits.max_threads_per_block} per block")
    for regs in range(limits.max_regs_per_thread, 0, -1):
        if blocks_per_sm(regs, warps, 0, limits).by_regs >= wanted:
            return regs
    return None


def waves_per_sm(num_programs: int, num_sms: int, blocks_per_sm: int) -> float:
    """ncu's "Waves Per SM": ``num_programs / (num_sms × blocks_per_sm)`` (dimensionless).

    Blog (RTX 5090, 170 SMs, 2 blocks/SM): 170 programs → 0.50; 2,048 programs → 6.02.
    """
    num_programs = as_int("num_programs", num_programs)
    num_sms = as_int("num_sms", num_sms)
    bps = as_int("blocks_per_sm", blocks_per_sm)
    return num_programs / (num_sms * bps)


@dataclass(frozen=True)
class TileSplit:
    """How ``num_tiles`` tiles spread over programs that stride by ``num_programs``
    (``for tile_id in range(pid, num_tiles, num_programs)``)."""

    min_tiles: int
    max_tiles: int
    programs_with_max: int


def tiles_per_program(num_tiles: int, num_programs: int) -> TileSplit:
    """``min = ⌊T / P⌋``, ``max = ⌈T / P⌉``; ``programs_with_max = T mod P`` (all P when P divides T).

    Blog: 2,048 tiles on 340 programs → 6 or 7 tiles, 8 programs do 7.
    """
    T, P = as_int("num_tiles", num_tiles), as_int("num_programs", num_programs)
    lo, hi = T // P, cdiv(T, P)
    return TileSplit(lo, hi, P if lo == hi else T % P)


def persistent_grid(num_sms: int, programs_per_sm: int, num_tiles: int) -> int:
    """The blog's persistent grid: ``min(num_sms × programs_per_sm, num_tiles)`` programs (170 × 2 → 340)."""
    return min(as_int("num_sms", num_sms) * as_int("programs_per_sm", programs_per_sm),
               as_int("num_tiles", num_tiles))
