"""best_matmul against torch.matmul at the shapes with a target ratio: three rounds, medians.

Each round runs ``gemm_lab.bench.bench_shape`` with best_matmul alone (torch.matmul timed before and
after it in the same run), with do_bench and CUDA-graph times; ``best_rounds`` keeps every round,
``best_summary`` the median ratio per (shape, dtype) next to the target. Part ``best`` of
``python -m gemm_lab.bench`` (best_matmul.csv, best_matmul_summary.csv)."""

from __future__ import annotations

import torch

from gemm_lab import kernels as K
from gemm_lab import runtime
from gemm_lab.bench.measure import DTYPES, bench_shape, env_info, random_inputs
from gemm_lab.bench.menu import config_text
from gemm_lab.timing import do_bench_ms, graph_bench_ms, host_us, tflops

# (M, N, K) -> target ratio (torch.matmul time / best_matmul time) this project holds best_matmul to
TARGETS = {(1024, 1024, 1024): 0.90, (2048, 2048, 2048): 0.90, (500, 600, 300): 0.90, (512, 512, 512): 0.80,
           (4096, 4096, 4096): 1.00, (8192, 8192, 8192): 1.00}


def best_name(tune_for: str = "graph") -> str:
    return "best_matmul" if tune_for == "graph" else f"best_matmul(tune_for='{tune_for}')"


def best_menu(tune_for: str = "graph"):
    return [(best_name(tune_for), "auto", lambda a, b, out: K.best_matmul(a, b, out=out, tune_for=tune_for))]


# part ``best_eager``: the shapes where the launch costs more CPU time than the kernel takes on the GPU
EAGER_SHAPES = ((500, 600, 300), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048))


def best_rounds(shapes=None, dtypes=("fp16", "bf16"), rounds: int = 3, warmup: int = 25, rep: int = 100,
                csv_path: str | None = None, tune_for: str = "graph"):
    import pandas as pd

    from gemm_lab.kernels.best import explain

    rows = []
    for r in range(rounds):
        for M, N, Kd in shapes or TARGETS:
            for dtype in dtypes:
                part = bench_shape(M, N, Kd, dtype, best_menu(tune_for), warmup, rep, seed=r, graph=True)
                ch = explain(M, N, Kd, DTYPES[dtype])
                for row in part:
                    row["round"] = r
                    if row["kernel"] == best_name(tune_for):
                        plan = _plan_for(M, N, Kd, dtype, tune_for)
                        tuned = f" [timed fastest: {plan.tuned[0]} {config_text(plan.tuned[1])}]" if plan and plan.tuned else ""
                        row["config"] = f"{ch.kernel}: {ch.reason}{tuned}"
                rows += part
                if csv_path:  # rewritten after every shape: a run cut short keeps what it measured
                    pd.DataFrame(rows).to_csv(csv_path, index=False)
                print(f"[best] round {r} {dtype} {M}x{N}x{Kd}: do_bench {part[1]['ratio_to_torch']:.3f} "
                      f"graph {part[1]['graph_ratio_to_torch']:.3f} ({ch.kernel})", flush=True)
    return pd.DataFrame(rows)


def _plan_for(M, N, Kd, dtype, tune_for):
    """The cached plan best_matmul made for contiguous (M, K) x (K, N) inputs and a new output, if any
    (fresh allocations are 16-byte aligned, like bench_shape's inputs, so the key is the same)."""
    from gemm_lab.kernels import best as B

    a = torch.empty((M, Kd), dtype=DTYPES[dtype], device=runtime.device())
    b = torch.empty((Kd, N), dtype=a.dtype, device=a.device)
    return B._PLANS.get(B._key(a, b, None, None, tune_for))


