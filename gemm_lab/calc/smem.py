"""Shared memory per program: the course's textbook formula and what Triton really allocates.

Textbook (seed week 7 §5): ``pipeline = num_stages × stage_bytes`` with
``stage_bytes = dtype_bytes × (BLOCK_M·BLOCK_K + BLOCK_K·BLOCK_N)``.

Compiler (``compiled.metadata.shared`` of Tutorial 03's kernel; triton 3.6 on an H200 and triton 3.7.1
cross-compiled on the CPU for sm_75/80/90/120, see :data:`MEASURED_SHARED`). Shared memory is reused
after the K loop, so ``shared = max(loop buffers, epilogue scratch)``:

* loop buffers = ``buffers × stage_bytes`` with

  - sm_90 (Hopper) with ``num_warps >= 4``: the wgmma path, ``buffers = num_stages`` (textbook exact);
  - sm_80/86/89/120, and 1- or 2-warp configs on sm_90: the mma.sync path, ``buffers = max(1, num_stages − 1)``;
  - ``aligned=False`` (pointers/strides not multiples of 16 bytes, e.g. 500×600×300 fp16): no async-copy
    pipelining, ``buffers = 1``;

* epilogue scratch (the accumulator re-laid-out through shared memory before ``tl.store``), an
  empirical fit: on sm_90 with ``num_warps >= 4`` ``out_bytes × BLOCK_M × min(BLOCK_N, 16 × num_warps)``;
  on sm_80/86/89 only when ``aligned=False``: ``min(out_bytes × BLOCK_M × BLOCK_N, 8192 × num_warps)``;
  none on sm_120 or the 2-warp sm_90 path;
* sm_75 (Turing; PTX checked with triton 3.6.0 and 3.7.1: ``fma``, no ``mma``, the first release doing
  so not checked): no pipelining and no mma; ``tl.dot`` becomes FP32 FMAs. For 16-bit
  inputs each operand is upcast to FP32 and re-laid-out through one scratch buffer reused for A and B:
  ``4 × max(BLOCK_M·BLOCK_K, BLOCK_K·BLOCK_N)``; for FP32 inputs both tiles stay in shared memory:
  ``4 × (BLOCK_M·BLOCK_K + BLOCK_K·BLOCK_N)``. Seed configs: 8,192 / 16,384 / 65,536 (the facts' figures).

These rules reproduce all but two entries of :data:`MEASURED_SHARED` (listed in :data:`KNOWN_MISSES`,
both unusual 256-row tiles; a test checks every entry, and a slow test re-compiles a sample with the
installed triton). The rules were fitted on the first 65 entries; the later ones were predicted first.
They describe triton 3.6/3.7 and Tutorial 03's kernel; sm_86/89 were not compiled (they share sm_80's
rules by assumption). Treat them as a model of the compiler, not as its contract.

Limits are compared the way Triton does (``CompiledKernel._init_handles``: it raises
``OutOfResources`` only when ``shared > max_shared``), so a kernel needing exactly the limit fits.
"""

from __future__ import annotations

from ._validate import as_configs, as_int, as_str
from .devices import VIRTUAL_DEVICE, Device
from .roofline import RooflineRow, TileConfig, roofline

__all__ = ["DTYPE_BYTES", "ARCHS", "dtype_bytes", "normalize_arch", "stage_bytes", "textbook_smem",
           "compiler_buffers", "epilogue_scratch", "compiler_smem", "MEASURED_SHARED", "KNOWN_MISSES",
           "measured_shared_table",
           "fits", "smem_verdicts", "best_fitting"]

DTYPE_BYTES = {
    "fp8": 1, "fp8e4m3": 1, "fp8e5m2": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
    "fp16": 2, "float16": 2, "half": 2, "bf16": 2, "bfloat16": 2,
    "fp32": 4, "float32": 4, "float": 4, "tf32": 4,
}
ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_120")


