# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 7주차 ④ Triton 컴파일 파이프라인: AST → TTIR → TTGIR → LLIR → PTX → CUBIN
#
# > “`@triton.jit`가 붙은 Python 함수는 어떤 단계를 거쳐 GPU 기계어가 될까? 각 단계는 무엇을 새로 결정할까?”
#
# **이번 노트북에서 배우는 것**
#
# 1. 여섯 단계(Python AST → TTIR → TTGIR → LLVM IR → PTX → CUBIN)가 각각 무엇을 결정하는지 (참고자료 6.1절)
# 2. **내 커널**(7.2절의 `simple_matmul_kernel`)을 sm_75(T4)·sm_80(A100)·sm_90(H100/H200)용으로 직접 컴파일해서
#    단계별 산출물(`ttir`, `ttgir`, `llir`, `ptx`, `cubin`)을 열어 보기
# 3. `matmul_kernel`의 한 줄이 단계마다 어떻게 바뀌는지 (6.2절 표): `tt.dot` → `#mma`·`#dot_op`·`local_alloc` →
#    `cp.async`·`mma.sync`·`st.global`
# 4. 세대별 차이: `mma.sync`(sm_80) vs `wgmma`(sm_90), `cp.async` vs TMA, sm_75의 FMA 대체 경로
# 5. 컴파일러가 실제로 잡는 Shared Memory와 교과서 공식(num_stages × 1단계 크기)의 차이
# 6. `@triton.jit` 캐시 키와 `@triton.autotune`의 경계 (6.3절): 무엇이 다시 컴파일을 부르는가
# 7. Triton 논문(2019)의 패스가 오늘의 MLIR 파이프라인 어디에 보이는지 (7절), 그리고 8주차(Legato)로 가는 질문 (8절)
#
# **GPU가 필요한 부분:** 없습니다. Triton은 GPU 없이도 지정한 타깃(`GPUTarget("cuda", 80, 32)` 등)으로
# **교차 컴파일**(cross-compile)할 수 있어서, 모든 단계의 IR과 `metadata["shared"]`를 CPU에서 얻습니다.
# GPU가 있으면 6절에서 같은 커널을 실제로 실행해 그 GPU용 산출물과 레지스터 수(`n_regs`, `n_spills`)까지 봅니다.
# (CPU 해석기 `TRITON_INTERPRET=1`은 컴파일 파이프라인을 건너뛰므로 실행용이고, 산출물은 교차 컴파일로 얻습니다.)
#
# **점수:** 연습 1 (3점), 연습 2 (4점), 연습 3 (2점), 연습 4 (3점), 연습 5 (3점), 연습 6 (2점),
# 연습 7 (2점, 서술), 연습 8 (2점), 8절 서술 (3점, 수동 채점) — 모두 24점.
#
# ## 읽을거리
# * Triton Tutorial 03 — Matrix Multiplication: <https://triton-lang.org/main/getting-started/tutorials/03-matrix-multiplication.html>
# * Triton Tutorial 01/02 (6주차): <https://triton-lang.org/main/getting-started/tutorials/01-vector-add.html>,
#   <https://triton-lang.org/main/getting-started/tutorials/02-fused-softmax.html>
# * Triton Programming Guide, Chapter 1: <https://triton-lang.org/main/programming-guide/chapter-1/introduction.html>
# * Triton 논문 (MAPL 2019) §4.2, §5.1–5.3, Figure 4–7: <https://doi.org/10.1145/3315508.3329973>
#   (PDF: <https://www.eecs.harvard.edu/~htk/publication/2019-mapl-tillet-kung-cox.pdf>)
# * MLIR 개요: <https://mlir.llvm.org/>
# * Triton MLIR Dialects and Ops (목차와 도입부): <https://triton-lang.org/main/dialects/dialects.html> —
#   `tt` Dialect(TTIR) <https://triton-lang.org/main/dialects/TritonDialect.html>,
#   `ttg` Dialect(TTGIR) <https://triton-lang.org/main/dialects/TritonGPUDialect.html>
# * Triton GitHub: `compiler.py`(`triton.compile`, `CompiledKernel.asm`)
#   <https://github.com/triton-lang/triton/blob/main/python/triton/compiler/compiler.py>,
#   NVIDIA 백엔드 `compiler.py`(`add_stages`: `make_ttir` → `make_ttgir` → `make_llir` → `make_ptx` → `make_cubin`)
#   <https://github.com/triton-lang/triton/blob/main/third_party/nvidia/backend/compiler.py>
# * Triton GitHub README — Tips for hacking (캐시 키에 들어가는 환경변수 `MLIR_ENABLE_DUMP`, `DISABLE_LLVM_OPT` 등):
#   <https://github.com/triton-lang/triton#tips-for-hacking>
# * CUDA PTX ISA (`mma`, `cp.async`, `ld.global` 같은 PTX 명령의 정의): <https://docs.nvidia.com/cuda/parallel-thread-execution/index.html>
# * NVIDIA Matrix Multiplication Background: <https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html>
# * API: `tl.dot`(`input_precision`) <https://triton-lang.org/main/python-api/generated/triton.language.dot.html>,
#   `triton.autotune` <https://triton-lang.org/main/python-api/generated/triton.autotune.html>, `triton.jit` <https://triton-lang.org/main/python-api/generated/triton.jit.html>

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false, "task": false}
from gemm_lab import runtime  # triton보다 먼저: GPU가 없으면 CPU 해석기를 켭니다

import time

import pandas as pd
import torch
import triton
import triton.language as tl

from gemm_lab.runtime import grading_mode
from gemm_lab.calc import smem
from gemm_lab.calc.roofline import SEED_CONFIGS
from gemm_lab.compile import compile_artifacts, compile_jit
from gemm_lab.viz import pipeline

pd.set_option("display.max_colwidth", 90)
print("커널 실행:", "GPU" if runtime.on_gpu() else "CPU 해석기 (산출물은 교차 컴파일로 얻습니다)")

# %% [markdown]
# ## 1. 왜 한 번에 기계어로 바꾸지 않고 여러 IR 단계를 거칠까? (6.1절)
#
# Triton 컴파일러(`triton/compiler/compiler.py`, NVIDIA 백엔드의 `make_ttir`, `make_ttgir`, `make_llir`, `make_ptx`,
# `make_cubin`)는 추상화 수준을 한 칸씩 낮추며(lowering) 그 수준에서만 할 수 있는 결정을 내립니다.
#
# * **TTIR(tt dialect)** 은 타일 전체를 하나의 값으로 다루므로 "어느 스레드가 어느 원소를 맡는지"를 아직 모릅니다.
#   덕분에 상수 폴딩·공통 부분식 제거(CSE) 같은 최적화를 하드웨어와 무관하게 할 수 있습니다.
# * **TTGIR(ttg dialect)** 에서 비로소 `num_warps`개의 워프에 원소를 나누는 **레이아웃 인코딩**
#   (`#blocked`, `#shared`, `#mma`, `#dot_op`)이 붙고, Tensor Core 명령 선택과 `num_stages` 파이프라이닝이 일어납니다.
#   가장 중요한 변환 단계입니다.
# * **LLIR** 은 스레드 하나의 시점으로 내려가 Shared Memory 바이트 수와 오프셋을 정하고,
#   **PTX** 는 타깃 아키텍처(`.target sm_80`)의 가상 어셈블리, **CUBIN** 은 `ptxas`가 만든 실제 기계어(SASS)입니다.
#
# 아래 표와 그림이 참고자료 6.1절의 표입니다. 그림의 글자는 영어이고, 표는 한국어입니다.

# %%
display(pipeline.stage_table())
fig = pipeline.draw_pipeline(title="Triton compile pipeline (guide §6.1)")

# %% [markdown]
# ## 2. 내 커널을 컴파일하기 (7.2절)
#
# 아래는 참고자료 7.2절의 `simple_matmul_kernel`에 Tutorial 03의 에필로그(`ACTIVATION`)를 더한 것입니다.
# 01 노트북에서 완성한 커널과 같은 구조입니다: 2차원 포인터 블록, K 루프의 `tl.dot` 누적, FP16 변환 후 마스크 저장.
#
# GPU가 없으면 `@triton.jit` 함수는 CPU 해석기에서 **실행**되지만, 같은 Python 함수를 `gemm_lab.compile.compile_jit`에
# 넘기면 Triton의 진짜 컴파일러(`triton.compile` + `GPUTarget`)가 지정한 GPU용으로 **컴파일만** 합니다.
# 실행하지 않으므로 GPU가 필요 없습니다.