def best_summary(df, kernel: str = "best_matmul"):
    """Median over rounds of each ratio, per (M, N, K, dtype), with the target and met / gap."""
    import pandas as pd

    mine = df[df.kernel == kernel]
    out = []
    for (M, N, Kd, dtype), g in mine.groupby(["M", "N", "K", "dtype"]):
        target = TARGETS.get((M, N, Kd), float("nan"))
        graph = float(g.graph_ratio_to_torch.median())
        dob = float(g.ratio_to_torch.median())
        out.append(dict(gpu=g.gpu.iloc[0], torch=g.torch.iloc[0], triton=g.triton.iloc[0], date=g.date.iloc[0],
                        M=M, N=N, K=Kd, dtype=dtype, choice=g.config.iloc[0].split(":")[0],
                        graph_ratio_median=graph, do_bench_ratio_median=dob,
                        graph_ratios=" ".join(f"{x:.3f}" for x in g.graph_ratio_to_torch),
                        do_bench_ratios=" ".join(f"{x:.3f}" for x in g.ratio_to_torch),
                        rel_err_max=float(g.rel_err.max()), rounds=len(g), target=target,
                        met="met" if graph >= target else f"gap {graph - target:+.3f}"))
    return pd.DataFrame(out)


def host_overhead_rows(size: int = 1024, n: int = 200):
    """CPU microseconds per call of best_matmul (cached plan) beside torch.matmul, at size^3 fp16."""
    env = env_info()
    a, b = random_inputs(size, size, size)
    out = torch.empty((size, size), device=a.device, dtype=a.dtype)
    rows = []
    for what, fn in (("torch.matmul", lambda: torch.matmul(a, b, out=out)),
                     ("best_matmul (launcher, cached plan)", lambda: K.best_matmul(a, b, out=out)),
                     ("best_matmul (launcher, new output each call)", lambda: K.best_matmul(a, b))):
        fn()
        fn()
        torch.cuda.synchronize()
        ch = K.best_matmul.explain(size, size, size, a.dtype)
        rows.append(dict(env, M=size, N=size, K=size, dtype="fp16", call=what,
                         config="cuBLAS" if what == "torch.matmul" else ch.kernel, host_us=host_us(fn, n)))
    return rows


def host_breakdown_rows(sizes=(1024, 2048), n: int = 500):
    """Where best_matmul's CPU time per call goes (cached plan, fp16, ``out`` given): each step of its
    repeat-call path timed alone, beside torch.matmul and a bare compiled-kernel launch (the floor)."""
    return [row for size in sizes for row in _host_steps(size, n)]


def _host_steps(size: int, n: int):
    from gemm_lab.kernels import best as B
    from gemm_lab.kernels import best_kernels as BK

    env = env_info()
    a, b = random_inputs(size, size, size)
    out = torch.empty((size, size), device=a.device, dtype=a.dtype)
    K.best_matmul(a, b, out=out)
    K.best_matmul(a, b, out=out)
    plan = B._PLANS[B._key(a, b, out, None)]
    steps = [("torch.matmul(out=)", lambda: torch.matmul(a, b, out=out)),
             ("best_matmul(out=), whole call", lambda: K.best_matmul(a, b, out=out)),
             ("  _key(a, b, out)", lambda: B._key(a, b, out, None)),
             ("  check_no_overlap(out, a, b)", lambda: B.v.check_no_overlap("out", out, a=a, b=b)),
             ("  plan.run(a, b, out)", lambda: plan.run(a, b, out)),
             ("torch.empty(M, N)", lambda: torch.empty((size, size), device=a.device, dtype=a.dtype))]
    kern = plan.kernel
    if kern.kind == "tma":  # the TMA kernel: chosen for the shape, or timed fastest by the tuner
        p = kern.cfg
        steps.append(("  3 x TensorDescriptor(...) (built anew)", lambda: [BK.TensorDescriptor(
            t, t.shape, t.stride(), [p["BLOCK_M"], p["BLOCK_K"]]) for t in (a, b, out)]))
        steps.append(("  3 x _desc_like(template, t) (what plan.run does)", lambda: [
            BK._desc_like(d, t) for d, t in zip(kern.descs, (a, b, out), strict=True)]))
    else:
        steps.append(("  plan.go(a, b, out) (the pinned launch path, no key)", lambda: plan.go(a, b, out)))
    rows = []
    for what, fn in steps:
        fn()
        what_runs = plan.choice.kernel + (f" -> {plan.pinned[0]} ({plan.source})" if plan.pinned else "")
        rows.append(dict(env, M=size, N=size, K=size, dtype="fp16", plan=what_runs, step=what,
                         host_us=host_us(fn, n)))
        print(f"[host] {size}^3 {what_runs:15s} {what:55s} {rows[-1]['host_us']:7.1f} us", flush=True)
    return rows