def dtype_bytes(dtype: str) -> int:
    """Bytes per element of an input dtype name (``"fp16"``, ``"bf16"``, ``"fp32"``, ``"fp8e4m3"``, …)."""
    return _dtype_bytes(dtype, "dtype")


def _dtype_bytes(dtype: object, arg: str) -> int:
    """:func:`dtype_bytes`, with errors naming the caller's argument ``arg``."""
    as_str(arg, dtype)
    try:
        return DTYPE_BYTES[dtype.lower()]
    except KeyError:
        raise ValueError(f"{arg}: unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}") from None


def normalize_arch(arch: object) -> str:
    """``"sm_90"``, ``"sm90"``, ``"90"``, ``90`` or ``(9, 0)`` → ``"sm_90"``; must be one of :data:`ARCHS`."""
    if isinstance(arch, tuple):
        if len(arch) != 2:
            raise ValueError(f"arch tuple must be (major, minor), got {arch!r}")
        major, minor = as_int("arch major", arch[0]), as_int("arch minor", arch[1], minimum=0)
        name = f"sm_{major}{minor}"
    elif isinstance(arch, str):
        digits = arch.lower().removeprefix("sm_").removeprefix("sm")
        name = f"sm_{digits}"
    elif isinstance(arch, int) and not isinstance(arch, bool):
        name = f"sm_{arch}"
    else:
        raise TypeError(f"arch must be a str like 'sm_90' or a (major, minor) tuple, got {type(arch).__name__}")
    if name not in ARCHS:
        raise ValueError(f"unknown arch {arch!r}; known: {', '.join(ARCHS)}")
    return name


def _check_config(config: object) -> TileConfig:
    if not isinstance(config, TileConfig):
        raise TypeError(f"config must be a TileConfig, got {type(config).__name__}")
    return config


def stage_bytes(config: TileConfig, dtype: str = "fp16") -> int:
    """One A + B stage: ``dtype_bytes × (BLOCK_M·BLOCK_K + BLOCK_K·BLOCK_N)`` bytes."""
    c = _check_config(config)
    return dtype_bytes(dtype) * (c.BLOCK_M * c.BLOCK_K + c.BLOCK_K * c.BLOCK_N)


def textbook_smem(config: TileConfig, dtype: str = "fp16") -> int:
    """The seed's pipeline buffer: ``num_stages × stage_bytes`` (bytes). 128×256×64 s3 fp16 → 147,456."""
    return _check_config(config).num_stages * stage_bytes(config, dtype)


def compiler_buffers(config: TileConfig, arch, aligned: bool = True) -> int:
    """How many stage buffers the K loop keeps (see the module docstring); 0 on sm_75 (no stage buffers)."""
    c = _check_config(config)
    arch = normalize_arch(arch)
    if not isinstance(aligned, bool):
        raise TypeError(f"aligned must be a bool, got {type(aligned).__name__}")
    if arch == "sm_75":
        return 0
    if not aligned:
        return 1
    if arch == "sm_90" and c.num_warps >= 4:
        return c.num_stages
    return max(1, c.num_stages - 1)


def epilogue_scratch(config: TileConfig, arch, aligned: bool = True, out_dtype: str = "fp16") -> int:
    """Bytes of the accumulator's layout conversion before the store (empirical fit, module docstring)."""
    c = _check_config(config)
    arch = normalize_arch(arch)
    if not isinstance(aligned, bool):
        raise TypeError(f"aligned must be a bool, got {type(aligned).__name__}")
    out = _dtype_bytes(out_dtype, "out_dtype")
    if arch == "sm_90" and c.num_warps >= 4:
        return out * c.BLOCK_M * min(c.BLOCK_N, 16 * c.num_warps)
    if arch in ("sm_80", "sm_86", "sm_89") and not aligned:
        return min(out * c.BLOCK_M * c.BLOCK_N, 8192 * c.num_warps)
    return 0