# %% nbgrader={"grade": false, "grade_id": "my_kernel", "locked": true, "schema_version": 3, "solution": false, "task": false}
@triton.jit
def simple_matmul_kernel(
    # 포인터
    a_ptr, b_ptr, c_ptr,
    # 크기
    M, N, K,
    # 스트라이드
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    # 메타 파라미터 (컴파일 시점 상수)
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    ACTIVATION: tl.constexpr = "",
):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    # ① 2차원 포인터 블록
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    # ② K 루프: 읽고(tl.load) 곱해 누적(tl.dot)하고 포인터를 전진
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    # ③ 에필로그: 활성화 함수(선택) → FP16 → 마스크 저장
    if ACTIVATION == "leaky_relu":
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


# %% [markdown]
# ### 2.1 AST 단계가 고정하는 것: 시그니처와 상수
#
# 컴파일러가 가장 먼저 고정하는 것은 **인자 자료형**(`*fp16` 포인터, `i32` 정수)과 **`tl.constexpr` 값**입니다.
# 커널을 실행할 때는 Triton이 실제 인자에서 이것을 읽어 내지만(5절), 교차 컴파일에서는 우리가 직접 적어 줍니다.
# 설정은 Tutorial 03의 후보 2(128×128×32, `num_stages=4`, `num_warps=4`, 참고자료 5.2절)입니다.
# 안쪽 스트라이드(`stride_ak`, `stride_bn`, `stride_cn`)는 1로 고정합니다: 행 우선(row-major) 텐서에서 Triton이 하는
# 특수화와 같습니다. `divisible`은 포인터·크기·스트라이드가 16의 배수라고 알려 줍니다(`tt.divisibility=16`): 4096 × 4096
# 텐서를 넘길 때와 같은 조건입니다(5절).

# %% nbgrader={"grade": false, "grade_id": "signature", "locked": true, "schema_version": 3, "solution": false, "task": false}
CONFIG = SEED_CONFIGS[1]  # 128x128x32, num_stages=4, num_warps=4
SIGNATURE = {  # the arguments that stay runtime values, with their types
    "a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16",
    "M": "i32", "N": "i32", "K": "i32",
    "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
}
DIVISIBLE = tuple(SIGNATURE)  # all of them 16-divisible (like 4096 x 4096 fp16 tensors on a GPU)


def constexprs_for(config, activation=""):
    """The compile-time constants of simple_matmul_kernel for one TileConfig (unit inner strides)."""
    return {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1,
            "BLOCK_SIZE_M": config.BLOCK_M, "BLOCK_SIZE_N": config.BLOCK_N, "BLOCK_SIZE_K": config.BLOCK_K,
            "ACTIVATION": activation}


def compile_mine(target, config=CONFIG, activation=""):
    """Cross-compile simple_matmul_kernel for one target (cached after the first time)."""
    return compile_jit(simple_matmul_kernel, SIGNATURE, constexprs_for(config, activation), target,
                       num_warps=config.num_warps, num_stages=config.num_stages, divisible=DIVISIBLE)


print("런타임 인자:", SIGNATURE)
print("컴파일 시점 상수:", constexprs_for(CONFIG))
print(f"num_warps={CONFIG.num_warps}, num_stages={CONFIG.num_stages}")
TARGETS = ("sm_75", "sm_80", "sm_90")
arts = {}
for target in TARGETS:
    t0 = time.perf_counter()
    if grading_mode():
        # while grading: gemm_lab.kernels' matmul_kernel (same structure and artifacts), which the checks compile
        # anyway, so a hand-in pays for one set of cross-compiles instead of two
        arts[target] = compile_artifacts("matmul", CONFIG, target=target)
    else:
        arts[target] = compile_mine(target)
    print(f"{target}: {time.perf_counter() - t0:5.2f} s, metadata['shared'] = {arts[target].metadata['shared']:,} B")

# %% [markdown]
# 처음 한 번은 타깃마다 몇 초가 걸리지만, 결과는 Triton 캐시(`TRITON_CACHE_DIR`, 05 노트북)에 저장되어 다시 실행하면 거의
# 즉시 끝납니다. 이제 sm_80용 산출물을 파이프라인 그림 위에 올려 봅시다. 빨간 글자가 **내 커널**의 실제 한 줄입니다.

# %%
fig = pipeline.draw_pipeline(arts["sm_80"])
art = arts["sm_80"]
for stage in pipeline.TEXT_STAGES:
    text = pipeline.stage_text(art, stage)
    print(f"--- {stage}: {len(text.splitlines()):,}줄 / 첫 줄: {text.splitlines()[0][:90]}")

# %% [markdown]
# 산출물 텍스트는 `art.ttir`, `art.ttgir`, `art.llir`, `art.ptx`로 직접 열어 볼 수 있고(`print(art.ttgir)`),
# `pipeline.find_lines(art, "찾을 문자열")`은 단계별로 그 문자열이 들어 있는 줄을 몇 개씩 보여 줍니다.
# 예를 들어 TTGIR 맨 위에는 이 커널이 쓰는 레이아웃 정의가 모여 있습니다.

# %%
for line in pipeline.stage_text(art, "ttgir").splitlines():
    if line.startswith("#") and "loc" not in line:
        print(line[:160])

# %% [markdown]
# * `#blocked`: 글로벌 메모리를 읽는 레지스터 배치. `sizePerThread = [1, 8]`은 스레드 하나가 연속된 FP16 8개(16바이트)를
#   맡는다는 뜻이고, 이것이 PTX의 16바이트 벡터 복사(`cp.async ... 0x10`)가 됩니다(coalescing).
# * `#shared`: Shared Memory 배치. `swizzled_shared`(sm_80)·`nvmma_shared`(sm_90)는 뱅크 충돌을 피하는 swizzle을 담습니다.
# * `#mma`: Tensor Core 누산기 배치(`nvidia_mma`, `versionMajor = 2`는 Ampere의 `mma.sync`, `3`은 Hopper의 `wgmma`).
# * `#dot_op`: `tl.dot`의 피연산자를 Tensor Core 입력 레지스터 배치로 읽은 것(sm_80).

# %% [markdown]
# ## 3. `matmul_kernel`의 한 줄이 각 단계에서 바뀌는 모습 (6.2절)
#
# 참고자료 6.2절의 표를 **내 커널의 sm_80 산출물**에서 직접 채워 봅시다. 각 칸은 그 단계의 텍스트에서 찾은 실제 줄
# (앞부분)이고, 빈 칸은 그 단계에 해당 표시가 없다는 뜻입니다.

# %%
ROWS = {
    "a_ptrs = a_ptr + ...  (포인터 블록)": {"ttir": "tt.addptr", "ttgir": "tt.addptr", "llir": "getelementptr", "ptx": "add.s64"},
    "tl.load(a_ptrs, mask=...)": {"ttir": "tt.load", "ttgir": "async_copy_global_to_local", "llir": "cp.async", "ptx": "cp.async.cg"},
    "for k in range(...)  (K 루프)": {"ttir": "scf.for", "ttgir": "local_alloc", "llir": "cp.async.wait.group", "ptx": "cp.async.wait_group"},
    "tl.dot(a, b, acc)": {"ttir": "tt.dot", "ttgir": "tt.dot", "llir": "mma.sync", "ptx": "mma.sync"},
    "c = acc.to(tl.float16)  (형변환)": {"ttir": "arith.truncf", "ttgir": "arith.truncf", "llir": "fptrunc", "ptx": "cvt.rn.f16"},
    "tl.store(c_ptrs, c, mask=...)": {"ttir": "tt.store", "ttgir": "convert_layout", "llir": "st.global", "ptx": "st.global"},
}