def fp8_rows(sizes=(4096, 8192), warmup: int = 25, rep: int = 100, rounds: int = 3):
    """fp8 e4m3 (fp16 out) fp8_matmul against torch._scaled_mm, same inputs and run, per-tensor scale 1.

    Triton's fp8 ``tl.dot`` on sm_90 accumulates in the wgmma's reduced-precision accumulator
    (``max_num_imprecise_acc_default = 2**30``: never promoted), like ``_scaled_mm(use_fast_accum=True)``;
    plain ``_scaled_mm`` promotes to fp32 (more precise, slower). Both are timed: the ratio columns are
    against plain ``_scaled_mm``, ``ratio_to_fast_accum`` against the like-for-like fast-accumulation one."""
    env = env_info()
    rows = []
    for r in range(rounds):
        for s in sizes:
            g = torch.Generator(device="cuda").manual_seed(r)
            a = torch.randn(s, s, device="cuda", generator=g).to(torch.float8_e4m3fn)
            bt = torch.randn(s, s, device="cuda", generator=g).to(torch.float8_e4m3fn)
            b = bt.t()
            one = torch.tensor(1.0, device="cuda")
            out = torch.empty(s, s, device="cuda", dtype=torch.float16)
            ref = K.reference_fp8_matmul(a, b)
            jobs = (("torch._scaled_mm", lambda a=a, b=b, one=one: torch._scaled_mm(
                        a, b, scale_a=one, scale_b=one, out_dtype=torch.float16)),
                    ("torch._scaled_mm(use_fast_accum=True)", lambda a=a, b=b, one=one: torch._scaled_mm(
                        a, b, scale_a=one, scale_b=one, out_dtype=torch.float16, use_fast_accum=True)),
                    ("fp8_matmul", lambda a=a, b=b, out=out: K.fp8_matmul(a, b, out=out)))
            res = {}
            for name, fn in jobs:
                c = fn()
                torch.cuda.synchronize()
                res[name] = dict(ms=do_bench_ms(fn, warmup, rep), graph_ms=graph_bench_ms(fn, 50),
                                 rel_err=K.relative_error(c, ref))
            for name, m in res.items():
                rows.append(dict(env, M=s, N=s, K=s, dtype="fp8e4m3->fp16", kernel=name, round=r, **m,
                                 tflops=tflops(s, s, s, m["ms"]),
                                 ratio_to_scaled_mm=res["torch._scaled_mm"]["ms"] / m["ms"],
                                 graph_ratio_to_scaled_mm=res["torch._scaled_mm"]["graph_ms"] / m["graph_ms"],
                                 ratio_to_fast_accum=res["torch._scaled_mm(use_fast_accum=True)"]["graph_ms"]
                                 / m["graph_ms"]))
            print(f"[fp8] round {r} {s}^3: do_bench {rows[-1]['ratio_to_scaled_mm']:.3f} "
                  f"graph {rows[-1]['graph_ratio_to_scaled_mm']:.3f} (fast-accum {rows[-1]['ratio_to_fast_accum']:.3f}) rel_err {rows[-1]['rel_err']:.2e}", flush=True)
    return rows