def compiler_smem(config: TileConfig, arch, dtype: str = "fp16", aligned: bool = True,
                  out_dtype: str = "fp16") -> int:
    """Shared memory (bytes) triton 3.6/3.7 allocates for Tutorial 03's kernel on ``arch``.

    ``max(compiler_buffers × stage_bytes, epilogue_scratch)`` on sm_80 and newer; on sm_75
    ``4 × max(BM·BK, BK·BN)`` for 16-bit inputs, ``4 × (BM·BK + BK·BN)`` for FP32 inputs.
    Seed configs: sm_75 8,192 / 16,384 / 65,536; sm_80 24,576 / 49,152 / 98,304;
    sm_90 24,576 / 65,536 / 147,456. Checked against :data:`MEASURED_SHARED`.
    """
    c = _check_config(config)
    arch = normalize_arch(arch)
    in_b = dtype_bytes(dtype)
    if not isinstance(aligned, bool):
        raise TypeError(f"aligned must be a bool, got {type(aligned).__name__}")
    if arch == "sm_75":
        a, b = c.BLOCK_M * c.BLOCK_K, c.BLOCK_K * c.BLOCK_N
        if in_b == 2:
            return 4 * max(a, b)
        if in_b == 4:
            return 4 * (a + b)
        raise ValueError(f"dtype {dtype!r} is not supported by tl.dot on sm_75")
    loop = compiler_buffers(c, arch, aligned) * stage_bytes(c, dtype)
    return max(loop, epilogue_scratch(c, arch, aligned, out_dtype))


