"""The sweep's kernel menu: (kernel, config label, fn(a, b, out)) for every launcher, and the TMA kernel's
options the sweep uses."""

from __future__ import annotations

from gemm_lab import kernels as K


def cfg_name(bm, bn, bk, s, w, g=None, extra=""):
    return f"{bm}x{bn}x{bk} s{s} w{w}" + (f" G{g}" if g is not None else "") + extra


def config_text(cfg: dict) -> str:
    """``BMxBNxBK sS wW [splitN]`` of a launch-parameter dict (either naming, BLOCK_M or BLOCK_SIZE_M)."""
    g = {k.replace("BLOCK_SIZE_", "BLOCK_"): v for k, v in cfg.items()}
    txt = f"{g.get('BLOCK_M')}x{g.get('BLOCK_N')}x{g.get('BLOCK_K')} s{g.get('num_stages')} w{g.get('num_warps')}"
    return txt + (f" split{g['split_k']}" if "split_k" in g else "")


def matmul_menu(include_slow: bool = True) -> list[tuple[str, str, object]]:
    """(kernel, config, fn(a, b, out)) for the sweep; torch.matmul is always measured separately."""
    menu = []
    seeds = [(64, 32, 32, 5, 2), (128, 128, 32, 4, 4), (128, 256, 64, 3, 8)]
    for bm, bn, bk, s, w in seeds if include_slow else seeds[1:]:
        def f(a, b, out, bm=bm, bn=bn, bk=bk, s=s, w=w):
            return K.matmul(a, b, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_stages=s, num_warps=w, out=out)
        menu.append(("tutorial03", cfg_name(bm, bn, bk, s, w, 8), f))
    menu.append(("autotuned", "autotune", lambda a, b, out: K.matmul_autotuned(a, b, out=out)))
    menu.append(("best_matmul", "auto", lambda a, b, out: K.best_matmul(a, b, out=out)))
    menu.append(("blog_tiled", cfg_name(128, 64, 32, 4, 4), lambda a, b, out: K.naive_tiled_matmul(a, b, out=out)))
    for pps in (1, 2):
        menu.append((f"persistent_naive_x{pps}", cfg_name(128, 64, 32, 4, 4, extra=f" grid={pps}xSMs"),
                     lambda a, b, out, pps=pps: K.persistent_matmul(a, b, variant="naive", programs_per_sm=pps, out=out)))
    menu.append(("persistent_grouped", cfg_name(128, 128, 64, 4, 4, 8, " grid=2xSMs"),
                 lambda a, b, out: K.persistent_matmul(a, b, variant="grouped", BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
                                                       num_stages=4, num_warps=4, programs_per_sm=2, out=out)))
    tma = best_tma_options()
    menu.append(("persistent_tma", tma_name(tma), lambda a, b, out: K.tma_persistent_matmul(a, b, out=out, **tma)))
    return menu


# the TMA kernel's options used by the sweep: among the best of bench_tma_configs() on the H200
# (2026-12-02: within noise of the other top options; see results/tma_configs.csv). --tma overrides it.
TMA_BEST = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_stages=3, num_warps=8, epilogue_subtile=False,
                flatten=True, warp_specialize=False)


def best_tma_options() -> dict:
    return dict(TMA_BEST)


def tma_name(opts: dict) -> str:
    extra = "".join([" subtile" if opts.get("epilogue_subtile") else "", " flatten" if opts.get("flatten") else "",
                     " ws" if opts.get("warp_specialize") else "",
                     f" grid={opts['programs_per_sm']}xSMs" if opts.get("programs_per_sm", 1) != 1 else ""])
    return cfg_name(opts["BLOCK_M"], opts["BLOCK_N"], opts["BLOCK_K"], opts["num_stages"], opts["num_warps"],
                     opts.get("GROUP_M", 8), extra)

