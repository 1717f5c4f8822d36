"""``best_matmul``: one entry point that picks a kernel and config per (M, N, K, dtype, GPU) and says why.

Rules (``explain`` returns the choice and a one-line reason, without running anything):

* CPU interpreter: the Tutorial-03 kernel at ``interpreter_config`` (no autotuning, no TMA there).
* few output tiles and a long K (the tiles cannot fill the SMs): split-K over the long K.
* Hopper (sm_90+), fp16/bf16, large M x N: the tensor-descriptor (TMA) persistent kernel (a short timed list:
  two tile shapes, a whole-K tile for K <= 128, and the hinted kernel when an operand is unaligned).
* small M x N: small tiles (``best_tune.SMALL_HINTED``), so that enough tiles exist to fill the SMs.
* otherwise: the architecture's tile list (``configs_for``).

On a GPU every choice has a candidate list (``best_tune.candidates``: the divisibility-hinted kernel
(``hinted``: vectorized and pipelined even when sizes and strides are not multiples of 16), the
Tutorial-03 kernel when they are, on Hopper the TMA kernel (operands a descriptor can't take are copied
into padded buffers inside the call), split-K when few output tiles meet a long K, narrow tiles for M or
N <= 32, whole-K tiles for K <= 128, swap-AB (C^T = B^T A^T) for a skinny M). The first call for a key
runs at once: the pick stored on disk by an earlier process (``best_store``), else the rule-based pick
(``best_tune.heuristic``). Timing the candidates (each as a CUDA-graph replay: ``do_bench`` would rank
small shapes by launch overhead) happens later, never on the first call unless asked for
(``GEMM_LAB_TUNE``, ``best_matmul.tune``), within a time budget, and its pick is stored on disk.

Launch overhead: the full argument validation and the plan (choice, grid, compiled-kernel handle, the
integer arguments) are kept per key (shapes, strides, dtypes, device, 16-byte alignment, activation,
output layout); a repeated call builds the key, finds the plan and launches through the cached handle
(with ``out=``, it re-checks once per address triple that ``out`` does not overlap the inputs).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
import warnings

import torch
import triton

from gemm_lab import runtime

from . import _validate as v
from . import best_store, best_tune
from ._launch_cache import Launch
from ._schedule import num_programs
from .autotuned import current_arch, interpreter_config, parse_arch
from .device_tma import device_tma_persistent_kernel
from .hinted import hinted_launch_spec, hinted_matmul_kernel
from .matmul import LEAKY_RELU_SLOPE, matmul_kernel, trivial_result, validate_matmul
from .persistent_tma import (
    TensorDescriptor,
    _descriptor_ok,
    _set_allocator,
    aligned_copy,
    tma_persistent_kernel,
)
from .splitk import (
    REDUCE_BLOCK,
    k_per_split,
    reduce_grid,
    splitk_grid,
    splitk_partial_kernel,
    splitk_reduce_kernel,
)

SMALL_MN = 1024 * 1024          # M*N at or below: small-tile autotuning
TMA_MIN_MN = 2048 * 2048        # M*N at or above (Hopper, fp16/bf16): the TMA persistent kernel
SPLITK_MIN_K = 1024
# flatten=True: the only option set at or above torch.matmul at 4096^3 and 8192^3 in fp16 and bf16 in one
# CUDA-graph run on the H200 (small_configs.csv: 1.002 / 1.004 / 1.029 / 1.034); differences at 4096^3
# between option sets are within about 1.5 %, run-to-run noise included
TMA_CONFIG = best_tune.LARGE_TMA[0]
H200_SMS = 132
TUNE_POLICIES = ("deferred", "first", "off")
TUNE_BUDGET_S = 10.0
_log = logging.getLogger("gemm_lab.best")


@dataclasses.dataclass(frozen=True)
class Choice:
    """What ``best_matmul`` runs for a shape: kernel name, its config, and a one-line reason."""
    kernel: str            # "tiled" | "autotuned_small" | "autotuned" | "splitk" | "tma_persistent"
    config: tuple          # sorted (name, value) pairs
    reason: str

    @property
    def params(self) -> dict:
        return dict(self.config)


def _choice(kernel: str, cfg: dict, reason: str) -> Choice:
    return Choice(kernel, tuple(sorted(cfg.items())), reason)


def explain(M: int, N: int, K: int, dtype: torch.dtype = torch.float16, arch=None, num_sms: int | None = None
            ) -> Choice:
    """The choice ``best_matmul`` makes for an (M, N, K) product of ``dtype`` tensors.

    ``arch``: "sm_90", (9, 0), or None for the current device (the interpreter when there is none);
    ``num_sms``: the SM count (the current GPU's; 132, an H200's, for another arch).
    """
    for name, value in (("M", M), ("N", N), ("K", K)):
        v.check_positive_int(name, value)
    if dtype not in v.FLOAT_DTYPES:
        raise TypeError(f"dtype must be one of {[v.dtype_name(d) for d in v.FLOAT_DTYPES]}, got {dtype!r}")
    if arch is None:
        arch = current_arch()
        if num_sms is None and arch is not None:
            num_sms = runtime.num_sms()
        if arch is None:
            cfg = interpreter_config(M, N, K)
            return _choice("tiled", cfg, "CPU interpreter: one small-tile config sized to the shape "
                           f"({cfg['BLOCK_SIZE_M']}x{cfg['BLOCK_SIZE_N']}x{cfg['BLOCK_SIZE_K']}), no autotuning")
    major, minor = parse_arch(arch)
    sms = H200_SMS if num_sms is None else v.check_positive_int("num_sms", num_sms)
    tiles = triton.cdiv(M, 64) * triton.cdiv(N, 64)
    if tiles * 2 <= sms and K >= SPLITK_MIN_K and K >= 4 * max(M, N):
        split = max(2, min(sms // tiles, K // 256, 64))
        cfg = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, num_warps=4, num_stages=3, split_k=split)
        return _choice("splitk", cfg, f"{tiles} output tiles of 64x64 cannot fill {sms} SMs and K={K} is long: "
                       f"split K (about {split} slices first; other splits and tiles timed later), sum the fp32 partials "
                       "in one kernel")
    if major >= 9 and dtype != torch.float32 and M * N >= TMA_MIN_MN:
        return _choice("tma_persistent", TMA_CONFIG, f"large output ({M}x{N}) on sm_{major}{minor}: "
                       "persistent kernel with TMA tensor descriptors (128x256x64 or 128x128x64 tiles by the last "
                       "wave's fill first, both timed later), one program per SM")
    if M * N <= SMALL_MN:
        return _choice("autotuned_small", {}, f"small output ({M}x{N}): the small tile whose count fills {sms} SMs "
                       "first (divisibility-hinted kernel), small-tile configs of each kernel timed as CUDA graphs later")
    return _choice("autotuned", {}, f"mid-size output ({M}x{N}): the hinted kernel at the widest tile that fills "
                   f"the SMs first, the sm_{major}{minor} config list timed as CUDA graphs later")


def _policy() -> str:
    """When a plan's candidates are timed: ``GEMM_LAB_TUNE`` (read when a plan is made)."""
    p = os.environ.get("GEMM_LAB_TUNE", "deferred").strip().lower() or "deferred"
    if p not in TUNE_POLICIES:
        raise ValueError(f"GEMM_LAB_TUNE must be one of {TUNE_POLICIES}, got {p!r}; unset it for 'deferred'")
    return p


