"""best_matmul at random shapes against both peers a GPU engineer would pick, in the same run:
``torch.matmul`` (cuBLAS) and ``torch.compile(mode="max-autotune-no-cudagraphs")`` of a plain matmul
(Inductor: pads awkward operands, autotunes its Triton templates and cuBLAS, keeps the faster).

The shapes are drawn from a recorded seed (``draw_shapes``): dimensions 16-8192, log-uniform, in three
strata so that at least a third have a dimension that is not a multiple of 16 and at least a third have
a dimension of 128 or less. Per shape (fp16; bf16 on the first ``n_bf16``):

* first call of each contender, wall clock (Inductor: compile + autotune; best_matmul: its first call with
  an empty plan store, i.e. the heuristic's pick, compile included when the Triton cache lacks it);
* best_matmul before tuning: ``rounds`` CUDA-graph timings of the heuristic's pick beside torch.matmul
  (``untuned_graph_ratio_to_torch``);
* ``best_matmul.tune(a, b)``: the candidates timed and the fastest pinned (``tune_s``, wall clock);
* ``rounds`` rounds, the contenders' order rotating between rounds; each round times each contender as a
  CUDA-graph replay (GPU time, ``graph``) and with ``do_bench`` (eager: launch cost included);
* every ratio is computed within a round (same inputs, neighbouring timings), then the median over
  rounds is kept with its min and max (the spread).

All three are called the same way, ``f(a, b)`` returning a new tensor. ``best peer`` = the faster of
cuBLAS and Inductor at that shape and round. Part ``random`` of ``python -m gemm_lab.bench``
(best_matmul_random.csv, best_matmul_random_summary.csv, best_matmul_random.png); the run resumes a
CSV it finds (shapes already measured are skipped) and stops starting shapes after ``time_limit_s``.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import tempfile
import time

import torch

from gemm_lab import kernels as K
from gemm_lab.bench.measure import env_info, random_inputs
from gemm_lab.bench.menu import config_text
from gemm_lab.timing import do_bench_ms, graph_bench_ms, host_us, median, require_gpu, tflops

DEFAULT_SEED = 20261205
LO, HI = 16, 8192
CONTENDERS = ("torch", "inductor", "best")

COLUMNS = ["gpu", "compute_capability", "torch", "triton", "date", "seed", "index", "M", "N", "K", "dtype",
           "shape_class", "rounds", "graph_ratio_to_torch", "graph_ratio_to_best_peer", "graph_ratio_to_inductor",
           "graph_ratio_to_best_peer_min", "graph_ratio_to_best_peer_max", "graph_ratio_to_torch_min",
           "graph_ratio_to_torch_max", "eager_ratio_to_torch", "eager_ratio_to_best_peer",
           "eager_ratio_to_torch_min", "eager_ratio_to_torch_max", "first_call_s", "inductor_first_call_s",
           "torch_graph_ms", "inductor_graph_ms", "best_graph_ms", "torch_eager_ms", "inductor_eager_ms",
           "best_eager_ms", "best_graph_tflops", "peer_graph_tflops", "rel_err_best", "rel_err_inductor",
           "rel_err_torch", "best_choice", "error", "untuned_graph_ratio_to_torch",
           "untuned_graph_ratio_to_torch_min", "untuned_graph_ratio_to_torch_max", "tune_s", "tune_timed",
           "tune_skipped", "first_choice", "first_call_from_store_s"]


def _log_uniform(rng: random.Random, lo: int, hi: int) -> int:
    return min(hi, max(lo, int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))))


def draw_shapes(seed: int = DEFAULT_SEED, n: int = 40, lo: int = LO, hi: int = HI) -> list[tuple[int, int, int]]:
    """``n`` (M, N, K) shapes from ``seed`` (same seed, same shapes, on any machine).

    Dimensions are log-uniform in [129, hi], except by stratum ``i % 3``: 0 = one dimension (M, N or K,
    at random) drawn in [lo, 128]; 1 = one dimension forced off a multiple of 16; 2 = each dimension
    rounded to a multiple of 64 with probability 3/4 (the sizes of real layers)."""
    for name, x in (("seed", seed), ("n", n), ("lo", lo), ("hi", hi)):
        if isinstance(x, bool) or not isinstance(x, int):
            raise TypeError(f"{name} must be an int, got {type(x).__name__}")
    if n < 1 or lo < 1 or hi < max(lo, 129):
        raise ValueError(f"need n >= 1 and 1 <= lo, hi >= max(lo, 129); got n={n}, lo={lo}, hi={hi}")
    rng = random.Random(seed)
    shapes = []
    for i in range(n):
        dims = [_log_uniform(rng, max(lo, 129), hi) for _ in range(3)]
        which = rng.randrange(3)
        if i % 3 == 0:
            dims[which] = _log_uniform(rng, lo, min(128, hi))
        elif i % 3 == 1:
            if dims[which] % 16 == 0:
                dims[which] = min(hi, dims[which] + rng.randrange(1, 16))
                if dims[which] % 16 == 0:
                    dims[which] -= 1
        else:
            dims = [max(lo, min(hi, (d + 32) // 64 * 64)) if rng.random() < 0.75 else d for d in dims]
        shapes.append(tuple(dims))
    return shapes


def shape_class(M: int, N: int, K: int) -> str:
    """The class a shape is reported under (first rule that matches)."""
    if min(M, N) <= 128:
        return "skinny (M or N <= 128)"
    if K <= 128:
        return "short K (<= 128)"
    if K % 8 or N % 8:
        return "unaligned (K or N % 8 != 0)"
    if M * N * K <= 1024 ** 3:
        return "aligned, small (MNK <= 1024^3)"
    return "aligned, large"


def _inductor_fn():
    def mm(x, y):
        return torch.matmul(x, y)

    torch._dynamo.reset()  # a fresh compile per shape: static shapes, no recompile limit, no shared guards
    return torch.compile(mm, mode="max-autotune-no-cudagraphs", dynamic=False)


def _first_call(fn, a, b):
    torch.cuda.synchronize()
    t = time.perf_counter()
    c = fn(a, b)
    torch.cuda.synchronize()
    return c, time.perf_counter() - t


def measure_shape(M: int, N: int, Kd: int, dtype: str = "fp16", rounds: int = 5, seed: int = 0,
                  graph_rep: int = 20, eager_rep: int = 20, index: int = -1) -> dict:
    """One row: the three contenders at one shape (see the module docstring)."""
    require_gpu()
    a, b = random_inputs(M, N, Kd, dtype, seed)
    ref = K.reference_matmul(a, b)
    errors = []
    fns = {"torch": torch.matmul, "best": K.best_matmul}
    first = {}
    rel = {}
    c, first["torch"] = _first_call(torch.matmul, a, b)
    rel["torch"] = K.relative_error(c, ref)
    try:
        fns["inductor"] = _inductor_fn()
        c, first["inductor"] = _first_call(fns["inductor"], a, b)
        rel["inductor"] = K.relative_error(c, ref)
    except Exception as exc:  # noqa: BLE001 - record the peer's failure, keep measuring the others
        errors.append(f"inductor: {exc.__class__.__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}")
        fns.pop("inductor", None)
        first["inductor"], rel["inductor"] = float("nan"), float("nan")
    with _tune_policy("off"):  # the first call's plan stays the heuristic's until tune() below
        c, first["best"] = _first_call(K.best_matmul, a, b)
    rel["best"] = K.relative_error(c, ref)
    del c
    plan = _plan_of(a, b)
    first_choice = _pinned_text(plan)
    untuned = []
    for _ in range(rounds):
        t_ms = graph_bench_ms(lambda: torch.matmul(a, b), graph_rep)
        untuned.append(t_ms / graph_bench_ms(lambda: K.best_matmul(a, b), graph_rep))
    torch.cuda.synchronize()
    t = time.perf_counter()
    report = K.best_matmul.tune(a, b)
    torch.cuda.synchronize()
    tune_s = time.perf_counter() - t
    names = [n for n in CONTENDERS if n in fns]
    per_round = []
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        g, e = {}, {}
        for name in order:
            fn = fns[name]
            g[name] = graph_bench_ms(lambda fn=fn: fn(a, b), graph_rep)
            e[name] = do_bench_ms(lambda fn=fn: fn(a, b), 5, eager_rep)
        per_round.append((g, e))

    def ratios(which, peer):
        out = []
        for g, e in per_round:
            t = g if which == "graph" else e
            ref_t = min(t[p] for p in peer if p in t)
            out.append(ref_t / t["best"])
        return out

    # a "second process": the plan dropped from memory, the next first call reads the pick from disk
    from gemm_lab.kernels import best as B

    B._PLANS.pop(B._key(a, b, None, None, "graph"), None)
    _, store_s = _first_call(K.best_matmul, a, b)
    again = _plan_of(a, b)
    if again is None or again.source != "store":
        errors.append(f"store: the second first call ran {getattr(again, 'source', None)!r}, not the stored pick")
    peers = ("torch", "inductor")
    gt, gp, gi = ratios("graph", ("torch",)), ratios("graph", peers), ratios("graph", ("inductor",))
    et, ep = ratios("eager", ("torch",)), ratios("eager", peers)
    med = {f"{w}_{n}": median([(g if w == "graph" else e).get(n, float("nan")) for g, e in per_round])
           for w in ("graph", "eager") for n in CONTENDERS}
    peer_ms = min(med["graph_torch"], med["graph_inductor"]) if med["graph_inductor"] == med["graph_inductor"] \
        else med["graph_torch"]
    ch = K.best_matmul.choice_for(a, b)
    tuned = f" -> {_pinned_text(plan)}" if plan is not None and plan.pinned else ""
    return dict(env_info(), seed=seed, index=index, M=M, N=N, K=Kd, dtype=dtype,
                shape_class=shape_class(M, N, Kd), rounds=rounds,
                graph_ratio_to_torch=median(gt), graph_ratio_to_best_peer=median(gp),
                graph_ratio_to_inductor=median(gi),
                graph_ratio_to_best_peer_min=min(gp), graph_ratio_to_best_peer_max=max(gp),
                graph_ratio_to_torch_min=min(gt), graph_ratio_to_torch_max=max(gt),
                eager_ratio_to_torch=median(et), eager_ratio_to_best_peer=median(ep),
                eager_ratio_to_torch_min=min(et), eager_ratio_to_torch_max=max(et),
                first_call_s=first["best"], inductor_first_call_s=first["inductor"],
                torch_graph_ms=med["graph_torch"], inductor_graph_ms=med["graph_inductor"],
                best_graph_ms=med["graph_best"], torch_eager_ms=med["eager_torch"],
                inductor_eager_ms=med["eager_inductor"], best_eager_ms=med["eager_best"],
                best_graph_tflops=tflops(M, N, Kd, med["graph_best"]),
                peer_graph_tflops=tflops(M, N, Kd, peer_ms),
                rel_err_best=rel["best"], rel_err_inductor=rel["inductor"], rel_err_torch=rel["torch"],
                best_choice=ch.kernel + tuned, error="; ".join(errors),
                untuned_graph_ratio_to_torch=median(untuned), untuned_graph_ratio_to_torch_min=min(untuned),
                untuned_graph_ratio_to_torch_max=max(untuned), tune_s=tune_s, tune_timed=report.get("timed"),
                tune_skipped=report.get("skipped"), first_choice=first_choice, first_call_from_store_s=store_s)


@contextlib.contextmanager
def _tune_policy(policy: str):
    """GEMM_LAB_TUNE set to ``policy`` inside the block (plans made there keep it)."""
    old = os.environ.get("GEMM_LAB_TUNE")
    os.environ["GEMM_LAB_TUNE"] = policy
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("GEMM_LAB_TUNE", None)
        else:
            os.environ["GEMM_LAB_TUNE"] = old


def _pinned_text(plan) -> str:
    """"kernel config (source)" of what a plan runs, e.g. "hinted 64x64x64 s4 w4 (heuristic)"; a first
    pick borrowed from the nearest tuned shape of its class (``best_store.nearest``) says which."""
    if plan is None or plan.pinned is None:
        return ""
    near = f", from the pick tuned at {'x'.join(map(str, plan.near))}" if getattr(plan, "near", None) else ""
    return f"{plan.pinned[0]} {config_text(plan.pinned[1])} ({plan.source}{near})"


def _plan_of(a, b):
    from gemm_lab.kernels import best as B

    return B._PLANS.get(B._key(a, b, None, None, "graph"))


def jobs_for(seed: int = DEFAULT_SEED, n: int = 40, n_bf16: int = 10) -> list[tuple[int, tuple[int, int, int], str]]:
    """(index, shape, dtype) in measuring order: every shape in fp16, then the first ``n_bf16`` in bf16."""
    shapes = draw_shapes(seed, n)
    return [(i, s, "fp16") for i, s in enumerate(shapes)] + [(i, s, "bf16") for i, s in enumerate(shapes[:n_bf16])]


_LAST_CSV = []  # the CSV the last run() wrote: host_rows() writes its file beside it


def host_rows(size: int = 1024, n: int = 200, rounds: int = 5, csv_path: str | None = None) -> list[dict]:
    """CPU microseconds per call at size^3 fp16 (``f(a, b)``, new output each call) and the do_bench time
    per call (``eager_ms``), ``rounds`` rounds alternating torch.matmul, best_matmul (default: after its
    deferred tuning, which the two warm-up calls trigger) and best_matmul(tune_for="eager"); one row per
    round and contender. The rows are also written to ``csv_path`` (default: best_matmul_random_host.csv
    beside the CSV of the last ``run``, if any)."""
    a, b = random_inputs(size, size, size)
    env = env_info()
    fns = (("torch.matmul", lambda: torch.matmul(a, b)), ("best_matmul", lambda: K.best_matmul(a, b)),
           ("best_matmul(tune_for='eager')", lambda: K.best_matmul(a, b, tune_for="eager")))
    for _, fn in fns:
        fn()
        fn()
    rows = []
    for r in range(rounds):
        for name, fn in fns:
            rows.append(dict(env, M=size, N=size, K=size, dtype="fp16", call=name, round=r,
                             host_us=host_us(fn, n), eager_ms=do_bench_ms(fn, 5, 50)))
    if csv_path is None and _LAST_CSV:
        csv_path = os.path.join(os.path.dirname(_LAST_CSV[-1]), "best_matmul_random_host.csv")
    if csv_path:
        import pandas as pd

        pd.DataFrame(rows).to_csv(csv_path, index=False)
    return rows


def run(csv_path: str, seed: int = DEFAULT_SEED, n: int = 40, n_bf16: int = 10, rounds: int = 5,
        time_limit_s: float = float("inf"), log=print, plan_dir: str | None = None):
    """Measure every job not yet in ``csv_path`` (resumes), rewriting the CSV after each shape.

    ``plan_dir``: best_matmul's plan store for the run (``GEMM_LAB_PLAN_DIR``); default a new empty
    folder: no shape's pick is stored before it is measured, but a first call may start from the pick
    tuned for an earlier shape of the run in its class (``first_choice`` says so)."""
    _LAST_CSV.append(csv_path)
    plan_dir = plan_dir or tempfile.mkdtemp(prefix="gemm_lab_plans_")
    old = os.environ.get("GEMM_LAB_PLAN_DIR")
    os.environ["GEMM_LAB_PLAN_DIR"] = plan_dir
    log(f"[random] seed {seed}; best_matmul's plan store: {plan_dir}")
    try:
        return _run(csv_path, seed, n, n_bf16, rounds, time_limit_s, log)
    finally:
        if old is None:
            os.environ.pop("GEMM_LAB_PLAN_DIR", None)
        else:
            os.environ["GEMM_LAB_PLAN_DIR"] = old


def _run(csv_path, seed, n, n_bf16, rounds, time_limit_s, log):
    import pandas as pd

    done = set()
    rows = []
    if os.path.exists(csv_path):
        old = pd.read_csv(csv_path)
        old = old[old.seed == seed]
        rows = old.to_dict("records")
        done = {(int(r["index"]), r["dtype"]) for r in rows}
    t0 = time.time()
    todo = [j for j in jobs_for(seed, n, n_bf16) if (j[0], j[2]) not in done]
    for k, (i, (M, N, Kd), dtype) in enumerate(todo):
        if time.time() - t0 > time_limit_s:
            log(f"[random] time limit: {len(todo) - k} jobs left for the next run (same seed resumes)")
            break
        t = time.time()
        try:
            row = measure_shape(M, N, Kd, dtype, rounds, seed=seed + i, index=i)
        except Exception as exc:  # noqa: BLE001 - one shape's failure is reported; the others are measured
            log(f"[random] {i:2d} {dtype} {M}x{N}x{Kd}: FAILED {exc.__class__.__name__}: {str(exc)[:300]}")
            continue
        row["seed"] = seed
        rows.append(row)
        pd.DataFrame(rows)[COLUMNS].to_csv(csv_path, index=False)
        log(f"[random] {i:2d} {dtype} {M}x{N}x{Kd} ({row['shape_class']}): graph/peer "
            f"{row['graph_ratio_to_best_peer']:.2f} graph/torch {row['graph_ratio_to_torch']:.2f} eager/torch "
            f"{row['eager_ratio_to_torch']:.2f} untuned graph/torch {row['untuned_graph_ratio_to_torch']:.2f} "
            f"first {row['first_call_s']:.2f}s tune {row['tune_s']:.1f}s (inductor "
            f"{row['inductor_first_call_s']:.1f}s) {row['best_choice']} [{time.time() - t:.0f}s]")
    return pd.DataFrame(rows)[COLUMNS] if rows else pd.DataFrame(columns=COLUMNS)


SUMMARY_METRICS = ("graph_ratio_to_best_peer", "graph_ratio_to_torch", "graph_ratio_to_inductor",
                   "eager_ratio_to_torch", "eager_ratio_to_best_peer", "first_call_s", "inductor_first_call_s",
                   "untuned_graph_ratio_to_torch", "tune_s", "first_call_from_store_s")


def summary(df, host=None):
    """One row per (metric, dtype, shape class or "all"): min / median / max over shapes, with the seed,
    GPU, versions and date; ``host`` (``host_rows`` output) adds the 1024^3 launch cost rows."""
    import pandas as pd

    if df.empty:
        return pd.DataFrame()
    env = {k: df[k].iloc[0] for k in ("gpu", "torch", "triton", "date", "seed")}
    out = []
    for dtype, g in df.groupby("dtype"):
        for cls, h in [("all", g)] + list(g.groupby("shape_class")):
            for m in SUMMARY_METRICS:
                if m not in h:  # a CSV from before the column existed
                    continue
                x = h[m].dropna()
                if len(x):
                    out.append(dict(env, dtype=dtype, shape_class=cls, metric=m, shapes=len(x), min=x.min(),
                                    median=x.median(), max=x.max(), below_1=int((x < 1).sum())))
    if host:
        h = pd.DataFrame(host)
        t = h[h.call == "torch.matmul"].host_us.median()
        calls = (("best", "best_matmul"), ("best_eager", "best_matmul(tune_for='eager')"))
        for name, call in (("torch", "torch.matmul"),) + calls:
            x = h[h.call == call].host_us
            if len(x):
                out.append(dict(env, dtype="fp16", shape_class="1024^3", metric=f"host_us_{name}_1024", shapes=1,
                                min=x.min(), median=x.median(), max=x.max(), below_1=None))
        for name, call in calls:
            x = h[h.call == call]
            if not len(x):
                continue
            out.append(dict(env, dtype="fp16", shape_class="1024^3", metric=f"host_ratio_{name}_to_torch",
                            shapes=1, min=None, median=x.host_us.median() / t, max=None, below_1=None))
            if "eager_ms" in h:  # per round: torch's do_bench time / best_matmul's, same round
                te = h[h.call == "torch.matmul"].set_index("round").eager_ms
                r = (te / x.set_index("round").eager_ms).dropna()
                if len(r):
                    out.append(dict(env, dtype="fp16", shape_class="1024^3", metric=f"eager_ratio_{name}_to_torch",
                                    shapes=1, min=r.min(), median=r.median(), max=r.max(), below_1=int((r < 1).sum())))
    return pd.DataFrame(out)


def plot_ratios(df, axes=None):
    """Draw each shape's graph ratio to the best peer and to torch.matmul by shape class (one dot per shape
    and dtype, log scale, 1.0 dashed) on two axes (new ones when ``axes`` is None); returns the figure."""
    import matplotlib.pyplot as plt

    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    else:
        fig = axes[0].figure
    classes = sorted(df.shape_class.unique())
    for ax, col, title in ((axes[0], "graph_ratio_to_best_peer", "best peer (faster of cuBLAS, Inductor)"),
                           (axes[1], "graph_ratio_to_torch", "torch.matmul (cuBLAS)")):
        for j, cls in enumerate(classes):
            for dtype, marker, color in (("fp16", "o", "tab:blue"), ("bf16", "^", "tab:orange")):
                sub = df[(df.shape_class == cls) & (df.dtype == dtype)]
                if sub.empty:
                    continue
                jitter = [(hash((m, n, k)) % 100 - 50) / 250 for m, n, k in zip(sub.M, sub.N, sub.K, strict=True)]
                ax.scatter([j + x for x in jitter], sub[col], marker=marker, s=22, alpha=0.75, color=color,
                           label=dtype if dtype not in ax.get_legend_handles_labels()[1] else None)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xticks(range(len(classes)), classes, rotation=20, ha="right", fontsize=8)
        ax.set_title(f"best_matmul time ratio to {title}", fontsize=9)
        ax.set_yscale("log")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("peer time / best_matmul time (CUDA graph)")
    env = df.iloc[0]
    fig.suptitle(f"{len(df)} random shapes (seed {env.seed}), {env.gpu}, torch {env.torch}, triton {env.triton}, "
                 f"{env.date}", fontsize=9)
    fig.tight_layout()
    return fig


def plot(df, png_path: str) -> str:
    """``plot_ratios`` saved as a PNG (Agg backend); returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plot_ratios(df)
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return png_path


