"""One batched check on a GPU machine: kernel correctness (pytest on the GPU), the compiled kernels'
shared memory / registers / spills on the live device, and a search over the TMA persistent kernel's
options at 4096^3 and 8192^3 (with the other persistent variants and the autotuned kernel, against
torch.matmul in the same run).

    python scripts/gpu_check.py --out OUTDIR [--skip-tests] [--skip-search]    # after `make setup` (or pip install -e .)

Writes OUTDIR/pytest_gpu.log, compiled_kernels.csv, tma_configs.csv, persistent_variants_quick.csv.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from gemm_lab import runtime


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="gpu_check_out")
    p.add_argument("--skip-tests", action="store_true")
    p.add_argument("--skip-search", action="store_true")
    p.add_argument("--pytest-timeout", type=int, default=300)
    p.add_argument("--workers", default="8")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    info = runtime.check_environment()
    if not runtime.on_gpu():
        print("no GPU: nothing to check here")
        return 2
    t0 = time.time()
    from gemm_lab import bench

    if not args.skip_search:
        df = bench.bench_tma_configs(warmup=25, rep=120)
        df.to_csv(os.path.join(args.out, "tma_configs.csv"), index=False)
        show = df[["M", "kernel", "config", "ms", "tflops", "ratio_to_torch", "rel_err", "host_us", "error"]]
        for m, g in show.groupby("M"):
            print(f"\n=== TMA options at {m}^3 (best first) ===")
            print(g.sort_values("tflops", ascending=False).to_string(index=False, max_colwidth=60))
        print(f"[gpu_check] TMA search done ({time.time() - t0:.0f} s)", flush=True)
        pv = bench.bench_persistent_variants(warmup=25, rep=120)
        pv.to_csv(os.path.join(args.out, "persistent_variants_quick.csv"), index=False)
        print(pv[["M", "kernel", "config", "ms", "tflops", "ratio_to_torch", "rel_err", "host_us", "error"]].to_string(
            index=False, max_colwidth=60))
        print(f"[gpu_check] variants done ({time.time() - t0:.0f} s)", flush=True)

    ck = bench.compiled_kernels_table()
    ck.to_csv(os.path.join(args.out, "compiled_kernels.csv"), index=False)
    print(ck[["kernel", "config", "aligned", "target", "shared", "n_regs", "n_spills", "mma", "load_error"]]
          .to_string(index=False))
    print(f"[gpu_check] compiled table done ({time.time() - t0:.0f} s)", flush=True)

    rc = 0
    if not args.skip_tests:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
               "-n", args.workers, "tests/test_kernels_gpu.py", "tests/test_kernels_matmul.py",
               "tests/test_kernels_persistent.py", "tests/test_kernels_softmax.py", "tests/test_kernels_vector_add.py",
               "tests/test_kernels_check.py", "tests/test_compile.py", "tests/test_runtime.py"]
        log = os.path.join(args.out, "pytest_gpu.log")
        try:
            with open(log, "w") as fh:
                proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, timeout=args.pytest_timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = 124
        with open(log) as fh:
            lines = fh.read().splitlines()
        print("\n".join(ln for ln in lines if ln.startswith(("FAILED", "ERROR", "SKIPPED")))[:6000])
        print("\n".join(lines[-3:]))
        print(f"[gpu_check] pytest rc={rc} ({time.time() - t0:.0f} s)")
    print(f"[gpu_check] {info['device_name']} {info['arch']} torch {info['torch']} triton {info['triton']}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
