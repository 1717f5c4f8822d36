"""``python -m gemm_lab.calc``: every worked example and exercise answer of the seeds, with the measured GPU
autotune case from results/ beside exercise 3 (read here, so the calculators stay free of I/O)."""

from gemm_lab.calc.examples import main
from gemm_lab.results_autotune import AUTOTUNE_COST_CSV, measured_autotune_case

main({"csv": AUTOTUNE_COST_CSV, **{c: measured_autotune_case(compile_cache=c) for c in ("cold", "warm")}})
