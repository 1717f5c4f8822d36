"""The tile-config search behind ``best_matmul``'s small-shape and large-shape choices (part
``small_configs`` of ``python -m gemm_lab.bench``: small_configs.csv).

Small shapes (500x600x300, 512^3, 1024^3, fp16 and bf16): every candidate config of the Tutorial-03
kernel and of ``hinted_matmul_kernel`` (sizes and strides with their divisibility passed as constexprs),
CUDA-graph GPU time beside torch.matmul's in the same run. Large shapes (4096^3, 8192^3): the TMA
persistent kernel's option sets. ``graph_ratio_to_torch`` = torch.matmul's graph time (median of its
timings through the shape's run) / the kernel's.
"""

from __future__ import annotations

from gemm_lab import kernels as K
from gemm_lab.bench.measure import bench_shape
from gemm_lab.bench.menu import cfg_name
from gemm_lab.timing import require_gpu

SMALL_SHAPES = ((500, 600, 300), (512, 512, 512), (1024, 1024, 1024))
LARGE_SHAPES = ((4096, 4096, 4096), (8192, 8192, 8192))
# (BM, BN, BK, stages, warps)
CANDIDATES = [
    (32, 32, 64, 4, 2), (32, 64, 64, 4, 4), (64, 32, 64, 4, 4), (64, 64, 64, 4, 4), (64, 64, 32, 5, 4),
    (64, 128, 64, 4, 4), (128, 64, 64, 4, 4), (128, 128, 64, 3, 8), (128, 128, 32, 4, 4), (64, 128, 32, 4, 4),
    (128, 64, 32, 4, 4), (32, 64, 128, 3, 4), (64, 32, 128, 3, 4), (64, 64, 128, 3, 4), (128, 64, 64, 3, 8),
    (64, 128, 64, 3, 8), (32, 32, 128, 3, 2), (64, 64, 64, 3, 8),
]
TMA_OPTIONS = [
    dict(num_stages=3, epilogue_subtile=True),
    dict(num_stages=4, epilogue_subtile=True),
    dict(num_stages=3, epilogue_subtile=True, flatten=True),
    dict(num_stages=3, epilogue_subtile=False, flatten=True),
    dict(num_stages=4, epilogue_subtile=True, warp_specialize=True),
    dict(num_stages=3, epilogue_subtile=True, warp_specialize=True),
]


def _small_menu(dtype):
    menu = []
    for bm, bn, bk, s, w in CANDIDATES:
        cfg = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_stages=s, num_warps=w)
        name = cfg_name(bm, bn, bk, s, w, 8)
        menu.append(("tutorial03", name, lambda a, b, out, cfg=cfg: K.matmul(a, b, out=out, **cfg)))
        menu.append(("hinted", name, lambda a, b, out, cfg=cfg: K.hinted_matmul(a, b, out=out, **cfg)))
    return menu


def _tma_menu():
    menu = []
    for opts in TMA_OPTIONS:
        ws = opts.get("warp_specialize", False)
        name = f"128x256x64 s{opts['num_stages']} w8 G8" + (" subtile" if opts["epilogue_subtile"] else "") + \
            (" flatten" if opts.get("flatten") else "") + (" ws" if ws else "")
        menu.append(("tma_persistent", name, lambda a, b, out, o=opts: K.tma_persistent_matmul(
            a, b, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_warps=8, out=out, **o)))
    return menu


def small_config_rows(dtypes=("fp16", "bf16"), rep: int = 20, large: bool = True, log=print):
    """One row per (shape, dtype, kernel, config): CUDA-graph time and ratio, and do_bench time."""
    rows = []
    jobs = [(s, _small_menu) for s in SMALL_SHAPES] + ([(s, lambda d: _tma_menu()) for s in LARGE_SHAPES] if large else [])
    for (M, N, Kd), menu in jobs:
        for dtype in dtypes:
            part = bench_shape(M, N, Kd, dtype, menu(dtype), warmup=5, rep=rep, graph=True, paired=False)
            rows += part
            ranked = sorted((r for r in part[1:] if r["graph_ms"] == r["graph_ms"]), key=lambda r: r["graph_ms"])
            for r in ranked[:4]:
                log(f"[small] {dtype} {M}x{N}x{Kd} {r['kernel']:14s} {r['config']:24s} graph {r['graph_ms'] * 1e3:7.2f} us "
                    f"ratio {r['graph_ratio_to_torch']:.3f}")
    return rows


if __name__ == "__main__":  # pragma: no cover - GPU only
    import sys

    import pandas as pd

    require_gpu()
    df = pd.DataFrame(small_config_rows())
    df.to_csv(sys.argv[1] if len(sys.argv) > 1 else "small_configs.csv", index=False)
