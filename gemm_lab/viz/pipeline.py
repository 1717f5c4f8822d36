"""The compile pipeline AST → TTIR → TTGIR → LLIR → PTX → CUBIN: what each stage decides, and a picture.

``PIPELINE`` describes the six stages as the course's guide does (seed §6.1). The helpers read a
compiled kernel's artifacts — a ``gemm_lab.compile.Artifacts``, a ``CompiledKernel.asm`` dict or
any mapping/object with the stage names as keys/attributes — and answer *where* a marker such as
``tt.dot`` or ``wgmma`` first appears. Those answers are computed from the compiler's own output,
so the notebooks use them as answer keys. Picture labels are English (the notebooks explain them
in Korean); nothing here imports triton.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

__all__ = [
    "Stage",
    "PIPELINE",
    "STAGE_KEYS",
    "TEXT_STAGES",
    "DECISIONS",
    "stage_table",
    "stage_text",
    "stages_containing",
    "first_stage",
    "find_lines",
    "marker_table",
    "evidence_lines",
    "draw_pipeline",
    "JitCacheKey",
    "jit_cache_key",
]


@dataclass(frozen=True)
class Stage:
    """One stage of Triton's NVIDIA pipeline (``key`` is the ``CompiledKernel.asm`` key)."""

    key: str
    title: str
    level: str
    decides: tuple[str, ...]
    level_ko: str
    decides_ko: str
    markers: tuple[str, ...]


PIPELINE: tuple[Stage, ...] = (
    Stage(
        key="ast",
        title="Python AST",
        level="user DSL",
        decides=("argument types (*fp16, i32)", "tl.constexpr values (BLOCK_M=128)"),
        level_ko="사용자 DSL",
        decides_ko="인자 자료형(*fp16, i32)과 tl.constexpr 상수(BLOCK_SIZE_M=128 등)를 고정",
        markers=("@triton.jit", "tl.constexpr"),
    ),
    Stage(
        key="ttir",
        title="TTIR (tt dialect)",
        level="tile level, hardware independent",
        decides=("a whole tile is one SSA value", "inline, constant folding, CSE"),
        level_ko="타일(블록) 수준, 하드웨어 독립적",
        decides_ko="타일 전체를 하나의 SSA 값(tensor<128x64xf16>)으로 다룸; 인라인, 상수 폴딩, CSE",
        markers=("tt.dot", "tt.load", "tt.store", "scf.for"),
    ),
    Stage(
        key="ttgir",
        title="TTGIR (ttg dialect)",
        level="GPU: warps, layouts, pipelining",
        decides=(
            "layouts #blocked/#shared/#mma/#dot_op",
            "tensor-core op",
            "num_stages pipeline (async copies)",
        ),
        level_ko="GPU 실행·레이아웃 수준 (가장 중요한 변환)",
        decides_ko=(
            "num_warps개 워프의 레이아웃 인코딩(#blocked, #shared, #mma, #dot_op), coalesce, "
            "Tensor Core 명령 매핑(accelerate_matmul), num_stages 비동기 복사·소프트웨어 파이프라이닝"
        ),
        markers=("#mma", "#blocked", "#shared", "local_alloc", "async_copy_global_to_local"),
    ),
    Stage(
        key="llir",
        title="LLIR (LLVM IR)",
        level="threads and addresses",
        decides=("shared-memory bytes and offsets", "NVVM intrinsics, LLVM -O3"),
        level_ko="스레드·주소 수준",
        decides_ko=(
            "Shared Memory 버퍼의 생존 구간 분석 → 실제 바이트 수(metadata['shared'])와 오프셋 할당; "
            "NVVM 내장 함수, LLVM O3 최적화"
        ),
        markers=("global_smem", "@llvm.nvvm", "addrspace(3)"),
    ),
    Stage(
        key="ptx",
        title="PTX",
        level="virtual GPU assembly",
        decides=(".target sm_XX instructions", "cp.async, ldmatrix, mma.sync / wgmma, st.global"),
        level_ko="가상 GPU 어셈블리",
        decides_ko=(
            "타깃 아키텍처(.target sm_80)용 텍스트 어셈블리: ld.global / cp.async, ldmatrix, "
            "mma.sync / wgmma, st.global"
        ),
        markers=(".target", "mma.sync", "wgmma", "cp.async", "st.global"),
    ),
    Stage(
        key="cubin",
        title="CUBIN (SASS)",
        level="machine code (ptxas)",
        decides=("physical registers n_regs", "register spills n_spills"),
        level_ko="물리 GPU 바이너리(SASS 기계어)",
        decides_ko="ptxas가 PTX를 기계어로 어셈블하며 스레드당 레지스터 수(n_regs)와 스필(n_spills)을 확정",
        markers=(),
    ),
)

