"""``best_matmul``: one entry point that picks a kernel and config per (M, N, K, dtype, GPU) and says why.

Rules (``explain`` returns the choice and a one-line reason, without running anything):

* CPU interpreter: the Tutorial-03 kernel at ``interpreter_config`` (no autotuning, no TMA there).
* few output tiles and a long K (the tiles cannot fill the SMs): split-K over the long K.
* Hopper (sm_90+), fp16/bf16, large M x N: the tensor-descriptor (TMA) persistent kernel (a short timed list:
  two tile shapes, a whole-K tile for K <= 128, the first two again on copies padded to 128-byte rows when an
  operand's rows split cache lines, the first in its stream-K form when its tiles leave the last wave
  part-empty, and the hinted kernel when an operand is unaligned).
* small M x N: small tiles (``best_tune.SMALL_HINTED``), so that enough tiles exist to fill the SMs.
* otherwise: the architecture's tile list (``configs_for``).

On a GPU every choice has a candidate list (``best_tune.candidates``: the divisibility-hinted kernel
(``hinted``: vectorized and pipelined even when sizes and strides are not multiples of 16), the
Tutorial-03 kernel when they are, on Hopper the TMA kernel (operands a descriptor can't take are copied
into padded buffers inside the call) and its stream-K form (``stream_k``: the part-empty last wave shared out
by K steps), split-K when few output tiles meet a long K, narrow tiles for M or
N <= 32, whole-K tiles for K <= 128, swap-AB (C^T = B^T A^T) for a skinny M). The first call for a key
runs at once: the pick stored on disk by an earlier process (``best_store``), else the rule-based pick
(``best_tune.heuristic``). Timing the candidates (each as a CUDA-graph replay: ``do_bench`` would rank
small shapes by launch overhead) happens later, never on the first call unless asked for
(``GEMM_LAB_TUNE``, ``best_matmul.tune``), within a time budget, and its pick is stored on disk. Each kind
is one class of ``best_kernels`` holding its own launch state; candidates whose tiles exceed the GPU's
shared memory are never listed.

Never a wrong byte: a candidate is pinned for good only after its result on the inputs at hand (into an
output poisoned with NaN) agreed with an fp32 torch reference, the tuned winner once more after the
timing; a candidate that disagrees is left out and warned about. TMA descriptor stores write whole 16-byte
chunks, so they go straight into ``out`` only when its rows end on 16-byte boundaries or it is a padded
output of our own (``best_kernels.out_ok``).

Launch overhead: the full argument validation and the plan (choice, grid, compiled-kernel handle, the
integer arguments) are kept per key (shapes, strides, dtypes, device, 16-byte alignment, activation,
output layout); a repeated call builds the key, finds the plan and launches through the cached handle
(with ``out=``, it re-checks once per address triple that ``out`` does not overlap the inputs).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import time
import warnings

import torch
import triton

from gemm_lab import runtime

from . import _validate as v
from . import best_kernels, best_store, best_tune
from .autotuned import current_arch, interpreter_config, parse_arch
from .matmul import LEAKY_RELU_SLOPE, trivial_result, validate_matmul
from .persistent_tma import TensorDescriptor, _descriptor_ok

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
    """Seconds after which tuning starts no more candidates: ``GEMM_LAB_TUNE_BUDGET_S`` (read when a plan
    is made)."""
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


class WrongResult(RuntimeError):
    """A candidate's result on the inputs at hand disagrees with the reference product."""


# what a candidate's result may differ from the fp32 reference by, element-wise, relative to
# |reference| + its RMS: a right kernel lands below a tenth of this (fp16 / tf32 rounding, fp32 sums in
# another order, bf16 rounding); a wrong tile, an unwritten element or a NaN lands far above
AGREE_TOL = {torch.float16: 2e-2, torch.bfloat16: 5e-2, torch.float32: 2e-2}


def _reference(a: torch.Tensor, b: torch.Tensor, act: str) -> torch.Tensor:
    """activation(a @ b) in fp32 (torch, not one of the candidates)."""
    c = a.float() @ b.float()
    return torch.where(c >= 0, c, c * LEAKY_RELU_SLOPE) if act == "leaky_relu" else c


