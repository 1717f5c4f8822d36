"""The kernel kinds ``best_matmul`` can pin, one small class each (``KERNELS``, by kind name).

A kind made concrete for one plan key (``KERNELS[kind](spec, cfg, a, b, out)``) holds its own launch state
(grid, constexprs, compiled-kernel handle, the integer arguments) and no tensor; calling it with any
tensors of that key, ``kernel(a, b, out)``, computes ``out = activation(a @ b)``. ``best_tune.candidates``
lists (kind, config) pairs; adding a kernel is one class here and one clause there.

Where a TMA descriptor may point (``_load_mode``, ``out_ok``): loads clip element by element at the
tensor's bounds, but stores write whole 16-byte chunks (triton issue #11583), so a descriptor store goes
straight into ``out`` only when every row ends on a 16-byte boundary or the bytes up to that boundary
belong to a buffer of our own (the row-padded output ``best_matmul`` allocates); otherwise into a padded
buffer of our own, copied into ``out`` afterwards.
"""

from __future__ import annotations

import dataclasses

import torch
import triton

from ._launch_cache import Launch
from ._schedule import num_programs, resolve_num_sms
from .best_pad import ROW_ALIGN_BYTES, PadCopies
from .device_tma import device_tma_persistent_kernel
from .hinted import hinted_launch_spec, hinted_matmul_kernel
from .matmul import matmul_kernel
from .persistent_tma import (
    TensorDescriptor,
    _descriptor_ok,
    _set_allocator,
    _store_ok,
    padded_cols,
    tma_persistent_kernel,
)
from .splitk import (
    k_per_split,
    reduce_launch,
    splitk_grid,
    splitk_partial_kernel,
    splitk_reduce_kernel,
)
from .stream_k import stream_k_tiles, tma_stream_k_kernel, workspace


@dataclasses.dataclass(frozen=True)
class Spec:
    """What every kind is made from besides the tensors: sizes, the fused activation ("" for none), and
    whether ``out`` is a buffer of our own (rows padded to 16 bytes: a descriptor store may touch the
    padding)."""
    M: int
    N: int
    K: int
    act: str = ""
    owns_out: bool = False


def out_ok(out: torch.Tensor, owns_out: bool) -> bool:
    """Whether a descriptor store may go straight into ``out`` (see the module docstring)."""
    return _store_ok(out) or (owns_out and _descriptor_ok(out))


def _load_mode(t: torch.Tensor, pad: bool = False) -> int:
    """How a TMA kernel takes an operand: 0 as it is, 1 transposed, 2 through a padded copy. ``pad``: copy
    it too when a descriptor could take it but its rows are not whole ``ROW_ALIGN_BYTES`` lines."""
    for mode, view in ((0, t), (1, t.t())):
        if _descriptor_ok(view):
            split = view.stride(0) * t.element_size() % ROW_ALIGN_BYTES
            return 2 if pad and split else mode
    return 2


def _operands(pads: PadCopies, a, b, ma: int, mb: int):
    """The tensors the descriptors are built on: padded copies (one launch for both), or transposed views."""
    a_op, b_op = pads(a, b)
    return (a_op.t() if ma == 1 else a_op), (b_op.t() if mb == 1 else b_op)


def aligned_empty(t: torch.Tensor) -> torch.Tensor:
    """A new tensor of ``t``'s shape whose rows start on 16-byte boundaries (contents undefined)."""
    rows, cols = t.shape
    return torch.empty_strided((rows, cols), (padded_cols(cols, t.element_size()), 1), dtype=t.dtype, device=t.device)


def _desc_like(template, base):
    """A new descriptor equal to ``template`` but for ``base`` (same shape, strides, block and alignment,
    which the plan's key guarantees), without re-running the constructor's checks. A new object per call,
    so a plan shared by threads never mixes their tensors, and no tensor is kept alive by the plan."""
    d = object.__new__(TensorDescriptor)
    d.__dict__.update(template.__dict__)
    d.base = base
    return d


class Kernel:
    """One kind at one config for one plan key. ``rank``: the host cost of its launch (0 pointer
    arguments only, 1 scratch allocation or two launches, 2 three descriptors encoded per launch): the
    graph ranking breaks near ties by it."""
    kind = ""
    rank = 0

    def __init__(self, spec: Spec, cfg: dict, a, b, out):
        self.spec, self.cfg = spec, cfg
        self.launch: Launch | None = None

    @property
    def pinned(self) -> tuple[str, dict]:
        return self.kind, self.cfg

    def __call__(self, a, b, out) -> None:
        raise NotImplementedError


