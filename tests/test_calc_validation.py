"""gemm_lab.calc: import cost and the shared argument policy."""

import subprocess
import sys

import numpy as np
import pytest

from gemm_lab import calc
from gemm_lab.calc import cdiv, edge_tile, pid_to_tile, tile_grid


def test_import_does_not_load_torch_or_triton():
    code = ("import gemm_lab.calc, sys; "
            "assert 'torch' not in sys.modules and 'triton' not in sys.modules, 'heavy import'; "
            "assert 'pandas' not in sys.modules, 'pandas should load lazily'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("bad", [0, -1, -128])
def test_non_positive_sizes(bad):
    with pytest.raises(ValueError, match="positive"):
        tile_grid(bad, 600, 300, 128, 128, 64)
    with pytest.raises(ValueError):
        tile_grid(500, 600, 300, 128, bad, 64)


@pytest.mark.parametrize("bad", [4.0, 4.5, float("nan")])
def test_floats_are_rejected_with_value_error(bad):
    with pytest.raises(ValueError, match="integer"):
        tile_grid(500, 600, 300, bad, 128, 64)


@pytest.mark.parametrize("bad", [True, False, "128", None, [128]])
def test_wrong_types(bad):
    with pytest.raises(TypeError):
        tile_grid(500, 600, 300, bad, 128, 64)


def test_numpy_integers_accepted():
    assert tile_grid(np.int64(500), 600, 300, np.int32(128), 128, 64).grid == 20
    assert pid_to_tile(np.int64(3), 9, 9, 3) == (0, 1)


def test_cdiv_domain():
    with pytest.raises(ValueError):
        cdiv(-1, 4)
    with pytest.raises(ValueError):
        cdiv(4, 0)


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="pid_n=5"):
        edge_tile(500, 600, 128, 128, 0, 5)
    with pytest.raises(ValueError, match="BLOCK_K"):
        calc.k_tail(300, 0)


def test_results_are_frozen():
    g = tile_grid(500, 600, 300, 128, 128, 64)
    with pytest.raises(AttributeError):
        g.grid = 21  # type: ignore[misc]
