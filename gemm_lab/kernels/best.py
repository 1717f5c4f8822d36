"""``best_matmul``: one entry point that picks a kernel and config per (M, N, K, dtype, GPU) and says why.

Rules (``explain`` returns the choice and a one-line reason, without running anything):

* CPU interpreter: the Tutorial-03 kernel at ``interpreter_config`` (no autotuning, no TMA there).
* few output tiles and a long K (the tiles cannot fill the SMs): split-K over the long K.
* Hopper (sm_90+), fp16/bf16, large M x N: the tensor-descriptor (TMA) persistent kernel (a short timed list:
  two tile shapes, a whole-K tile for K <= 128, and the hinted kernel when an operand is unaligned).
* small M x N: small tiles (``best_tune.SMALL_HINTED``), so that enough tiles exist to fill the SMs.
* otherwise: the architecture's tile list (``configs_for``).

The two tiled paths time every candidate (kernel, config) once per key, each as a CUDA-graph replay
(``best_tune``: ``do_bench`` would rank small shapes by launch overhead), over two kernels: the
divisibility-hinted kernel (``hinted``: vectorized and pipelined even when sizes and strides are not
multiples of 16) and, when they are, the Tutorial-03 kernel too; on Hopper the TMA kernel (operands a
descriptor can't take are copied into padded buffers inside the timed call), split-K when few output tiles
meet a long K, and narrow tiles for M or N <= 32. The pinned candidate is kept on disk (``best_store``).

Launch overhead: the full argument validation and the plan (choice, grid, compiled-kernel handle) are
kept per key (shapes, strides, dtypes, device, 16-byte alignment, activation, output layout); a repeated
call re-checks only what the key cannot fix (output aliasing) and launches through the cached handle.
"""

from __future__ import annotations

import dataclasses

import torch
import triton

from gemm_lab import runtime

from . import _validate as v
from . import best_store, best_tune
from ._launch_cache import Launch
from ._schedule import num_programs
from .autotuned import current_arch, interpreter_config, parse_arch
from .hinted import hinted_launch_spec, hinted_matmul_kernel
from .matmul import LEAKY_RELU_SLOPE, matmul_kernel, trivial_result, validate_matmul
from .persistent_tma import (
    TensorDescriptor,
    _descriptor_ok,
    _operand,
    _set_allocator,
    aligned_copy,
    tma_persistent_kernel,
)
from .splitk import k_per_split, reduce_into, splitk_grid, splitk_partial_kernel

SMALL_MN = 1024 * 1024          # M*N at or below: small-tile autotuning
TMA_MIN_MN = 2048 * 2048        # M*N at or above (Hopper, fp16/bf16): the TMA persistent kernel
SPLITK_MIN_K = 1024
# flatten=True: the only option set at or above torch.matmul at 4096^3 and 8192^3 in fp16 and bf16 in one
# CUDA-graph run on the H200 (small_configs.csv: 1.002 / 1.004 / 1.029 / 1.034); differences at 4096^3
# between option sets are within about 1.5 %, run-to-run noise included
TMA_CONFIG = best_tune.LARGE_TMA[0]
H200_SMS = 132


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
                       f"split K into {split} slices, sum the fp32 partials")
    if major >= 9 and dtype != torch.float32 and M * N >= TMA_MIN_MN:
        return _choice("tma_persistent", TMA_CONFIG, f"large output ({M}x{N}) on sm_{major}{minor}: "
                       "persistent kernel with TMA tensor descriptors (128x256x64 or 128x128x64 tiles, timed), "
                       "one program per SM")
    if M * N <= SMALL_MN:
        return _choice("autotuned_small", {}, f"small output ({M}x{N}): {len(best_tune.SMALL_HINTED)} small-tile "
                       f"configs timed as CUDA graphs (enough tiles to fill {sms} SMs), divisibility-hinted kernel")
    return _choice("autotuned", {}, f"mid-size output ({M}x{N}): the sm_{major}{minor} config list timed as CUDA "
                   "graphs, divisibility-hinted kernel (and Tutorial-03 when sizes are multiples of 16)")


