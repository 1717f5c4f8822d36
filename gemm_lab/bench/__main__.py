import sys

from gemm_lab.bench.cli import main

sys.exit(main())
