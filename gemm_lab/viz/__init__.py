"""Pictures for the notebooks (matplotlib, optional ipywidgets).

Import the submodule you need: ``gemm_lab.viz.pointers``, ``gemm_lab.viz.ordering``,
``gemm_lab.viz.roofline``, ... Importing the package selects a Korean font for matplotlib
(:mod:`gemm_lab.viz.fonts`) so Hangul in the figures is not drawn as boxes.
"""

from gemm_lab.viz.fonts import use_korean_font

use_korean_font()
