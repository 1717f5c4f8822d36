# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 7주차 ③ 타일 설정, Roofline, 오토튜닝(@triton.autotune)
#
# > 타일 크기와 파이프라인 설정은 어떻게 고를까?
#
# `BLOCK_SIZE_M/N/K`, `GROUP_SIZE_M` 같은 타일 크기와 `num_warps`, `num_stages` 같은 컴파일 옵션은 하나로
# 고정하지 않고 `triton.Config` 후보 목록으로 줍니다. 이 노트북에서는 Tutorial 03의 세 후보를 M = N = K = 4096에서
# 계산으로 비교하고(HBM 이동량, 산술 강도, Shared Memory), 교과서 공식과 **컴파일러가 실제로 잡는 Shared Memory**를
# 나란히 놓아 봅니다.
#
# ## 이번 노트북에서 배우는 것
# 1. 세 후보의 그리드, K 루프 횟수, 입력 버퍼, 누산기, HBM 이동량 Q, 산술 강도 I, 이상적 실행시간 (표를 직접 채움)
# 2. Roofline 그림 위의 세 후보
# 3. Shared Memory 한계와 `OutOfResources`: 64 KiB / 164 KiB 장치 (연습문제 2.2–2.3)
# 4. 교과서 공식(`num_stages × 1단계`)과 컴파일러의 `metadata.shared`(sm_75/80/90 교차 컴파일)의 차이
# 5. `num_warps`와 `num_stages`가 바꾸는 것
# 6. 오토튜닝 키(key)가 다시 벤치마크하는 때와 `@triton.jit` 캐시가 다시 컴파일하는 때 (연습문제 3)
# 7. 타일·웨이브 양자화: 비영속(non-persistent) 커널에서 SM이 노는 마지막 웨이브 (연습문제 4)
#
# ## GPU가 필요한 부분
# 7절의 **실제 오토튜닝 실행**과 **실제 `OutOfResources` 메시지**만 GPU가 필요합니다. GPU가 없으면 같은 커널을
# CPU에서 교차 컴파일(cross-compile)해 컴파일러가 잡는 Shared Memory와 장치 한계를 비교해 보여 줍니다.
# 나머지는 계산이라 어디서나 돌아갑니다. 커밋된 H200 측정은 모두 **triton 3.6.0**(torch 2.11.0+cu130)으로 잰 것으로, 이 과정이 고정한 triton 3.7.1(`pyproject.toml`)과 버전이 다릅니다: 표와 출력 줄의 `triton` 값이 잰 버전입니다.
#
# 점수: 표 (8점) + 연습문제 2.2–2.3 (5점) + 2.3 앞부분 `OutOfResources` 처리 (2점) + 연습문제 3 (8점) + 설명 (2점)
# + 연습문제 4 타일·웨이브 양자화 (3점) = 28점.
#
# **단위:** 1 KiB = 1024 B, 1 MiB = 1024 KiB, 1 GB = 10⁹ B, 1 TB = 10¹² B (Shared Memory 한계는 KiB, HBM 대역폭은
# GB/s·TB/s로 적습니다). TFLOP/s = 10¹² FLOP/s.
#
# ## 읽을거리
# * Triton Tutorial 03 — Matrix Multiplication (Final Result, Benchmark):
#   <https://triton-lang.org/main/getting-started/tutorials/03-matrix-multiplication.html>
# * API: `triton.autotune` <https://triton-lang.org/main/python-api/generated/triton.autotune.html>,
#   `triton.Config` <https://triton-lang.org/main/python-api/generated/triton.Config.html>,
#   `tl.dot` <https://triton-lang.org/main/python-api/generated/triton.language.dot.html>,
#   `triton.testing.do_bench` <https://triton-lang.org/main/python-api/generated/triton.testing.do_bench.html>
# * Modern GPU Programming for MLSys — What Makes a Kernel Fast (GEMM, The Optimization Ladder, Reducing Idle Time
#   Through Overlap, Occupancy and Resource Pressure 절; 예시 수치는 B200의 것):
#   <https://mlc.ai/modern-gpu-programming-for-mlsys/chapter_performance/index.html>
# * Triton GitHub: `autotuner.py`(`Autotuner._bench`가 `OutOfResources`를 잡아 후보를 `inf`로 탈락시키는 부분, 3절):
#   <https://github.com/triton-lang/triton/blob/main/python/triton/runtime/autotuner.py>
# * NVIDIA Matrix Multiplication Background — §2 Math and Memory Bounds, §3 Dimension Quantization Effects
#   (타일·웨이브 양자화): <https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html>
# * CUDA C++ Programming Guide — Compute Capabilities (SM당·블록당 Shared Memory 한계):
#   <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#compute-capabilities>
# * Triton 논문 (MAPL 2019) §5 (프리페칭, Shared Memory 할당): <https://doi.org/10.1145/3315508.3329973>
# * Triton Programming Guide, Chapter 1: <https://triton-lang.org/main/programming-guide/chapter-1/introduction.html>
# * MLIR 개요: <https://mlir.llvm.org/>

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false, "task": false}
from gemm_lab import runtime  # triton보다 먼저: GPU가 없으면 해석기를 켭니다

import pandas as pd
from IPython.display import display

from gemm_lab import calc
from gemm_lab.runtime import grading_mode
from gemm_lab.viz import roofline as viz_roofline
from gemm_lab.viz import waves as viz_waves

M = N = K = 4096
CONFIGS = calc.SEED_CONFIGS
pd.DataFrame([{"후보": c.name, "BLOCK_M": c.BLOCK_M, "BLOCK_N": c.BLOCK_N, "BLOCK_K": c.BLOCK_K,
               "num_stages": c.num_stages, "num_warps": c.num_warps} for c in CONFIGS]).set_index("후보")

# %% [markdown]
# ## 1. 계산 모델
#
# 가상 하드웨어: FP16 입력·FP32 누산 행렬 연산 **P = 80 TFLOP/s**, HBM 대역폭 **BW = 1 TB/s**
# (분기점 I_ridge = P / BW = 80 FLOP/Byte). 입력·출력은 FP16(2 Byte), 누산기는 FP32(4 Byte). 출력 타일 사이의
# L2 재사용은 없다고 가정합니다 (그래서 이 Q는 HBM 이동량의 상한입니다).
#
# ```text
# 총 연산량 F           = 2 × M × N × K
# 프로그램 수 grid      = (M / BM) × (N / BN)
# 프로그램당 K 단계 수  = K / BK
# 1단계 A·B 입력 크기   = 2 Byte × (BM × BK + BK × BN)
# 파이프라인 입력 버퍼  = num_stages × 1단계 크기                (교과서의 Shared Memory)
# FP32 누산기 크기      = 4 Byte × BM × BN                      (레지스터)
# Q_read  = grid × (K / BK) × 1단계 크기 = 2MNK(1/BN + 1/BM)
# Q_write = 2 × M × N
# Q = Q_read + Q_write,  I = F / Q,  T_memory = Q / BW,  T_compute = F / P
# T_ideal = max(T_memory, T_compute),  I < 80 이면 대역폭 병목(memory), 아니면 연산 병목(compute)
# ```
#
# `Q_read`에서 BK가 약분되어 사라집니다: **HBM 산술 강도는 출력 타일의 두 변 BM, BN이 정하고**, BK와
# num_stages는 온칩 버퍼 크기와 K 루프 횟수를 바꿉니다.

# %% [markdown]
# ---
# # 문제 A — 세 후보의 비교표 (8점)
#
# M = N = K = 4096에서 세 후보의 값을 계산해 `table`에 채우세요. 행은 `"후보 1"`, `"후보 2"`, `"후보 3"`, 열은
# 아래 이름을 씁니다. pandas DataFrame(행 이름을 index로), 열 딕셔너리(`{"grid": [..., ..., ...], ...}`), 행
# 딕셔너리(`{"후보 1": {...}, ...}`) 중 편한 형태로 주면 됩니다. 단위: Byte, FLOP/Byte, ms.
#
# | 열 | 뜻 |
# | --- | --- |
# | `grid`, `k_steps` | 프로그램 수, 프로그램당 K 루프 횟수 |
# | `stage_bytes`, `pipeline_bytes`, `acc_bytes` | 1단계 A+B 입력, num_stages 반영 입력 버퍼, FP32 누산기 (Byte) |
# | `q_read`, `q_total` | HBM 입력 읽기, 총 이동량 Q (Byte) |
# | `intensity`, `t_ideal_ms` | 산술 강도 I (소수 둘째 자리까지), 이상적 실행시간 (ms, 소수 둘째 자리까지) |
# | `bound` | `"memory"`(대역폭 병목) 또는 `"compute"`(연산 병목) |

