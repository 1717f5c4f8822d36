"""What divisibility hints change in the compiled code, for week 7 notebook 05 §4.

``hint_ptx_table(M, N, K)`` cross-compiles the Tutorial-03 kernel and ``hinted_matmul_kernel`` for
row-major fp16 operands of that shape (as Triton would specialize them at launch: an integer equal to 1 is
a constant, one divisible by 16 is marked so) and counts the global-memory instructions in their PTX:
2-byte scalar loads, ``cp.async`` copies by width (asynchronous, so the K loop is pipelined), vector and
scalar stores. ``best_small_configs()`` reads ``small_configs.csv`` (measured on a GPU) and keeps the
fastest config of each kernel per shape and dtype.
"""

from __future__ import annotations

import re

from gemm_lab import compile as C

CONFIG = dict(BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, ACTIVATION="")


def _spec(M: int, N: int, K: int, hinted: bool) -> tuple[dict, dict, tuple]:
    from gemm_lab.kernels.hinted import even_flags, hint

    values = dict(M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1)
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"}
    consts = dict(CONFIG)
    divisible = ["a_ptr", "b_ptr", "c_ptr"]
    for name, value in values.items():
        d = hint(value) if hinted else 1
        arg = f"{name}_q" if hinted else name
        if hinted:
            consts[f"D_{name}"] = d
        if value // d == 1:
            consts[arg] = 1
        else:
            sig[arg] = "i32"
            if (value // d) % 16 == 0:
                divisible.append(arg)
    if hinted:
        consts.update(even_flags(M, N, K, CONFIG))
    return sig, consts, tuple(divisible)


def ptx_counts(ptx: str) -> dict:
    """Global-memory instructions of a PTX text: scalar 2-byte loads, cp.async by width, stores."""
    widths = [int(w, 16) if w.startswith("0x") else int(w) for w in re.findall(
        r"cp\.async\.c[ag]\.shared\.global \[[^\]]*\], \[[^\]]*\], (0x[0-9a-f]+|\d+)", ptx)]
    return {"ld.global 2 B": len(re.findall(r"ld\.global[.a-z]*\.b16 ", ptx)),
            "cp.async 4 B": widths.count(4), "cp.async 8 B": widths.count(8), "cp.async 16 B": widths.count(16),
            "st.global vector": len(re.findall(r"st\.global[.a-z]*\.v[248]", ptx)),
            "st.global scalar": len(re.findall(r"st\.global[.a-z]*\.b(?:16|32) ", ptx))}


def hint_ptx(M: int, N: int, K: int, hinted: bool, target: str = "sm_90", num_stages: int = 4) -> str:
    """The PTX of one of the two kernels for row-major fp16 M x K @ K x N (64x64x32 tiles)."""
    from gemm_lab.kernels.hinted import hinted_matmul_kernel
    from gemm_lab.kernels.matmul import matmul_kernel

    sig, consts, divisible = _spec(M, N, K, hinted)
    fn = hinted_matmul_kernel if hinted else matmul_kernel
    return C.compile_jit(fn, sig, consts, target, num_warps=4, num_stages=num_stages, divisible=divisible).ptx


def hint_ptx_table(M: int = 500, N: int = 600, K: int = 300, target: str = "sm_90") -> list[dict]:
    """One row per kernel: the shape's specialization and what the compiler emitted for it."""
    rows = []
    for hinted in (False, True):
        rows.append({"kernel": "hinted_matmul_kernel" if hinted else "matmul_kernel (Tutorial 03)",
                     "shape": f"{M}x{N}x{K}", "target": target, **ptx_counts(hint_ptx(M, N, K, hinted, target))})
    return rows


def best_small_configs(df=None):
    """Per (M, N, K, dtype, kernel) the fastest config of ``small_configs.csv`` (CUDA-graph time), or None."""
    if df is None:
        from gemm_lab import results

        df = results.load_csv("small_configs.csv")
        if df is None:
            return None
    df = df[df.kernel != "torch.matmul"].dropna(subset=["graph_ms"])
    best = df.loc[df.groupby(["M", "N", "K", "dtype", "kernel"]).graph_ms.idxmin()]
    return best[["M", "N", "K", "dtype", "kernel", "config", "graph_ms", "graph_ratio_to_torch"]].reset_index(drop=True)