STAGE_KEYS: tuple[str, ...] = tuple(s.key for s in PIPELINE)

# The guide's §6.1 statements "this is decided here", as (label, Korean statement, stage key): the
# answer key of the notebooks' matching exercise.
DECISIONS: tuple[tuple[str, str, str], ...] = (
    ("A", "인자 자료형(*fp16, i32)과 tl.constexpr 값(BLOCK_SIZE_M=128 등)이 고정된다", "ast"),
    ("B", "타일 전체가 tensor<128x32xf16> 같은 하나의 SSA 값이 된다 (스레드 배치는 아직 모른다)", "ttir"),
    ("C", "num_warps개 워프가 타일 원소를 어떻게 나눠 가질지(#blocked 레이아웃)가 정해진다", "ttgir"),
    ("D", "Tensor Core 명령 종류(#mma 레이아웃, mma v2/v3)가 선택된다 (accelerate_matmul)", "ttgir"),
    ("E", "num_stages에 따라 K 루프가 소프트웨어 파이프라인으로 재구성되고 비동기 복사가 들어간다", "ttgir"),
    ("F", "Shared Memory 버퍼의 생존 구간을 분석해 실제 바이트 수(metadata['shared'])와 오프셋이 할당된다", "llir"),
    ("G", ".target sm_80처럼 아키텍처가 박힌 텍스트 어셈블리가 된다 (ld.global, mma.sync, st.global)", "ptx"),
    ("H", "스레드당 물리 레지스터 수(n_regs)와 레지스터 스필(n_spills)이 확정된다", "cubin"),
)
TEXT_STAGES: tuple[str, ...] = ("ttir", "ttgir", "llir", "ptx")  # stages whose artifact is text


def stage_table(lang: str = "ko") -> pd.DataFrame:
    """The guide's §6.1 table: one row per stage (index = ``.asm`` key), level and what it decides."""
    if lang == "ko":
        rows = {s.key: {"단계": s.title, "추상화 수준": s.level_ko, "새로 결정되는 것": s.decides_ko} for s in PIPELINE}
    elif lang == "en":
        rows = {s.key: {"stage": s.title, "level": s.level, "decides": "; ".join(s.decides)} for s in PIPELINE}
    else:
        raise ValueError(f"lang must be 'ko' or 'en', got {lang!r}")
    return pd.DataFrame.from_dict(rows, orient="index")


def stage_text(artifacts, stage: str) -> str | None:
    """The text of one stage of ``artifacts`` (None when the stage is missing or binary).

    ``artifacts`` may be a ``gemm_lab.compile.Artifacts`` (attributes), a ``CompiledKernel.asm``
    dict or any mapping from stage names to text. ``"ast"`` reads ``source`` when present.
    """
    if stage not in STAGE_KEYS:
        raise ValueError(f"unknown stage {stage!r}; expected one of {STAGE_KEYS}")
    names = ("source", "ast") if stage == "ast" else (stage,)
    for name in names:
        if isinstance(artifacts, Mapping):
            value = artifacts.get(name)
        else:
            value = getattr(artifacts, name, None)
        if isinstance(value, str):
            return value
    return None


def _check_marker(marker) -> str:
    if not isinstance(marker, str):
        raise TypeError(f"marker must be a str, got {type(marker).__name__}")
    if not marker:
        raise ValueError("marker must not be empty")
    return marker


def stages_containing(artifacts, marker: str) -> list[str]:
    """The text stages (in pipeline order) whose artifact contains ``marker`` (plain substring)."""
    marker = _check_marker(marker)
    return [s for s in TEXT_STAGES if marker in (stage_text(artifacts, s) or "")]


def first_stage(artifacts, marker: str) -> str | None:
    """The earliest text stage whose artifact contains ``marker``; None if it appears nowhere."""
    found = stages_containing(artifacts, marker)
    return found[0] if found else None


def find_lines(artifacts, marker: str, stages: Iterable[str] = TEXT_STAGES, limit: int = 3) -> dict[str, list[str]]:
    """Up to ``limit`` stripped lines per stage that contain ``marker`` (stages without it are left out)."""
    marker = _check_marker(marker)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive int, got {limit!r}")
    out: dict[str, list[str]] = {}
    for stage in stages:
        text = stage_text(artifacts, stage)
        if not text:
            continue
        hits = [line.strip() for line in text.splitlines() if marker in line][:limit]
        if hits:
            out[stage] = hits
    return out


