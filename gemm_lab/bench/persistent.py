"""The persistent-kernel case study's tables: grid = p x SMs, each persistent variant, GROUP_M = 1 vs 8,
the TMA kernel's option search, and what the kernels compile to on the live GPU."""

from __future__ import annotations

from gemm_lab import kernels as K
from gemm_lab.bench.measure import bench_shape, env_info
from gemm_lab.bench.menu import best_tma_options, cfg_name, tma_name
from gemm_lab.timing import DEFAULT_REP_MS, DEFAULT_WARMUP_MS


def bench_persistent_programs(sizes=(4096, 8192), programs=(1, 2, 3, 4), warmup=DEFAULT_WARMUP_MS,
                              rep=DEFAULT_REP_MS):
    """The blog's experiment: naive persistent kernel with grid = p x SMs, against the naive tiled one."""
    import pandas as pd

    rows = []
    for s in sizes:
        menu = [("blog_tiled", cfg_name(128, 64, 32, 4, 4), lambda a, b, out: K.naive_tiled_matmul(a, b, out=out))]
        for p in programs:
            menu.append(("persistent_naive", cfg_name(128, 64, 32, 4, 4, extra=f" grid={p}xSMs"),
                         lambda a, b, out, p=p: K.persistent_matmul(a, b, variant="naive", programs_per_sm=p, out=out)))
        part = bench_shape(s, s, s, "fp16", menu, warmup, rep)
        tiled_ms = part[1]["ms"]
        for r, p in zip(part, [None, None] + list(programs), strict=True):
            r["programs_per_sm"] = p
            r["num_programs"] = None if p is None else K.persistent.num_programs(s, s, 128, 64, p)
            r["ratio_to_tiled"] = tiled_ms / r["ms"] if r["ms"] == r["ms"] else float("nan")
        rows += part
    return pd.DataFrame(rows)


def bench_persistent_variants(sizes=(4096, 8192), warmup=DEFAULT_WARMUP_MS, rep=DEFAULT_REP_MS):
    """Each persistent variant (and the tiled kernels they grew from) against torch.matmul."""
    import pandas as pd

    tma = best_tma_options()
    menu = [
        ("blog_tiled", cfg_name(128, 64, 32, 4, 4), lambda a, b, out: K.naive_tiled_matmul(a, b, out=out)),
        ("autotuned", "autotune", lambda a, b, out: K.matmul_autotuned(a, b, out=out)),
        ("persistent_naive", cfg_name(128, 64, 32, 4, 4, extra=" grid=1xSMs"),
         lambda a, b, out: K.persistent_matmul(a, b, variant="naive", out=out)),
        ("persistent_grouped", cfg_name(128, 64, 32, 4, 4, 8, " grid=2xSMs"),
         lambda a, b, out: K.persistent_matmul(a, b, variant="grouped", programs_per_sm=2, out=out)),
        ("persistent_grouped", cfg_name(128, 128, 64, 4, 4, 8, " grid=2xSMs"),
         lambda a, b, out: K.persistent_matmul(a, b, variant="grouped", BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
                                               num_stages=4, num_warps=4, programs_per_sm=2, out=out)),
        ("persistent_grouped", cfg_name(128, 256, 64, 3, 8, 8, " flatten grid=1xSMs"),
         lambda a, b, out: K.persistent_matmul(a, b, variant="grouped", BLOCK_M=128, BLOCK_N=256, BLOCK_K=64,
                                               num_stages=3, num_warps=8, flatten=True, out=out)),
    ]
    base = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_stages=3, num_warps=8, epilogue_subtile=False,
                flatten=False, warp_specialize=False)
    variants = [base, dict(base, epilogue_subtile=True), dict(base, flatten=True),
                dict(base, num_stages=4, epilogue_subtile=True, warp_specialize=True)]
    if tma not in variants:
        variants.append(tma)
    for o in variants:
        menu.append(("persistent_tma", tma_name(o), lambda a, b, out, o=o: K.tma_persistent_matmul(a, b, out=out, **o)))
    rows = []
    for s in sizes:
        rows += bench_shape(s, s, s, "fp16", menu, warmup, rep)
    return pd.DataFrame(rows)


