"""Where a launch's CPU time goes (host_overhead.csv)."""

from __future__ import annotations

from gemm_lab import runtime  # noqa: F401  (before torch/triton: sets up the interpreter on a CPU)

# isort: split
import torch
import triton

from gemm_lab import kernels as K
from gemm_lab.bench.measure import env_info, random_inputs
from gemm_lab.bench.menu import best_tma_options, cfg_name, tma_name
from gemm_lab.timing import host_us, require_gpu


def bench_host_overhead(size: int = 1024, n: int = 200):
    """CPU microseconds per call of each launcher and of its pieces (input checks, tensor descriptors,
    Triton's own launch of the compiled kernel), at one shape: where the time of a launch-bound small
    matmul goes. Measured at 1024^3, where every kernel is faster on the GPU than its launch on the host,
    so the launch queue never fills."""
    import pandas as pd

    from gemm_lab.kernels.matmul import check_tile, validate_matmul
    from gemm_lab.kernels.persistent import num_programs
    from gemm_lab.kernels.persistent_tma import TensorDescriptor

    require_gpu()
    env = env_info()
    a, b = random_inputs(size, size, size)
    out = torch.empty((size, size), device=a.device, dtype=a.dtype)
    M = N = Kd = size
    tile = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=4)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))

    def matmul_direct():
        K.matmul_kernel[grid](a, b, out, M, N, Kd, *strides, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32,
                              GROUP_SIZE_M=8, ACTIVATION="", num_warps=4, num_stages=4)

    def matmul_checks():
        validate_matmul(a, b, out, None)
        check_tile(128, 128, 32, 8, 4, 4)

    tma = best_tma_options()
    bm, bn, bk = tma["BLOCK_M"], tma["BLOCK_N"], tma["BLOCK_K"]

    def descriptors():
        return (TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bk, bn]),
                TensorDescriptor.from_tensor(out, [bm, bn]))

    descs = descriptors()
    P = num_programs(M, N, bm, bn, 1)

    def tma_direct():
        K.tma_persistent_kernel[(P,)](
            *descs, M, N, Kd, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, NUM_PROGRAMS=P, A_TRANS=False,
            B_TRANS=False, EPILOGUE_SUBTILE=False, FLATTEN=bool(tma["flatten"]), WARP_SPECIALIZE=False,
            ACTIVATION="", num_warps=tma["num_warps"], num_stages=tma["num_stages"])

    jobs = [
        ("torch.matmul", "cuBLAS", lambda: torch.matmul(a, b, out=out)),
        ("matmul (launcher)", cfg_name(128, 128, 32, 4, 4, 8), lambda: K.matmul(a, b, out=out, **tile)),
        ("matmul: input checks only", "", matmul_checks),
        ("matmul: matmul_kernel[grid](...) only", cfg_name(128, 128, 32, 4, 4, 8), matmul_direct),
        ("autotuned (launcher)", "autotune", lambda: K.matmul_autotuned(a, b, out=out)),
        ("persistent naive (launcher)", cfg_name(128, 64, 32, 4, 4, extra=" grid=1xSMs"),
         lambda: K.persistent_matmul(a, b, variant="naive", out=out)),
        ("persistent_tma (launcher)", tma_name(tma), lambda: K.tma_persistent_matmul(a, b, out=out, **tma)),
        ("persistent_tma: three TensorDescriptor.from_tensor only", "", descriptors),
        ("persistent_tma: tma_persistent_kernel[grid](...) only", tma_name(tma), tma_direct),
    ]
    rows = []
    for what, config, fn in jobs:
        fn()  # compile / autotune outside the timing
        torch.cuda.synchronize()
        rows.append(dict(env, M=M, N=N, K=Kd, dtype="fp16", call=what, config=config, host_us=host_us(fn, n)))
    from gemm_lab.bench.best import host_overhead_rows

    return pd.DataFrame(rows + host_overhead_rows(size, n))