def line_table(art, rows=ROWS, width=70):
    """For each Python line, the first artifact line per stage that contains the given marker."""
    table = {}
    for py_line, markers in rows.items():
        cells = {}
        for stage, marker in markers.items():
            hits = pipeline.find_lines(art, marker, stages=(stage,), limit=1)
            line = " ".join(hits[stage][0].split()) if hits else ""
            cells[stage] = line if len(line) <= width else line[: width - 1] + "…"
        table[py_line] = cells
    return pd.DataFrame.from_dict(table, orient="index")


display(line_table(arts["sm_80"]))

# %% [markdown]
# 읽는 법:
#
# * **포인터 블록**은 TTIR에서 `tt.splat`/`tt.broadcast`/`tt.addptr`로 만든 `[BM, BK]` 포인터 텐서이고, PTX에서는 스레드마다
#   자기 원소의 64비트 주소를 계산하는 정수 명령(`add.s64`, `mad.lo.s32`)이 됩니다.
# * **`tl.load`** 는 TTIR의 `tt.load`가 TTGIR에서 **`ttg.async_copy_global_to_local`**(글로벌 → Shared Memory 비동기 복사)로
#   바뀌고, PTX에서는 `cp.async.cg.shared.global`입니다.
# * **K 루프**는 TTIR에서는 평범한 `scf.for`이고, TTGIR에서 `num_stages`단 소프트웨어 파이프라인으로 재구성됩니다:
#   `ttg.local_alloc`이 `memdesc<3x128x32xf16>`처럼 **여러 단계치 버퍼**를 잡고, PTX에는 `cp.async.commit_group` /
#   `cp.async.wait_group`과 `bar.sync`가 들어갑니다.
# * **`tl.dot`** 은 TTIR의 `tt.dot`이 TTGIR에서 `#dot_op`/`#mma` 레이아웃을 갖는 `tt.dot`이 되고, PTX에서는
#   `ldmatrix` + `mma.sync.aligned.m16n8k16...`입니다.
# * **형변환** `acc.to(tl.float16)`은 TTIR·TTGIR의 `arith.truncf`(TTGIR에서는 `#mma` 레지스터 배치 그대로), LLIR의 `fptrunc`,
#   PTX의 `cvt.rn.f16...`입니다. 참고자료 표의 `cvt.rn.f16.f32`(원소 하나씩) 대신, 표에서 보듯 두 원소를 한 번에 바꾸는
#   `cvt.rn.f16x2.f32`가 나올 수 있습니다(FP32 두 개 → FP16 두 개를 32비트 레지스터 하나에).
# * **저장**은 `#mma` 레지스터 배치를 `ttg.convert_layout`으로 저장용 `#blocked` 배치로 바꾼 뒤 `st.global`입니다.
#
# 하나 눈여겨볼 점: LLIR 칸에도 `cp.async`, `mma.sync`, `st.global`이 보입니다. Triton의 NVIDIA 백엔드는 이런 명령을
# LLVM IR 안에 **인라인 어셈블리 문자열**(`asm sideeffect "cp.async.cg.shared.global ..."`)로 써 넣기 때문입니다.
# 그래서 "이 명령이 처음 나타나는 단계"는 PTX가 아니라 LLIR일 수 있습니다 — 연습 2에서 직접 확인합니다.

# %% [markdown]
# ## 4. 세대별 차이: sm_75 · sm_80 · sm_90
#
# 같은 Python 커널, 같은 설정인데 타깃만 다릅니다. 표는 각 표시가 들어 있는 **줄 수**입니다(타깃 × 단계).

# %%
MARKERS = ["tt.dot", "#mma", "dot_op", "nvmma_shared", "local_alloc", "async_copy_global_to_local",
           "warp_group_dot", "cp.async.cg", "ldmatrix", "mma.sync", "wgmma.mma_async", "fma.rn.f32",
           "ld.global", "st.global"]
marker_counts = pipeline.marker_table(arts, MARKERS)
display(marker_counts.xs("ptx", axis=1, level="stage").rename(columns=lambda t: f"{t} PTX"))
display(marker_counts.xs("ttgir", axis=1, level="stage").rename(columns=lambda t: f"{t} TTGIR"))

# %% [markdown]
# * **sm_80 (Ampere)**: TTGIR의 `#mma`가 `versionMajor = 2`이고 피연산자는 `#dot_op` 레지스터로 읽혀(`ldmatrix`)
#   PTX의 `mma.sync.aligned.m16n8k16`이 됩니다.
# * **sm_90 (Hopper)**: `versionMajor = 3`, `tt.dot`이 `ttng.warp_group_dot`으로 바뀌고 PTX에 `wgmma.mma_async`가
#   나옵니다. wgmma는 피연산자를 Shared Memory(`#nvmma_shared`)에서 직접 읽으므로 `#dot_op`이 없습니다.
# * **sm_75 (Turing, Colab/Kaggle의 T4)**: `tl.dot`이 Tensor Core를 쓰지 않고 FP32 FMA 명령(`fma.rn.f32`)으로 대체되고,
#   비동기 복사(`cp.async`)와 파이프라이닝도 없습니다. 이 과정이 확인한 triton 3.6.0, 3.7.1(과정의 고정 버전), 3.8.0,
#   3.9.0에서 모두 그렇습니다(위 표는 지금 설치된 버전으로 센 값입니다). Triton은 compute capability 8.0 이상을 지원 대상으로 둡니다.
# * **Blackwell (sm_100 · sm_120)**: `compile_artifacts(..., target="sm_100")`처럼 교차 컴파일할 수 있습니다(triton 3.7.1로 확인).
#   데이터센터용 **sm_100**(B200)은 `tt.dot`이 `ttng.tc_gen5_mma`가 되어 PTX에 `tcgen05.mma`가 나오고, 누적값은
#   **Tensor Memory**(`tcgen05.alloc`)에 둡니다. 소비자용 **sm_120**(RTX 50, RTX Pro 6000)에는 `wgmma`도 `tcgen05`도 없어서
#   sm_80과 같은 `mma.sync` 경로를 씁니다. 두 타깃 모두 포인터 커널은 `cp.async`로 읽고, TMA는 디스크립터 커널에서만 쓰입니다.
#
# ### 4.1 `cp.async` vs TMA
#
# 포인터 블록으로 읽는 커널은 sm_90에서도 `cp.async`(스레드마다 16바이트씩 복사)를 씁니다. Hopper의 **TMA**(Tensor Memory
# Accelerator: 타일 전체를 한 명령으로 복사, PTX의 `cp.async.bulk.tensor`)는 커널이 **텐서 디스크립터**로 읽을 때만
# 쓰입니다. 아래는 같은 행렬곱을 `tl.make_tensor_descriptor`로 쓴 작은 커널입니다(실행하지 않고 컴파일만 합니다).

# %%
@triton.jit
def tma_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])   # 타일 하나를 통째로 (TMA)
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


if grading_mode():  # two cross-compiles: a demonstration without points
    print("(채점 중: 시연 셀은 건너뜁니다)")
else:
    TMA_SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    TMA_CONSTS = {"BLOCK_M": CONFIG.BLOCK_M, "BLOCK_N": CONFIG.BLOCK_N, "BLOCK_K": CONFIG.BLOCK_K}
    tma_arts = {t: compile_jit(tma_matmul_kernel, TMA_SIGNATURE, TMA_CONSTS, t, num_warps=CONFIG.num_warps,
                               num_stages=CONFIG.num_stages, divisible=tuple(TMA_SIGNATURE)) for t in ("sm_80", "sm_90")}
    copy_markers = ["cp.async.bulk.tensor", "cp.async.cg", "st.global", "wgmma.mma_async", "mma.sync"]
    both = {f"포인터 커널 {t}": arts[t] for t in ("sm_80", "sm_90")} | {f"디스크립터 커널 {t}": a for t, a in tma_arts.items()}
    display(pipeline.marker_table(both, copy_markers).xs("ptx", axis=1, level="stage"))

