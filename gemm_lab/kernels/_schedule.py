"""Tile scheduling shared by the persistent kernels (pointer and tensor-descriptor variants):
the grouped tile order, the SM count and the persistent grid. Both ``persistent`` and
``persistent_tma`` import from here, so neither imports the other at module level."""

from __future__ import annotations

import triton
import triton.language as tl

from gemm_lab import runtime

from . import _validate as v

INTERPRETER_NUM_SMS = 4


@triton.jit
def tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_M: tl.constexpr):
    """Tutorial 03's grouped order as a function: tile index -> (pid_m, pid_n)."""
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


def resolve_num_sms(num_sms: int | None) -> int:
    if num_sms is not None:
        return v.check_positive_int("num_sms", num_sms)
    return runtime.num_sms() if runtime.on_gpu() else INTERPRETER_NUM_SMS


def num_programs(M: int, N: int, BLOCK_M: int, BLOCK_N: int, programs_per_sm: int = 1,
                 num_sms: int | None = None) -> int:
    """The blog's grid: min(num_sms * programs_per_sm, num_tiles)."""
    num_tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    return max(1, min(resolve_num_sms(num_sms) * programs_per_sm, num_tiles))