# (arch, BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps, dtype, aligned, metadata.shared, source)
_XC = "cross-compiled, triton 3.7.1, 2026-12-02"
_FACTS_XC = "course team, cross-compiled, triton 3.7.1, 2026-12 (seed configs)"
_FACTS_GPU = "course team, compiled on an H200, triton 3.6.0, 2026-12"
MEASURED_SHARED: tuple[tuple, ...] = (
    ("sm_75", 64, 32, 32, 5, 2, "fp16", True, 8192, _FACTS_XC),
    ("sm_75", 128, 128, 32, 4, 4, "fp16", True, 16384, _FACTS_XC),
    ("sm_75", 128, 256, 64, 3, 8, "fp16", True, 65536, _FACTS_XC),
    ("sm_80", 64, 32, 32, 5, 2, "fp16", True, 24576, _FACTS_XC),
    ("sm_80", 128, 128, 32, 4, 4, "fp16", True, 49152, _FACTS_XC),
    ("sm_80", 128, 256, 64, 3, 8, "fp16", True, 98304, _FACTS_XC),
    ("sm_90", 64, 32, 32, 5, 2, "fp16", True, 24576, _FACTS_GPU),
    ("sm_90", 128, 128, 32, 4, 4, "fp16", True, 65536, _FACTS_GPU),
    ("sm_90", 128, 256, 64, 3, 8, "fp16", True, 147456, _FACTS_GPU),
    ("sm_90", 128, 256, 64, 4, 8, "fp16", True, 196608, _FACTS_GPU),
    ("sm_90", 128, 64, 32, 4, 4, "fp16", True, 49152, _FACTS_GPU),
    ("sm_120", 128, 64, 32, 4, 4, "fp16", True, 36864, "seed blog (RTX 5090, triton 3.7.1); " + _XC),
    ("sm_75", 64, 128, 32, 2, 4, "fp16", True, 16384, _XC),
    ("sm_75", 128, 64, 64, 2, 4, "fp16", True, 32768, _XC),
    ("sm_75", 32, 32, 16, 3, 1, "fp16", True, 2048, _XC),
    ("sm_75", 64, 64, 64, 1, 4, "fp16", True, 16384, _XC),
    ("sm_75", 16, 256, 32, 2, 4, "fp16", True, 32768, _XC),
    ("sm_75", 128, 128, 128, 2, 8, "fp16", True, 65536, _XC),
    ("sm_75", 64, 32, 32, 5, 2, "bf16", True, 8192, _XC),
    ("sm_75", 128, 256, 64, 3, 8, "bf16", True, 65536, _XC),
    ("sm_75", 128, 128, 32, 4, 4, "fp32", True, 32768, _XC),
    ("sm_75", 64, 32, 32, 5, 2, "fp32", True, 12288, _XC),
    ("sm_80", 64, 32, 32, 1, 2, "fp16", True, 6144, _XC),
    ("sm_80", 64, 32, 32, 2, 2, "fp16", True, 6144, _XC),
    ("sm_80", 128, 256, 16, 2, 8, "fp16", True, 12288, _XC),
    ("sm_80", 64, 64, 32, 3, 4, "fp16", True, 16384, _XC),
    ("sm_80", 128, 128, 32, 4, 4, "fp32", True, 98304, _XC),
    ("sm_80", 64, 32, 32, 5, 2, "fp16", False, 6144, _XC),
    ("sm_80", 128, 128, 32, 4, 4, "fp16", False, 32768, _XC),
    ("sm_80", 128, 256, 64, 3, 8, "fp16", False, 65536, _XC),
    ("sm_80", 64, 64, 32, 3, 4, "fp16", False, 8192, _XC),
    ("sm_80", 128, 64, 32, 3, 4, "fp16", False, 16384, _XC),
    ("sm_80", 64, 128, 64, 3, 4, "fp16", False, 24576, _XC),
    ("sm_80", 128, 256, 16, 2, 8, "fp16", False, 65536, _XC),
    ("sm_80", 128, 128, 32, 3, 2, "fp16", False, 16384, _XC),
    ("sm_80", 64, 256, 32, 3, 8, "fp16", False, 32768, _XC),
    ("sm_90", 128, 256, 16, 2, 8, "fp16", True, 32768, _XC),
    ("sm_90", 64, 64, 32, 1, 4, "fp16", True, 8192, _XC),
    ("sm_90", 64, 64, 32, 2, 4, "fp16", True, 16384, _XC),
    ("sm_90", 64, 128, 32, 3, 2, "fp16", True, 24576, _XC),
    ("sm_90", 128, 256, 32, 2, 8, "fp16", True, 49152, _XC),
    ("sm_90", 128, 128, 16, 2, 4, "fp16", True, 16384, _XC),
    ("sm_90", 64, 256, 16, 2, 4, "fp16", True, 20480, _XC),
    ("sm_90", 128, 256, 16, 3, 8, "fp16", True, 36864, _XC),
    ("sm_90", 128, 128, 32, 4, 4, "fp32", True, 131072, _XC),
    ("sm_90", 64, 32, 32, 5, 2, "fp16", False, 6144, _XC),
    ("sm_90", 128, 128, 32, 4, 4, "fp16", False, 16384, _XC),
    ("sm_90", 128, 256, 64, 3, 8, "fp16", False, 49152, _XC),
    ("sm_90", 64, 64, 32, 3, 4, "fp16", False, 8192, _XC),
    ("sm_90", 128, 64, 32, 3, 4, "fp16", False, 16384, _XC),
    ("sm_90", 128, 256, 16, 2, 8, "fp16", False, 32768, _XC),
    ("sm_90", 64, 128, 32, 3, 4, "fp16", False, 12288, _XC),
    ("sm_90", 128, 256, 64, 3, 4, "fp16", False, 49152, _XC),
    ("sm_90", 256, 128, 64, 3, 8, "fp16", False, 65536, _XC),
    ("sm_90", 64, 256, 32, 3, 4, "fp16", False, 20480, _XC),
    ("sm_90", 128, 32, 32, 3, 4, "fp16", False, 10240, _XC),
    ("sm_90", 128, 128, 32, 3, 8, "fp16", False, 32768, _XC),
    ("sm_90", 64, 64, 32, 3, 2, "fp16", False, 8192, _XC),
    ("sm_90", 128, 128, 32, 3, 2, "fp16", False, 16384, _XC),
    ("sm_120", 64, 32, 32, 5, 2, "fp16", True, 24576, _XC),
    ("sm_120", 128, 128, 32, 4, 4, "fp16", True, 49152, _XC),
    ("sm_120", 64, 32, 32, 5, 2, "fp16", False, 6144, _XC),
    ("sm_120", 128, 128, 32, 4, 4, "fp16", False, 16384, _XC),
    ("sm_120", 128, 256, 64, 3, 8, "fp16", False, 49152, _XC),
    ("sm_120", 128, 256, 16, 2, 8, "fp16", False, 12288, _XC),
    ("sm_120", 128, 256, 64, 3, 8, "fp16", True, 98304, _XC),
    ("sm_75", 32, 64, 128, 2, 4, "fp16", True, 32768, _XC),
    ("sm_80", 32, 32, 32, 4, 1, "fp16", True, 12288, _XC),
    ("sm_80", 256, 128, 32, 3, 8, "fp16", False, 65536, _XC),
    ("sm_80", 64, 64, 32, 3, 2, "fp16", False, 8192, _XC),
    ("sm_80", 128, 64, 16, 2, 2, "fp16", False, 16384, _XC),
    ("sm_90", 256, 128, 32, 3, 8, "fp16", True, 73728, _XC),
    ("sm_90", 128, 256, 16, 1, 8, "fp16", True, 32768, _XC),
    ("sm_90", 64, 128, 16, 2, 4, "fp16", True, 12288, _XC),
    ("sm_90", 256, 64, 16, 2, 4, "fp16", True, 20480, _XC),
    ("sm_120", 64, 256, 32, 4, 4, "fp16", True, 61440, _XC),
    ("sm_120", 64, 128, 32, 4, 4, "fp16", True, 36864, _XC),
    ("sm_120", 128, 32, 32, 4, 4, "fp16", True, 30720, _XC),
    ("sm_120", 32, 64, 32, 5, 2, "fp16", True, 24576, _XC),
    ("sm_75", 64, 256, 32, 4, 4, "fp16", True, 32768, _XC),
    ("sm_75", 128, 64, 32, 4, 4, "fp16", True, 16384, _XC),
    ("sm_75", 64, 128, 32, 4, 4, "fp16", True, 16384, _XC),
    ("sm_75", 128, 32, 32, 4, 4, "fp16", True, 16384, _XC),
    ("sm_75", 32, 64, 32, 5, 2, "fp16", True, 8192, _XC),
    ("sm_80", 64, 256, 32, 4, 4, "fp16", True, 61440, _XC),
    ("sm_80", 128, 64, 32, 4, 4, "fp16", True, 36864, _XC),
    ("sm_80", 64, 128, 32, 4, 4, "fp16", True, 36864, _XC),
    ("sm_80", 128, 32, 32, 4, 4, "fp16", True, 30720, _XC),
    ("sm_80", 32, 64, 32, 5, 2, "fp16", True, 24576, _XC),
    ("sm_90", 64, 256, 32, 4, 4, "fp16", True, 81920, _XC),
    ("sm_90", 64, 128, 32, 4, 4, "fp16", True, 49152, _XC),
    ("sm_90", 128, 32, 32, 4, 4, "fp16", True, 40960, _XC),
    ("sm_90", 32, 64, 32, 5, 2, "fp16", True, 24576, _XC),
    ("sm_90", 256, 64, 32, 3, 4, "fp16", False, 32768, _XC),
    ("sm_90", 256, 128, 64, 3, 4, "fp16", False, 49152, _XC),
    ("sm_90", 64, 64, 32, 3, 8, "fp16", False, 8192, _XC),
    ("sm_90", 128, 64, 64, 3, 8, "fp16", False, 24576, _XC),
    ("sm_90", 256, 256, 32, 2, 8, "fp16", False, 32768, _XC),
)