# %% [markdown]
# 디스크립터 커널은 sm_90에서만 `cp.async.bulk.tensor`(TMA 로드·스토어)가 되고 `st.global`도 사라집니다. 같은 코드를
# sm_80용으로 컴파일하면 TMA가 없으므로 컴파일러가 `cp.async`로 되돌립니다: **어떤 복사 명령을 쓸지는 TTGIR 이하의
# 단계가 타깃을 보고 정합니다.**
#
# ### 4.2 정렬되지 않은 포인터: `cp.async`가 사라질 때
#
# `compile_jit`은 포인터와 스트라이드가 16바이트 배수라고 가정했습니다. 500 × 600 × 300처럼 스트라이드(600 × 2 바이트
# 등)가 16바이트 배수가 아니면 Triton은 그 사실을 모르는 채로 컴파일해야 하고, 16바이트 `cp.async`를 쓸 수 없습니다.
# `gemm_lab.kernels`의 `matmul_kernel`을 정렬 정보 없이(`aligned=False`) 컴파일해 비교합니다.

# %%
if grading_mode():  # two cross-compiles: a demonstration without points
    print("(채점 중: 시연 셀은 건너뜁니다)")
else:
    aligned_art = compile_artifacts("matmul", CONFIG, target="sm_80", aligned=True)
    unaligned_art = compile_artifacts("matmul", CONFIG, target="sm_80", aligned=False)
    align_table = pipeline.marker_table({"aligned": aligned_art, "unaligned": unaligned_art},
                                        ["cp.async.cg", "ld.global", "mma.sync", "st.global"]
                                        ).xs("ptx", axis=1, level="stage")
    align_table.loc["metadata['shared'] (B)"] = [aligned_art.metadata["shared"], unaligned_art.metadata["shared"]]
    display(align_table)

# %% [markdown]
# 정렬 정보가 없으면 16바이트 비동기 복사(`cp.async`)를 쓸 수 없어 글로벌 읽기가 `ld.global`(레지스터로 읽고 `st.shared`로
# 옮기기)이 되고, 소프트웨어 파이프라인이 없어져 Shared Memory 양(`metadata['shared']`)도 달라집니다. H200에서 500×600×300을
# 실행했을 때 모든 설정이 파이프라이닝 없이 돌았던 이유입니다(05 노트북). 같은 코드라도 **인자 정렬이 컴파일 결과를 바꾼다**는
# 것이 5절의 캐시 키와 이어집니다.

# %% [markdown]
# ### 4.3 FP16 `tt.dot`에 붙은 `inputPrecision = tf32`?
#
# TTIR의 `tt.dot` 줄을 보면 FP16 입력인데도 `inputPrecision = tf32`가 붙어 있습니다. 이것은 `tl.dot`의 `input_precision`
# 인자(기본값 `"tf32"`)가 그대로 적힌 것이고, **입력이 FP32일 때만** 의미가 있습니다: FP32 입력을 Tensor Core에 넣기 위해
# TF32(가수부 10비트)로 줄여 곱할지(`"tf32"`), 세 번 나눠 곱해 FP32에 가깝게 할지(`"tf32x3"`), Tensor Core 없이 FP32로
# 곱할지(`"ieee"`)를 정합니다. FP16 입력은 그대로 FP16 Tensor Core 명령(`...f32.f16`)으로 가므로 이 속성은 무시됩니다.
# 아래 셀은 같은 커널을 FP32 입력으로 교차 컴파일해 PTX의 행렬곱 명령을 비교합니다.

# %%
import re  # noqa: E402

if grading_mode():  # two more cross-compiles: a demonstration without points
    print("(채점 중: 시연 셀은 건너뜁니다)")
else:
    _mma = re.compile(r"(?:wgmma\.mma_async|mma\.sync)\S*")
    for dtype in ("fp16", "fp32"):
        for target in ("sm_80", "sm_90"):
            _art = compile_artifacts("matmul", CONFIG, target=target, dtype=dtype)
            _precision = sorted(set(re.findall(r"inputPrecision = \w+", _art.ttir)))
            _ops = sorted(set(_mma.findall(_art.ptx)))
            print(f"{dtype} 입력, {target}: TTIR {_precision} → PTX {_ops[:2]}")

# %% [markdown]
# FP32 입력에서는 PTX 명령의 입력 형식이 `tf32`로 바뀝니다(sm_80의 `mma.sync ... m16n8k8 ... tf32`). FP32 행렬곱의 결과가
# `torch.matmul`(기본 `torch.backends.cuda.matmul.allow_tf32 = False`)과 자릿수가 다르게 나온다면 이 때문입니다:
# 정확도가 중요하면 `tl.dot(a, b, acc, input_precision="ieee")`(또는 `"tf32x3"`)를 쓰세요.

# %% [markdown]
# ## 연습 1. 결정 ↔ 단계 짝짓기 (3점)
#
# 아래 여덟 문장은 각각 파이프라인의 어느 단계에서 새로 결정될까요? 1절의 표와 2~4절의 산출물을 근거로
# `decision_stage`에 `{"A": "ttgir", ...}` 꼴로 적으세요. 단계 이름은 `"ast"`, `"ttir"`, `"ttgir"`, `"llir"`,
# `"ptx"`, `"cubin"` 중 하나입니다(대소문자는 상관없습니다).

# %%
for label, statement, _ in pipeline.DECISIONS:
    print(f"{label}. {statement}")

# %% nbgrader={"grade": false, "grade_id": "ex1_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
decision_stage = {"A": "ast", "B": "ttir", "C": "ttgir", "D": "ttgir", "E": "ttgir", "F": "llir", "G": "ptx",
                  "H": "cubin"}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex1_decisions_to_stages", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""decision_stage maps each of the guide's §6.1 decisions A–H to the stage that makes it."""
from gemm_lab.grading import fresh
g = fresh()
from gemm_lab.viz.pipeline import DECISIONS
_aliases = {"llir": ["llvm ir", "llvm"], "cubin": ["sass"], "ast": ["python ast"]}
_expected = {label: stage for label, _, stage in DECISIONS}
g.check_value("decision_stage (A~D)", {k: decision_stage.get(k) for k in "ABCD"},
              {k: _expected[k] for k in "ABCD"}, accept=_aliases)
### BEGIN HIDDEN TESTS
g.check_value("decision_stage", {k: decision_stage.get(k) for k in _expected}, _expected, accept=_aliases)
### END HIDDEN TESTS

# %% [markdown]
# ## 연습 2. IR의 표시가 **처음** 나타나는 단계 (4점)
#
# 내 커널의 **sm_80** 산출물(`arts["sm_80"]`)에서 아래 여섯 표시가 처음 나타나는 단계를 찾아 `first_seen`에 적으세요.
# 참고자료의 표를 외워서 쓰지 말고 산출물에서 직접 확인하세요: `pipeline.find_lines(arts["sm_80"], "cp.async")`는
# 그 문자열이 들어 있는 줄을 단계별로 보여 줍니다(3절 끝의 인라인 어셈블리 설명을 기억하세요).
# 단계 이름은 `"ttir"`, `"ttgir"`, `"llir"`, `"ptx"` 중 하나입니다.

# %%
pipeline.find_lines(arts["sm_80"], "local_alloc")  # 예시: 다른 표시로 바꿔 가며 확인해 보세요

# %% nbgrader={"grade": false, "grade_id": "ex2_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
first_seen = {"tt.dot": "ttir", "#mma": "ttgir", "local_alloc": "ttgir", "cp.async": "llir", "mma.sync": "llir",
              "st.global": "llir"}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex2_first_stage_visible", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""first_seen gives, for tt.dot, #mma and local_alloc, the first stage of the sm_80 artifacts that contains them."""
from gemm_lab.grading import fresh
g = fresh()
_aliases = {"llir": ["llvm ir", "llvm"]}
_keys = ["tt.dot", "#mma", "local_alloc"]
# the answer key is the compiler's own sm_80 output for the same structure (128x128x32 s4 w4)
g.check_value("first_seen", {k: first_seen.get(k) for k in _keys},
              g.compile_answers.first_stages("sm_80", g.calc.SEED_CONFIGS[1], _keys), accept=_aliases)

