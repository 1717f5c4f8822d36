"""Fused softmax against torch.softmax and the naive five-pass version (softmax.csv)."""

from __future__ import annotations

from gemm_lab import runtime  # noqa: F401  (before torch/triton: sets up the interpreter on a CPU)

# isort: split
import torch

from gemm_lab import kernels as K
from gemm_lab.bench.measure import env_info
from gemm_lab.timing import DEFAULT_REP_MS, DEFAULT_WARMUP_MS, do_bench_ms, gbps, require_gpu


def bench_softmax(shapes=((4096, 1024), (4096, 4096), (4096, 16384)), warmup=DEFAULT_WARMUP_MS, rep=DEFAULT_REP_MS):
    """Fused softmax vs torch.softmax vs the naive five-pass version (fp32), in GB/s of 2MN elements."""
    import pandas as pd

    require_gpu()
    env = env_info()
    rows = []
    for M, N in shapes:
        x = torch.randn(M, N, device="cuda")
        for name, fn in (("triton_fused", lambda x=x: K.softmax(x)),
                         ("torch.softmax", lambda x=x: torch.softmax(x, dim=1)),
                         ("naive_5_pass", lambda x=x: K.naive_softmax(x))):
            err = K.relative_error(fn(), torch.softmax(x.double(), dim=1))
            ms = do_bench_ms(fn, warmup, rep)
            rows.append(dict(env, M=M, N=N, dtype="fp32", kernel=name, ms=ms, gbps=gbps(2 * M * N * 4, ms),
                             rel_err=err))
    return pd.DataFrame(rows)
