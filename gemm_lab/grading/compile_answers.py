"""Expected values for week 7's compile-pipeline exercises (w7/04, w7/05), computed by the compiler itself.

Test cells reach these through ``g = fresh()`` (``g.compile_answers``): the expected value never comes
from a notebook global (the notebook's ``compile_mine``, ``SCENARIOS``, ``cache_key`` ...). The kernel
compiled here is the library's own ``gemm_lab.kernels.matmul.matmul_kernel``, which has the same
structure as the notebook's ``simple_matmul_kernel`` (2-D pointer blocks, masked K loop, ``tl.dot``,
fp16 masked store): its stage markers, PTX instructions and ``metadata["shared"]`` are the same.
Heavy imports (triton, torch) happen inside the functions, so ``fresh()`` stays light.
"""


TARGETS = ("sm_75", "sm_80", "sm_90")
# w7/04 §5: the first call and the calls after it, as (M, N, K), meta-parameter changes, target
BASE_SHAPE = (4096, 4096, 4096)
BASE_META = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8,
             "ACTIVATION": "", "num_warps": 4, "num_stages": 4}
SCENARIOS = {
    "same": (BASE_SHAPE, {}, "sm_80"),
    "shape_2048": ((2048, 2048, 2048), {}, "sm_80"),
    "shape_500x600x300": ((500, 600, 300), {}, "sm_80"),
    "block_m_64": (BASE_SHAPE, {"BLOCK_SIZE_M": 64}, "sm_80"),
    "leaky_relu": (BASE_SHAPE, {"ACTIVATION": "leaky_relu"}, "sm_80"),
    "num_warps_8": (BASE_SHAPE, {"num_warps": 8}, "sm_80"),
    "target_sm_90": (BASE_SHAPE, {}, "sm_90"),
}
# the runtime integer arguments of the matmul kernel whose 16-divisibility enters the key
INT_ARGS = ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")


def artifacts(target: str, config):
    """The cross-compiled artifacts of the library's matmul kernel (16-byte aligned, like 4096^3)."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    from gemm_lab.compile import compile_artifacts
    return compile_artifacts("matmul", config, target=target)


def first_stages(target: str, config, markers) -> dict:
    """{marker: the earliest stage whose text contains it (None: nowhere)} for one target."""
    from gemm_lab.viz import pipeline
    art = artifacts(target, config)
    return {m: pipeline.first_stage(art, m) for m in markers}


def targets_with(config, *instructions) -> set:
    """The targets whose PTX contains any of ``instructions``."""
    if not instructions:
        raise ValueError("instructions must name at least one PTX instruction")
    return {t for t in TARGETS if any(i in artifacts(t, config).ptx for i in instructions)}


def shared_bytes(target: str, config) -> int:
    """``metadata["shared"]`` the compiler allocated for ``config`` on ``target``."""
    return int(artifacts(target, config).metadata["shared"])


def _args(M, N, K):
    import torch
    a = torch.empty((M, K), dtype=torch.float16)
    b = torch.empty((K, N), dtype=torch.float16)
    c = torch.empty((M, N), dtype=torch.float16)
    return (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def cache_key(shape, meta_changes=None, target="sm_80"):
    """Triton's own jit cache key for launching the matmul kernel at ``shape`` with ``BASE_META | meta_changes``."""
    if len(tuple(shape)) != 3:
        raise ValueError(f"shape must be (M, N, K), got {shape!r}")
    from gemm_lab.kernels.matmul import matmul_kernel
    from gemm_lab.viz import pipeline
    meta = BASE_META | dict(meta_changes or {})
    return pipeline.jit_cache_key(matmul_kernel, *_args(*shape), target=target, **meta)


def recompiles() -> dict:
    """{scenario: True when its key differs from the first call's (Triton compiles again)}."""
    base = cache_key(BASE_SHAPE)
    return {name: bool(cache_key(*call).differences(base)) for name, call in SCENARIOS.items()}


def specialization_changes(shape) -> set:
    """The integer arguments (``INT_ARGS``) whose specialization differs between 4096^3 and ``shape``."""
    from gemm_lab.kernels.matmul import matmul_kernel

    base, new = cache_key(BASE_SHAPE), cache_key(shape)
    pos = {name: matmul_kernel.arg_names.index(name) for name in INT_ARGS}  # specialization: argument order
    return {name for name, i in pos.items() if base.specialization[i] != new.specialization[i]}
