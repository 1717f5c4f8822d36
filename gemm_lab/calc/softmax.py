"""Week 6 (seed §4): 1-D block offsets and masks, and HBM traffic of naive vs fused softmax.

Sizes in elements, bytes in bytes, times in ms, bandwidth in GB/s (10^9 B/s).

Naive softmax (Tutorial 02's ``naive_softmax``, five PyTorch kernels on an ``M × N`` matrix) moves
``5MN + 2M`` reads + ``3MN + 2M`` writes = ``8MN + 4M`` elements (≈ ``8MN``); the fused kernel reads X
once and writes Y once: ``2MN`` elements. Memory time = bytes / bandwidth (no cache hits between kernels).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._validate import as_int, as_real, check_table, is_power_of_two
from .devices import VIRTUAL_DEVICE_FP32, Device
from .tiling import cdiv

__all__ = ["block_offsets", "SoftmaxTraffic", "softmax_traffic", "naive_softmax_passes", "effective_gbps"]


def block_offsets(N: int, BLOCK_SIZE: int):
    """DataFrame ``pid, offsets, mask``: ``offsets = pid × BLOCK_SIZE + arange(BLOCK_SIZE)`` (list of
    ints), ``mask = offsets < N`` (list of bools), for ``pid`` in ``0 … cdiv(N, BLOCK_SIZE) − 1``.

    N=10, BLOCK_SIZE=4 → grid 3; pid 2: offsets 8…11, mask True, True, False, False.
    ``BLOCK_SIZE`` must be a power of two (``tl.arange`` needs it); the table is bounded
    (``ValueError`` past ``MAX_TABLE_CELLS`` offsets).
    """
    import pandas as pd

    N, B = as_int("N", N), as_int("BLOCK_SIZE", BLOCK_SIZE)
    if not is_power_of_two(B):
        raise ValueError(f"BLOCK_SIZE must be a power of two (tl.arange needs it), got {B}")
    check_table("N, BLOCK_SIZE", cdiv(N, B) * B)
    rows = []
    for pid in range(cdiv(N, B)):
        offs = [pid * B + i for i in range(B)]
        rows.append({"pid": pid, "offsets": offs, "mask": [o < N for o in offs]})
    return pd.DataFrame(rows, columns=["pid", "offsets", "mask"])


@dataclass(frozen=True)
class SoftmaxTraffic:
    """HBM traffic of both paths: elements, bytes, ms, and ``speedup = naive_ms / fused_ms`` (×).

    ``*_approx`` use ``8MN`` (the length-M vectors dropped); ``row_bytes = N × dtype_bytes``.
    """

    naive_elems: int
    naive_elems_approx: int
    fused_elems: int
    naive_bytes: int
    fused_bytes: int
    row_bytes: int
    naive_ms: float
    fused_ms: float
    speedup: float
    naive_bytes_approx: int = 0
    naive_ms_approx: float = 0.0
    speedup_approx: float = 0.0


def softmax_traffic(M: int, N: int, dtype_bytes: int = 4, device: Device = VIRTUAL_DEVICE_FP32) -> SoftmaxTraffic:
    """Naive ``8MN + 4M`` vs fused ``2MN`` elements, in bytes and ms at ``device.bandwidth_gbs``.

    Seed (M=4096, N=1024, fp32, 1 TB/s): 134,283,264 B (≈ 134,217,728) vs 33,554,432 B;
    0.1343 vs 0.0336 ms; speed-up 4.0020 (≈ 4); one row = 4,096 B = 4 KiB.
    """
    M, N, b = as_int("M", M), as_int("N", N), as_int("dtype_bytes", dtype_bytes)
    if not isinstance(device, Device):
        raise TypeError(f"device must be a Device, got {type(device).__name__}")
    bw = device.bandwidth_gbs * 1e9
    naive = 8 * M * N + 4 * M
    approx = 8 * M * N
    fused = 2 * M * N
    naive_ms, fused_ms, approx_ms = naive * b / bw * 1e3, fused * b / bw * 1e3, approx * b / bw * 1e3
    return SoftmaxTraffic(naive, approx, fused, naive * b, fused * b, N * b, naive_ms, fused_ms,
                          naive_ms / fused_ms, approx * b, approx_ms, approx_ms / fused_ms)


def naive_softmax_passes(M: int, N: int, dtype_bytes: int = 4):
    """DataFrame of the five kernels of ``naive_softmax``: ``step, op, reads, writes`` (elements) and
    ``read_bytes, write_bytes``. Totals: reads ``5MN + 2M``, writes ``3MN + 2M``."""
    import pandas as pd

    M, N, b = as_int("M", M), as_int("N", N), as_int("dtype_bytes", dtype_bytes)
    MN = M * N
    steps = [
        ("x_max = x.max(dim=1)[0]", MN, M),
        ("z = x - x_max[:, None]", MN + M, MN),
        ("numerator = torch.exp(z)", MN, MN),
        ("denominator = numerator.sum(dim=1)", MN, M),
        ("ret = numerator / denominator[:, None]", MN + M, MN),
    ]
    df = pd.DataFrame(
        [{"step": i + 1, "op": op, "reads": r, "writes": w, "read_bytes": r * b, "write_bytes": w * b}
         for i, (op, r, w) in enumerate(steps)])
    return df


def effective_gbps(M: int, N: int, ms: float, dtype_bytes: int = 4) -> float:
    """Tutorial 02's effective bandwidth: ``2 × M × N × dtype_bytes / (ms × 1e-3) / 1e9`` GB/s."""
    M, N, b = as_int("M", M), as_int("N", N), as_int("dtype_bytes", dtype_bytes)
    ms = as_real("ms", ms, positive=True)
    return 2 * M * N * b / (ms * 1e-3) / 1e9
