"""Row-padded copies of the operands a TMA descriptor can't take as they are, both in one launch.

A descriptor needs 16-byte aligned rows: an fp16 operand with an odd row length (K odd for A, N odd for B)
can't be loaded through one, so the TMA kinds of ``best_kernels`` copy it first into rows padded to
``ROW_ALIGN_BYTES`` (what Inductor's pad_mm does before it calls cuBLAS; it pads row strides to 128 bytes
too, so that every row of a tile starts on a cache line). torch's ``copy_`` into a padded view ran at
about half the copy bandwidth on the H100 (a 4185x6281 fp16 operand: 66.5 us, where reading and writing
its 105 MB takes about 35 us at 3 TB/s), and it is one launch per operand; ``PadCopies`` copies one or
both operands with one launch of ``pad_copy_kernel`` (2-D tiles, 64-bit row offsets). The padding
columns are left unwritten: the descriptor's shape is the operand's, and a box past it reads zeros.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._launch_cache import Launch

ROW_ALIGN_BYTES = 128
TILE_ELEMS = 4096  # elements one program copies (BR x BC)


def padded_cols(cols: int, elem_size: int) -> int:
    """The row stride (elements) of a padded copy: ``cols`` rounded up to ``ROW_ALIGN_BYTES``."""
    per = max(1, ROW_ALIGN_BYTES // elem_size)
    return triton.cdiv(cols, per) * per


@triton.jit
def _copy_tile(src, dst, rows, cols, s0, s1, d0, tiles_c, t, BR: tl.constexpr, BC: tl.constexpr):
    r = (t // tiles_c) * BR + tl.arange(0, BR)
    c = (t % tiles_c) * BC + tl.arange(0, BC)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    r64 = r.to(tl.int64)[:, None]
    v = tl.load(src + r64 * s0 + c[None, :] * s1, mask=mask)
    tl.store(dst + r64 * d0 + c[None, :], v, mask=mask)


@triton.jit
def pad_copy_kernel(x, xd, x_rows, x_cols, sx0, sx1, dx0, x_tiles_c, x_tiles,
                    y, yd, y_rows, y_cols, sy0, sy1, dy0, y_tiles_c,
                    BR: tl.constexpr, BC: tl.constexpr, TWO: tl.constexpr):
    """Copy x (x_rows x x_cols, strides sx0, sx1) into xd (row stride dx0, unit column stride), and when
    ``TWO`` y into yd likewise: programs [0, x_tiles) take x's tiles, the rest y's."""
    pid = tl.program_id(0)
    if TWO and pid >= x_tiles:
        _copy_tile(y, yd, y_rows, y_cols, sy0, sy1, dy0, y_tiles_c, pid - x_tiles, BR, BC)
    else:
        _copy_tile(x, xd, x_rows, x_cols, sx0, sx1, dx0, x_tiles_c, pid, BR, BC)


class PadCopies:
    """For one plan key: which of (a, b) to copy into row-padded buffers, and the launch that does it.
    ``pads(a, b)`` returns the operands to build descriptors on (a padded copy, or the tensor itself)."""

    def __init__(self, a: torch.Tensor, b: torch.Tensor, pad_a: bool, pad_b: bool):
        self.which = tuple(i for i, p in enumerate((pad_a, pad_b)) if p)
        self.launch = None
        if not self.which:
            return
        shapes = [(a, b)[i].shape for i in self.which]
        es = a.element_size()
        self.strides = {i: padded_cols((a, b)[i].shape[1], es) for i in self.which}
        widest = max(s[1] for s in shapes)
        bc = max(16, min(256, triton.next_power_of_2(widest)))
        br = max(1, TILE_ELEMS // bc)
        tiles = [(triton.cdiv(r, br), triton.cdiv(c, bc)) for r, c in shapes]
        self.x_tiles = tiles[0][0] * tiles[0][1]
        grid = (sum(tr * tc for tr, tc in tiles),)
        self.launch = Launch(pad_copy_kernel, grid, dict(BR=br, BC=bc, TWO=len(self.which) == 2),
                             dict(num_warps=4))
        self.tiles_c = [tc for _, tc in tiles]

    def stride(self, i: int, t: torch.Tensor) -> int:
        """Row stride of operand ``i``'s descriptor tensor (its padded copy's, or its own)."""
        return self.strides[i] if i in self.which else t.stride(0)

    def __call__(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.launch is None:
            return a, b
        ops = [a, b]
        args = []
        for j, i in enumerate(self.which):
            t = ops[i]
            buf = torch.empty((t.shape[0], self.strides[i]), dtype=t.dtype, device=t.device)
            ops[i] = buf[:, :t.shape[1]]
            args.append((t, buf, t.shape[0], t.shape[1], t.stride(0), t.stride(1), self.strides[i],
                         self.tiles_c[j]))
        if len(args) == 1:  # y unused: x's arguments stand in (TWO is off, so no program reads them)
            x = args[0]
            self.launch(*x, self.x_tiles, *x)
        else:
            self.launch(*args[0], self.x_tiles, *args[1])
        return ops[0], ops[1]
