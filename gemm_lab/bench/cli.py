"""``python -m gemm_lab.bench``: run parts of the benchmark on the GPU here and write their CSV/PNG files."""

from __future__ import annotations

import argparse
import ast
import os
import sys

from gemm_lab import runtime
from gemm_lab.bench.menu import TMA_BEST
from gemm_lab.bench.parts import PARTS, TABLE, Run, run_parts
from gemm_lab.timing import DEFAULT_REP_MS, DEFAULT_WARMUP_MS


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m gemm_lab.bench", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="GPU benchmarks; every ratio is torch's time / the kernel's, both in the same run.",
        epilog="parts:\n" + "\n".join(f"  {q.name:<14}{q.files}{'' if q.default else '  [only with --only]'}"
                                      for q in TABLE) + "\nThe CSV columns are in results/README.md.")
    p.add_argument("--out", default="results", help="folder for the CSV and PNG files")
    p.add_argument("--only", nargs="*", choices=PARTS, help="parts to run (default: all but the config searches)")
    p.add_argument("--quick", action="store_true", help="shorter timings (warmup 10 ms, rep 50 ms), fewer shapes")
    p.add_argument("--warmup", type=int, default=None, help=f"do_bench warmup in ms (default {DEFAULT_WARMUP_MS})")
    p.add_argument("--rep", type=int, default=None, help=f"do_bench repetition time in ms (default {DEFAULT_REP_MS})")
    p.add_argument("--tma", default=None, help="options of the sweep's TMA kernel, a Python dict literal")
    p.add_argument("--seed", type=int, default=None, help="part random: the seed its shapes are drawn from")
    p.add_argument("--time-limit", type=float, default=float("inf"),
                   help="part random: start no new shape after this many seconds (a rerun resumes the CSV)")
    args = p.parse_args(argv)
    if not runtime.on_gpu():
        print("gemm_lab.bench needs a CUDA GPU (found none).", file=sys.stderr)
        return 2
    if args.tma:
        try:
            TMA_BEST.update(ast.literal_eval(args.tma))
        except (ValueError, SyntaxError, TypeError):
            p.error(f"--tma: expected a Python dict literal such as \"{{'num_stages': 4}}\", got {args.tma!r}")
    os.makedirs(args.out, exist_ok=True)
    runtime.check_environment()
    warmup, rep = (10, 50) if args.quick else (DEFAULT_WARMUP_MS, DEFAULT_REP_MS)
    run_parts(args.only, Run(args.out, args.warmup or warmup, args.rep or rep, quick=args.quick, seed=args.seed,
                             time_limit=args.time_limit))
    return 0