# %% nbgrader={"grade": false, "grade_id": "table_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
def _row(BM, BN, BK, stages):
    F = 2 * M * N * K
    grid = (M // BM) * (N // BN)
    stage = 2 * (BM * BK + BK * BN)
    q_read = grid * (K // BK) * stage
    q_total = q_read + 2 * M * N
    t_mem, t_comp = q_total / 1e12 * 1e3, F / 80e12 * 1e3
    return {"grid": grid, "k_steps": K // BK, "stage_bytes": stage, "pipeline_bytes": stages * stage,
            "acc_bytes": 4 * BM * BN, "q_read": q_read, "q_total": q_total, "intensity": F / q_total,
            "t_ideal_ms": max(t_mem, t_comp), "bound": "compute" if t_comp >= t_mem else "memory"}


table = pd.DataFrame({"후보 1": _row(64, 32, 32, 5), "후보 2": _row(128, 128, 32, 4),
                      "후보 3": _row(128, 256, 64, 3)}).T
### END SOLUTION
table

# %% nbgrader={"grade": true, "grade_id": "table_grid_k_steps", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""Table A: grid and k_steps of the three configs at 4096^3."""
from gemm_lab.grading import fresh
g = fresh()
_exp = g.calc.roofline_table(4096, 4096, 4096, g.calc.SEED_CONFIGS)
g.check_table("table (grid, k_steps)", table, _exp[["grid", "k_steps"]])

# %% nbgrader={"grade": true, "grade_id": "table_onchip_bytes", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""Table A: one-stage input bytes, pipeline buffer bytes and FP32 accumulator bytes."""
from gemm_lab.grading import fresh
g = fresh()
_exp = g.calc.roofline_table(4096, 4096, 4096, g.calc.SEED_CONFIGS)
g.check_table("table (stage_bytes, pipeline_bytes)", table, _exp[["stage_bytes", "pipeline_bytes"]])
### BEGIN HIDDEN TESTS
g.check_table("table (acc_bytes)", table, _exp[["acc_bytes"]])
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "table_hbm_traffic_intensity", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""Table A: HBM read bytes, total traffic Q and arithmetic intensity I (2 decimals)."""
from gemm_lab.grading import fresh
g = fresh()
_exp = g.calc.roofline_table(4096, 4096, 4096, g.calc.SEED_CONFIGS)
g.check_table("table (q_read, q_total)", table, _exp[["q_read", "q_total"]])
g.check_table("table (intensity)", table, _exp[["intensity"]], digits=2)

# %% nbgrader={"grade": true, "grade_id": "table_t_ideal_bound", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""Table A: ideal time (ms, 2 decimals) and the bound (memory / compute)."""
from gemm_lab.grading import fresh
g = fresh()
_exp = g.calc.roofline_table(4096, 4096, 4096, g.calc.SEED_CONFIGS)
g.check_table("table (t_ideal_ms)", table, _exp[["t_ideal_ms"]], digits=2)
### BEGIN HIDDEN TESTS
_aliases = {"memory": ["메모리", "대역폭", "HBM", "HBM 대역폭", "memory-bound", "memory bound", "bandwidth"],
            "compute": ["연산", "연산 처리율", "compute-bound", "compute bound"]}
g.check_table("table (bound)", table, _exp[["bound"]], accept={"bound": _aliases})
### END HIDDEN TESTS

# %% [markdown]
# ## 2. Roofline 위의 세 후보
#
# 계산기(`gemm_lab.calc.roofline_table`)의 값을 그대로 그립니다. 타일을 키우면 HBM 이동량이 줄어 산술 강도가
# 오른쪽으로 이동하고, 후보 3(128×256)은 분기점(80 FLOP/Byte) 오른쪽, 연산 병목 구간에 들어갑니다.
# (② 노트북의 L2 그룹핑 재사용까지 더해지면 실제 유효 산술 강도는 더 높아집니다.)

# %%
roof = calc.roofline_table(M, N, K, CONFIGS)
display(roof[["grid", "k_steps", "pipeline_bytes", "acc_bytes", "q_total", "intensity", "roof_tflops",
              "t_memory_ms", "t_ideal_ms", "bound"]])
fig = viz_roofline.roofline_figure(roof, calc.VIRTUAL_DEVICE,
                                   title="4096^3 FP16 on the virtual device (config N = candidate N)")

# %% [markdown]
# ## 3. Shared Memory 한계와 `OutOfResources`
#
# `num_stages`는 지연시간을 숨기지만 Shared Memory 요구량을 `num_stages`배로 늘립니다: `num_stages = 3`인
# 후보 3은 단계 k의 타일을 계산하는 동안 k+1, k+2의 타일을 미리 비동기로 읽어 오기 위해 **3단계치 버퍼**를
# 잡습니다. Triton 런타임은 커널을 실행하기 직전 `shared > max_shared`이면 `OutOfResources` 예외를 내고,
# `@triton.autotune`은 이 예외를 잡아 그 후보를 탈락시킵니다(측정 시간을 `inf`로 처리).
#
# ---
# # 연습문제 2.2–2.3 — Shared Memory 한계 판정 (5점)
#
# 프로그램(CTA) 하나가 쓸 수 있는 최대 Shared Memory가 **장치 가 = 64 KiB**, **장치 나 = 164 KiB**입니다.
# 교과서 공식(파이프라인 입력 버퍼 = `num_stages × 1단계 A·B`) 기준으로 답하세요.
#
# * 2.2 장치 가에서 실행 가능한 후보 번호들을 `fits_64`에, 장치 나에서 실행 가능한 후보 번호들을 `fits_164`에
#   집합이나 리스트로 적으세요 (예: `{1, 3}`). (2점)
# * 2.3 장치 가에서 통과한 후보 가운데 산술 강도가 가장 큰 후보 번호 `best_candidate`, 그 산술 강도
#   `best_intensity`(FLOP/Byte, **소수 넷째 자리까지**), 가상 하드웨어 기준 이상적 실행시간 `best_t_ideal_ms`
#   (ms, **소수 넷째 자리까지**)를 구하세요. (3점)

# %% nbgrader={"grade": false, "grade_id": "ex2_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
limit_64, limit_164 = 64 * 1024, 164 * 1024
need = {1: 5 * 2 * (64 * 32 + 32 * 32), 2: 4 * 2 * (128 * 32 + 32 * 128), 3: 3 * 2 * (128 * 64 + 64 * 256)}
fits_64 = {i for i, b in need.items() if b <= limit_64}
fits_164 = {i for i, b in need.items() if b <= limit_164}
best_candidate = 2
best_intensity = 2 * 4096**3 / (2 * 4096**3 * (1 / 128 + 1 / 128) + 2 * 4096**2)
best_t_ideal_ms = (2 * 4096**3 * (1 / 128 + 1 / 128) + 2 * 4096**2) / 1e12 * 1e3
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex2_2_fitting_configs", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""2.2: which configs fit 64 KiB and 164 KiB of shared memory per block (textbook rule)."""
from gemm_lab.grading import fresh
g = fresh()


def _fitting(limit):
    verdicts = g.calc.smem_verdicts(g.calc.SEED_CONFIGS, limit)
    return {i + 1 for i, ok in enumerate(verdicts["fits"]) if ok}


g.check_choice("fits_64", fits_64, _fitting(64 * 1024))
### BEGIN HIDDEN TESTS
g.check_choice("fits_164", fits_164, _fitting(164 * 1024))
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex2_3_best_fitting_candidate", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""2.3: the best config that fits 64 KiB, its intensity (4 digits) and ideal time (ms, 4 digits)."""
from gemm_lab.grading import fresh
g = fresh()
_configs = g.calc.SEED_CONFIGS
_best = g.calc.best_fitting(4096, 4096, 4096, _configs, 64 * 1024)
g.check_value("best_candidate", best_candidate, [c.label for c in _configs].index(_best.name) + 1)
g.check_value("best_intensity", best_intensity, _best.intensity, digits=4)
### BEGIN HIDDEN TESTS
g.check_value("best_t_ideal_ms", best_t_ideal_ms, _best.t_ideal_ms, digits=4)
### END HIDDEN TESTS

# %% [markdown]
# ### 2.3 앞부분 — 오토튜너는 후보 3을 어떻게 처리할까? (2점)
#
# 장치 가(블록당 64 KiB)에서 세 후보를 `@triton.autotune(configs=[후보 1, 후보 2, 후보 3], key=['M', 'N', 'K'])`로
# 줍니다. 교과서 공식으로 후보 3은 144 KiB가 필요합니다. 아래 문장 중 **맞는 것의 번호만** 집합으로
# `oor_statements`에 적으세요 (예: `{1, 4}`). 바로 아래의 공개 테스트(0점)는 몇 개가 틀렸는지만 알려 주고, 점수는 숨은
# 테스트가 매깁니다. 답한 뒤에는 아래에서 설치된 Triton의 소스로 직접 확인합니다.
#
# 1. 후보 3은 컴파일 단계(TTIR → … → CUBIN)에서 오류가 나고, 예외가 사용자 코드까지 올라와 프로그램이 멈춘다.
# 2. 후보 3도 컴파일은 끝난다. 커널을 GPU에 올리는 첫 실행 직전(`CompiledKernel._init_handles`)에
#    `metadata.shared > 장치의 max_shared`를 확인해 `OutOfResources` 예외를 낸다.
# 3. `Autotuner._bench`는 `OutOfResources`를 잡아 그 후보의 측정 시간을 `inf`로 기록하므로, 후보 3은 최적 Config로
#    뽑히지 않고 탐색은 계속된다.
# 4. 오토튜너는 후보 3의 `num_stages`를 스스로 줄여 한계 안에 들어올 때까지 다시 시도한다.
# 5. 같은 key로 다시 호출하면 오토튜너는 후보 3을 다시 벤치마크한다.

# %% nbgrader={"grade": false, "grade_id": "ex2_3_oor_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
# oor_statements = {...}
### BEGIN SOLUTION
oor_statements = {2, 3}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex2_3_oor_statements_visible", "locked": true, "points": 0, "schema_version": 3, "solution": false, "task": false}
"""2.3 (first half), visible feedback without points: oor_statements against gemm_lab.calc's key."""
from gemm_lab.grading import fresh
g = fresh()
g.check_choice("oor_statements", oor_statements, g.calc.oor_true_statements())

# %% nbgrader={"grade": true, "grade_id": "ex2_3_out_of_resources_handling", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""2.3 (first half): candidate 3 raises OutOfResources in _init_handles and Autotuner._bench records inf."""
from gemm_lab.grading import fresh
g = fresh()
### BEGIN HIDDEN TESTS
g.check_choice("oor_statements", oor_statements, {2, 3})
### END HIDDEN TESTS

# %% [markdown]
# 설치된 Triton의 소스에서 직접 확인해 봅시다 (GPU가 없어도 소스는 읽을 수 있습니다). 첫 번째는 컴파일된 커널을 올리는
# `CompiledKernel._init_handles`의 검사, 두 번째는 예외를 잡아 `inf`를 돌려주는 `Autotuner._bench`입니다.

# %%
import inspect

import triton
from triton.compiler.compiler import CompiledKernel
from triton.runtime.autotuner import Autotuner


def source_lines(fn, *needles, context=1):
    """The lines of fn's source that contain any needle, with `context` lines after each."""
    lines = inspect.getsource(fn).splitlines()
    keep = sorted({j for i, line in enumerate(lines) if any(n in line for n in needles)
                   for j in range(i, min(i + context + 1, len(lines)))})
    return "\n".join(lines[j] for j in keep)


print(f"triton {triton.__version__}")
print("[CompiledKernel._init_handles]")
print(source_lines(CompiledKernel._init_handles, "max_shared_mem(", "self.metadata.shared >"))
print("[Autotuner._bench]")
print(source_lines(Autotuner._bench, "except (OutOfResources", "float(\"inf\")", context=0))

# %% [markdown]
# > **SM당 용량과 블록당 한계는 다른 숫자입니다.** 참고자료 5.3절은 후보 3의 144 KiB가 "A100(SM당 최대 164 KiB)이나
# > H100(최대 228 KiB)"에 들어간다고 씁니다. 이 164 KiB·228 KiB는 **SM 하나**의 Shared Memory 용량(L1 캐시와 나눠 쓰는
# > carve-out의 최댓값)입니다. `OutOfResources`가 `metadata.shared`와 비교하는 것은 **블록(CTA) 하나**가 쓸 수 있는 한계
# > (Triton의 `max_shared_mem`이 읽는 드라이버 속성 `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`)이고, CUDA가 블록마다 1 KiB를
# > 시스템용으로 떼어 두므로 SM당 용량보다 1 KiB 작습니다(CUDA C++ Programming Guide, Compute Capabilities). 이 과정의
# > `calc.get_device(...).smem_per_block_optin`은 이 블록당 한계입니다(아래 셀). 후보 3은 어느 쪽으로 보아도 들어가지만,
# > 한계에 걸친 설정은 블록당 한계로 판정해야 합니다.

# %%
for key in ("a100", "h100", "h200"):
    dev = calc.get_device(key)
    print(f"{dev.name} ({dev.arch}): 블록당 Shared Memory 한계 {dev.smem_per_block_optin:,} B "
          f"= {dev.smem_per_block_optin / 1024:g} KiB")

# %% [markdown]
# ## 4. 교과서 공식 vs 컴파일러: 실제로 잡히는 Shared Memory
#
# 위 답은 교과서 공식으로 채점합니다. 그런데 Triton 컴파일러가 실제로 잡는 Shared Memory(`metadata.shared`)는
# 아키텍처마다 다릅니다. GPU 없이도 `triton.compile`에 타깃(`GPUTarget`)을 주면 **교차 컴파일**로 알 수 있습니다.
# 아래 표는 같은 Tutorial 03 커널을 sm_75(T4), sm_80(A100), sm_90(H100/H200)으로 지금 이 자리에서 컴파일한
# 결과와, 그 결과를 설명하는 규칙(`gemm_lab.calc.compiler_smem`)을 나란히 놓습니다. PTX에서 Tensor Core 명령(`mma`,
# `wgmma`)과 FP32 `fma` 명령의 줄 수도 셉니다. (교차 컴파일 9번이라 CPU에서 수십 초 걸릴 수 있습니다.)

# %%
from gemm_lab import compile as gl_compile

TARGETS = ("sm_75", "sm_80", "sm_90")
smem_table = None
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
else:
    rows, ptx_rows = [], []
    for cfg in CONFIGS:
        row = {"config": cfg.name, "교과서 (S × 1단계)": calc.textbook_smem(cfg)}
        for target in TARGETS:
            art = gl_compile.compile_artifacts("matmul", config=cfg, target=target)
            row[f"{target} 컴파일러"] = art.metadata["shared"]
            row[f"{target} 규칙"] = calc.compiler_smem(cfg, target)
            ptx_lines = art.ptx.splitlines()
            ptx_rows.append({"config": cfg.name, "target": target,
                             "mma/wgmma 줄": sum(("mma." in ln) and not ln.lstrip().startswith("//") for ln in ptx_lines),
                             "fma 줄": sum(ln.lstrip().startswith("fma.") for ln in ptx_lines)})
        rows.append(row)
    smem_table = pd.DataFrame(rows).set_index("config")
    print(f"triton {triton.__version__}에서 교차 컴파일:")
    display(smem_table)
    display(pd.DataFrame(ptx_rows).pivot(index="config", columns="target"))

# %%
if smem_table is not None:
    rule_matches = all(smem_table[f"{t} 컴파일러"].equals(smem_table[f"{t} 규칙"]) for t in TARGETS)
    print("규칙(calc.compiler_smem)이 방금 컴파일한 값과", "✅ 모두 같습니다" if rule_matches else "❌ 다릅니다")
    limits = {"T4 (sm_75)": calc.get_device("colab-t4").smem_per_block_optin,
              "device B (164 KiB)": 164 * 1024,
              "H200 (sm_90)": calc.get_device("h200").smem_per_block_optin}
    bars = smem_table[["교과서 (S × 1단계)"] + [f"{t} 컴파일러" for t in TARGETS]]
    bars.columns = ["textbook"] + [f"{t} compiler" for t in TARGETS]
    fig = viz_roofline.smem_figure(bars, limits, title="shared memory per block: textbook vs triton (cross-compiled)")

# %% [markdown]
# 표에서 읽을 것:
#
# * **sm_90, num_warps ≥ 4 (wgmma 경로)**: 버퍼 수 = `num_stages` → 교과서 공식과 정확히 같습니다.
# * **sm_80과, 2-warp 설정인 후보 1 (mma.sync 경로)**: 버퍼 수 = `num_stages − 1`. 파이프라인은 S−1개 타일을 미리
#   요청해 두고 현재 타일을 계산하므로 교과서보다 한 단계 적습니다.
# * **sm_75 (T4)**: triton 3.6.0, 3.7.1, 3.8.0, 3.9.0으로 sm_75용으로 컴파일한 PTX에는 `fma` 명령만 있고 `mma`가 없습니다(위 표의
#   줄 수는 지금 설치된 버전에서 직접 센 값입니다). 즉 T4에서 `tl.dot`은 Tensor Core가 아니라 FP32 FMA로 계산되고,
#   파이프라이닝(cp.async)도 없어 `num_stages`와 무관하게 버퍼를 하나만 잡습니다. 그 버퍼는 작다고 할 수 없습니다: 크기가
#   `4 × max(BM·BK, BK·BN)` B(`calc.compiler_smem`의 sm_75 규칙)로 타일을 따라 커지므로, 타일이 큰 후보 3에서는 이
#   버퍼 하나가 T4의 블록당 한계만큼 큽니다(아래 셀). (triton 3.3.1은 sm_75용 `tl.dot`을
#   컴파일하지 못했습니다. 그 사이 어느 버전에서 바뀌었는지는 이 과정에서 확인하지 않았습니다.)
# * 그 결과, 원래 참고자료의 "후보 3은 T4에 들어가지 않는다"는 답(교과서 공식)과 달리, triton 3.7.1로 컴파일한 후보 3은 T4에서
#   **한계와 정확히 같은** Shared Memory를 씁니다(아래 셀). Triton은 `shared > 한계`일 때만 실패하므로 **실제로는
#   들어갑니다** (`calc.fits`). 채점은 교과서 모델로 하고, 컴파일러의 답은 이렇게 옆에 둡니다.

# %%
if smem_table is not None:
    t4_limit = calc.get_device("colab-t4").smem_per_block_optin
    cand3 = CONFIGS[2]
    t4_shared = smem_table.loc[cand3.name, "sm_75 컴파일러"]
    print(f"후보 3, T4 한계 {t4_limit:,} B: 교과서 {calc.textbook_smem(cand3):,} B → "
          f"{'들어감' if calc.fits(calc.textbook_smem(cand3), t4_limit) else 'OutOfResources'}; "
          f"컴파일러(sm_75) {t4_shared:,} B → {'들어감' if calc.fits(int(t4_shared), t4_limit) else 'OutOfResources'}")

# %% [markdown]
# ### T4의 64 KiB 판정을 H200에서 실제로 돌려 보기 (`results/t4_limit_h200.csv`)
#
# T4가 없어도 Triton이 판정하는 그 자리(3절의 `CompiledKernel._init_handles`)는 실제로 실행해 볼 수 있습니다.
# `gemm_lab.device_limits.emulate_device_shared_memory("colab-t4")`는 `with` 블록 안에서 `_init_handles`가 장치의
# 블록당 한계를 읽는 함수(`triton.compiler.compiler.max_shared_mem`)를 T4의 한계
# (`calc.get_device("colab-t4").smem_per_block_optin`)를 돌려주는 함수로 잠시 바꾸고, 블록을 나오면 되돌립니다.
# `make bench`(`python -m gemm_lab.bench --only t4limit`)는 H200에서 이 한계 아래 세 후보와 7절의 256×256×64
# `num_stages=4` 설정을 (1) 하나씩 직접 실행하고(`직접 실행`: 실행됨 또는 `OutOfResources`와 메시지 첫 줄) (2) 하나의
# `@triton.autotune`에 함께 넣어 4096³ FP16에서 오토튜너의 측정 시간(`오토튜너 (ms)`, 탈락하면 `inf`)과 고른 설정을
# 기록했습니다. 이미 올라간 커널은 다시 검사하지 않으므로 매번 **새 JITFunction**으로 실행했습니다.
#
# 이 표가 보여 주는 것: Triton은 컴파일을 모두 끝낸 뒤 **올리는 순간** `metadata.shared > 한계`를 검사하고, 그 예외를
# 오토튜너가 잡아 `inf`로 기록한 뒤 나머지 후보 중에서 고른다는 것을, 설치된 Triton의 코드 그대로 실행해 확인합니다.
#
# 이 표가 보여 주지 **못하는** 것: 커널은 여전히 **H200(sm_90)용으로** 컴파일됩니다. 그래서 판정에 쓰인
# `metadata.shared`(`GPU 빌드 (B)`)는 sm_90의 값(wgmma 경로: `num_stages`개 버퍼)이지, T4(sm_75)용 빌드의 값이
# 아닙니다. 위에서 본 것처럼 sm_75에서는 cp.async 파이프라이닝·TMA·Tensor Core 경로가 없어 버퍼 하나만 쓰므로,
# 실제 T4의 판정은 `sm_75 판정` 열(위 4절의 교차 컴파일)에 가깝습니다: 두 열이 다른 설정은 "H200에 T4 한계를
# 씌운 것"과 "진짜 T4"가 다르게 답하는 경우입니다. 레지스터·SM 수·대역폭도 H200의 것이라, 시간은 T4의 시간이 아닙니다.

# %%
from gemm_lab.results_autotune import measured_t4_limit

t4_runs = measured_t4_limit()
if t4_runs is None:
    print("results/t4_limit_h200.csv가 없어 H200에서의 T4 한계 실행 결과는 보여 주지 않습니다 "
          "(GPU에서 `python -m gemm_lab.bench --only t4limit`을 실행하면 생깁니다).")
else:
    first = t4_runs.iloc[0]
    print(f"{first['gpu']} (compute capability {first['compute_capability']}, triton {first['triton']}, "
          f"{first['date']}): 블록당 한계를 {int(first['real_limit']):,} B 대신 {int(first['emulated_limit']):,} B"
          f"({first['emulated_device']})로 흉내 내고 {first['M']}×{first['N']}×{first['K']} {first['dtype']}에서 실행; "
          f"커널은 이 GPU용({first['launched_arch']})으로 컴파일됨")
    candidate = {(c.BLOCK_M, c.BLOCK_N, c.BLOCK_K, c.num_stages, c.num_warps): c.name for c in CONFIGS}
    t4_runs["config"] = [f"{candidate.get((r.BLOCK_M, r.BLOCK_N, r.BLOCK_K, r.num_stages, r.num_warps), '7절 BIG')} "
                         f"({r.config})" for r in t4_runs.itertuples()]
    t4_table = t4_runs.set_index("config")[["textbook_shared", "sm75_shared", "sm75_verdict", "launched_shared",
                                             "direct", "direct_error", "autotune_ms", "autotune_chosen"]]
    differ = t4_table[(t4_table["direct"] == "OutOfResources") != (t4_table["sm75_verdict"] == "OutOfResources")]
    display(t4_table.replace({"direct": {"ran": "실행됨"}, "sm75_verdict": {"fits": "들어감"}}).rename(columns={
        "textbook_shared": "교과서 (B)", "sm75_shared": "sm_75 빌드 (B)", "sm75_verdict": "sm_75 판정",
        "launched_shared": "GPU 빌드 (B)", "direct": "직접 실행",
        "direct_error": "메시지 첫 줄", "autotune_ms": "오토튜너 (ms)", "autotune_chosen": "오토튜너의 선택"}))
    dropped = list(t4_table.index[t4_table["autotune_ms"] == float("inf")])
    print("오토튜너가 inf로 탈락시킨 설정:", ", ".join(dropped) if dropped else "없음")
    print("오토튜너가 고른 설정:", ", ".join(t4_table.index[t4_table["autotune_chosen"]]))
    print(f"{first['gpu']}에 T4 한계를 씌운 판정과 sm_75 빌드의 판정이 다른 설정:",
          ", ".join(differ.index) if len(differ) else "없음")

# %% [markdown]
# ## 5. `num_warps`와 `num_stages`가 바꾸는 것
#
# * `num_warps`(프로그램당 워프 수, 1 워프 = 32 스레드)는 **한 출력 타일을 몇 개의 스레드가 나눠 계산하는가**를
#   정합니다. 누산기(`4 × BM × BN` Byte)는 레지스터에 나뉘어 살므로, 스레드당 누산기 원소 수
#   `BM × BN / (32 × num_warps)`가 레지스터 압력을 결정합니다. 너무 크면 레지스터 스필(spill)이 생기고, 너무 작으면
#   (워프가 많으면) 스레드당 일이 적어 효율이 떨어집니다.
# * `num_stages`(소프트웨어 파이프라이닝 단계 수)는 **몇 개의 K 타일을 미리 비동기로 읽어 둘까**를 정합니다. 많을수록
#   메모리 지연을 더 잘 숨기지만(overlap), Shared Memory를 그만큼 더 씁니다 → 한 SM에 동시에 올라가는 프로그램 수
#   (occupancy)가 줄거나 `OutOfResources`가 납니다.

# %%
roof[["threads", "acc_bytes", "acc_per_thread", "stage_bytes", "pipeline_bytes"]].rename(columns={
    "threads": "스레드 수 (32 × num_warps)", "acc_bytes": "FP32 누산기 (B)",
    "acc_per_thread": "스레드당 누산기 원소", "stage_bytes": "1단계 A+B (B)", "pipeline_bytes": "교과서 버퍼 (B)"})

# %% [markdown]
# ## 6. 오토튜닝 키와 `@triton.jit` 컴파일 캐시
#
# 두 층의 캐시를 구분해야 합니다.
#
# 1. **`@triton.jit`의 컴파일 캐시**: 소스 코드 해시, 인자의 타입과 정렬(예: `*fp16`, 16 Byte 배수 여부),
#    `tl.constexpr` 값(`BLOCK_SIZE_M=128`, `ACTIVATION="leaky_relu"` 등), 컴파일 옵션(`num_warps`, `num_stages`),
#    타깃 아키텍처를 묶은 해시가 키입니다. M, N, K가 일반 정수 인자이면 크기 **값** 자체는 키에 들어가지 않지만,
#    Triton은 정수 인자와 포인터를 **특수화**(specialization)합니다: 정수가 16의 배수인지(그리고 1인지), 포인터가
#    16 Byte 정렬인지가 키에 들어갑니다. 그래서 4096 → 2048처럼 모든 크기·stride가 16의 배수로 남으면 **다시 컴파일하지
#    않지만**, 500 × 600 × 300처럼 16의 배수가 아닌 크기(그리고 그 크기가 곧 stride)가 처음 오면 **새로 컴파일합니다**
#    (④ 노트북 5절이 실제 캐시로 보여 줍니다). `tl.constexpr` 값이 바뀌면 다른 코드로 보고 새로 컴파일합니다.
# 2. **`@triton.autotune(configs=..., key=['M', 'N', 'K'])`의 튜닝 캐시**: key 인자의 값과 텐서 인자들의 dtype이
#    튜닝 키입니다. 처음 보는 키면 모든 `triton.Config` 후보를 컴파일·벤치마크해 가장 빠른 것을 기록하고, 같은 키로
#    다시 부르면 탐색 없이 그 Config로 바로 실행합니다.
#
# 아래 셀은 Tutorial 03 커널(`matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, ...)`, 연속 FP16 행렬)의
# 크기 인자와 stride 인자가 16의 배수인지(특수화 키의 일부) 크기마다 계산합니다 (포인터는 torch가 할당해 늘 16 Byte
# 정렬이고, 안쪽 stride 1은 크기와 상관없이 같으므로 뺐습니다).

# %%
spec_rows = []
for m_, n_, k_ in ((4096, 4096, 4096), (2048, 2048, 2048), (500, 600, 300)):
    int_args = {"M": m_, "N": n_, "K": k_, "stride_am (= K)": k_, "stride_bk (= N)": n_, "stride_cm (= N)": n_}
    spec_rows.append({"M×N×K": f"{m_}×{n_}×{k_}", **{a: v % 16 == 0 for a, v in int_args.items()}})
divisible = pd.DataFrame(spec_rows).set_index("M×N×K")
display(divisible.replace({True: "16의 배수", False: "-"}))
keys = [tuple(r) for r in divisible.itertuples(index=False)]
print("4096³ → 2048³: 특수화 키가", "같음 → 재컴파일 없음" if keys[0] == keys[1] else "다름 → 새로 컴파일")
print("4096³ → 500×600×300: 특수화 키가", "같음 → 재컴파일 없음" if keys[0] == keys[2] else "다름 → 새로 컴파일")

# %% [markdown]
# ---
# # 연습문제 3 — TFLOP/s, 오토튜닝 손익분기점, 컴파일 캐시 (10점)
#
# M = N = K = 4096 FP16 행렬곱을 어떤 GPU에서 측정했더니 다음과 같은 **가상** 결과를 얻었다고 합시다.

# %%
case = calc.SEED_EXERCISE3
pd.DataFrame([{"실행 경로": p.label, "최초 오토튜닝 탐색 시간 (ms)": p.tuning_ms, "반복 실행 커널 시간 (ms)": p.kernel_ms}
              for p in (case.fixed, case.tuned, case.cublas)])

# %% [markdown]
# * 3.1 Tutorial 03의 식 `2 * M * N * K * 1e-12 / (ms * 1e-3)`으로 세 경로의 TFLOP/s `tflops_fixed`,
#   `tflops_tuned`, `tflops_cublas`(소수 둘째 자리까지)를 구하고, 오토튜닝 최적 설정이 고정 설정과 torch.matmul보다
#   몇 배 빠른지 `speedup_vs_fixed`, `speedup_vs_cublas`(소수 둘째 자리까지)를 구하세요. (4점)
# * 3.2 탐색 시간을 포함해, 1번만 실행할 때 오토튜닝 경로의 총 시간 `one_call_tuned_ms`, 1,000번 실행할 때 두 경로의
#   총 시간 `thousand_calls_fixed_ms`, `thousand_calls_tuned_ms`(세 시간 모두 ms, 소수 첫째 자리까지), 그리고
#   오토튜닝 경로가 고정 설정보다 빨라지기 시작하는 최소 호출 횟수 `break_even`(정수)을 구하세요. (4점)

# %% nbgrader={"grade": false, "grade_id": "ex3_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
import math

F = 2 * 4096**3
tflops_fixed = F * 1e-12 / (1.6 * 1e-3)
tflops_tuned = F * 1e-12 / (0.6872 * 1e-3)
tflops_cublas = F * 1e-12 / (0.7 * 1e-3)
speedup_vs_fixed = 1.6 / 0.6872
speedup_vs_cublas = 0.7 / 0.6872
one_call_tuned_ms = 900 + 0.6872
thousand_calls_fixed_ms = 1000 * 1.6
thousand_calls_tuned_ms = 900 + 1000 * 0.6872
break_even = math.ceil(900 / (1.6 - 0.6872))
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex3_1_tflops", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""3.1: TFLOP/s of the fixed, tuned and cuBLAS paths (2 decimals)."""
from gemm_lab.grading import fresh
g = fresh()
_ans = g.calc.exercise3_answers()
g.check_value("tflops_fixed", tflops_fixed, _ans.tflops_fixed, digits=2)
g.check_value("tflops_tuned", tflops_tuned, _ans.tflops_tuned, digits=2)
### BEGIN HIDDEN TESTS
g.check_value("tflops_cublas", tflops_cublas, _ans.tflops_cublas, digits=2)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex3_1_speedups", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""3.1: how many times faster the tuned config is than the fixed one and than torch.matmul."""
from gemm_lab.grading import fresh
g = fresh()
_ans = g.calc.exercise3_answers()
g.check_value("speedup_vs_fixed", speedup_vs_fixed, _ans.speedup_vs_fixed, digits=2)
g.check_value("speedup_vs_cublas", speedup_vs_cublas, _ans.speedup_vs_cublas, digits=2)

# %% nbgrader={"grade": true, "grade_id": "ex3_2_total_times", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""3.2: total time (tuning included) of one tuned call and of 1,000 calls of each path."""
from gemm_lab.grading import fresh
g = fresh()
_ans = g.calc.exercise3_answers(n_calls=1000)
g.check_value("one_call_tuned_ms", one_call_tuned_ms, _ans.one_call_tuned_ms, digits=1)
g.check_value("thousand_calls_fixed_ms", thousand_calls_fixed_ms, _ans.many_calls_fixed_ms, digits=1)
### BEGIN HIDDEN TESTS
g.check_value("thousand_calls_tuned_ms", thousand_calls_tuned_ms, _ans.many_calls_tuned_ms, digits=1)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex3_2_break_even", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""3.2: the smallest number of calls from which the autotuned path is not slower (an integer)."""
from gemm_lab.grading import fresh
g = fresh()
_be = g.calc.exercise3_answers().break_even
g.check_value("break_even", break_even, _be,
              mistakes={_be - 1: f"{_be - 1}번에서는 아직 오토튜닝 경로가 느립니다: 나눗셈 결과를 올림하세요."})

# %% [markdown]
# ### 3.3 설명해 보세요 (2점, 수동 채점)
# 이후 호출에서 ① 입력 크기가 M = N = K = 2048로 바뀌는 경우와, ② 크기는 4096 그대로인데
# `ACTIVATION="leaky_relu"`(`tl.constexpr`)를 새로 넘기는 경우에, `@triton.autotune(key=['M', 'N', 'K'])`의 튜닝
# 캐시와 `@triton.jit`의 컴파일 캐시가 각각 어떻게 동작하는지 설명하세요.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex3_3_explain_autotune_key_vs_jit_cache", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# ① M, N, K는 `tl.constexpr`가 아닌 일반 정수 인자이므로 각 Config로 이미 컴파일된 커널(jit 캐시)을 **다시
# 컴파일하지 않고** 재사용합니다. 하지만 autotune의 key 값이 (2048, 2048, 2048)로 새로워졌으므로 후보들을 그 크기로
# **다시 벤치마크**해 최적 Config를 새로 고릅니다. ② key(M, N, K)와 dtype은 같지만 `ACTIVATION`은 컴파일 시점
# 상수라 jit 캐시 키가 달라집니다: 에필로그에 leaky_relu가 들어간 커널을 **새로 컴파일**합니다(TTIR → … → CUBIN).
# ### END SOLUTION

# %% [markdown]
# 실제 GPU에서는 어떨까요? `make bench`(`python -m gemm_lab.bench --only autotune`)가 GPU에서 잰 오토튜닝 비용을
# `results/autotune_cost.csv`에서 읽어(`gemm_lab.results_autotune.measured_autotune_case`) 같은 계산을 해 봅니다.
# 고정 설정(후보 1: 64×32×32, stages=5, warps=2)과 오토튜너가 고른 설정의 반복 실행 시간은 `do_bench`의
# **중앙값**(median)이고, 탐색 시간은 **새로 만든** 오토튜너(튜닝 캐시도, `@triton.jit`의 메모리 캐시도 빈 상태)의
# 첫 호출이 끝날 때까지의 벽시계 시간입니다: `gemm_lab.kernels.matmul_autotuned`가 이 GPU에서 쓰는 후보를 모두
# 컴파일하고 벤치마크한 뒤 한 번 실행합니다. `compile_cache`는 그때 Triton의 **디스크 컴파일 캐시** 상태입니다.
#
# * `cold`: 빈 `TRITON_CACHE_DIR`에서 시작 — 후보마다 TTIR → … → CUBIN 컴파일과 런처 빌드까지 모두 합니다
#   (Colab에서 처음 실행할 때와 같은 상황).
# * `warm`: cold 호출이 채운 같은 디렉터리에서 다시 새 오토튜너를 만든 경우 — 컴파일 결과는 디스크에서 읽고
#   **벤치마크만** 남습니다.
#
# 두 손익분기점의 차이가 첫 호출 비용 가운데 컴파일이 차지하는 몫입니다. 한 번 잰 값이므로 자릿수 정도만 믿으세요.

# %%
from gemm_lab.results_autotune import measured_autotune_case

virtual_break_even = calc.exercise3_answers().break_even
real_cases = {cache: measured_autotune_case(M, N, K, compile_cache=cache) for cache in ("cold", "warm")}
if all(real_case is None for real_case in real_cases.values()):
    print("results/autotune_cost.csv에 4096³ 측정이 없어 실제 GPU의 손익분기점은 계산하지 않습니다 "
          "(GPU에서 `python -m gemm_lab.bench --only autotune`을 실행하면 생깁니다).")
else:
    for cache, real_case in real_cases.items():
        if real_case is None:
            print(f"디스크 컴파일 캐시 {cache}: 측정이 없습니다.")
            continue
        real = calc.exercise3_answers(real_case)
        print(f"디스크 컴파일 캐시 {cache}: 첫 호출 {real_case.tuned.tuning_ms:,.0f} ms, "
              f"고정 {real_case.fixed.kernel_ms:.4f} ms ({real.tflops_fixed:.1f} TFLOP/s) → "
              f"{real_case.tuned.label} {real_case.tuned.kernel_ms:.4f} ms ({real.tflops_tuned:.1f} TFLOP/s): "
              f"손익분기점 {real.break_even:,}번 (가상 문제: {virtual_break_even:,}번)")
    print("출처:", next(c for c in real_cases.values() if c is not None).source)

# %% [markdown]
# ## 7. 실제 GPU에서: 오토튜닝 실행과 `OutOfResources`
#
# GPU가 있으면 (1) 오토튜닝 커널(`gemm_lab.kernels.matmul_autotuned`)의 첫 호출(후보 전체 컴파일 + 벤치마크)과
# 두 번째 호출의 시간을 재고, 고른 Config와 반복 실행 시간(`gemm_lab.bench.do_bench_ms`: **중앙값(median)**,
# `return_mode="median"`)을 보여 줍니다. (2) Shared Memory가 모자라는 256×256×64, `num_stages=4` 설정을 실행해
# Triton의 실제 `OutOfResources` 메시지를 받아 봅니다 — 오토튜너라면 이 예외를 잡아 `inf`로 기록할 것입니다(2.3 앞부분).
# GPU가 없으면 (오토튜닝은 CPU 해석기에서 돌지 않습니다) 같은 설정을 sm_90으로 교차 컴파일해 컴파일러가 요구하는
# Shared Memory와 H100/H200의 블록당 한계를 비교합니다.
#
# > ⚠️ **세대를 섞지 마세요.** Tutorial 03 본문의 성능 향상 예시(약 220 → 245 TFLOP/s)는 **A100**에서 잰 값이고,
# > "Modern GPU Programming" 글의 2 PFLOP/s, 8 TB/s, TMA, `tcgen05.mma`, TMEM은 **Blackwell B200**의 것입니다. 이
# > 노트북의 가상 하드웨어(80 TFLOP/s, 1 TB/s)나 Colab T4(sm_75: Tensor Core 경로 없음, 위 4절), 아래에서 여러분이 잰
# > 숫자와 섞어 비교하지 않습니다. 측정값에는 늘 GPU 이름, 컴퓨트 능력, Triton 버전을 함께 적습니다.

# %%
BIG = calc.TileConfig(256, 256, 64, num_stages=4, num_warps=8, name="256x256x64 s4 w8")
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
elif runtime.on_gpu():
    import time

    import torch

    from gemm_lab import bench, kernels
    from gemm_lab.kernels import autotuned

    env = bench.env_info()
    print(f"GPU: {env['gpu']}, compute capability {env['compute_capability']}, torch {env['torch']}, "
          f"triton {env['triton']}")
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    for label in ("첫 호출 (탐색 포함)", "두 번째 호출 (캐시)"):
        torch.cuda.synchronize()
        start = time.perf_counter()
        kernels.matmul_autotuned(a, b)
        torch.cuda.synchronize()
        print(f"{label}: {(time.perf_counter() - start) * 1e3:,.1f} ms")
    print("고른 Config:", autotuned.best_config(M, N, K))
    ms = bench.do_bench_ms(lambda: kernels.matmul_autotuned(a, b))
    print(f"반복 실행 (중앙값): {ms:.4f} ms = {calc.tflops(M, N, K, ms):.1f} TFLOP/s")
    try:
        kernels.matmul(a, b, BLOCK_M=BIG.BLOCK_M, BLOCK_N=BIG.BLOCK_N, BLOCK_K=BIG.BLOCK_K,
                       num_stages=BIG.num_stages, num_warps=BIG.num_warps)
        print(f"{BIG.name}: 이 GPU에서는 실행되었습니다 (Shared Memory가 충분).")
    except triton.runtime.errors.OutOfResources as exc:
        print(f"{BIG.name} → {type(exc).__name__}: {exc}")
    # 2.3 앞부분을 실제로: 들어가는 후보 하나와 BIG을 오토튜너에 함께 주면 BIG은 inf로 기록되고 탈락합니다.
    from gemm_lab.kernels.matmul import matmul_kernel

    def tile_config(cfg):
        return triton.Config({"BLOCK_SIZE_M": cfg.BLOCK_M, "BLOCK_SIZE_N": cfg.BLOCK_N, "BLOCK_SIZE_K": cfg.BLOCK_K,
                              "GROUP_SIZE_M": 8}, num_stages=cfg.num_stages, num_warps=cfg.num_warps)

    tuner = triton.autotune(configs=[tile_config(CONFIGS[1]), tile_config(BIG)], key=["M", "N", "K"])(matmul_kernel)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    tuner[lambda meta: (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), ACTIVATION="")
    for cfg, timing in getattr(tuner, "configs_timings", {}).items():
        t = timing[0] if isinstance(timing, (list, tuple)) else timing
        print(f"오토튜너의 측정: {cfg} → {t} ms" + ("  (OutOfResources → inf로 탈락)" if t == float("inf") else ""))
    print("오토튜너가 고른 Config:", tuner.best_config)
else:
    print("GPU가 없어 오토튜닝과 실제 OutOfResources는 실행하지 않습니다 "
          "(@triton.autotune의 벤치마크는 GPU가 필요합니다). 대신 교차 컴파일 결과:")
    shared = gl_compile.compile_artifacts("matmul", config=BIG, target="sm_90").metadata["shared"]
    rows = []
    for device in ("h100", "h200"):
        limit = calc.get_device(device).smem_per_block_optin
        rows.append({"config": BIG.name, "target": "sm_90", "장치": calc.get_device(device).name,
                     "metadata.shared (B)": shared, "교과서 (B)": calc.textbook_smem(BIG), "블록당 한계 (B)": limit,
                     "결과": "실행 가능" if calc.fits(shared, limit) else "OutOfResources"})
    display(pd.DataFrame(rows).set_index("config"))

# %% [markdown]
# ## 8. 타일·웨이브 양자화 (NVIDIA Matrix Multiplication Background §3)
#
# 이 노트북의 커널은 **비영속(non-persistent)** 커널입니다: 출력 타일 하나마다 프로그램 하나를 띄웁니다
# (`grid = cdiv(M, BM) × cdiv(N, BN)`). GPU는 한 번에 `슬롯 = SM 수 × SM당 프로그램 수`개만 실행하므로, 프로그램들은
# 여러 **웨이브**(wave)로 나뉘어 돕니다. 두 가지 반올림이 일을 버립니다.
#
# * **타일 양자화:** 가장자리 타일도 `BM × BN` 전체를 계산합니다. 쓸모 있는 비율 = `M × N ÷ (타일 수 × BM × BN)`.
# * **웨이브 양자화:** 웨이브 수 = `cdiv(타일 수, 슬롯)`. 마지막 웨이브가 덜 차면 그동안 나머지 SM은 놉니다.
#   슬롯이 바쁜 비율(웨이브 효율) = `타일 수 ÷ (웨이브 수 × 슬롯)`.
#
# 예: H100/H200(132 SM)에서 후보 2의 타일(128 × 128), SM당 프로그램 1개(가정입니다: 실제 H200에서 몇 개인지는 연습문제 4
# 뒤에서 계산합니다). 계산은 `gemm_lab.calc.wave_quantization`.

# %%
for shape in ((4096, 4096), (500, 600)):
    wq = calc.wave_quantization(*shape, 128, 128, num_sms=calc.get_device("h200").sms)
    print(f"{shape[0]}×{shape[1]}: 타일 {wq.tiles}개, 슬롯 {wq.slots}개 → {wq.waves:.2f} 웨이브 → {wq.num_waves}번, "
          f"마지막 웨이브 {wq.last_wave_tiles}/{wq.slots}; 웨이브 효율 {wq.wave_efficiency:.2%}, "
          f"타일 효율 {wq.tile_efficiency:.2%}")
fig = viz_waves.waves_figure(4096, 4096, 128, 128, calc.get_device("h200").sms)

# %% [markdown]
# 그림의 열은 웨이브, 행은 슬롯(SM)이고, 회색 칸은 마지막 웨이브에서 노는 슬롯입니다. ⑥ 노트북의 영속(persistent)
# 커널은 슬롯 수만큼만 프로그램을 띄우고 각 프로그램이 타일을 돌며 맡으므로 웨이브를 새로 띄우는 비용은 없애지만,
# 타일 수가 슬롯으로 나누어떨어지지 않으면 마지막 타일들을 맡은 프로그램이 더 오래 도는 불균형은 그대로 남습니다.
#
# ---
# # 연습문제 4 — 132개 SM 위의 타일·웨이브 양자화 (3점)
#
# SM이 132개인 GPU에서 이 노트북의 비영속 커널을 128 × 128 출력 타일, **SM당 프로그램 1개**로 실행한다고 가정합니다
# (이 가정으로 채점합니다; 실제 H200에서 올라가는 수와 그때의 답은 문제 뒤의 셀에서 봅니다).
#
# * `M = N = 4096`: 타일 수 `tiles_4096`, 웨이브 수 `waves_4096`(정수, 마지막의 덜 찬 웨이브 포함), 마지막 웨이브의
#   프로그램 수 `last_wave_4096`, 웨이브 효율 `wave_eff_pct_4096`(%, 소수 둘째 자리까지). (2점)
# * `M = 500, N = 600`: 동시에 일하는 SM 수 `busy_sms_500`와, 계산한 타일 넓이 중 C 안에 드는 비율
#   `tile_eff_pct_500`(%, 소수 둘째 자리까지). (1점)

# %% nbgrader={"grade": false, "grade_id": "ex4_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
# tiles_4096 = ...; waves_4096 = ...; last_wave_4096 = ...; wave_eff_pct_4096 = ...
# busy_sms_500 = ...; tile_eff_pct_500 = ...
### BEGIN SOLUTION
tiles_4096 = (4096 // 128) * (4096 // 128)
waves_4096 = -(-tiles_4096 // 132)
last_wave_4096 = tiles_4096 - (waves_4096 - 1) * 132
wave_eff_pct_4096 = 100 * tiles_4096 / (waves_4096 * 132)
busy_sms_500 = -(-500 // 128) * -(-600 // 128)
tile_eff_pct_500 = 100 * 500 * 600 / (busy_sms_500 * 128 * 128)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex4_waves_4096_on_132_sms", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""4: tiles, waves, last-wave programs and wave efficiency (%, 2 decimals) of 4096x4096 in 128x128 tiles on 132 SMs."""
from gemm_lab.grading import fresh
g = fresh()
_wq = g.calc.wave_quantization(4096, 4096, 128, 128, num_sms=132)
g.check_value("tiles_4096", tiles_4096, _wq.tiles)
g.check_value("waves_4096", waves_4096, _wq.num_waves,
              mistakes={_wq.full_waves: "덜 찬 마지막 웨이브도 한 웨이브입니다: 올림하세요."})
### BEGIN HIDDEN TESTS
g.check_value("last_wave_4096", last_wave_4096, _wq.last_wave_tiles)
g.check_value("wave_eff_pct_4096", wave_eff_pct_4096, 100 * _wq.wave_efficiency, digits=2,
              mistakes={_wq.wave_efficiency: "비율(0~1)로 답했습니다. %로 바꾸세요 (× 100)."})
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex4_edge_tiles_500x600", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""4: busy SMs and useful share of the computed tile area (%, 2 decimals) for 500x600 in 128x128 tiles."""
from gemm_lab.grading import fresh
g = fresh()
_wq = g.calc.wave_quantization(500, 600, 128, 128, num_sms=132)
g.check_value("busy_sms_500", busy_sms_500, _wq.last_wave_tiles)
### BEGIN HIDDEN TESTS
g.check_value("tile_eff_pct_500", tile_eff_pct_500, 100 * _wq.tile_efficiency, digits=2)
### END HIDDEN TESTS

# %% [markdown]
# ### 연습문제 4의 가정 vs 실제 H200: SM 하나에 후보 2의 프로그램이 몇 개 올라갈까?
#
# 연습문제 4는 **SM당 프로그램 1개**로 가정하고, 채점도 그 가정으로 합니다. 실제 GPU에서 SM 하나에 동시에 올라가는
# 프로그램 수는 점유율(occupancy) 계산이 정합니다: 레지스터, Shared Memory, 워프 수, SM당 블록 수가 각각 허용하는
# 프로그램 수 가운데 가장 작은 값입니다(`calc.blocks_per_sm`, ⑥ 노트북과 사례 연구에서 쓰는 같은 모델).
# 입력은 후보 2(128 × 128 × 32, `num_warps = 4`) 커널이 실제로 쓰는 스레드당 레지스터 수와 `metadata.shared`입니다.
# 두 곳에서 가져옵니다: H200에서 실행해 커밋한 측정(`results/compiled_kernels.csv`)과, 지금 설치된 Triton으로 sm_90용으로
# 교차 컴파일한 CUBIN(레지스터 수는 Triton에 들어 있는 `cuobjdump -res-usage`로 읽습니다, GPU 없이).
# 아래 표는 SM당 프로그램 수가 1, 2, 3일 때의 웨이브를 나란히 놓습니다(`calc.wave_quantization(..., programs_per_sm=…)`).

# %%
from gemm_lab import results

cand2 = CONFIGS[1]
h200 = calc.get_device("h200")
usage = {}  # where the numbers come from -> (registers per thread, metadata.shared in bytes)
compiled_csv = results.load_csv("compiled_kernels.csv")
if compiled_csv is not None:
    hit = compiled_csv[(compiled_csv["kernel"] == "matmul") & (compiled_csv["aligned"].astype(str) == "True")
                       & (compiled_csv["config"] == cand2.shape_label.replace("×", "x"))]
    if len(hit) and hit["n_regs"].notna().iloc[0]:
        r = hit.iloc[0]
        usage[f"{r['gpu']}에서 측정 (triton {r['triton']}, {r['date']})"] = (int(r["n_regs"]), int(r["shared"]))
if grading_mode():
    print("(채점 중: 교차 컴파일은 건너뜁니다)")
else:
    art = gl_compile.compile_artifacts("matmul", config=cand2, target="sm_90")
    res = gl_compile.resource_usage(art.cubin)
    if res:
        usage[f"sm_90 교차 컴파일 (triton {triton.__version__})"] = (res["regs"], art.metadata["shared"])
    else:
        print("cuobjdump가 없어 교차 컴파일한 커널의 레지스터 수는 읽지 못했습니다.")
occ_rows = []
for where, (regs, shared) in usage.items():
    occ = calc.blocks_per_sm(regs, cand2.num_warps, shared, h200)
    occ_rows.append({"출처": where, "레지스터/스레드": regs, "metadata.shared (B)": shared,
                     "레지스터 기준": occ.by_regs, "Shared Memory 기준": occ.by_smem, "워프 기준": occ.by_warps,
                     "SM당 프로그램": occ.blocks, "한계 자원": occ.limiter})
if occ_rows:
    display(pd.DataFrame(occ_rows).set_index("출처"))
    print(f"4 워프 프로그램 3개가 레지스터로 들어가려면 스레드당 레지스터가 "
          f"{calc.max_regs_per_thread(cand2.num_warps, 3, h200)}개 이하여야 합니다 (calc.max_regs_per_thread).")
else:
    print("results/compiled_kernels.csv도 교차 컴파일 결과도 없어 실제 SM당 프로그램 수는 계산하지 않습니다.")
wave_rows = []
for per_sm in (1, 2, 3):
    wq = calc.wave_quantization(4096, 4096, 128, 128, num_sms=h200.sms, programs_per_sm=per_sm)
    wave_rows.append({"SM당 프로그램": per_sm, "슬롯": wq.slots, "웨이브 수": wq.num_waves,
                      "마지막 웨이브": f"{wq.last_wave_tiles}/{wq.slots}",
                      "웨이브 효율 (%)": round(100 * wq.wave_efficiency, 2)})
display(pd.DataFrame(wave_rows).set_index("SM당 프로그램"))

# %% [markdown]
# 표에서 읽을 것: Shared Memory만 보면 후보 2의 프로그램이 SM 하나에 3개까지 들어가지만, 측정에서도 교차 컴파일에서도
# 레지스터가 먼저 막아 실제로는 **2개**입니다(`한계 자원` 열). 2개일 때는 슬롯이 두 배라 웨이브 수는 절반이지만 웨이브 효율은
# 연습문제 4의 답과 같습니다(1개일 때의 마지막 두 웨이브가 한 웨이브로 합쳐질 뿐, 비는 슬롯 수가 같습니다). 컴파일러가 레지스터를 위 한계 이하로 쓰는 버전이나 설정이라면 3개가
# 올라가고, 그때는 마지막 웨이브가 훨씬 덜 차서 **답이 달라집니다**(3행). 그래서 웨이브 양자화를 실제로 따질 때는
# 점유율(레지스터·Shared Memory)을 먼저 계산하거나 잽니다: `ncu`의 "Block Limit Registers / Shared Mem"과 "Waves Per SM"이
# 바로 이 두 계산입니다(⑥ 노트북, 사례 연구 1.6–1.7절).

# %% [markdown]
# ## 정리
# * HBM 산술 강도는 출력 타일의 두 변(BM, BN)이 정합니다: 타일이 클수록 Q가 줄고 I가 커집니다 (문제 A의 표;
#   가상 장치의 분기점을 넘는 것은 후보 3뿐).
# * BK와 `num_stages`는 온칩 버퍼를 바꿉니다. 교과서 공식은 `num_stages × 1단계`, 컴파일러는 경로에 따라 S, S−1,
#   또는 (T4) 버퍼 하나: 채점은 교과서로, 실제 장치에서는 컴파일러의 값이 `OutOfResources`를 결정합니다. 오토튜너는
#   `OutOfResources`를 낸 후보를 `inf`로 기록해 건너뜁니다.
# * `@triton.autotune`은 key가 새로우면 다시 벤치마크하고, `@triton.jit`은 `tl.constexpr`·옵션·타깃, 그리고 정수·포인터의
#   특수화(16의 배수, 16 Byte 정렬)가 바뀔 때 다시 컴파일합니다. 오토튜닝은 같은 크기로 손익분기점 이상 여러 번 부를 때
#   이득입니다 (연습문제 3).
# * 비영속 커널은 타일 수가 슬롯 수의 배수가 아니면 마지막 웨이브에서 SM이 놉니다 (연습문제 4).
#
# **핵심 용어 3개:** 산술 강도(Arithmetic Intensity), 소프트웨어 파이프라이닝(`num_stages`), 오토튜닝 키(Autotune Key)
#
# 다음 노트북(④)에서는 이 커널이 AST → TTIR → TTGIR → LLIR → PTX → CUBIN으로 내려가는 과정을 IR로 봅니다.