def _budget_s() -> float:
    raw = os.environ.get("GEMM_LAB_TUNE_BUDGET_S", "")
    try:
        x = float(raw) if raw.strip() else TUNE_BUDGET_S
    except ValueError:
        raise ValueError(f"GEMM_LAB_TUNE_BUDGET_S must be a number of seconds, got {raw!r}") from None
    if not x > 0:
        raise ValueError(f"GEMM_LAB_TUNE_BUDGET_S must be > 0, got {raw!r}")
    return x


def _capturing(t: torch.Tensor) -> bool:
    return t.is_cuda and torch.cuda.is_current_stream_capturing()


class _Plan:
    """A choice made concrete for one key: what to launch and how.

    ``go(a, b, out)`` is the whole repeat-call path once the plan is final (``None`` before: the first
    call pins a candidate, a deferred plan times the candidates at a later call). ``source`` says where
    the pinned candidate came from: "interpreter", "heuristic", "tuned" or "store"."""

    def __init__(self, choice: Choice, M: int, N: int, K: int, activation: str, tune_for: str = "graph",
                 policy: str = "deferred", out_cols: int | None = None):
        self.choice, self.M, self.N, self.K, self.act = choice, M, N, K, activation
        self.tune_for, self.policy = tune_for, policy
        self.out_cols = out_cols  # new outputs: rows padded to this many columns (a view of N of them)
        self.key = None      # the plan-cache key, set by best_matmul: also the on-disk store's key
        self.go = None       # the pinned candidate's launch path
        self.fast = None     # ``go`` once the plan is final (what a repeat call runs without looking further)
        self.launch = None   # Launch of the pinned candidate's (main) kernel
        self.pinned = None   # (kernel name, config) that runs
        self.source = None
        self.report = None   # the tuning's report (dict), once timed or loaded
        self.checked_ptrs = None  # (a, b, out) addresses last found not to overlap
        self.descs = None    # TMA: the three descriptors of the first run, templates for later runs
        self.tuned = None    # (kernel name, config, ms, every timed candidate's time) once tuned or loaded
        self.ints = ()       # tiled kernels: the runtime integers after the three pointers
        self.tma = None      # the TMA persistent kernel's config, when that is what runs
        self.dtma = None     # the device-descriptor TMA kernel's config, when that is what runs
        self.sk = None       # split-K: (slice length, slices), when that is what runs
        self.swap = False    # swap-AB: the kernel computes C^T = B^T A^T
        self.qargs = ()
        self.near = None     # (M, N, K) of the tuned shape whose pick the first call borrowed, if any

    # ------------------------------------------------------------------ output
    def new_out(self, a: torch.Tensor) -> torch.Tensor:
        if self.out_cols is None:
            return torch.empty((self.M, self.N), dtype=a.dtype, device=a.device)
        # rows padded to a 16-byte multiple: a view of the padded buffer, no copy (what Inductor's padded
        # mm returns); the TMA kernel can store through it and the hinted kernel stores 16 bytes at a time
        return torch.empty_strided((self.M, self.N), (self.out_cols, 1), dtype=a.dtype, device=a.device)

    # ------------------------------------------------------------------ pinning
    def shape_class(self, a, b, out) -> str:
        """What a tuned pick is shared by (``best_store.nearest``): the choice, dtype, activation, ranking,
        and per operand whether its rows are 16-byte aligned and whether it is transposed; a neighbour's
        pick is used only if it is in this shape's candidate list too."""
        def lay(t):
            return f"{'T' if t.stride(0) == 1 and t.stride(1) != 1 else 'N'}{int(_descriptor_ok(t))}"

        return "|".join((self.choice.kernel, str(a.dtype), self.act or "-", self.tune_for,
                         lay(a), lay(b), lay(out)))

    def _candidates(self, a, b, out) -> list:
        strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))
        arch = current_arch()
        # any layout: _go_tma copies an operand a descriptor can't take into a padded buffer (timed with it)
        tma_ok = (parse_arch(arch)[0] >= 9 and a.dtype in (torch.float16, torch.bfloat16)
                  and TensorDescriptor is not None)
        self.sms = runtime.num_sms() if runtime.on_gpu() else H200_SMS
        return best_tune.candidates(self.M, self.N, self.K, strides, arch, self.M * self.N <= SMALL_MN,
                                    tma_ok, large=self.choice.kernel == "tma_persistent", sms=self.sms)

    def _pin(self, cand, a, b, out) -> None:
        """Make ``cand`` = (kernel name, config) the plan's launch path (compiles at its first launch)."""
        kind, cfg = cand
        self.tma = self.sk = self.descs = self.dtma = None
        self.swap = kind == "hinted_swap"
        M, N, K = self.M, self.N, self.K
        if kind == "tma":
            self.tma = cfg
            self.P = num_programs(M, N, cfg["BLOCK_M"], cfg["BLOCK_N"])
            self.launch = Launch(tma_persistent_kernel, (self.P,), None, dict(num_warps=cfg["num_warps"],
                                 num_stages=cfg["num_stages"]))
            self.modes = (_mode(a), _mode(b), _descriptor_ok(out))
            self.go = self._go_tma
        elif kind == "dtma":  # descriptors made on the device: a pointer launch
            self.dtma = cfg
            P = num_programs(M, N, cfg["BLOCK_M"], cfg["BLOCK_N"])
            ma, mb = _mode(a), _mode(b)
            self.modes = (ma, mb, _descriptor_ok(out))
            ops = (_op(a, ma), _op(b, mb), out if self.modes[2] else aligned_empty(out))
            self.ints = (M, N, K, ops[0].stride(0), ops[1].stride(0), ops[2].stride(0))
            _set_allocator()
            self.launch = Launch(device_tma_persistent_kernel, (P,), dict(
                BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"], GROUP_M=cfg["GROUP_M"],
                NUM_PROGRAMS=P, A_TRANS=ma == 1, B_TRANS=mb == 1, FLATTEN=cfg["flatten"], ACTIVATION=self.act),
                dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))
            self.go = self._go_dtma
        elif kind == "splitk":
            kps = k_per_split(K, cfg["split_k"], cfg["BLOCK_K"])
            self.sk = (kps, triton.cdiv(K, kps))
            self.launch = Launch(splitk_partial_kernel, splitk_grid(M, N, cfg["BLOCK_M"], cfg["BLOCK_N"], self.sk[1]),
                                 dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"]),
                                 dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))
            self.ints = (M, N, K, kps, a.stride(0), a.stride(1), b.stride(0), b.stride(1))
            self.reduce = Launch(splitk_reduce_kernel, reduce_grid(M, N),
                                 dict(BLOCK=REDUCE_BLOCK, ACTIVATION=self.act), dict(num_warps=4))
            self.rints = (M, N, self.sk[1], out.stride(0), out.stride(1))
            self.ws_shape = (self.sk[1], M, N)
            self.go = self._go_splitk
        elif kind in ("hinted", "hinted_swap"):
            if self.swap:  # C^T (N x M) = B^T (N x K) @ A^T (K x M): same kernel, transposed views
                grid, self.qargs, consts, options = hinted_launch_spec(N, M, K, b.t(), a.t(), out.t(), self.act, cfg)
            else:
                grid, self.qargs, consts, options = hinted_launch_spec(M, N, K, a, b, out, self.act, cfg)
            self.launch = Launch(hinted_matmul_kernel, grid, consts, options)
            self.ints = self.qargs
            self.go = self._go_swap if self.swap else self._go_tiled
        else:  # "tutorial03"
            grid = (triton.cdiv(M, cfg["BLOCK_SIZE_M"]) * triton.cdiv(N, cfg["BLOCK_SIZE_N"]),)
            consts = {k: cfg[k] for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M")}
            options = dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
            self.launch = Launch(matmul_kernel, grid, {**consts, "ACTIVATION": self.act}, options)
            self.ints = (M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))
            self.go = self._go_tiled
        self.pinned = (kind, cfg)

    def _state(self):
        return (self.launch, self.tma, self.dtma, self.sk, self.swap, self.ints, self.qargs, self.descs, self.pinned, self.go,
                getattr(self, "P", None), getattr(self, "modes", None), getattr(self, "reduce", None),
                getattr(self, "rints", None), getattr(self, "ws_shape", None))

    def _restore(self, st) -> None:
        (self.launch, self.tma, self.dtma, self.sk, self.swap, self.ints, self.qargs, self.descs, self.pinned, self.go,
         self.P, self.modes, self.reduce, self.rints, self.ws_shape) = st

    def _tiled_args(self, a, b, out) -> tuple:
        return (b, a, out, *self.ints) if self.swap else (a, b, out, *self.ints)

    # ------------------------------------------------------------------ the paths
    def _go_tiled(self, a, b, out) -> None:
        self.launch(a, b, out, *self.ints)

    def _go_swap(self, a, b, out) -> None:
        self.launch(b, a, out, *self.ints)

    def _go_splitk(self, a, b, out) -> None:
        ws = torch.empty(self.ws_shape, dtype=torch.float32, device=a.device)
        self.launch(a, b, ws, *self.ints)
        self.reduce(ws, out, *self.rints)

    def _go_dtma(self, a, b, out) -> None:
        ma, mb, out_ok = self.modes
        target = out if out_ok else aligned_empty(out)
        self.launch(_op(a, ma), _op(b, mb), target, *self.ints)
        if target is not out:
            out.copy_(target)

    def _go_tma(self, a, b, out) -> None:
        p = self.tma
        ma, mb, out_ok = self.modes
        a_op, b_op = _op(a, ma), _op(b, mb)
        target = out if out_ok else aligned_empty(out)
        if self.descs is None:  # validated once; the key fixes shapes, strides, dtypes and 16-byte alignment
            BM, BN, BK = p["BLOCK_M"], p["BLOCK_N"], p["BLOCK_K"]
            descs = (TensorDescriptor(a_op, a_op.shape, a_op.stride(), [BK, BM] if ma == 1 else [BM, BK]),
                     TensorDescriptor(b_op, b_op.shape, b_op.stride(), [BN, BK] if mb == 1 else [BK, BN]),
                     TensorDescriptor(target, target.shape, target.stride(), [BM, BN // 2]))
            self.descs = tuple(_desc_like(d, None) for d in descs)  # templates hold no tensor
        da, db, dc = self.descs
        if self.launch.constexprs is None:
            _set_allocator()
            self.launch.constexprs = dict(BLOCK_M=p["BLOCK_M"], BLOCK_N=p["BLOCK_N"], BLOCK_K=p["BLOCK_K"],
                                          GROUP_M=p["GROUP_M"], NUM_PROGRAMS=self.P, A_TRANS=ma == 1,
                                          B_TRANS=mb == 1, EPILOGUE_SUBTILE=True, FLATTEN=p["flatten"],
                                          WARP_SPECIALIZE=False, ACTIVATION=self.act)
        self.launch(_desc_like(da, a_op), _desc_like(db, b_op), _desc_like(dc, target), self.M, self.N, self.K)
        if target is not out:  # only for an out= whose rows a descriptor can't take
            out.copy_(target)

    # ------------------------------------------------------------------ first call, tuning
    def run(self, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        """Compute into ``out``: the pinned path, after pinning / tuning when the plan is not final yet."""
        if self.fast is None:
            first = self.pinned is None
            self._settle(a, b, out)
            if first and self.source != "interpreter" and not _capturing(a):
                try:
                    self.go(a, b, out)
                except Exception as exc:  # noqa: BLE001 - the untimed pick does not compile or launch here
                    warnings.warn(f"best_matmul: the first pick {self.pinned} failed on this GPU "
                                  f"({type(exc).__name__}); timing the other candidates now", RuntimeWarning,
                                  stacklevel=3)
                    self.tune(a, b, out)  # skips candidates that fail, pins the fastest that runs
                    self.go(a, b, out)
                return
        self.go(a, b, out)

    def _settle(self, a, b, out) -> None:
        if self.pinned is None:  # first call
            if self.choice.kernel == "tiled":  # interpreter: one config, nothing to time
                self._pin(("tutorial03", self.choice.params), a, b, out)
                self.source, self.fast = "interpreter", self.go
                return
            cands = self._candidates(a, b, out)
            stored = best_store.load(self.key) if self.key is not None else None
            if stored is not None and stored in cands:  # tuned by an earlier process on this GPU and software
                self._pin(stored, a, b, out)
                self.source, self.tuned = "store", (*stored, float("nan"), [(stored, float("nan"))])
                self.report = dict(source="store", picked=stored, seconds=0.0, timed=0, skipped=0,
                                   candidates=len(cands))
                self.fast = self.go
                return
            if self.policy == "first" and not _capturing(a):
                self.tune(a, b, out)
                return
            # the pick tuned for the nearest shape of this class, when there is one, else the rules'
            near = best_store.nearest(self.shape_class(a, b, out), self.M, self.N, self.K)
            self._pin(near[0] if near and near[0] in cands else
                      best_tune.heuristic(cands, self.M, self.N, self.K, self.sms), a, b, out)
            self.near = near[1] if near and near[0] in cands else None
            self.source = "heuristic"
            if self.policy == "off":
                self.source, self.fast = "heuristic (tuning off)", self.go
            return
        # a later call of a heuristic plan: time the candidates now (never inside a CUDA-graph capture)
        if self.policy == "deferred" and not _capturing(a):
            self.tune(a, b, out)

    def tune(self, a, b, out, budget_s: float | None = None) -> dict:
        """Time the candidates on these tensors (the heuristic's pick first, within ``budget_s``), pin the
        fastest, store it on disk; returns the report (also kept as ``self.report``)."""
        if self.choice.kernel == "tiled":
            self.run(a, b, out)
            return dict(source="interpreter", picked=self.pinned, seconds=0.0, timed=0, skipped=0, candidates=1)
        budget_s = _budget_s() if budget_s is None else budget_s
        t0 = time.perf_counter()
        cands = self._candidates(a, b, out)
        # the first call's pick (the rules' or a neighbour's) is timed first: within any budget, and the
        # report says how much tuning gained over it
        first = self.pinned if self.pinned in cands else best_tune.heuristic(cands, self.M, self.N, self.K, self.sms)
        cands = [first] + [c for c in cands if c != first]
        states = {}

        def run(cand):
            i = cands.index(cand)
            if i not in states:
                self._pin(cand, a, b, out)
                states[i] = self._state()
            self._restore(states[i])
            self.go(a, b, out)
            states[i] = self._state()  # keeps the TMA descriptor templates made at the first launch

        best, ms, timings = best_tune.pick_fastest(cands, run, eager=self.tune_for == "eager", budget_s=budget_s)
        self._restore(states[cands.index(best)])
        self.tuned = (*best, ms, timings)
        self.source, self.fast = "tuned", self.go
        seconds = time.perf_counter() - t0
        self.report = dict(source="tuned", picked=best, seconds=seconds, timed=len(timings),
                           skipped=len(cands) - len(timings), candidates=len(cands), heuristic=first,
                           ms=ms, heuristic_ms=next((t for c, t in timings if c == first), float("nan")))
        if self.key is not None:
            best_store.save(self.key, *best, dict(M=self.M, N=self.N, K=self.K, cls=self.shape_class(a, b, out)))
        _log.info("best_matmul: tuned %dx%dx%d in %.1f s: %s (%d of %d candidates timed, %d left out by the "
                  "%.0f s budget)", self.M, self.N, self.K, seconds, best[0], len(timings), len(cands),
                  len(cands) - len(timings), budget_s)
        return self.report


def _mode(t: torch.Tensor) -> int:
    """How the TMA path takes an operand: 0 as it is, 1 transposed, 2 through a padded copy."""
    if _descriptor_ok(t):
        return 0
    return 1 if _descriptor_ok(t.t()) else 2


def _op(t: torch.Tensor, mode: int) -> torch.Tensor:
    return t if mode == 0 else (t.t() if mode == 1 else aligned_copy(t))


def aligned_empty(t: torch.Tensor) -> torch.Tensor:
    """A new tensor of ``t``'s shape whose rows start on 16-byte boundaries (contents undefined)."""
    rows, cols = t.shape
    per16 = max(1, 16 // t.element_size())
    return torch.empty_strided((rows, cols), (triton.cdiv(cols, per16) * per16, 1), dtype=t.dtype, device=t.device)


def _desc_like(template: TensorDescriptor, base: torch.Tensor | None) -> TensorDescriptor:
    """A new descriptor equal to ``template`` but for ``base`` (same shape, strides, block and alignment,
    which the plan's key guarantees), without re-running the constructor's checks. A new object per call,
    so a plan shared by threads never mixes their tensors, and no tensor is kept alive by the plan."""
    d = object.__new__(TensorDescriptor)
    d.__dict__.update(template.__dict__)
    d.base = base
    return d


_PLANS: dict[tuple, _Plan] = {}
_MAX_PLANS = 4096


def _key(a, b, out, activation, tune_for: str = "graph"):
    """The plan-cache key: everything the kernels are specialized on (best_matmul's fast path builds the
    same tuple inline for out=None)."""
    okey = None if out is None else (out.shape, out.stride(), out.dtype, out.device, out.data_ptr() & 15 == 0)
    return (a.shape, a.stride(), b.shape, b.stride(), a.dtype, b.dtype, a.device, b.device,
            a.data_ptr() & 15 == 0, b.data_ptr() & 15 == 0, activation, okey, tune_for)


TUNE_FOR = ("graph", "eager")


def best_matmul(a: torch.Tensor, b: torch.Tensor, *, activation: str | None = None,
                out: torch.Tensor | None = None, tune_for: str = "graph") -> torch.Tensor:
    """C = activation(A @ B) with the kernel ``explain(M, N, K, dtype)`` picks (same inputs as ``matmul``).

    ``best_matmul.explain(M, N, K, dtype)`` gives the choice and its reason; ``best_matmul.choice_for(a, b)``
    the choice for two tensors; ``best_matmul.tune(a, b)`` times the candidates now and returns a report.
    The first call for a key validates fully and runs at once: a plan stored on disk by an earlier process
    on this GPU and software, else the heuristic's pick (``best_tune.heuristic``). When the candidates are
    timed is set by ``GEMM_LAB_TUNE``: ``deferred`` (default: at the next call for the key that is not
    captured into a CUDA graph), ``first`` (at the first call), ``off`` (never; ``best_matmul.tune`` still
    works). Timing stops starting candidates after ``GEMM_LAB_TUNE_BUDGET_S`` seconds (default 10); the
    pick is stored on disk (``best_store``). Repeated calls reuse the plan.
    With ``out=None``, an output whose rows would not start on 16-byte boundaries (N * element size not a
    multiple of 16, on a GPU) is returned as a view of a row-padded buffer (``is_contiguous()`` False, as
    a column slice would be): the kernels then store whole rows and nothing is copied back.
    ``tune_for``: what the timing ranks. ``"graph"`` (default): GPU time alone, as when the call is replayed
    from a CUDA graph. ``"eager"``: per call ``max(GPU time, CPU time of the launch)``, as when the call is
    made from Python each time; at small shapes a cheaper launch then beats a slightly faster kernel.

    Autograd: when grad mode is on and ``a`` or ``b`` requires grad, the result carries a backward that
    computes both gradients with ``best_matmul`` itself (dA = dC' B^T, dB = A^T dC', dC' = dC through the
    activation's derivative); ``out=`` is refused then, as torch refuses it.
    """
    try:  # the repeat call: one key, one dict lookup, the pinned launch (no other Python on the way)
        if out is None and not ((a.requires_grad or b.requires_grad) and torch.is_grad_enabled()):
            plan = _PLANS.get((a.shape, a.stride(), b.shape, b.stride(), a.dtype, b.dtype, a.device, b.device,
                               a.data_ptr() & 15 == 0, b.data_ptr() & 15 == 0, activation, None, tune_for))
            if plan is not None and plan.fast is not None:
                c = plan.new_out(a)
                plan.fast(a, b, c)
                return c
    except (AttributeError, TypeError):  # not tensors / unhashable arguments: the full path explains
        pass
    if torch.is_grad_enabled() and (getattr(a, "requires_grad", False) or getattr(b, "requires_grad", False)):
        if out is not None:
            raise ValueError("best_matmul(out=...) does not record gradients: a or b requires grad; call it "
                             "without out= (or under torch.no_grad())")
        validate_matmul(a, b, None, activation)
        if tune_for not in TUNE_FOR:
            raise ValueError(f"tune_for must be one of {TUNE_FOR}, got {tune_for!r}")
        return _BestMatmulFn.apply(a, b, activation, tune_for)
    return _best_matmul(a, b, activation, out, tune_for)


def _plan_for(a, b, activation, out, tune_for):
    """(plan, out, done): the key's plan (made and cached on a miss, after full validation) and the output
    to write; ``done`` when the result is trivial (empty product) and nothing is to be launched."""
    if tune_for not in TUNE_FOR:
        raise ValueError(f"tune_for must be one of {TUNE_FOR}, got {tune_for!r}")
    try:
        key = _key(a, b, out, activation, tune_for)
        plan = _PLANS.get(key)
    except (AttributeError, TypeError):  # not tensors / unhashable activation: full validation explains
        key, plan = None, None
    if plan is None:
        given = out
        out = validate_matmul(a, b, out, activation)
        M, K = a.shape
        N = b.shape[1]
        if trivial_result(out, K):
            return None, out, True
        choice = explain(M, N, K, a.dtype)
        pad = None
        if given is None and choice.kernel != "tiled" and (N * a.element_size()) % 16:
            per16 = 16 // a.element_size()
            pad = triton.cdiv(N, per16) * per16
        plan = _Plan(choice, M, N, K, activation or "", tune_for, _policy(), pad)
        plan.key = key
        if given is None:
            out = plan.new_out(a)
        if key is not None:
            if len(_PLANS) >= _MAX_PLANS:
                _PLANS.clear()
            _PLANS[key] = plan
    elif out is None:
        out = plan.new_out(a)
    else:
        # whether out overlaps a or b follows from the key (shapes, strides, dtypes, devices) and the three
        # base addresses: check once per address triple, not on every call
        ptrs = (a.data_ptr(), b.data_ptr(), out.data_ptr())
        if plan.checked_ptrs != ptrs:
            v.check_no_overlap("out", out, a=a, b=b)
            plan.checked_ptrs = ptrs
    return plan, out, False


def _best_matmul(a, b, activation, out, tune_for):
    plan, out, done = _plan_for(a, b, activation, out, tune_for)
    if not done:
        plan.run(a, b, out)
    return out


def tune(a: torch.Tensor, b: torch.Tensor, *, activation: str | None = None, out: torch.Tensor | None = None,
         tune_for: str = "graph", budget_s: float | None = None) -> dict:
    """Time ``best_matmul``'s candidates for these inputs now (a GPU's tiled paths), pin the fastest and
    store it on disk; returns a report: ``source`` ("tuned", or "store" / "interpreter" when nothing was
    timed), ``picked`` (kernel, config), ``seconds``, ``timed`` / ``skipped`` / ``candidates`` counts,
    ``heuristic`` (the first call's pick: the rules', or the one tuned for the nearest shape of its class)
    and ``ms`` / ``heuristic_ms`` (their GPU times). A plan tuned
    before (this process) is not timed again: its report is returned. The result is written to ``out``
    (or a scratch output) as a side effect."""
    if budget_s is not None:
        if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float)) or not budget_s > 0:
            raise ValueError(f"budget_s must be a number of seconds > 0, got {budget_s!r}")
    with torch.no_grad():
        plan, out, done = _plan_for(a, b, activation, out, tune_for)
        if done:
            return dict(source="none", picked=None, seconds=0.0, timed=0, skipped=0, candidates=0)
        if plan.source in ("tuned", "store", "interpreter"):
            return dict(plan.report) if plan.report else plan.tune(a, b, out)
        return plan.tune(a, b, out, budget_s)


class _BestMatmulFn(torch.autograd.Function):
    """activation(A @ B) whose backward runs best_matmul too (leaky_relu's derivative is read off the
    output: its sign is the pre-activation's, the slope being positive)."""

    @staticmethod
    def forward(ctx, a, b, activation, tune_for):
        c = _best_matmul(a.detach(), b.detach(), activation, None, tune_for)
        ctx.save_for_backward(a, b, c if activation else None)
        ctx.activation, ctx.tune_for = activation, tune_for
        return c

    @staticmethod
    def backward(ctx, grad):
        a, b, c = ctx.saved_tensors
        if ctx.activation == "leaky_relu":
            grad = torch.where(c >= 0, grad, grad * LEAKY_RELU_SLOPE)
        if 0 in grad.stride():  # e.g. the expanded gradient of a sum(): give the kernels real rows
            grad = grad.contiguous()
        grad = grad.to(c.dtype if c is not None else a.dtype)
        ga = best_matmul(grad, b.t(), tune_for=ctx.tune_for) if ctx.needs_input_grad[0] else None
        gb = best_matmul(a.t(), grad, tune_for=ctx.tune_for) if ctx.needs_input_grad[1] else None
        return ga, gb, None, None


def choice_for(a: torch.Tensor, b: torch.Tensor) -> Choice:
    """The choice ``best_matmul(a, b)`` makes (validates a and b like the launcher)."""
    validate_matmul(a, b, None, None)
    return explain(a.shape[0], b.shape[1], a.shape[1], a.dtype) if min(a.shape[0], b.shape[1], a.shape[1]) > 0 \
        else _choice("none", {}, "empty product: nothing to launch")


def clear_plans() -> None:
    """Forget every cached plan (tests, or after changing the device)."""
    _PLANS.clear()


best_matmul.explain = explain
best_matmul.choice_for = choice_for
best_matmul.tune = tune
