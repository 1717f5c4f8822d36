"""GEMM Lab: tiled matmul in Triton, the compile pipeline, and the course's calculators.

Importing this package is cheap: it imports neither torch nor triton. Import the submodule you
need (``gemm_lab.calc`` is pure Python; ``gemm_lab.kernels`` loads triton through
``gemm_lab.runtime``, which decides first whether to use the CPU interpreter).
"""

__version__ = "0.1.0"
REPO_URL = "https://github.com/gemm-lab/gemm-lab"