# %% nbgrader={"grade": true, "grade_id": "ex2_first_stage_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""first_seen gives, for cp.async, mma.sync and st.global, the first stage of the sm_80 artifacts that contains them."""
from gemm_lab.grading import fresh
g = fresh()
### BEGIN HIDDEN TESTS
_aliases = {"llir": ["llvm ir", "llvm"]}
_keys = ["cp.async", "mma.sync", "st.global"]
g.check_value("first_seen", {k: first_seen.get(k) for k in _keys},
              g.compile_answers.first_stages("sm_80", g.calc.SEED_CONFIGS[1], _keys), accept=_aliases,
              hint="PTX 명령이 LLIR에 인라인 어셈블리 문자열로 먼저 들어가 있지 않은지 find_lines로 확인해 보세요.")
### END HIDDEN TESTS

# %% [markdown]
# ## 연습 3. 어느 타깃이 무엇을 쓰나 (2점)
#
# `arts`의 세 타깃(sm_75, sm_80, sm_90) 가운데
#
# * `wgmma_targets`: PTX에 `wgmma` 명령이 있는 타깃들
# * `tensor_core_targets`: PTX에 Tensor Core 행렬곱 명령(`mma.sync` 또는 `wgmma`)이 있는 타깃들
#
# 을 집합(또는 리스트)으로 적으세요. 예: `{"sm_80"}`. 코드로 구해도 됩니다(예: `"wgmma" in arts[t].ptx`).

# %% nbgrader={"grade": false, "grade_id": "ex3_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
wgmma_targets = {t for t in arts if "wgmma" in arts[t].ptx}
tensor_core_targets = {t for t in arts if "mma.sync" in arts[t].ptx or "wgmma" in arts[t].ptx}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex3_which_targets_use_tensor_cores", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""wgmma_targets and tensor_core_targets list the targets whose PTX holds wgmma / a tensor-core mma."""
from gemm_lab.grading import fresh
g = fresh()
_config = g.calc.SEED_CONFIGS[1]
g.check_choice("wgmma_targets", wgmma_targets, g.compile_answers.targets_with(_config, "wgmma"))
### BEGIN HIDDEN TESTS
g.check_choice("tensor_core_targets", tensor_core_targets,
               g.compile_answers.targets_with(_config, "mma.sync", "wgmma"))
### END HIDDEN TESTS

# %% [markdown]
# ## 연습 4. 컴파일러가 잡은 Shared Memory vs 교과서 공식 (3점)
#
# 참고자료 5.2절의 교과서 공식은 파이프라인 입력 버퍼 = `num_stages × 2 × (BM×BK + BK×BN)` 바이트입니다
# (`smem.textbook_smem(CONFIG)`). 컴파일러가 실제로 잡은 양은 `arts[t].metadata["shared"]`입니다.
#
# * `textbook_bytes`: 후보 2(`CONFIG`)의 교과서 공식 값 (바이트)
# * `compiler_buffers`: sm_80과 sm_90에서 컴파일러가 잡은 Shared Memory가 **1단계(A·B 한 벌) 크기의 몇 배**인지,
#   `{"sm_80": ..., "sm_90": ...}` (1단계 크기는 `smem.stage_bytes(CONFIG)`; 소수 둘째 자리까지 맞으면 정답)

# %% nbgrader={"grade": false, "grade_id": "ex4_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
textbook_bytes = smem.textbook_smem(CONFIG)
compiler_buffers = {t: arts[t].metadata["shared"] / smem.stage_bytes(CONFIG) for t in ("sm_80", "sm_90")}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex4_textbook_smem", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""textbook_bytes is num_stages x stage bytes for the 128x128x32 s4 config."""
from gemm_lab.grading import fresh
g = fresh()
g.check_value("textbook_bytes", textbook_bytes, g.calc.smem.textbook_smem(g.calc.SEED_CONFIGS[1]))

# %% nbgrader={"grade": true, "grade_id": "ex4_compiler_buffers", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""compiler_buffers is metadata['shared'] / stage bytes on sm_80 and sm_90, read from the compiler's output."""
from gemm_lab.grading import fresh
g = fresh()
_config = g.calc.SEED_CONFIGS[1]
_stage = g.calc.smem.stage_bytes(_config)
_expected = {t: g.compile_answers.shared_bytes(t, _config) / _stage for t in ("sm_80", "sm_90")}
g.check_value("compiler_buffers 의 키", sorted(compiler_buffers), sorted(_expected))
### BEGIN HIDDEN TESTS
g.check_value("compiler_buffers", {t: compiler_buffers[t] for t in _expected}, _expected, digits=2)
### END HIDDEN TESTS

# %% [markdown]
# 결과를 교과서 공식과 나란히 놓으면 (`smem.compiler_smem`은 여러 설정을 교차 컴파일해 얻은 규칙입니다):

# %%
smem_table = pd.DataFrame.from_dict({
    t: {"metadata['shared'] (B)": arts[t].metadata["shared"],
        "1단계 크기의 몇 배": arts[t].metadata["shared"] / smem.stage_bytes(CONFIG),
        "교과서 공식 (B)": smem.textbook_smem(CONFIG),
        "gemm_lab 규칙 compiler_smem (B)": smem.compiler_smem(CONFIG, t)}
    for t in TARGETS
}, orient="index")
display(smem_table)

# %% [markdown]
# * **sm_90 (wgmma 경로)**: 버퍼가 `num_stages`개 — 교과서 공식과 정확히 같습니다.
# * **sm_80 (mma.sync 경로)**: 버퍼가 `num_stages − 1`개입니다. 파이프라인이 `num_stages − 1`개의 타일을 미리 요청해 두고,
#   지금 계산할 타일은 Shared Memory에서 레지스터(`#dot_op`)로 올린 뒤 그 버퍼를 다음 요청에 재사용하기 때문입니다.
#   TTGIR의 `ttg.local_alloc : memdesc<3x128x32xf16, ...>`에서 맨 앞의 3이 그 버퍼 수입니다.
# * **sm_75**: 파이프라이닝이 없고, 잡힌 양은 FMA 경로의 레이아웃 변환용 임시 공간입니다.
#
# 그래서 교과서 공식의 "64 KiB 한계" 판정(연습문제 2.2)은 sm_80에서는 한 단계 여유가 있고, sm_90에서는 정확합니다.
# (GPU에서 실제로 실행한 커널의 `metadata.shared`도 같습니다: 6절, 그리고 H200의 `results/compiled_kernels.csv`.)

# %% [markdown]
# ## 5. 캐시 키와 `@triton.autotune`의 경계 (6.3절)
#
# `@triton.jit` 커널을 호출할 때마다 Triton은 **캐시 키**를 만들어 이미 컴파일된 바이너리가 있는지 찾습니다. 키에 들어가는 것:
#
# 1. 커널 **소스 코드의 해시**(와 커널이 쓰는 전역 값)
# 2. 인자마다의 **특수화(specialization)**: 자료형(`*fp16`, `i32`), `tl.constexpr` 값, 그리고 정수·포인터가
#    **16의 배수인지**(`"D"`) 여부, 정수가 1인지(1이면 상수로 접어 넣음)
# 3. 컴파일 옵션(`num_warps`, `num_stages`, ...)의 해시
# 4. 타깃 GPU 아키텍처(sm_80, sm_90, ...)
#
# 한 프로세스 안의 캐시(`JITFunction`이 메모리에 든 바이너리를 찾는 키)는 이 네 가지로 정해집니다. 프로세스가 바뀌어도 다시
# 쓰는 **디스크 캐시**(`~/.triton/cache`, 05 노트북)의 키는 `triton.compile`이 만드는 SHA-256 해시이고, 여기에 Triton 자신의
# 코드 해시(버전), 백엔드(`ptxas` 버전과 아키텍처), 그리고 **관련 환경변수**가 더 들어갑니다: 컴파일 결과를 바꾸는
# 환경변수(예: `MLIR_ENABLE_DUMP`, `LLVM_IR_ENABLE_DUMP`, `DISABLE_LLVM_OPT`, `DISABLE_PTXAS_OPT`, `TRITON_DEFAULT_FP_FUSION`,
# `TRITON_DISABLE_LINE_INFO`, `USE_IR_LOC`)가 설정되어 있으면 그 이름과 값이 해시에 섞입니다. 이 목록은 Triton이
# `get_cache_invalidating_env_vars()`로 직접 정하고(`compiler.py`의 `triton.compile`), 아래 셀에서 설치된 Triton에게 물어봅니다.
# 반면 `TRITON_KERNEL_DUMP`, `TRITON_DUMP_DIR`, `TRITON_PRINT_AUTOTUNING`, `TRITON_CACHE_DIR`은 덤프·출력·위치만 바꾸므로
# 키에 들어가지 않고, `TRITON_ALWAYS_COMPILE=1`은 키를 바꾸는 대신 디스크 캐시를 건너뜁니다(05 노트북 2절).
#
# `pipeline.jit_cache_key(kernel, *args, target=..., **meta)`는 `JITFunction.run`이 캐시를 찾기 전에 부르는 Triton의
# **바로 그 인자 분석 코드**를 실행해 키를 계산합니다(텐서는 CPU에 있어도 됩니다: 자료형과 주소 정렬만 봅니다).
# 키가 같으면 다시 컴파일하지 않습니다.

