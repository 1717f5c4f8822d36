"""GEMM Lab: tiled matmul in Triton, the compile pipeline, and the course's calculators.

Importing this package is cheap: it imports neither torch nor triton. Import the submodule you
need (``gemm_lab.calc`` is pure Python; ``gemm_lab.kernels`` loads triton through
``gemm_lab.runtime``, which decides first whether to use the CPU interpreter).
"""

__version__ = "0.1.0"

# Where the course is published: the one place that says it. `make release COURSE_URL=... COURSE_REF=...`
# (tools/build_notebooks.py --course-url/--course-ref) rewrites these two lines, and every Colab
# badge, the notebooks' install line and the results refresh URL are derived from them.
# COURSE_REF is a tag or a commit, never a moving branch.
COURSE_URL = "https://github.com/gemm-lab/gemm-lab"
COURSE_REF = "v0.1.0"

REPO_URL = COURSE_URL  # the older name of the same setting