# Measurements the model does not reproduce (the epilogue-scratch fit is too coarse there):
# (arch, BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps, dtype, aligned) -> what the model says instead.
KNOWN_MISSES: dict[tuple, int] = {
    ("sm_90", 256, 64, 16, 2, 4, "fp16", True): 32768,  # measured 20,480: no epilogue scratch when aligned
    ("sm_90", 256, 256, 32, 2, 8, "fp16", False): 65536,  # measured 32,768 (a 256×256 fp32 accumulator spills)
}


def measured_shared_table():
    """:data:`MEASURED_SHARED` as a DataFrame, with the textbook and model figures beside each row."""
    import pandas as pd

    rows = []
    for arch, bm, bn, bk, s, w, dt, aligned, shared, src in MEASURED_SHARED:
        c = TileConfig(bm, bn, bk, s, w)
        model = compiler_smem(c, arch, dt, aligned)
        rows.append({"arch": arch, "config": c.shape_label, "dtype": dt, "aligned": aligned,
                     "measured": shared, "textbook": textbook_smem(c, dt), "model": model,
                     "model_ok": model == shared, "source": src})
    return pd.DataFrame(rows)


def fits(shared_bytes: int, limit_bytes: int) -> bool:
    """Triton's test: a kernel fails (OutOfResources) only when ``shared > limit``; 65,536 fits 65,536."""
    shared_bytes = as_int("shared_bytes", shared_bytes, minimum=0)
    limit_bytes = as_int("limit_bytes", limit_bytes)
    return not shared_bytes > limit_bytes