def marker_table(artifacts_by_target: Mapping[str, object], markers: Iterable[str]) -> pd.DataFrame:
    """How many lines of each text stage contain each marker, for each target.

    Rows are markers; columns a MultiIndex (target, stage). Use it to see e.g. that ``wgmma``
    appears only for sm_90 and ``#mma`` only in TTGIR.
    """
    if not isinstance(artifacts_by_target, Mapping) or not artifacts_by_target:
        raise ValueError("artifacts_by_target must be a non-empty mapping target -> artifacts")
    markers = [_check_marker(m) for m in markers]
    if not markers:
        raise ValueError("markers must not be empty")
    data = {}
    for target, art in artifacts_by_target.items():
        for stage in TEXT_STAGES:
            lines = (stage_text(art, stage) or "").splitlines()
            data[(target, stage)] = [sum(m in line for line in lines) for m in markers]
    table = pd.DataFrame(data, index=markers)
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["target", "stage"])
    return table


# The line shown for each stage in the picture: the first marker that occurs wins.
_EVIDENCE = {
    "ttir": ("tt.dot", "tt.load"),
    "ttgir": ("#mma =", "#ttg.nvidia_mma", "#shared =", "local_alloc", "#blocked ="),
    "llir": ("@global_smem", "@llvm.nvvm", "addrspace(3)"),
    "ptx": ("wgmma.mma_async", "mma.sync", "fma.rn.f32", ".target"),
}


def evidence_lines(artifacts, width: int = 72) -> dict[str, str]:
    """One telling line per text stage (e.g. the ``tt.dot`` line of TTIR), cut to ``width`` chars."""
    if isinstance(width, bool) or not isinstance(width, int) or width < 10:
        raise ValueError(f"width must be an int >= 10, got {width!r}")
    out = {}
    for stage, candidates in _EVIDENCE.items():
        for marker in candidates:
            hits = find_lines(artifacts, marker, stages=(stage,), limit=1)
            if hits:
                line = " ".join(hits[stage][0].split())
                out[stage] = line if len(line) <= width else line[: width - 1] + "…"
                break
    return out


def _metadata_value(artifacts, name: str):
    meta = artifacts.get("metadata") if isinstance(artifacts, Mapping) else getattr(artifacts, "metadata", None)
    if meta is None:
        return None
    if isinstance(meta, Mapping):
        return meta.get(name)
    return getattr(meta, name, None)


def draw_pipeline(artifacts=None, *, title: str | None = None, width: int = 72) -> Figure:
    """The six stages top to bottom, what each decides, and — given artifacts — one real line each.

    With ``artifacts`` (see ``stage_text``) the TTIR/TTGIR/LLIR/PTX boxes show a line of the
    compiled kernel, the LLIR box the shared memory the compiler allocated and the CUBIN box its
    size in bytes; without, the picture shows the guide's table only.
    """
    evidence = evidence_lines(artifacts, width=width) if artifacts is not None else {}
    if artifacts is not None:
        shared = _metadata_value(artifacts, "shared")
        if shared is not None:
            evidence["llir"] = (evidence.get("llir", "") + f"   [metadata.shared = {int(shared):,} B]").strip()
        cubin = artifacts.get("cubin") if isinstance(artifacts, Mapping) else getattr(artifacts, "cubin", None)
        if isinstance(cubin, (bytes, bytearray)):
            evidence["cubin"] = f"{len(cubin):,} bytes of machine code (n_regs / n_spills: known after a GPU launch)"
        source = stage_text(artifacts, "ast")
        if source:
            defs = [line.strip() for line in source.splitlines() if line.strip().startswith("def ")]
            if defs:
                line = defs[0]
                evidence["ast"] = line if len(line) <= width else line[: width - 1] + "…"

    n = len(PIPELINE)
    box_h, gap = 1.0, 0.45
    fig_h = n * (box_h + gap) * 0.62 + 0.8
    fig, ax = plt.subplots(figsize=(11, fig_h))
    total = n * (box_h + gap)
    ax.set_xlim(0, 11)
    ax.margins(0)
    ax.set_ylim(0, total)
    ax.axis("off")
    colors = plt.get_cmap("Blues")
    for i, stage in enumerate(PIPELINE):
        y = total - (i + 1) * (box_h + gap) + gap / 2
        ax.add_patch(
            FancyBboxPatch(
                (0.1, y), 10.8, box_h, boxstyle="round,pad=0.02,rounding_size=0.08",
                facecolor=colors(0.08 + 0.05 * i), edgecolor="#1f3b5c", linewidth=1.2,
            )
        )
        ax.text(0.3, y + box_h * 0.66, stage.title, fontsize=11, fontweight="bold", va="center")
        ax.text(0.3, y + box_h * 0.28, stage.level, fontsize=8.5, style="italic", va="center")
        ax.text(3.1, y + box_h * 0.66, " · ".join(stage.decides), fontsize=8.5, va="center")
        if stage.key in evidence:
            ax.text(3.1, y + box_h * 0.26, evidence[stage.key], fontsize=7.5, family="monospace",
                    va="center", color="#7a1f1f")
        if i < n - 1:
            ax.add_patch(
                FancyArrowPatch((1.2, y), (1.2, y - gap), arrowstyle="-|>", mutation_scale=12,
                                color="#1f3b5c", linewidth=1.2)
            )
    if title is None:
        target = None
        if artifacts is not None:
            target = artifacts.get("target") if isinstance(artifacts, Mapping) else getattr(artifacts, "target", None)
            if target is not None and not isinstance(target, str):
                arch = getattr(target, "arch", None)
                target = f"sm_{arch}" if arch is not None else str(target)
        title = "Triton compile pipeline" + (f" — target {target}" if target else "")
    ax.set_title(title, fontsize=12)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- the jit cache key