class Tutorial03(Kernel):
    """Triton Tutorial 03's kernel: fine when every size and stride is a multiple of 16."""
    kind = "tutorial03"

    def __init__(self, spec, cfg, a, b, out):
        super().__init__(spec, cfg, a, b, out)
        M, N, K = spec.M, spec.N, spec.K
        grid = (triton.cdiv(M, cfg["BLOCK_SIZE_M"]) * triton.cdiv(N, cfg["BLOCK_SIZE_N"]),)
        consts = {k: cfg[k] for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M")}
        self.launch = Launch(matmul_kernel, grid, {**consts, "ACTIVATION": spec.act},
                             dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))
        self.ints = (M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))

    def __call__(self, a, b, out):
        self.launch(a, b, out, *self.ints)


class Hinted(Kernel):
    """The divisibility-hinted kernel: vectorized and pipelined at any size and stride."""
    kind = "hinted"

    def __init__(self, spec, cfg, a, b, out):
        super().__init__(spec, cfg, a, b, out)
        grid, self.ints, consts, options = hinted_launch_spec(spec.M, spec.N, spec.K, a, b, out, spec.act, cfg)
        self.launch = Launch(hinted_matmul_kernel, grid, consts, options)

    def __call__(self, a, b, out):
        self.launch(a, b, out, *self.ints)


class HintedSwap(Kernel):
    """The hinted kernel on C^T (N x M) = B^T (N x K) @ A^T (K x M), transposed views of the same memory:
    for a skinny M the long N becomes the tile's 128-row side (Hopper's warpgroup MMA wants 64 rows a
    warpgroup) and the short M the narrow side."""
    kind = "hinted_swap"

    def __init__(self, spec, cfg, a, b, out):
        super().__init__(spec, cfg, a, b, out)
        grid, self.ints, consts, options = hinted_launch_spec(spec.N, spec.M, spec.K, b.t(), a.t(), out.t(),
                                                              spec.act, cfg)
        self.launch = Launch(hinted_matmul_kernel, grid, consts, options)

    def __call__(self, a, b, out):
        self.launch(b, a, out, *self.ints)


class SplitK(Kernel):
    """fp32 partial products over slices of K, summed (and the activation applied) by one second kernel."""
    kind = "splitk"
    rank = 1

    def __init__(self, spec, cfg, a, b, out):
        super().__init__(spec, cfg, a, b, out)
        M, N, K = spec.M, spec.N, spec.K
        kps = k_per_split(K, cfg["split_k"], cfg["BLOCK_K"])
        self.splits = triton.cdiv(K, kps)
        self.launch = Launch(splitk_partial_kernel, splitk_grid(M, N, cfg["BLOCK_M"], cfg["BLOCK_N"], self.splits),
                             dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"]),
                             dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))
        self.ints = (M, N, K, kps, a.stride(0), a.stride(1), b.stride(0), b.stride(1))
        grid, consts = reduce_launch(M, N, self.splits)
        self.reduce = Launch(splitk_reduce_kernel, grid, dict(consts, ACTIVATION=spec.act), dict(num_warps=4))
        self.rints = (M, N, self.splits, out.stride(0), out.stride(1))
        self.ws_shape = (self.splits, M, N)

    def __call__(self, a, b, out):
        ws = torch.empty(self.ws_shape, dtype=torch.float32, device=a.device)
        self.launch(a, b, ws, *self.ints)
        self.reduce(ws, out, *self.rints)


