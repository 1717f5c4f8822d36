"""The grader's own copies of the @triton.jit helpers that notebooks give in locked cells.

A student's kernel may call a helper the notebook gives (week 7 ``06_persistent_loop``: ``compute_tile``).
The grader does not trust the notebook's object under that name (an added cell could redefine it): when it
rebuilds the student's kernel (``gemm_lab.grading.launchers``) it binds the name to the copy below instead.
Each copy must stay identical to the master's locked cell (``tests/test_grading_kernels.py`` checks it).

``fresh()`` loads every module of the package for each test cell, and answer-only notebooks must not pay
for importing triton: the helpers are made by ``helpers(exercise)`` on first use (after
``gemm_lab.runtime`` has decided ``TRITON_INTERPRET``), not at import.
"""

from __future__ import annotations

from . import _seal

__all__ = ["helpers"]

_MADE: dict = {}


def _make():
    global tl
    import triton
    import triton.language as tl

    @triton.jit
    def compute_tile(
        tile_id,
        a_ptr, b_ptr, c_ptr, visits_ptr, owner_ptr,
        M, N, K,
        stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    ):
        """Compute C tile number ``tile_id`` (row-major tile order) and record who computed it."""
        num_n_tiles = tl.cdiv(N, BLOCK_N)
        tile_m = tile_id // num_n_tiles
        tile_n = tile_id % num_n_tiles

        # 포인터와 M/N 마스크: tile마다 새로 만든다
        offsets_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offsets_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
        a_row = a_ptr + offsets_m[:, None] * stride_am
        b_col = b_ptr + offsets_n[None, :] * stride_bn
        mask_m = offsets_m[:, None] < M
        mask_n = offsets_n[None, :] < N

        # K 루프: FP32 누산기도 tile마다 0에서 시작한다
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            offsets_k = k + tl.arange(0, BLOCK_K)
            a_tile = tl.load(a_row + offsets_k[None, :] * stride_ak, mask=mask_m & (offsets_k[None, :] < K), other=0.0)
            b_tile = tl.load(b_col + offsets_k[:, None] * stride_bk, mask=mask_n & (offsets_k[:, None] < K), other=0.0)
            acc = tl.dot(a_tile, b_tile, acc)

        c = acc.to(c_ptr.dtype.element_ty)
        tl.store(c_ptr + offsets_m[:, None] * stride_cm + offsets_n[None, :] * stride_cn, c, mask=mask_m & mask_n)

        # 채점용 기록: 이 tile을 한 번 더 계산했고, 계산한 program은 나다
        tl.atomic_add(visits_ptr + tile_id, 1)
        tl.store(owner_ptr + tile_id, tl.program_id(0))

    return {"persistent": {"compute_tile": compute_tile}}


def helpers(exercise: str) -> dict:
    """{name in the notebook: the grader's copy} of the @jit helpers the exercise's notebook gives."""
    if not _MADE:
        _MADE.update(_make())
    return dict(_MADE.get(exercise, {}))


_seal.seal(__name__)