_RULES = ("textbook", "compiler")


def _shared_for(config: TileConfig, rule: str, arch, dtype: str = "fp16") -> int:
    as_str("rule", rule)
    if rule == "textbook":
        if arch is not None:
            raise ValueError("arch is only used with rule='compiler'")
        return textbook_smem(config, dtype)
    if rule == "compiler":
        if arch is None:
            raise ValueError("rule='compiler' needs arch (e.g. 'sm_75')")
        return compiler_smem(config, arch, dtype)
    raise ValueError(f"unknown rule {rule!r}; use one of {_RULES}")


def smem_verdicts(configs, limit_bytes: int, rule: str = "textbook", arch=None):
    """DataFrame ``config, shared, limit, fits`` (bytes): which configs a per-block limit admits.

    ``rule="textbook"`` uses :func:`textbook_smem`; ``rule="compiler"`` uses :func:`compiler_smem`
    for ``arch``. Exercise 2 at 64 KiB (textbook): 후보 1 and 2 fit, 후보 3 (147,456) does not;
    with ``rule="compiler", arch="sm_75"`` all three fit (65,536 <= 65,536).
    """
    import pandas as pd

    configs = as_configs(configs, TileConfig)
    limit = as_int("limit_bytes", limit_bytes)
    rows = []
    for c in configs:
        shared = _shared_for(_check_config(c), rule, arch)
        rows.append({"config": c.label, "shared": shared, "limit": limit, "fits": fits(shared, limit)})
    return pd.DataFrame(rows, columns=["config", "shared", "limit", "fits"])


def best_fitting(M: int, N: int, K: int, configs, limit_bytes: int, device: Device = VIRTUAL_DEVICE,
                 rule: str = "textbook", arch=None) -> RooflineRow:
    """Among the configs that fit ``limit_bytes``, the one with the highest roofline intensity
    (ties: the shorter ``t_ideal_ms``, then the earlier config). Exercise 2.3 at 64 KiB: 후보 2,
    I = 63.0154, T_ideal = 2.1810 ms. Raises ``ValueError`` when no config fits.
    """
    configs = as_configs(configs, TileConfig)
    limit = as_int("limit_bytes", limit_bytes)
    best: RooflineRow | None = None
    for c in configs:
        if not fits(_shared_for(_check_config(c), rule, arch), limit):
            continue
        row = roofline(M, N, K, c, device)
        if best is None or (row.intensity, -row.t_ideal_ms) > (best.intensity, -best.t_ideal_ms):
            best = row
    if best is None:
        raise ValueError(f"no config fits in {limit} bytes of shared memory")
    return best