def bench_group_order(size=8192, warmup=DEFAULT_WARMUP_MS, rep=DEFAULT_REP_MS):
    """GROUP_M = 1 (row-major) against 8 for small and large tiles of the Tutorial-03 kernel."""
    import pandas as pd

    configs = [(64, 32, 32, 5, 2), (64, 64, 32, 4, 4), (128, 64, 32, 4, 4), (128, 128, 32, 4, 4), (128, 256, 64, 3, 8)]
    menu = []
    for bm, bn, bk, s, w in configs:
        for g in (1, 8):
            menu.append(("tutorial03", cfg_name(bm, bn, bk, s, w, g),
                         lambda a, b, out, bm=bm, bn=bn, bk=bk, s=s, w=w, g=g: K.matmul(
                             a, b, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=g, num_stages=s, num_warps=w, out=out)))
    rows = bench_shape(size, size, size, "fp16", menu, warmup, rep)
    df = pd.DataFrame(rows)
    df["GROUP_M"] = [None] + [g for _ in configs for g in (1, 8)]
    df["tile"] = [None] + [f"{bm}x{bn}x{bk} s{s} w{w}" for bm, bn, bk, s, w in configs for _ in (1, 8)]
    speed = {}
    for _, r in df.iloc[1:].iterrows():
        speed.setdefault(r["tile"], {})[r["GROUP_M"]] = r["ms"]
    df["speedup_G8_over_G1"] = [None] + [speed[t][1] / speed[t][8] for t in df["tile"].iloc[1:]]
    return df


def compiled_kernels_table():
    """shared / n_regs / n_spills of the naive tiled and persistent kernels (and the seed configs),
    compiled for the live GPU (registers and spills exist only there)."""
    import pandas as pd

    from gemm_lab.calc.roofline import BLOG_CONFIG, SEED_CONFIGS
    from gemm_lab.compile import compile_artifacts

    env = env_info()
    rows = []
    jobs = [("blog_tiled", BLOG_CONFIG, True), ("persistent", BLOG_CONFIG, True),
            ("grouped_persistent", BLOG_CONFIG, True)]
    jobs += [("matmul", c, True) for c in SEED_CONFIGS] + [("matmul", c, False) for c in SEED_CONFIGS]
    for kernel, cfg, aligned in jobs:
        art = compile_artifacts(kernel, cfg, target=None, aligned=aligned)
        row = art.summary()
        rows.append(dict(env, kernel=kernel, config=cfg_name(cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K, cfg.num_stages,
                                                              cfg.num_warps),
                         aligned=aligned, target=art.target, shared=row["shared"], n_regs=row["n_regs"],
                         n_spills=row["n_spills"], num_warps=row["num_warps"], num_stages=row["num_stages"],
                         mma=row["mma"], load_error=art.metadata.get("load_error", "")))
    return pd.DataFrame(rows)


def bench_tma_configs(sizes=(4096, 8192), warmup=25, rep=150, options_list=None):
    """A search over the TMA persistent kernel's options; returns the DataFrame (best first per size)."""
    import pandas as pd

    if options_list is None:
        options_list = []
        for bm, bn, bk, s, w in [(128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (256, 128, 64, 3, 8),
                                 (256, 128, 64, 4, 8), (128, 128, 64, 4, 4), (128, 128, 64, 5, 8),
                                 (128, 256, 32, 5, 8)]:
            for sub in (False, True):
                for flat in (False, True):
                    options_list.append(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_stages=s, num_warps=w,
                                             epilogue_subtile=sub, flatten=flat, warp_specialize=False))
        for bm, bn, bk, s, w in [(128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (128, 128, 64, 4, 4)]:
            options_list.append(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_stages=s, num_warps=w,
                                     epilogue_subtile=True, flatten=False, warp_specialize=True))
    menu = [("persistent_tma", tma_name(o), lambda a, b, out, o=o: K.tma_persistent_matmul(a, b, out=out, **o))
            for o in options_list]
    rows = []
    for s in sizes:
        part = bench_shape(s, s, s, "fp16", menu, warmup, rep)
        for r, o in zip(part, [None] + options_list, strict=True):
            r["options"] = "" if o is None else repr(o)
        rows += part
    return pd.DataFrame(rows)