def _agrees(out: torch.Tensor, ref: torch.Tensor) -> bool:
    """Whether every element of ``out`` matches ``ref`` within ``AGREE_TOL`` (NaN never does). Elements
    whose reference is not finite or overflows ``out``'s dtype are not judged."""
    fin = torch.isfinite(ref) & (ref.abs() < torch.finfo(out.dtype).max * 0.99)
    r = torch.where(fin, ref, 0.0)
    rms = r.square().mean().sqrt()
    ok = ((out.float() - r).abs() <= AGREE_TOL.get(out.dtype, 2e-2) * (r.abs() + rms)) | ~fin
    return bool(ok.all())


@functools.lru_cache(maxsize=None)
def _smem_limit(device_index: int) -> int:
    """The GPU's opt-in shared memory per block (what a launch may ask for)."""
    props = torch.cuda.get_device_properties(device_index)
    return int(getattr(props, "shared_memory_per_block_optin", 0) or best_tune.SMEM_LIMIT)


class _Plan:
    """A choice made concrete for one key: what to launch and how.

    ``go(a, b, out)`` runs the pinned kernel kind (a ``best_kernels.Kernel``); ``fast`` is ``go`` once the
    plan is final (what a repeat call runs without looking further), ``None`` before: the first call pins
    a candidate and checks it, a deferred plan times the candidates at a later call. ``source`` says where
    the pinned candidate came from: "interpreter", "heuristic", "heuristic (tuning off)", "tuned" or
    "store". A candidate is pinned for good only after its result on the inputs at hand agreed with the
    fp32 reference (``_agrees``), its output poisoned with NaN before the run."""

    def __init__(self, choice: Choice, M: int, N: int, K: int, activation: str, tune_for: str = "graph",
                 policy: str = "deferred", out_cols: int | None = None, owns_out: bool = False,
                 budget_s: float = TUNE_BUDGET_S):
        self.choice, self.M, self.N, self.K, self.act = choice, M, N, K, activation
        self.tune_for, self.policy, self.budget_s = tune_for, policy, budget_s
        self.out_cols = out_cols  # new outputs: rows padded to this many columns (a view of N of them)
        # out=None plans write only outputs of their own (new_out): a descriptor store may touch the padding
        self.spec = best_kernels.Spec(M, N, K, activation, owns_out)
        self.key = None      # the plan-cache key, set by best_matmul: also the on-disk store's key
        self.kernel = None   # the pinned best_kernels.Kernel
        self.go = None       # the same, called as go(a, b, out)
        self.fast = None     # ``go`` once the plan is final
        self.pinned = None   # (kind, config) that runs
        self.checked = False  # the pinned candidate's result was checked against the reference
        self.source = None
        self.report = None   # the tuning's report (dict), once timed or loaded
        self.checked_ptrs = None  # (a, b, out) addresses last found not to overlap
        self.tuned = None    # (kind, config, ms, every timed candidate's time) once tuned or loaded
        self.near = None     # (M, N, K) of the tuned shape whose pick the first call borrowed, if any
        self.sms = H200_SMS

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
        def lay(t, ok):
            return f"{'T' if t.stride(0) == 1 and t.stride(1) != 1 else 'N'}{int(ok)}"

        return "|".join((self.choice.kernel, str(a.dtype), self.act or "-", self.tune_for,
                         lay(a, _descriptor_ok(a)), lay(b, _descriptor_ok(b)),
                         lay(out, best_kernels.out_ok(out, self.spec.owns_out))))

    def _candidates(self, a, b, out) -> list:
        strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))
        arch = current_arch()
        # any layout: the TMA kinds copy an operand a descriptor can't take into a padded buffer (timed with it)
        tma_ok = (parse_arch(arch)[0] >= 9 and a.dtype in (torch.float16, torch.bfloat16)
                  and TensorDescriptor is not None)
        on_gpu = runtime.on_gpu()
        self.sms = runtime.num_sms() if on_gpu else H200_SMS
        limit = _smem_limit(a.device.index or 0) if on_gpu else best_tune.SMEM_LIMIT
        return best_tune.candidates(self.M, self.N, self.K, strides, arch, self.M * self.N <= SMALL_MN,
                                    tma_ok, large=self.choice.kernel == "tma_persistent", sms=self.sms,
                                    elem_size=a.element_size(), smem_limit=limit)

    def _make(self, cand, a, b, out) -> best_kernels.Kernel:
        kind, cfg = cand
        return best_kernels.KERNELS[kind](self.spec, cfg, a, b, out)

    def _pin(self, cand, a, b, out, kernel=None) -> None:
        """Make ``cand`` = (kind, config) the plan's launch path (compiles at its first launch)."""
        self.kernel = kernel if kernel is not None else self._make(cand, a, b, out)
        self.go = self.kernel
        self.pinned = cand
        self.checked = False

    def _check(self, a, b, out, ref=None) -> None:
        """Run the pinned kernel into ``out`` poisoned with NaN and compare with the reference: raises
        WrongResult when they disagree (a kernel that leaves elements unwritten fails too)."""
        ref = _reference(a, b, self.act) if ref is None else ref
        out.fill_(float("nan"))
        self.go(a, b, out)
        if not _agrees(out, ref):
            raise WrongResult(f"best_matmul: {self.pinned[0]} {self.pinned[1]} gave a wrong result at "
                              f"{self.M}x{self.N}x{self.K}")
        self.checked = True

    # ------------------------------------------------------------------ first call, tuning
    def run(self, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
        """Compute into ``out``: the pinned path, after pinning / checking / tuning while the plan is not
        final. Inside a CUDA-graph capture nothing is checked or timed (the next call outside does it)."""
        if self.fast is not None:
            self.go(a, b, out)
            return
        if self.pinned is None:
            self._first_pick(a, b, out)
            if self.fast is not None:  # the interpreter's one config
                self.go(a, b, out)
                return
        if _capturing(a):
            self.go(a, b, out)
            return
        if self.checked or self.policy == "first":
            # a later call of a checked heuristic pick (deferred), or tuning at once (first)
            if self.source == "heuristic" and self.policy != "off":
                if self.policy == "deferred":  # a call the user did not ask to tune in: say why it waits
                    _log.warning("best_matmul: timing the candidates for %dx%dx%d %s now (up to %.0f s, once "
                                 "per key and process; GEMM_LAB_TUNE=off or best_matmul.tune choose when)",
                                 self.M, self.N, self.K, str(a.dtype).replace("torch.", ""), self.budget_s)
                self.tune(a, b, out)
                return
        if not self.checked:
            try:
                self._check(a, b, out)
            except Exception as exc:  # noqa: BLE001 - a pick that is wrong, or does not compile or launch here
                what = "gave a wrong result" if isinstance(exc, WrongResult) else f"failed ({type(exc).__name__})"
                warnings.warn(f"best_matmul: the first pick {self.pinned} {what} on this GPU at "
                              f"{self.M}x{self.N}x{self.K}; timing the other candidates now", RuntimeWarning,
                              stacklevel=3)
                self.tune(a, b, out)  # checks every candidate, pins the fastest right one
                return
            if self.source != "heuristic":  # a stored pick, or tuning off: final once checked
                self.fast = self.go
            return
        self.go(a, b, out)

    def _first_pick(self, a, b, out) -> None:
        """Pin the first call's candidate: the interpreter's config, else the pick stored on disk for this
        key, else the one tuned for the nearest stored shape of this class, else the rules'."""
        if self.choice.kernel == "tiled":  # interpreter: one config, nothing to time
            self._pin(("tutorial03", self.choice.params), a, b, out)
            self.source, self.fast = "interpreter", self.go
            return
        cands = self._candidates(a, b, out)
        stored = best_store.load(self.key) if self.key is not None else None
        if stored is not None and stored in cands:  # tuned by an earlier process on this GPU and software
            self._pin(stored, a, b, out)
            self.source, self.tuned = "store", (*stored, float("nan"), [(stored, float("nan"))])
            self.report = dict(source="store", picked=stored, seconds=0.0, timed=0, skipped=0, wrong=[],
                               candidates=len(cands))
            return
        near = best_store.nearest(self.shape_class(a, b, out), self.M, self.N, self.K)
        use_near = near is not None and near[0] in cands
        self._pin(near[0] if use_near else best_tune.heuristic(cands, self.M, self.N, self.K, self.sms), a, b, out)
        self.near = near[1] if use_near else None
        self.source = "heuristic (tuning off)" if self.policy == "off" else "heuristic"

    def tune(self, a, b, out, budget_s: float | None = None) -> dict:
        """Time the candidates on these tensors (the first call's pick first, within ``budget_s``), each
        checked against the reference at its first run (a wrong one is left out and warned about), pin the
        fastest, store it on disk; returns the report (also kept as ``self.report``)."""
        if self.choice.kernel == "tiled":
            self.run(a, b, out)
            return dict(source="interpreter", picked=self.pinned, seconds=0.0, timed=0, skipped=0, wrong=[],
                        candidates=1)
        budget_s = self.budget_s if budget_s is None else budget_s
        t0 = time.perf_counter()
        cands = self._candidates(a, b, out)
        # the first call's pick (the rules' or a neighbour's) is timed first: within any budget, and the
        # report says how much tuning gained over it
        first = self.pinned if self.pinned in cands else best_tune.heuristic(cands, self.M, self.N, self.K, self.sms)
        cands = [first] + [c for c in cands if c != first]
        ref = _reference(a, b, self.act)
        kernels, wrong = {}, []

        def run(cand):
            i = cands.index(cand)
            if i not in kernels:  # its first run: made, compiled, checked against the reference
                self._pin(cand, a, b, out)
                try:
                    self._check(a, b, out, ref)
                except WrongResult:
                    wrong.append(cand)
                    raise
                kernels[i] = self.kernel
            else:
                kernels[i](a, b, out)

        best, ms, timings = best_tune.pick_fastest(cands, run, eager=self.tune_for == "eager", budget_s=budget_s)
        self._pin(best, a, b, out, kernels[cands.index(best)])
        # the winner once more, outside the timing's graphs and streams: the inputs must not have changed
        self._check(a, b, out, ref)
        self.tuned = (*best, ms, timings)
        self.source, self.fast = "tuned", self.go
        seconds = time.perf_counter() - t0
        self.report = dict(source="tuned", picked=best, seconds=seconds, timed=len(timings) - len(wrong),
                           skipped=len(cands) - len(timings), wrong=wrong, candidates=len(cands), heuristic=first,
                           ms=ms, heuristic_ms=next((t for c, t in timings if c == first), float("nan")))
        if wrong:
            warnings.warn(f"best_matmul: {len(wrong)} candidate(s) gave wrong results at {self.M}x{self.N}x{self.K} "
                          f"and were left out: {wrong}", RuntimeWarning, stacklevel=3)
        if self.key is not None:
            best_store.save(self.key, *best, dict(M=self.M, N=self.N, K=self.K, cls=self.shape_class(a, b, out)))
        _log.info("best_matmul: tuned %dx%dx%d in %.1f s: %s (%d of %d candidates timed, %d left out by the "
                  "%.0f s budget)", self.M, self.N, self.K, seconds, best[0], len(timings), len(cands),
                  len(cands) - len(timings), budget_s)
        return self.report


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
        # the settings are read (and refused) when a plan is made, not when its tuning starts later
        policy, budget_s = _policy(), _budget_s()
        M, K = a.shape
        N = b.shape[1]
        if trivial_result(out, K):
            return None, out, True
        choice = explain(M, N, K, a.dtype)
        pad = None
        if given is None and choice.kernel != "tiled" and (N * a.element_size()) % 16:
            per16 = 16 // a.element_size()
            pad = triton.cdiv(N, per16) * per16
        plan = _Plan(choice, M, N, K, activation or "", tune_for, policy, pad, owns_out=given is None,
                     budget_s=budget_s)
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
        if plan.fast is not None and plan.source in ("tuned", "store", "interpreter"):  # timed before
            plan.run(a, b, out)
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