# %% nbgrader={"grade": false, "grade_id": "cache_scenarios", "locked": true, "schema_version": 3, "solution": false, "task": false}
def launch_args(M, N, K):
    """The arguments of simple_matmul_kernel for fresh contiguous fp16 tensors of this shape (not launched)."""
    a = torch.empty((M, K), dtype=torch.float16)
    b = torch.empty((K, N), dtype=torch.float16)
    c = torch.empty((M, N), dtype=torch.float16)
    return (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


BASE_META = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "num_warps": 4, "num_stages": 4}
BASE_CALL = ((4096, 4096, 4096), BASE_META, "sm_80")  # (shape, meta, target) of the first call
SCENARIOS = {
    "same": ((4096, 4096, 4096), BASE_META, "sm_80"),
    "shape_2048": ((2048, 2048, 2048), BASE_META, "sm_80"),
    "shape_500x600x300": ((500, 600, 300), BASE_META, "sm_80"),
    "block_m_64": ((4096, 4096, 4096), BASE_META | {"BLOCK_SIZE_M": 64}, "sm_80"),
    "leaky_relu": ((4096, 4096, 4096), BASE_META | {"ACTIVATION": "leaky_relu"}, "sm_80"),
    "num_warps_8": ((4096, 4096, 4096), BASE_META | {"num_warps": 8}, "sm_80"),
    "target_sm_90": ((4096, 4096, 4096), BASE_META, "sm_90"),
}


def cache_key(call):
    shape, meta, target = call
    return pipeline.jit_cache_key(simple_matmul_kernel, *launch_args(*shape), target=target, **meta)


for name, (shape, meta, target) in SCENARIOS.items():
    changed = {k: v for k, v in meta.items() if BASE_META.get(k) != v}
    print(f"{name:18s} shape={shape}, target={target}, 바뀐 메타 파라미터={changed or '-'}")

# %% [markdown]
# ## 연습 5. 다시 컴파일될까? (3점)
#
# 첫 호출 `BASE_CALL`(4096³, 128×128×32, `num_warps=4`, `num_stages=4`, sm_80) 다음에 위 `SCENARIOS`의 각 호출이
# 오면 `@triton.jit`이 **새로 컴파일하는지**(`True`) 아니면 이미 있는 바이너리를 **재사용하는지**(`False`) 예측해
# `recompiles = {"same": False, ...}`에 적으세요. 먼저 6.3절을 근거로 예측한 다음, 아래 채점 셀 뒤의 표로 확인하세요.
# (힌트: 500, 600, 300은 16의 배수가 아닙니다.)

# %% nbgrader={"grade": false, "grade_id": "ex5_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
recompiles = {"same": False, "shape_2048": False, "shape_500x600x300": True, "block_m_64": True,
              "leaky_relu": True, "num_warps_8": True, "target_sm_90": True}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex5_recompile_predictions", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""recompiles[s] is True exactly when Triton's own jit cache key for scenario s differs from the first call's."""
from gemm_lab.grading import fresh
g = fresh()
_expected = g.compile_answers.recompiles()  # Triton's own binder on the same seven calls
_visible = ["same", "shape_2048", "block_m_64"]
g.check_value("recompiles", {k: recompiles.get(k) for k in _visible}, {k: _expected[k] for k in _visible})
### BEGIN HIDDEN TESTS
g.check_value("recompiles", {k: recompiles.get(k) for k in _expected}, _expected,
              hint="M, N, K는 값이 아니라 '16의 배수인가'만 키에 들어갑니다.")
### END HIDDEN TESTS

# %%
base_key = cache_key(BASE_CALL)
rows = {}
for name, call in SCENARIOS.items():
    key = cache_key(call)
    rows[name] = {"다시 컴파일?": bool(key.differences(base_key)),
                  "키에서 달라진 부분": ", ".join(key.differences(base_key)) or "-",
                  "M, N, K의 특수화": key.specialization[3:6]}
display(pd.DataFrame.from_dict(rows, orient="index"))

# %% [markdown]
# * 행렬 크기 `M, N, K`는 `tl.constexpr`가 아니므로 **값 자체**는 키에 없습니다. 4096 → 2048은 둘 다 16의 배수라
#   특수화(`("i32", "D")`)가 같아서 재사용합니다 — 참고자료 6.3절의 설명 그대로입니다.
# * 그러나 500 × 600 × 300은 16의 배수가 아니라 특수화가 `("i32", "")`로 바뀌어 **다시 컴파일**됩니다.
#   (참고자료는 "M, N, K가 바뀌어도 재컴파일하지 않는다"고 했지만, 정확히는 "16의 배수 여부가 같으면"입니다. 4.2절에서 본
#   것처럼 이 정렬 정보가 `cp.async` 사용 여부까지 바꾸므로 Triton이 따로 컴파일하는 것입니다.)
# * `BLOCK_SIZE_M`, `ACTIVATION`은 `tl.constexpr` 값이라 특수화가, `num_warps`는 옵션 해시가, 타깃은 타깃이 달라 새로 컴파일됩니다.
#
# 디스크 캐시 키에 들어가는 환경변수는 설치된 Triton이 정합니다. 아래 셀은 환경변수 몇 개를 잠깐 켜고
# `get_cache_invalidating_env_vars()`가 무엇을 돌려주는지 본 뒤 원래대로 되돌립니다(그사이 컴파일은 하지 않습니다).

# %%
import os

try:
    from triton._C.libtriton import get_cache_invalidating_env_vars
except ImportError:  # a private helper of triton.compile; its place may move between releases
    get_cache_invalidating_env_vars = None
    print(f"triton {triton.__version__}에는 get_cache_invalidating_env_vars가 없습니다.")

if get_cache_invalidating_env_vars is not None:
    PROBE = ("MLIR_ENABLE_DUMP", "DISABLE_LLVM_OPT", "TRITON_DEFAULT_FP_FUSION",
             "TRITON_KERNEL_DUMP", "TRITON_PRINT_AUTOTUNING", "TRITON_ALWAYS_COMPILE")
    saved = {name: os.environ.pop(name, None) for name in PROBE}
    in_key = {}
    try:
        for name in PROBE:  # one at a time, so each answer is about that variable alone
            os.environ[name] = "1"
            in_key[name] = name in get_cache_invalidating_env_vars()
            del os.environ[name]
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value
    print(f"triton {triton.__version__}: 설정되어 있을 때 디스크 캐시 키에 들어가는가?")
    for name, inside in in_key.items():
        print(f"  {name:24s} {'✅ 들어감 (값이 바뀌면 새로 컴파일)' if inside else '— 들어가지 않음'}")

# %% [markdown]
# `@triton.autotune(configs=..., key=['M', 'N', 'K'])`은 이 위에 한 층을 더 얹습니다: **튜닝 키**(key 인자들의 값 + 텐서 dtype)가
# 처음 보는 값이면 모든 `triton.Config` 후보를 벤치마크해 가장 빠른 것을 기억합니다. 튜닝 키에는 `M, N, K`의 **값**이
# 들어가므로 2048³은 jit 캐시로는 재사용이지만 autotune으로는 **다시 벤치마크**입니다. (CPU 해석기에서는 autotune이
# 동작하지 않습니다: 벤치마크에 GPU 드라이버가 필요합니다. 03 노트북의 GPU 절과 05 노트북을 보세요.)

