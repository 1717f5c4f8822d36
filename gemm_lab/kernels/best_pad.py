"""Row-padded copies of the operands a TMA descriptor can't take as they are, both in one launch.

A descriptor needs 16-byte aligned rows: an fp16 operand with an odd row length (K odd for A, N odd for B)
can't be loaded through one, so the TMA kinds of ``best_kernels`` copy it first into rows padded to
``ROW_ALIGN_BYTES`` (what Inductor's pad_mm does before it calls cuBLAS; it pads row strides to 128 bytes
too, so that every row of a tile starts on a cache line). torch's ``copy_`` into a padded view ran at
about half the copy bandwidth on the H100 (a 4185x6281 fp16 operand: 66.5 us, where reading and writing
its 105 MB takes about 35 us at 3 TB/s), and it is one launch per operand; ``PadCopies`` copies one or
both operands with one launch of ``pad_copy_kernel``, flat over the padded destination as Inductor's
pad kernels are (a 2-D tiled version ran at about 1 TB/s on the H100, slower than ``copy_``). The
descriptor's shape is the operand's (a box past it reads zeros), so the zeroed padding is never read.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._launch_cache import Launch
from .persistent_tma import padded_cols as aligned_cols

ROW_ALIGN_BYTES = 128
BLOCK = 1024  # destination elements one program writes (8 per thread: one 16-byte store in fp16)


def padded_cols(cols: int, elem_size: int) -> int:
    """The row stride (elements) of a padded copy: ``cols`` rounded up to ``ROW_ALIGN_BYTES``."""
    return aligned_cols(cols, elem_size, ROW_ALIGN_BYTES)


@triton.jit
def _copy_flat(src, dst, rows, cols, s0, s1, p, PITCH: tl.constexpr, BLOCK: tl.constexpr):
    # flat over the destination (Inductor's pad kernels do the same): its stores are contiguous and
    # 16-byte wide; the loads follow the source's rows (coalesced, 2-byte aligned when its rows are)
    offs = p.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    r = offs // PITCH
    c = offs % PITCH
    v = tl.load(src + r * s0 + c * s1, mask=(r < rows) & (c < cols), other=0.0)
    tl.store(dst + offs, v, mask=r < rows)


@triton.jit
def pad_copy_kernel(x, xd, x_rows, x_cols, sx0, sx1, x_progs, y, yd, y_rows, y_cols, sy0, sy1,
                    XP: tl.constexpr, YP: tl.constexpr, BLOCK: tl.constexpr, TWO: tl.constexpr):
    """Copy x (x_rows x x_cols, strides sx0, sx1) into xd (row stride XP, padding columns zeroed), and when
    ``TWO`` y into yd likewise: programs [0, x_progs) write x's copy, the rest y's."""
    pid = tl.program_id(0)
    if TWO and pid >= x_progs:
        _copy_flat(y, yd, y_rows, y_cols, sy0, sy1, pid - x_progs, YP, BLOCK)
    else:
        _copy_flat(x, xd, x_rows, x_cols, sx0, sx1, pid, XP, BLOCK)


class PadCopies:
    """For one plan key: which of (a, b) to copy into row-padded buffers, and the launch that does it.
    Calling it with ``(a, b)`` returns the operands to build descriptors on (a padded copy, or the tensor itself)."""

    def __init__(self, a: torch.Tensor, b: torch.Tensor, pad_a: bool, pad_b: bool):
        self.which = tuple(i for i, p in enumerate((pad_a, pad_b)) if p)
        self.launch = None
        if not self.which:
            return
        es = a.element_size()
        self.strides = {i: padded_cols((a, b)[i].shape[1], es) for i in self.which}
        progs = [triton.cdiv((a, b)[i].shape[0] * self.strides[i], BLOCK) for i in self.which]
        pitch = [self.strides[i] for i in self.which]
        self.x_progs = progs[0]
        self.launch = Launch(pad_copy_kernel, (sum(progs),), dict(
            XP=pitch[0], YP=pitch[-1], BLOCK=BLOCK, TWO=len(self.which) == 2), dict(num_warps=4))

    def stride(self, i: int, t: torch.Tensor) -> int:
        """Row stride of operand ``i``'s descriptor tensor (its padded copy's, or its own)."""
        return self.strides[i] if i in self.which else t.stride(0)

    def __call__(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.launch is None:
            return a, b
        ops = [a, b]
        args = []
        for i in self.which:
            t = ops[i]
            buf = torch.empty((t.shape[0], self.strides[i]), dtype=t.dtype, device=t.device)
            ops[i] = buf[:, :t.shape[1]]
            args.append((t, buf, t.shape[0], t.shape[1], t.stride(0), t.stride(1)))
        # one operand: y's arguments repeat x's (TWO is off, so no program reads them)
        self.launch(*args[0], self.x_progs, *args[-1])
        return ops[0], ops[1]
