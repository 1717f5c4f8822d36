"""`make bench`: python scripts/bench_sweep.py --out results/  (same as python -m gemm_lab.bench)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gemm_lab.bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