# %% [markdown]
# 참고자료 연습문제 3.3(4096³ 튜닝 뒤 ① 2048³ ② `ACTIVATION="leaky_relu"`에서 autotune 캐시와 jit 캐시가 각각 어떻게
# 동작하는가)은 03 노트북의 연습 3.3(`ex3_3_…`)에서 이미 채점했습니다. 위 표가 그 답의 jit 캐시 쪽 근거입니다:
# ① 2048³은 키가 같아 재사용(튜닝 키는 새 값이라 다시 벤치마크), ② leaky_relu는 constexpr 특수화가 달라 새로 컴파일
# (튜닝 키는 같아 다시 벤치마크하지 않음). 여기서는 다른 질문을 합니다.
#
# ## 연습 6. 어떤 인자가 "16의 배수" 특수화를 잃을까? (2점)
#
# 첫 호출(`BASE_CALL`, 4096³) 다음에 **M, N, K = 4096, 4000, 1000**으로(나머지는 같음) 호출합니다.
#
# * `recompiles_4000`: 다시 컴파일되면 `True`, 재사용이면 `False`
# * `lost_divisibility`: 정수 인자 `M, N, K, stride_am, stride_bk, stride_cm` 가운데 특수화가 `("i32", "D")`에서 바뀌는
#   인자 이름들의 집합 (행 우선 텐서라 `stride_am = K`, `stride_bk = N`, `stride_cm = N`입니다)
#
# 16으로 나누어 직접 예측한 다음 `cache_key(...)`의 `.specialization`으로 확인하세요(인자 순서는 커널 시그니처 순서).

# %% nbgrader={"grade": false, "grade_id": "ex6_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
_base_key = cache_key(BASE_CALL)
_key_4000 = cache_key(((4096, 4000, 1000), BASE_META, "sm_80"))
recompiles_4000 = bool(_key_4000.differences(_base_key))
_positions = {"M": 3, "N": 4, "K": 5, "stride_am": 6, "stride_bk": 8, "stride_cm": 10}
lost_divisibility = {name for name, i in _positions.items()
                     if _key_4000.specialization[i] != _base_key.specialization[i]}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex6_divisibility_specialization", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""recompiles_4000 / lost_divisibility: Triton's own key for 4096x4000x1000 against 4096^3 (16-divisibility)."""
from gemm_lab.grading import fresh
g = fresh()
_shape = (4096, 4000, 1000)
g.check_value("recompiles_4000", recompiles_4000,
              bool(g.compile_answers.cache_key(_shape).differences(g.compile_answers.cache_key((4096, 4096, 4096)))))
### BEGIN HIDDEN TESTS
g.check_choice("lost_divisibility", lost_divisibility, g.compile_answers.specialization_changes(_shape),
               hint="1000은 16으로 나누어떨어지지 않지만 4000은 나누어떨어집니다. 스트라이드는 K 또는 N입니다.")
### END HIDDEN TESTS

# %% [markdown]
# ## 6. GPU에서: 실행한 커널의 산출물 (GPU가 있을 때만)
#
# GPU가 있으면 같은 커널을 실제로 실행합니다. `kernel[grid](...)`이 돌려주는 `CompiledKernel`의 `.asm`에는 이 GPU용
# 산출물이, `.n_regs` / `.n_spills`에는 `ptxas`가 확정한 레지스터 수와 스필이 들어 있습니다(CUBIN 단계의 결정:
# 교차 컴파일에서는 얻을 수 없습니다).

# %%
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
elif runtime.on_gpu():
    M = N = K = 512
    a = torch.randn((M, K), device="cuda", dtype=torch.float16)
    b = torch.randn((K, N), device="cuda", dtype=torch.float16)
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)
    grid = (triton.cdiv(M, CONFIG.BLOCK_M) * triton.cdiv(N, CONFIG.BLOCK_N),)
    compiled = simple_matmul_kernel[grid](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_SIZE_M=CONFIG.BLOCK_M, BLOCK_SIZE_N=CONFIG.BLOCK_N, BLOCK_SIZE_K=CONFIG.BLOCK_K,
        num_warps=CONFIG.num_warps, num_stages=CONFIG.num_stages)
    torch.cuda.synchronize()
    arch = runtime.describe()["arch"]
    err = (c.float() - a.float() @ b.float()).abs().max().item()
    print(f"{runtime.describe()['device_name']} ({arch}): 최대 오차 {err:.4g}")
    print("asm 키:", list(compiled.asm.keys()))
    print(f"metadata.shared = {compiled.metadata.shared:,} B, num_warps = {compiled.metadata.num_warps}, "
          f"num_stages = {compiled.metadata.num_stages}, n_regs = {compiled.n_regs}, n_spills = {compiled.n_spills}")
    live = pipeline.marker_table({arch: compiled.asm}, ["tt.dot", "#mma", "local_alloc", "cp.async", "mma.sync",
                                                         "wgmma", "st.global"])
    display(live)
    fig = pipeline.draw_pipeline(compiled.asm, title=f"simple_matmul_kernel on this GPU ({arch})")
else:
    print("GPU가 없습니다: 위 2~5절의 교차 컴파일 결과가 이 GPU에서 얻을 산출물과 같은 내용입니다.")
    print("GPU에서는 여기서 실제 실행 결과와 n_regs / n_spills(레지스터 수, 스필)를 보여 줍니다.")

# %% [markdown]
# ## 연습 7. 왜 여러 단계로 나누어 내릴까? (2점, 서술)
#
# 이 노트북의 산출물을 근거로, Triton이 Python 커널을 한 번에 PTX로 바꾸지 않고 TTIR → TTGIR → LLIR로 나누어 내리는
# 이유를 설명하세요. TTIR과 TTGIR이 각각 **모르는 것/아는 것**을 하나씩 들고, 같은 TTIR에서 sm_80과 sm_90의 결과가
# 어디서부터 갈라지는지 적으세요.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex7_why_multilevel_ir", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# TTIR은 타일 전체를 하나의 값(`tensor<128x32xf16>`)으로 다루고 스레드·워프 배치와 메모리 계층을 모릅니다. 그래서
# 상수 폴딩·CSE 같은 최적화를 하드웨어와 무관하게 한 번만 할 수 있고, sm_80과 sm_90의 TTIR은 같습니다(`tt.dot`).
# TTGIR은 `num_warps`·타깃을 알고 레이아웃(`#blocked`, `#shared`, `#mma`)·파이프라인(`local_alloc`, 비동기 복사)·
# Tensor Core 명령(`mma v2` vs `warp_group_dot`)을 정합니다 — 여기서부터 타깃별로 갈라집니다. LLIR은 스레드 하나의
# 주소와 Shared Memory 오프셋을 정하고 LLVM의 일반 최적화를 재사용합니다. 단계를 나누면 결정마다 알맞은 추상화
# 수준에서 분석할 수 있고, 새 하드웨어는 아래 단계만 바꿔 붙일 수 있습니다.
# ### END SOLUTION

