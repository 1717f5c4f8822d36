"""`make leaderboard ASSIGNMENT=week07`: time every graded student's matmul kernel on this GPU.

    python -m autograder leaderboard [--assignment week07] [--hand-ins DIR] [--size 4096] [--out results]

Ungraded: a ranking, not points. For each hand-in of ``01_pointer_blocks`` (the autograded copies under
``autograder/autograded/<student>/<assignment>/``, or ``--hand-ins DIR`` with ``DIR/<student>/<notebook>.ipynb``
such as ``autograder/samples/week07``) the student's ``student_matmul_kernel`` cell is loaded, checked at
``size``³ fp16 against ``torch.matmul`` and timed beside ``torch.matmul`` in the same run: ``do_bench``
median (L2 flushed, launch included) and CUDA-graph replay median (GPU time alone), best of a few tile
configs passed through the exercise's own launch arguments. Writes ``leaderboard_<assignment>.csv``
(ranked by do_bench TFLOP/s) and ``.png`` under ``--out``. On a host without a CUDA GPU it says so and
exits with status 2.

Student code is not run as such: the kernel cell goes through the grader's gate
(``gemm_lab.grading.judge.gate``), which writes a module of the kernel and the jit functions it calls from
their checked syntax tree (every expression Triton, annotations unevaluated) and refuses anything else, as
it does when the kernel is graded; that module is then compiled by Triton.

Correctness: every element must satisfy

    |c - ref| <= REL_TOL * |ref| + ACC_FACTOR * sqrt(K) * 2^-24 * s,    s = sqrt(sum_k a_ik^2 b_kj^2)

with ``ref`` the exact product (fp64 sums of the fp16 products, which are exact). The first term is the graded
check's relative tolerance for fp16 (``gemm_lab.grading`` ``TOLERANCES["float16"]``: 2^-8, eight times the
fp16 output's half-ulp); the second replaces its fixed absolute 2^-10 by the rounding error an fp32
accumulator may gather over K terms (``sqrt(K) * 2^-24 * s`` with a 32x margin). For the graded shapes and
inputs (K <= 130, values k/16 in [-2, 2]) that term is below 2^-10, so this check is at least as strict as
the graded one there. At 4096³ (unit normal inputs, s ~ 64) it allows about 8e-3 beyond 2^-8 |ref|, where
an fp32 accumulator errs by about 2e-4 (a truncating one by a few times that), while a kernel that
accumulates in fp16 errs by about 0.1-1 on elements of every size, so several percent of its elements fail
(``results/leaderboard_week07_demo.csv``, H200: ``fp16_accumulator`` is "not timed: wrong result", 3,765,172
of 16,777,216 elements beyond the bound; a check of max error <= 1e-2 * max|ref| would rank it first).
``tests/test_leaderboard.py`` shows both sides on the CPU (the demo kernels in the interpreter and a torch
emulation of fp16 accumulation).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from autograder import cells as nbcells
from gemm_lab.grading.kernels.exercises import EXERCISES

MATMUL = EXERCISES["matmul"]  # the week-7 exercise: its notebook, solution cell and kernel name
NOTEBOOK = Path(MATMUL.notebook).name
# (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_warps, num_stages): the kernel keeps the exercise's
# arguments, so only these launch parameters change
CONFIGS = ((64, 64, 32, 4, 3), (128, 128, 32, 4, 3), (128, 64, 32, 4, 4), (128, 128, 64, 8, 3))
REL_TOL = 2.0 ** -8    # the graded check's relative tolerance for fp16 outputs
ACC_FACTOR = 32        # fp32-accumulation allowance, in units of sqrt(K) * 2^-24 * s_ij


def reference(a, b):
    """(ref, bound): the exact product of fp16 ``a`` [M, K] and ``b`` [K, N] and each element's error bound.

    Both fp32 tensors of shape [M, N]; ``ref`` is summed in fp64 (the fp16 products are exact there), so
    it carries no accumulation error of its own.
    """
    a64, b64 = a.double(), b.double()
    ref = a64 @ b64
    spread = ((a64 * a64) @ (b64 * b64)).sqrt()      # s_ij: the size of the sum's terms
    bound = REL_TOL * ref.abs() + ACC_FACTOR * a.shape[1] ** 0.5 * 2.0 ** -24 * spread
    return ref.float(), bound.float()


def check_result(c, ref, bound) -> str | None:
    """None when every element of ``c`` is within ``bound`` of ``ref``; otherwise why not (NaN/inf fail)."""
    err = (c.float() - ref).abs()
    bad = ~(err <= bound)
    n_bad = int(bad.sum())
    if n_bad == 0:
        return None
    excess = (err - bound).nan_to_num(nan=float("inf"))
    i, j = divmod(int(excess.argmax()), c.shape[1])
    return (f"wrong result: {n_bad} of {c.numel()} elements beyond the bound, e.g. [{i}, {j}] = "
            f"{float(c[i, j]):.6g} vs {float(ref[i, j]):.6g} (bound {float(bound[i, j]):.3g}; "
            "accumulating in fp16 fails like this)")


def launch(kernel, a, b, c, config) -> None:
    """One launch of the student's kernel on ``c = a @ b`` with a (BM, BN, BK, num_warps, num_stages) config."""
    import triton

    bm, bn, bk, w, s = config
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                 c.stride(1), BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, num_warps=w, num_stages=s)