class Tma(Kernel):
    """The persistent kernel with host-made TMA descriptors (operands a descriptor can't take as they are
    go through padded copies, an output it can't store into through a padded buffer copied back)."""
    kind = "tma"
    rank = 2

    def __init__(self, spec, cfg, a, b, out):
        super().__init__(spec, cfg, a, b, out)
        pad = cfg.get("pad", False)
        self.modes = (_load_mode(a, pad), _load_mode(b, pad), out_ok(out, spec.owns_out))
        self.pads = PadCopies(a, b, self.modes[0] == 2, self.modes[1] == 2)
        _set_allocator()
        self.launch = self._launch(spec, cfg)
        self.descs = None  # the first run's descriptors, without their tensors: templates for later runs

    def _launch(self, spec, cfg) -> Launch:
        P = num_programs(spec.M, spec.N, cfg["BLOCK_M"], cfg["BLOCK_N"])
        return Launch(tma_persistent_kernel, (P,), dict(
            BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"], GROUP_M=cfg["GROUP_M"],
            NUM_PROGRAMS=P, A_TRANS=self.modes[0] == 1, B_TRANS=self.modes[1] == 1, EPILOGUE_SUBTILE=True,
            FLATTEN=cfg["flatten"], WARP_SPECIALIZE=False, ACTIVATION=spec.act),
            dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))

    def _descriptors(self, a_op, b_op, target):
        """The three descriptors for these tensors (validated at the first run; the key fixes shapes,
        strides, dtypes and 16-byte alignment, so later runs copy the first run's)."""
        ma, mb, _ = self.modes
        if self.descs is None:
            p = self.cfg
            BM, BN, BK = p["BLOCK_M"], p["BLOCK_N"], p["BLOCK_K"]
            descs = (TensorDescriptor(a_op, a_op.shape, a_op.stride(), [BK, BM] if ma == 1 else [BM, BK]),
                     TensorDescriptor(b_op, b_op.shape, b_op.stride(), [BN, BK] if mb == 1 else [BK, BN]),
                     TensorDescriptor(target, target.shape, target.stride(), [BM, BN // 2]))
            self.descs = tuple(_desc_like(d, None) for d in descs)
        return tuple(_desc_like(d, t) for d, t in zip(self.descs, (a_op, b_op, target), strict=True))

    def __call__(self, a, b, out):
        ma, mb, direct = self.modes
        a_op, b_op = _operands(self.pads, a, b, ma, mb)
        target = out if direct else aligned_empty(out)
        self._run(a_op, b_op, target)
        if target is not out:
            out.copy_(target)

    def _run(self, a_op, b_op, target) -> None:
        s = self.spec
        # the key fixes shapes and strides: the three base addresses fix the launch's arguments
        self.launch.keyed((a_op.data_ptr(), b_op.data_ptr(), target.data_ptr()), lambda: (
            *self._descriptors(a_op, b_op, target), s.M, s.N, s.K))


class StreamK(Tma):
    """The TMA kernel's whole waves, then the tiles of the part-empty last wave (and one wave before it)
    shared out among all SMs by K iterations (``stream_k``): fp32 partials and one counter per shared tile,
    allocated per call, so a plan used from several streams or threads never shares them."""
    kind = "streamk"

    def _launch(self, spec, cfg) -> Launch:
        P = resolve_num_sms(None)
        self.sk_tiles = stream_k_tiles(triton.cdiv(spec.M, cfg["BLOCK_M"]) * triton.cdiv(spec.N, cfg["BLOCK_N"]),
                                       P, triton.cdiv(spec.K, cfg["BLOCK_K"]))
        self.ws_shape = workspace(P, cfg["BLOCK_M"], cfg["BLOCK_N"])
        return Launch(tma_stream_k_kernel, (P,), dict(
            BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"], GROUP_M=cfg["GROUP_M"],
            NUM_PROGRAMS=P, A_TRANS=self.modes[0] == 1, B_TRANS=self.modes[1] == 1, FLATTEN=cfg["flatten"],
            ACTIVATION=spec.act), dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))

    def _run(self, a_op, b_op, target) -> None:
        dev = target.device
        ws = torch.empty(self.ws_shape if self.sk_tiles else (1,), dtype=torch.float32, device=dev)
        counts = torch.zeros(max(1, self.sk_tiles), dtype=torch.int32, device=dev)
        s = self.spec
        # not ``keyed``: its kept arguments would hold each call's workspace alive
        self.launch(*self._descriptors(a_op, b_op, target), ws, counts, s.M, s.N, s.K, self.sk_tiles)


class DeviceTma(Kernel):
    """The same persistent TMA kernel with its descriptors made on the device: a pointer launch."""
    kind = "dtma"
    rank = 1

    def __init__(self, spec, cfg, a, b, out):
        super().__init__(spec, cfg, a, b, out)
        M, N, K = spec.M, spec.N, spec.K
        P = num_programs(M, N, cfg["BLOCK_M"], cfg["BLOCK_N"])
        pad = cfg.get("pad", False)
        ma, mb = _load_mode(a, pad), _load_mode(b, pad)
        self.modes = (ma, mb, out_ok(out, spec.owns_out))
        self.pads = PadCopies(a, b, ma == 2, mb == 2)
        a_op = a.t() if ma == 1 else a
        b_op = b.t() if mb == 1 else b
        target = out if self.modes[2] else aligned_empty(out)
        self.ints = (M, N, K, self.pads.stride(0, a_op), self.pads.stride(1, b_op), target.stride(0))
        _set_allocator()
        self.launch = Launch(device_tma_persistent_kernel, (P,), dict(
            BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"], GROUP_M=cfg["GROUP_M"],
            NUM_PROGRAMS=P, A_TRANS=ma == 1, B_TRANS=mb == 1, FLATTEN=cfg["flatten"], ACTIVATION=spec.act),
            dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))

    def __call__(self, a, b, out):
        ma, mb, direct = self.modes
        target = out if direct else aligned_empty(out)
        self.launch(*_operands(self.pads, a, b, ma, mb), target, *self.ints)
        if target is not out:
            out.copy_(target)


KERNELS: dict[str, type[Kernel]] = {k.kind: k for k in (Hinted, HintedSwap, Tutorial03, SplitK, Tma, StreamK,
                                                           DeviceTma)}
LAUNCH_RANK = {kind: k.rank for kind, k in KERNELS.items()}