SMOKE_SHAPES = ((1024, 1024, 1024), (37, 3000, 700), (654, 20, 3420), (1692, 3851, 2101), (4997, 7125, 113),
                (500, 600, 300), (4096, 4096, 4096))


def smoke_rows(shapes=SMOKE_SHAPES, dtype: str = "fp16") -> list[dict]:
    """Every candidate kind best_matmul can pin (its first config of each kind), run once at each shape on
    this GPU: compiles? right result? graph time beside torch.matmul. A check of the GPU paths before a
    long benchmark run, not a measurement to report (one timing per candidate)."""
    from gemm_lab.kernels import best as B

    require_gpu()
    env = env_info()
    rows = []
    for M, N, Kd in shapes:
        a, b = random_inputs(M, N, Kd, dtype, 0)
        ref = K.reference_matmul(a, b)
        t_ms = graph_bench_ms(lambda a=a, b=b: torch.matmul(a, b), 10)
        per16 = 16 // a.element_size()
        pad = None if (N * a.element_size()) % 16 == 0 else (N + per16 - 1) // per16 * per16
        plan = B._Plan(B.explain(M, N, Kd, a.dtype), M, N, Kd, "", "graph", "off", pad, owns_out=True)
        out = plan.new_out(a)
        cands = plan._candidates(a, b, out)
        seen = {}
        for cand in cands:
            seen.setdefault(cand[0], cand)
        seen["heuristic"] = B.best_tune.heuristic(cands, M, N, Kd, plan.sms)
        for kind, cand in seen.items():
            row = dict(env, M=M, N=N, K=Kd, dtype=dtype, kind=kind, config=f"{cand[0]} {config_text(cand[1])}")
            try:
                plan._pin(cand, a, b, out)
                plan.go(a, b, out)
                if a.is_cuda:
                    torch.cuda.synchronize()
                row["rel_err"] = K.relative_error(out, ref)
                row["graph_ratio_to_torch"] = t_ms / graph_bench_ms(
                    lambda plan=plan, a=a, b=b, out=out: plan.go(a, b, out), 10)
                row["error"] = ""
            except Exception as exc:  # noqa: BLE001 - a smoke test reports every failure and goes on
                row.update(rel_err=float("nan"), graph_ratio_to_torch=float("nan"),
                           error=f"{exc.__class__.__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}")
            rows.append(row)
            print(f"[smoke] {M}x{N}x{Kd} {kind:11s} {row['config']:36s} rel_err {row['rel_err']:.1e} graph/torch "
                  f"{row['graph_ratio_to_torch']:.2f} {row['error']}", flush=True)
    return rows


if __name__ == "__main__":  # python -m gemm_lab.bench.random_shapes [out.csv]: the smoke check above
    import sys

    import pandas as pd

    df = pd.DataFrame(smoke_rows())
    if len(sys.argv) > 1:
        df.to_csv(sys.argv[1], index=False)
    bad = df[(df.error != "") | ~(df.rel_err < 1e-2)]
    print(f"[smoke] {len(df)} runs, {len(bad)} failed or wrong")
    sys.exit(1 if len(bad) else 0)
