"""Pictures for the notebooks (matplotlib, optional ipywidgets).

Import the submodule you need: ``gemm_lab.viz.pointers``, ``gemm_lab.viz.ordering``,
``gemm_lab.viz.roofline``. Nothing heavy is imported here.
"""