@dataclass(frozen=True)
class JitCacheKey:
    """What ``@triton.jit`` looks a compiled binary up by (equal keys: the binary is reused).

    ``specialization``: one ``(type, attribute)`` pair per argument, as Triton's own binder computes
    it — ``("i32", "D")`` is an int divisible by 16, ``("*fp16", "D")`` a 16-byte-aligned pointer,
    ``("constexpr", 128)`` a compile-time constant; ``options``: the hash of the compile options
    (num_warps, num_stages, ...); ``target``: the GPU architecture; ``source``: the hash of the
    kernel's source code (and of the globals it uses).
    """

    specialization: tuple
    options: str
    target: str
    source: str = field(repr=False)

    def differences(self, other: JitCacheKey) -> list[str]:
        """Which parts differ from ``other`` (empty: Triton reuses the binary)."""
        if not isinstance(other, JitCacheKey):
            raise TypeError(f"expected a JitCacheKey, got {type(other).__name__}")
        return [name for name in ("specialization", "options", "target", "source")
                if getattr(self, name) != getattr(other, name)]


def _arch_number(target) -> int:
    if isinstance(target, str) and target.startswith("sm_") and target[3:].isdigit():
        return int(target[3:])
    if isinstance(target, int) and not isinstance(target, bool) and target > 0:
        return target
    raise ValueError(f"target must look like 'sm_80', got {target!r}")


def jit_cache_key(kernel, *args, target: str = "sm_80", **kwargs) -> JitCacheKey:
    """Triton's jit cache key for launching ``kernel[grid](*args, **kwargs)`` on ``target``.

    Runs Triton's own argument binder (the code ``JITFunction.run`` calls before it looks in its
    cache), so it answers "would this call compile again?" without a GPU. Tensors may live on the
    CPU: only their dtype and data-pointer alignment matter. Works for kernels defined under the
    interpreter too (``gemm_lab.compile.as_jit_function`` rebuilds the ``JITFunction``).
    """
    from gemm_lab import runtime  # noqa: F401  (decides TRITON_INTERPRET before triton loads)

    # isort: split
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.runtime.jit import create_function_from_signature

    from gemm_lab.compile import as_jit_function, compiler_mode

    arch = _arch_number(target)
    try:
        binder_fn = as_jit_function(kernel)
    except TypeError:
        raise TypeError(f"kernel must be a @triton.jit function, got {type(kernel).__name__}") from None
    backend = CUDABackend(GPUTarget("cuda", arch, 32))
    binder = create_function_from_signature(binder_fn.signature, binder_fn.params, backend)
    try:
        _, specialization, options = binder(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"arguments do not match the kernel's signature: {exc}") from None
    parsed = backend.parse_options(dict(options))
    with compiler_mode():  # the source hash walks the helpers the kernel calls (interpreter-wrapped on a CPU)
        source = binder_fn.cache_key
    return JitCacheKey(
        specialization=tuple(tuple(s) if isinstance(s, (list, tuple)) else (s,) for s in specialization),
        options=parsed.hash(),
        target=f"sm_{arch}",
        source=source,
    )
