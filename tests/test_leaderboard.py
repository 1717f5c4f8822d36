"""autograder/leaderboard.py on a CPU host: it refuses to time (exit 2), and it keeps only kernel definitions."""

import json

import pytest

from autograder import leaderboard
from gemm_lab import runtime


@pytest.mark.skipif(runtime.on_gpu(), reason="the CPU-host answer")
def test_cpu_host_exits_2(capsys, tmp_path):
    assert leaderboard.main(["--out", str(tmp_path)]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_safe_source_keeps_only_jit_functions():
    src = '''import os
os.system("echo hacked")
x = open("/etc/passwd").read()


def helper():
    return 1


@triton.jit
def student_matmul_kernel(a_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)


@other.decorator
@triton.jit
def wrapped(a_ptr):
    pass
'''
    out = leaderboard.safe_source(src)
    assert "os.system" not in out and "open(" not in out and "def helper" not in out and "def wrapped" not in out
    assert out.startswith("@triton.jit\ndef student_matmul_kernel(") and "tl.program_id(0)" in out
    with pytest.raises(ValueError, match="default values"):
        leaderboard.safe_source("@triton.jit\ndef k(a, B=__import__('os').getcwd()):\n    pass\n")
    with pytest.raises(ValueError, match="no @triton.jit"):
        leaderboard.safe_source("x = 1\n")


def test_kernel_cell_is_found_by_grade_id(tmp_path):
    nb = {"cells": [{"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "imports"}}, "source": "import x"},
                    {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "student_kernel"}},
                     "source": ["@triton.jit\n", "def student_matmul_kernel(a):\n", "    pass\n"]}]}
    path = tmp_path / "01_pointer_blocks.ipynb"
    path.write_text(json.dumps(nb))
    assert leaderboard.kernel_cell(path).startswith("@triton.jit\ndef student_matmul_kernel")


def test_demo_hand_ins_build_from_the_current_master(tmp_path):
    from autograder import leaderboard_demo

    assert leaderboard_demo.main([str(tmp_path)]) == 0
    found = sorted(p.parent.name for p in tmp_path.glob("*/01_pointer_blocks.ipynb"))
    assert found == sorted(leaderboard_demo.variants())
    for name in found:  # every kernel cell reduces to its @triton.jit definition
        src = leaderboard.kernel_cell(tmp_path / name / "01_pointer_blocks.ipynb")
        assert leaderboard.safe_source(src).startswith("@triton.jit\ndef student_matmul_kernel(")
