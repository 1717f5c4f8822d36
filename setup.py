"""Build hook: the wheel carries the committed GPU measurements (results/*.csv) as package data.

Everything else about the package is in pyproject.toml. A student who installs the wheel (pip, Colab)
gets the H200 measurements under ``gemm_lab/data/results/`` without a network fetch; in a clone,
``gemm_lab.results`` reads ``results/`` itself.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

RESULTS = Path(__file__).resolve().parent / "results"


class BuildPyWithResults(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads results/ from the clone
        target = Path(self.build_lib) / "gemm_lab" / "data" / "results"
        target.mkdir(parents=True, exist_ok=True)
        for csv in sorted(RESULTS.glob("*.csv")):
            shutil.copy2(csv, target / csv.name)


setup(cmdclass={"build_py": BuildPyWithResults})