# %% [markdown]
# ## 7. Triton 논문(2019)의 패스와 오늘의 MLIR 파이프라인
#
# Triton 논문(Tillet, Kung, Cox, MAPL 2019)은 §4.2에서 Triton-IR의 **타일 단위 데이터 흐름 분석**(타일 모양을 아는 타입과
# `broadcast`/`reshape` 같은 명령, NumPy식 **broadcasting**)을, §5.1–5.2에서 컴파일러 패스를 설명합니다:
# 기계 독립 패스인 **pre-fetching**(루프 안의 읽기를 앞 반복으로 당겨 지연을 숨김)과 타일 단위 peephole 최적화,
# 기계 의존 패스인 **hierarchical tiling**(타일 → 워프 → 스레드로 나누기), **memory coalescing**(이웃 스레드가 이웃 주소를
# 읽도록 배치), **shared memory allocation**(버퍼의 수명을 분석해 오프셋 배정), **shared memory synchronization**(읽기/쓰기
# 사이에 배리어 삽입). §5.3은 auto-tuner입니다(오늘의 `@triton.autotune`). 논문은 이 분석과 패스들을 **Figure 4–7**(본문
# 4–7쪽)로 그려 보이니, 아래 표의 A~F를 읽을 때 그 그림들을 옆에 펴 두세요.
#
# **주의: 2019년의 Triton은 MLIR 이전의 자체 IR(Triton-IR → LLVM-IR)이었습니다.** 오늘의 Triton(3.x)은 같은 아이디어를 MLIR
# 방언(`tt` → `ttg` → LLVM)으로 다시 구현했으므로, 패스 이름과 위치가 논문과 정확히 일대일로 대응하지는 않습니다.
# 예를 들어 pre-fetching은 오늘 `num_stages` 소프트웨어 파이프라이닝(비동기 복사 + 여러 벌의 버퍼)이고, hierarchical tiling과
# coalescing은 TTGIR의 레이아웃 인코딩(`#blocked`의 `sizePerThread`/`threadsPerWarp`/`warpsPerCTA`)으로 표현됩니다.
# 아래 표는 각 패스의 흔적이 되는 표시를 sm_80 산출물에서 찾은 것입니다.

# %%
PAPER_MARKERS = {
    "A. 타일 단위 데이터 흐름 · broadcasting (§4.2)": "tt.broadcast",
    "B. pre-fetching (§5.1)": "async_copy_global_to_local",
    "C. hierarchical tiling (§5.2)": "warpsPerCTA",
    "D. memory coalescing (§5.2)": "sizePerThread",
    "E. shared memory allocation (§5.2)": "addrspace(3)",
    "F. shared memory synchronization (§5.2)": "barrier",
}
for name, marker in PAPER_MARKERS.items():
    hits = pipeline.find_lines(arts["sm_80"], marker, limit=1)
    where = {stage: " ".join(lines[0].split())[:70] for stage, lines in hits.items()}
    print(f"{name:42s} 표시 {marker!r}: 단계 {list(where)}")

# %% [markdown]
# ## 연습 8. 논문의 패스는 오늘 어느 단계에 처음 보이나 (2점)
#
# 위 표의 A~F 각각에 대해, 그 표시가 내 커널의 **sm_80** 산출물에서 **처음** 나타나는 단계를 `paper_stage = {"A": "ttir", ...}`
# 꼴로 적으세요(`"ttir"`, `"ttgir"`, `"llir"`, `"ptx"`). `pipeline.first_stage(arts["sm_80"], 표시)`로 확인할 수 있습니다.
# (E의 `addrspace(3)`은 LLVM에서 Shared Memory 주소 공간, F의 `barrier`는 배리어 명령입니다.)

# %% nbgrader={"grade": false, "grade_id": "ex8_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
paper_stage = {name[0]: pipeline.first_stage(arts["sm_80"], marker) for name, marker in PAPER_MARKERS.items()}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex8_paper_passes_to_stages", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""paper_stage maps the Triton paper's passes A-F to the first sm_80 stage that shows their marker."""
from gemm_lab.grading import fresh
g = fresh()
_markers = {"A": "tt.broadcast", "B": "async_copy_global_to_local", "C": "warpsPerCTA", "D": "sizePerThread",
            "E": "addrspace(3)", "F": "barrier"}
_found = g.compile_answers.first_stages("sm_80", g.calc.SEED_CONFIGS[1], list(_markers.values()))
_expected = {k: _found[m] for k, m in _markers.items()}
_aliases = {"llir": ["llvm ir", "llvm"]}
g.check_value("paper_stage (A~C)", {k: paper_stage.get(k) for k in "ABC"}, {k: _expected[k] for k in "ABC"},
              accept=_aliases)
### BEGIN HIDDEN TESTS
g.check_value("paper_stage", {k: paper_stage.get(k) for k in _expected}, _expected, accept=_aliases)
### END HIDDEN TESTS

# %% [markdown]
# ## 8. 8주차로: 다른 가속기라면? (3점, 서술, 수동 채점)
#
# 참고자료 10절의 질문으로 7주차를 마무리합니다. 이 노트북에서 본 산출물을 근거로 답하세요.
#
# 1. 왜 Triton은 **Python DSL + 여러 단계의 MLIR 컴파일러**라는 구조를 택했을까요? (한 번에 CUDA/PTX로 바꾸는 것과 비교)
# 2. GPU가 아닌 새 AI 가속기(8주차: HyperAccel의 LPU와 그 언어·컴파일러 스택 Legato)를 위한 백엔드를 만든다면, **타일링**(BLOCK_M/N/K, 워프 배치), **데이터 이동**(글로벌 → Shared Memory, `cp.async`/TMA), **파이프라이닝**
#    (`num_stages`)은 각각 어느 단계에서 무엇으로 바뀌어야 할까요? TTIR은 그대로 쓸 수 있을까요?

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex9_week8_bridge", "locked": false, "points": 3, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 1. Python DSL은 타일 단위 프로그램(포인터 블록, `tl.dot`, 마스크)만 쓰게 해 스레드·메모리 계층의 세부를 숨기고, 다단계
#    MLIR은 결정을 알맞은 추상화에 나눕니다: TTIR(하드웨어 무관 최적화), TTGIR(레이아웃·파이프라인·명령 선택), LLVM(주소·
#    레지스터). 그래서 sm_80과 sm_90이 같은 TTIR에서 갈라지고, 새 하드웨어는 아래 단계만 새로 붙이면 됩니다.
# 2. TTIR(타일 연산과 데이터 흐름)은 그대로 쓸 수 있습니다. 타일링은 TTGIR의 레이아웃 인코딩을 그 가속기의 처리 단위(행렬
#    장치의 모양, 코어·레인 수)에 맞게 새로 정의해야 하고, 데이터 이동은 `cp.async`/TMA 대신 그 가속기의 메모리 계층에 맞는
#    복사(예: DMA) 명령으로 내리는 변환이 필요하며, 파이프라이닝은 같은 소프트웨어 파이프라인 아이디어를 그 복사의 비동기
#    완료 대기와 온칩 메모리 용량(버퍼 수 × 타일 크기)에 맞춰 쓰면 됩니다. LLVM 이하(또는 그 가속기의 자체 코드 생성기)는 백엔드가
#    담당합니다.
# ### END SOLUTION

# %% [markdown]
# ## 정리
#
# * **AST**: 인자 자료형과 `tl.constexpr`가 고정됩니다 → 이것과 정렬·옵션·타깃이 **jit 캐시 키**입니다.
# * **TTIR**: `tt.load` / `tt.dot` / `tt.store`가 타일 단위로 — 하드웨어를 모릅니다(sm_80과 sm_90이 같음).
# * **TTGIR**: `#blocked`·`#shared`·`#mma`·`#dot_op` 레이아웃, `local_alloc` + 비동기 복사 파이프라인, Tensor Core 명령 선택 —
#   타깃별로 갈라지는 곳입니다(`mma v2` vs `warp_group_dot`, sm_75는 FMA).
# * **LLIR**: Shared Memory 바이트 수(`metadata["shared"]`)와 오프셋; Triton은 많은 PTX 명령을 여기서 인라인 어셈블리로 넣습니다.
# * **PTX**: `cp.async`(또는 TMA의 `cp.async.bulk.tensor`, 정렬이 없으면 `ld.global`), `ldmatrix`, `mma.sync` / `wgmma`, `st.global`.
# * **CUBIN**: `ptxas`가 레지스터 수와 스필을 확정합니다(GPU에서 실행해야 보입니다).
#
# **핵심 용어 3개:** 낮추기(Lowering, AST → TTIR → TTGIR → LLIR → PTX → CUBIN), 레이아웃 인코딩(Layout Encoding:
# `#blocked`, `#shared`, `#mma`, `#dot_op`), 교차 컴파일(Cross-compile, `GPUTarget`으로 GPU 없이 타깃 지정)
#
# 다음 노트북(⑤)에서는 이 산출물을 파일로 덤프하고(`TRITON_KERNEL_DUMP`, `TRITON_CACHE_DIR`), 행렬곱을 TFLOP/s로 재는
# 이유와 FP16 결과를 올바르게 검사하는 법을 다룹니다.