class _Plan:
    """A choice made concrete for one key: what to launch and how."""

    def __init__(self, choice: Choice, M: int, N: int, K: int, activation: str, tune_for: str = "graph"):
        self.choice, self.M, self.N, self.K, self.act = choice, M, N, K, activation
        self.tune_for = tune_for
        self.key = None      # the plan-cache key, set by best_matmul: also the on-disk store's key
        self.launch = None   # Launch, set at the first run (after autotuning when there is one)
        self.checked_ptrs = None  # (a, b, out) addresses last found not to overlap
        self.descs = None    # TMA: the three descriptors of the first run, templates for later runs
        self.tuned = None    # tiled paths: (kernel name, config, ms, every candidate's time) once tuned
        self.qargs = ()      # hinted kernel: the sizes and strides as quotients of their hints
        self.tma = None      # the TMA persistent kernel's config, when that is what runs
        self.sk = None       # split-K: (slice length, slices), when that is what runs
        p = choice.params
        if choice.kernel == "splitk":
            self.kps = k_per_split(K, p["split_k"], p["BLOCK_K"])
            self.split = triton.cdiv(K, self.kps)
            self.launch = Launch(splitk_partial_kernel, splitk_grid(M, N, p["BLOCK_M"], p["BLOCK_N"], self.split),
                                 dict(BLOCK_M=p["BLOCK_M"], BLOCK_N=p["BLOCK_N"], BLOCK_K=p["BLOCK_K"]),
                                 dict(num_warps=p["num_warps"], num_stages=p["num_stages"]))
        elif choice.kernel == "tiled":
            self._pin_tiled(p)

    def _pin_tiled(self, cfg: dict, kernel: str = "tutorial03", a=None, b=None, out=None) -> Launch:
        if kernel == "hinted":
            grid, self.qargs, consts, options = hinted_launch_spec(self.M, self.N, self.K, a, b, out, self.act, cfg)
            launch = Launch(hinted_matmul_kernel, grid, consts, options)
        else:
            grid = (triton.cdiv(self.M, cfg["BLOCK_SIZE_M"]) * triton.cdiv(self.N, cfg["BLOCK_SIZE_N"]),)
            consts = {k: cfg[k] for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M")}
            options = dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
            launch = Launch(matmul_kernel, grid, {**consts, "ACTIVATION": self.act}, options)
        self.launch = launch
        return launch

    def _pin_splitk(self, cfg: dict) -> Launch:
        kps = k_per_split(self.K, cfg["split_k"], cfg["BLOCK_K"])
        self.sk = (kps, triton.cdiv(self.K, kps))
        self.launch = Launch(splitk_partial_kernel, splitk_grid(self.M, self.N, cfg["BLOCK_M"], cfg["BLOCK_N"],
                                                                self.sk[1]),
                             dict(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"]),
                             dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))
        return self.launch

    def _pin_tma(self, cfg: dict) -> Launch:
        self.tma, self.descs = cfg, None
        self.P = num_programs(self.M, self.N, cfg["BLOCK_M"], cfg["BLOCK_N"])
        self.launch = Launch(tma_persistent_kernel, (self.P,), None, dict(num_warps=cfg["num_warps"],
                             num_stages=cfg["num_stages"]))
        return self.launch

    def _tiled_args(self, a, b, out) -> tuple:
        if self.launch.kernel is hinted_matmul_kernel:
            return (a, b, out, *self.qargs)
        return (a, b, out, self.M, self.N, self.K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                out.stride(0), out.stride(1))

    def _tune(self, a, b, out) -> None:
        """Time every candidate (kernel, config) on these tensors as a CUDA graph; pin the fastest."""
        strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))
        arch = current_arch()
        # any layout: _run_tma copies an operand a descriptor can't take into a padded buffer (timed with it)
        tma_ok = (parse_arch(arch)[0] >= 9 and a.dtype in (torch.float16, torch.bfloat16)
                  and TensorDescriptor is not None)
        sms = runtime.num_sms() if runtime.on_gpu() else H200_SMS
        cands = best_tune.candidates(self.M, self.N, self.K, strides, arch, self.choice.kernel == "autotuned_small",
                                     tma_ok, large=self.choice.kernel == "tma_persistent", sms=sms)
        states = {}

        def run(cand):
            i = cands.index(cand)
            if i not in states:
                self.tma = self.sk = None
                if cand[0] == "tma":
                    launch = self._pin_tma(cand[1])
                elif cand[0] == "splitk":
                    launch = self._pin_splitk(cand[1])
                else:
                    launch = self._pin_tiled(cand[1], cand[0], a, b, out)
                states[i] = [launch, self.tma, self.qargs, None, self.sk]
            self.launch, self.tma, self.qargs, self.descs, self.sk = states[i]
            self._launch_pinned(a, b, out)
            states[i][3] = self.descs

        stored = best_store.load(self.key) if self.key is not None else None
        if stored is not None and stored in cands:  # tuned by an earlier process on this GPU and software
            run(stored)
            (kernel, cfg), ms, timings = stored, float("nan"), [(stored, float("nan"))]
        else:
            (kernel, cfg), ms, timings = best_tune.pick_fastest(cands, run, eager=self.tune_for == "eager")
            if self.key is not None:
                best_store.save(self.key, kernel, cfg)
        self.tuned = (kernel, cfg, ms, timings)
        self.launch, self.tma, self.qargs, self.descs, self.sk = states[cands.index((kernel, cfg))]

    def _launch_pinned(self, a, b, out) -> None:
        if self.tma is not None:
            self._run_tma(a, b, out)
        elif self.sk is not None:
            kps, split = self.sk
            ws = torch.empty((split, self.M, self.N), dtype=torch.float32, device=a.device)
            self.launch(a, b, ws, self.M, self.N, self.K, kps, a.stride(0), a.stride(1), b.stride(0), b.stride(1))
            reduce_into(ws, out, self.act or None)
        else:
            self.launch(*self._tiled_args(a, b, out))

    def run(self, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        M, N, K = self.M, self.N, self.K
        kind = self.choice.kernel
        if kind in ("tiled", "autotuned_small", "autotuned", "tma_persistent"):
            if self.launch is None:  # first run on a GPU: time the candidates, pin the fastest
                self._tune(a, b, out)
            self._launch_pinned(a, b, out)
        else:  # splitk
            ws = torch.empty((self.split, M, N), dtype=torch.float32, device=a.device)
            self.launch(a, b, ws, M, N, K, self.kps, a.stride(0), a.stride(1), b.stride(0), b.stride(1))
            reduce_into(ws, out, self.act or None)

    def _run_tma(self, a, b, out) -> None:
        p = self.tma
        BM, BN, BK = p["BLOCK_M"], p["BLOCK_N"], p["BLOCK_K"]
        a_op, a_t = _operand(a)
        b_op, b_t = _operand(b)
        target = out if _descriptor_ok(out) else aligned_copy(out)
        if self.descs is None:  # validated once; the key fixes shapes, strides, dtypes and 16-byte alignment
            descs = (TensorDescriptor(a_op, a_op.shape, a_op.stride(), [BK, BM] if a_t else [BM, BK]),
                     TensorDescriptor(b_op, b_op.shape, b_op.stride(), [BN, BK] if b_t else [BK, BN]),
                     TensorDescriptor(target, target.shape, target.stride(), [BM, BN // 2]))
            self.descs = tuple(_desc_like(d, None) for d in descs)  # templates hold no tensor
        a_desc, b_desc, c_desc = (_desc_like(d, t) for d, t in zip(self.descs, (a_op, b_op, target), strict=True))
        if self.launch.constexprs is None:
            _set_allocator()
            self.launch.constexprs = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=p["GROUP_M"],
                                          NUM_PROGRAMS=self.P, A_TRANS=a_t, B_TRANS=b_t, EPILOGUE_SUBTILE=True,
                                          FLATTEN=p["flatten"], WARP_SPECIALIZE=False, ACTIVATION=self.act)
        self.launch(a_desc, b_desc, c_desc, self.M, self.N, self.K)
        if target is not out:
            out.copy_(target)


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
    okey = None if out is None else (tuple(out.shape), out.stride(), out.dtype, out.device, out.data_ptr() % 16 == 0)
    return (tuple(a.shape), a.stride(), tuple(b.shape), b.stride(), a.dtype, b.dtype, a.device, b.device,
            a.data_ptr() % 16 == 0, b.data_ptr() % 16 == 0, activation, okey, tune_for)


TUNE_FOR = ("graph", "eager")


def best_matmul(a: torch.Tensor, b: torch.Tensor, *, activation: str | None = None,
                out: torch.Tensor | None = None, tune_for: str = "graph") -> torch.Tensor:
    """C = activation(A @ B) with the kernel ``explain(M, N, K, dtype)`` picks (same inputs as ``matmul``).

    ``best_matmul.explain(M, N, K, dtype)`` gives the choice and its reason; ``best_matmul.choice_for(a, b)``
    the choice for two tensors. The first call for a key validates fully and (on a GPU) times the
    candidate kernels and configs where the choice says so; repeated calls reuse the plan.
    ``tune_for``: what the timing ranks. ``"graph"`` (default): GPU time alone, as when the call is replayed
    from a CUDA graph. ``"eager"``: per call ``max(GPU time, CPU time of the launch)``, as when the call is
    made from Python each time; at small shapes a cheaper launch then beats a slightly faster kernel (on
    the H200 at 1024^3 the TMA kernel is the fastest on the GPU but its launch costs ~4x its GPU time).

    Autograd: when grad mode is on and ``a`` or ``b`` requires grad, the result carries a backward that
    computes both gradients with ``best_matmul`` itself (dA = dC' B^T, dB = A^T dC', dC' = dC through the
    activation's derivative); ``out=`` is refused then, as torch refuses it.
    """
    if torch.is_grad_enabled() and (getattr(a, "requires_grad", False) or getattr(b, "requires_grad", False)):
        if out is not None:
            raise ValueError("best_matmul(out=...) does not record gradients: a or b requires grad; call it "
                             "without out= (or under torch.no_grad())")
        validate_matmul(a, b, None, activation)
        if tune_for not in TUNE_FOR:
            raise ValueError(f"tune_for must be one of {TUNE_FOR}, got {tune_for!r}")
        return _BestMatmulFn.apply(a, b, activation, tune_for)
    return _best_matmul(a, b, activation, out, tune_for)


def _best_matmul(a, b, activation, out, tune_for):
    if tune_for not in TUNE_FOR:
        raise ValueError(f"tune_for must be one of {TUNE_FOR}, got {tune_for!r}")
    try:
        key = _key(a, b, out, activation, tune_for)
        plan = _PLANS.get(key)
    except (AttributeError, TypeError):  # not tensors / unhashable activation: full validation explains
        key, plan = None, None
    if plan is None:
        out = validate_matmul(a, b, out, activation)
        M, K = a.shape
        N = b.shape[1]
        if trivial_result(out, K):
            return out
        plan = _Plan(explain(M, N, K, a.dtype), M, N, K, activation or "", tune_for)
        plan.key = key
        if key is not None:
            if len(_PLANS) >= _MAX_PLANS:
                _PLANS.clear()
            _PLANS[key] = plan
    elif out is None:
        out = torch.empty((plan.M, plan.N), dtype=a.dtype, device=a.device)
    else:
        # whether out overlaps a or b follows from the key (shapes, strides, dtypes, devices) and the three
        # base addresses: check once per address triple, not on every call
        ptrs = (a.data_ptr(), b.data_ptr(), out.data_ptr())
        if plan.checked_ptrs != ptrs:
            v.check_no_overlap("out", out, a=a, b=b)
            plan.checked_ptrs = ptrs
    plan.run(a, b, out)
    return out


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