def kernel_cell(path: Path) -> str | None:
    """The source of the hand-in's kernel cell (the exercise's solution cell), or None."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    return next((nbcells.source(c) for c in cells if nbcells.grade_id(c) == MATMUL.solution_cell), None)


def load_kernel(src: str):
    """The cell's kernel as the grader's gate writes it (only Triton code of the kernel and the jit functions
    it calls); :class:`gemm_lab.grading.judge.gate.Refused` (Korean) for anything else."""
    from gemm_lab.grading.judge import gate

    return gate.load(gate.module_for([src], MATMUL.kernel), MATMUL.kernel)


def time_student(kernel, a, b, ref, bound, torch_ms: dict) -> dict:
    """Best config of one kernel: correctness at this size (``check_result``), do_bench and CUDA-graph medians."""
    import torch

    from gemm_lab import bench

    M, K = a.shape
    N = b.shape[1]
    best, errors = None, []
    for config in CONFIGS:
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)

        def run(c=c, config=config):
            launch(kernel, a, b, c, config)

        name = "{}x{}x{} w{} s{}".format(*config)
        try:
            run()
            torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - a config that does not compile or run is skipped
            errors.append(type(exc).__name__)
            continue
        wrong = check_result(c, ref, bound)
        if wrong is not None:
            errors.append(wrong)
            continue
        ms = bench.do_bench_ms(run)
        if best is None or ms < best["ms"]:
            best = {"config": name, "ms": ms, "run": run}
    if best is None:
        reasons: dict[str, str] = {}
        for why in errors:  # the same kind of reason (an exception's name, a wrong result) is said once
            reasons.setdefault(why.split(":", 1)[0], why)
        return {"status": "not timed: " + ("; ".join(reasons.values()) or "no config ran")}
    ms_graph = bench.graph_bench_ms(best["run"])
    return {
        "status": "ok", "config": best["config"],
        "ms": round(best["ms"], 4), "tflops": round(bench.tflops(M, N, K, best["ms"]), 1),
        "ms_graph": round(ms_graph, 4), "tflops_graph": round(bench.tflops(M, N, K, ms_graph), 1),
        "torch_ms": round(torch_ms["ms"], 4), "torch_tflops": round(bench.tflops(M, N, K, torch_ms["ms"]), 1),
        "torch_ms_graph": round(torch_ms["graph"], 4),
        "ratio_to_torch": round(torch_ms["ms"] / best["ms"], 3),
    }


def hand_ins(assignment: str, folder: Path | None) -> list[tuple[str, Path]]:
    from autograder.course import Course

    if folder is not None:
        return sorted((p.parent.name, p) for p in folder.glob(f"*/{NOTEBOOK}.ipynb"))
    root = Course.at().autograded
    return sorted((p.parent.parent.name, p) for p in root.glob(f"*/{assignment}/{NOTEBOOK}.ipynb"))


FIELDS = ["rank", "student", "status", "config", "ms", "tflops", "ms_graph", "tflops_graph", "torch_ms",
          "torch_tflops", "torch_ms_graph", "ratio_to_torch", "size", "gpu", "compute_capability", "torch",
          "triton", "date"]


def plot(rows: list[dict], path: Path) -> None:
    from matplotlib.figure import Figure  # no pyplot: nothing opens a window

    ok = [r for r in rows if r["status"] == "ok"]
    fig = Figure(figsize=(8, 0.4 * max(len(ok), 3) + 1.5))
    ax = fig.add_subplot()
    names = [r["student"] for r in ok][::-1]
    ax.barh(names, [r["tflops"] for r in ok][::-1], label="do_bench median")
    ax.scatter([r["tflops_graph"] for r in ok][::-1], names, color="k", marker="|", s=200, label="CUDA graph")
    if ok:
        ax.axvline(ok[0]["torch_tflops"], color="r", linestyle="--", label="torch.matmul")
        ax.set_title(f"{ok[0]['size']}³ fp16 matmul on {ok[0]['gpu']}")
    ax.set_xlabel("TFLOP/s")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m autograder leaderboard", description=__doc__.splitlines()[0])
    ap.add_argument("--assignment", default="week07")
    ap.add_argument("--hand-ins", type=Path, default=None, help="DIR/<student>/01_pointer_blocks.ipynb")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--out", type=Path, default=Path("results"))
    args = ap.parse_args(argv)
    from gemm_lab import runtime  # before triton

    if not runtime.on_gpu():
        print("leaderboard: needs a CUDA GPU (kernel timings in the CPU interpreter mean nothing); "
              "run `make leaderboard` on a GPU host.", file=sys.stderr)
        return 2
    import torch

    from gemm_lab import bench

    found = hand_ins(args.assignment, args.hand_ins)
    if not found:
        print(f"leaderboard: no {NOTEBOOK}.ipynb hand-ins found", file=sys.stderr)
        return 1
    a, b = bench.random_inputs(args.size, args.size, args.size, "fp16")
    ref, bound = reference(a, b)
    torch_ms = {"ms": bench.do_bench_ms(lambda: torch.matmul(a, b)),
                "graph": bench.graph_bench_ms(lambda: torch.matmul(a, b))}
    env = bench.env_info()
    from gemm_lab.grading.judge.gate import Refused

    rows = []
    for student, path in found:
        row = {"student": student, "size": args.size, **env}
        try:
            src = kernel_cell(path)
            if src is None:
                raise ValueError(f"no {MATMUL.solution_cell} cell")
            row.update(time_student(load_kernel(src), a, b, ref, bound, torch_ms))
        except (ValueError, Refused) as exc:
            row["status"] = f"not timed: {exc}"
        print(f"{student}: {row['status']}" + (f", {row['tflops']} TFLOP/s ({row['config']})"
                                               if row["status"] == "ok" else ""))
        rows.append(row)
    rows.sort(key=lambda r: (r["status"] != "ok", -(r.get("tflops") or 0.0), r["student"]))
    for rank, r in enumerate((r for r in rows if r["status"] == "ok"), start=1):  # the timed ones sort first
        r["rank"] = rank
    args.out.mkdir(parents=True, exist_ok=True)
    csv_path = args.out / f"leaderboard_{args.assignment}.csv"
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    plot(rows, args.out / f"leaderboard_{args.assignment}.png")
    print(f"wrote {csv_path} and its .png ({sum('rank' in r for r in rows)} of {len(rows)} kernels timed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
