# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 7주차 ① 2차원 포인터 블록과 K축 누적
#
# > 4주차 타일 수식이 코드의 어느 줄이 될까?
#
# `C = A @ B`(A: `[M, K]`, B: `[K, N]`, C: `[M, N]`)에서 Triton Tutorial 03의 `matmul_kernel`은
# **프로그램 인스턴스(program instance) 하나가 출력 타일 `C[m:m+BM, n:n+BN]` 하나**를 계산합니다.
# 이 노트북에서는 그 한 타일을 만드는 2차원 주소 계산을 직접 따라가고, 마지막에는 커널의 빈칸을 채워
# 직접 돌려 봅니다.
#
# ## 이번 노트북에서 배우는 것
# 1. `offs[:, None]`와 `offs[None, :]` 브로드캐스팅(broadcasting)으로 `[BM, BK]`, `[BK, BN]` 크기의
#    **2차원 포인터 블록**을 만드는 원리
# 2. K 루프마다 포인터를 `BLOCK_K × stride`만큼 전진시키는 방법
# 3. M·N축의 `% M`, `% N`, K축의 `mask`/`other=0.0`, 출력의 `c_mask`가 각각 맡는 역할
# 4. 입력은 FP16인데 누산기(accumulator)는 왜 FP32인지 (숫자로 확인)
# 5. 에필로그 결합(Epilogue Fusion)이 아끼는 HBM 이동량
# 6. 연습문제 1 (500×600×300, 128×128×64)과, 커널의 TODO 1–3을 직접 채워 torch와 비교하는 코딩 문제
#
# ## GPU가 필요한 부분
# **없습니다.** 모든 셀이 CPU에서 돌아갑니다. GPU가 없으면 Triton 커널은 CPU 해석기
# (`TRITON_INTERPRET=1`, NumPy로 한 프로그램씩 순서대로 실행)로 돌고, GPU가 있으면 실제로 컴파일되어 GPU에서
# 실행됩니다. 에필로그 결합의 실행시간 비교만 GPU가 있을 때 측정합니다.
#
# 점수: 연습문제 1 (11점, 그중 설명 2점) + 코딩 문제 (8점) = 19점.
# 코딩 문제의 커널 테스트는 **CPU 해석기 실행**과 **sm_75/80/90 교차 컴파일**(실제 Triton 컴파일러)이 모두 통과해야
# 점수를 받습니다: 해석기는 16보다 작은 블록의 `tl.dot`처럼 컴파일러가 거부하는 코드도 돌려 버리기 때문입니다.
#
# ## 읽을거리
# * Triton Tutorial 03 — Matrix Multiplication (Motivations, Pointer Arithmetic, Final Result):
#   <https://triton-lang.org/main/getting-started/tutorials/03-matrix-multiplication.html>
# * Triton Tutorial 01/02 (6주차의 1차원 블록): <https://triton-lang.org/main/getting-started/tutorials/01-vector-add.html>,
#   <https://triton-lang.org/main/getting-started/tutorials/02-fused-softmax.html>
# * Triton Programming Guide, Chapter 1: <https://triton-lang.org/main/programming-guide/chapter-1/introduction.html>
# * API: `tl.dot` <https://triton-lang.org/main/python-api/generated/triton.language.dot.html>,
#   `tl.load` <https://triton-lang.org/main/python-api/generated/triton.language.load.html>
# * Triton Semantics (브로드캐스팅: `offs_am[:, None]`와 `offs_k[None, :]`가 `[BM, BK]`가 되는 규칙):
#   <https://triton-lang.org/main/python-api/triton-semantics.html>
# * NVIDIA Matrix Multiplication Background (2MNK, 타일·웨이브 양자화):
#   <https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html>
# * Triton 논문 (MAPL 2019) §4.2, §5.1–5.3: <https://doi.org/10.1145/3315508.3329973>
#   (PDF: <https://www.eecs.harvard.edu/~htk/publication/2019-mapl-tillet-kung-cox.pdf>)
# * MLIR 개요: <https://mlir.llvm.org/>

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false, "task": false}
from gemm_lab import runtime  # triton보다 먼저: GPU가 없으면 해석기를 켭니다

import numpy as np
import pandas as pd
import torch
import triton
import triton.language as tl

from gemm_lab import calc
from gemm_lab.runtime import grading_mode
from gemm_lab.viz import pointers

DEVICE = runtime.device()
print("커널을 실행할 장치:", DEVICE, "(해석기)" if runtime.INTERPRET else "")

# %% [markdown]
# ## 1. 동기: 출력 타일 하나 = 프로그램 하나
#
# 6주차에는 1차원 블록(`offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)`)으로 벡터를 나눠 맡았습니다.
# 행렬곱에서는 프로그램 하나가 `[BLOCK_M, BLOCK_N]` 출력 타일을 맡고, 그 타일을 채우려면 A의 블록 행
# (`[BLOCK_M, K]`)과 B의 블록 열(`[K, BLOCK_N]`)을 K 방향으로 `BLOCK_K`씩 잘라 읽으며 `tl.dot`으로 더합니다.
#
# ```text
#            K →                       N →                          N →
#      ┌──────────────┐          ┌────┬────┬────┐             ┌────┬────┬────┐
#   M  │ A[pid_m 블록행] ──┐      │    │B[:,pid_n]│  ─┐        │    │    │    │
#   ↓  │ k=0 k=1 k=2 …│   │  K ↓ │    │ k=0 │    │   ├─ tl.dot → │    │C 타일│    │
#      └──────────────┘   └──────│    │ k=1 │    │ ──┘  누적   └────┴────┴────┘
#                                └────┴────┴────┘
# ```
#
# 코드에서는 `a = tl.load(a_ptrs)`처럼 블록 변수만 보이지만, 컴파일러(TTGIR 단계)가 A·B 타일을 Shared
# Memory 버퍼에 놓고(`num_stages`만큼 다중 버퍼링), `accumulator`를 스레드별 레지스터 조각(fragment)으로
# 나눠 유지합니다. 이 부분은 ④ 컴파일 파이프라인 노트북에서 IR로 확인합니다.

# %% [markdown]
# ## 2. 브로드캐스팅으로 2차원 포인터 블록 만들기
#
# Row-major 2차원 텐서 X에서 `X[i, j]`의 주소는 `x_ptr + i * stride_xi + j * stride_xj`입니다.
# 행 인덱스 벡터를 **열 벡터**(`[:, None]`, 모양 `[BM, 1]`)로, 열 인덱스 벡터를 **행 벡터**
# (`[None, :]`, 모양 `[1, BK]`)로 넓혀 더하면 `[BM, BK]` 크기의 포인터(주소 오프셋) 블록이 됩니다.
#
# ```python
# offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M   # [BM]
# offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N   # [BN]
# offs_k = tl.arange(0, BLOCK_SIZE_K)                                 # [BK]
# a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)   # [BM, BK]
# b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)   # [BK, BN]
# ```
#
# 작은 A(`[6, 8]`, row-major: `stride_am = 8`, `stride_ak = 1`)에서 `BLOCK_M = 4`, `BLOCK_K = 3`인
# 첫 블록을 NumPy로 똑같이 만들어 봅시다. 포인터 대신 "펼친(flat) 메모리에서의 원소 번호"를 씁니다.

# %%
A_small = torch.arange(6 * 8, dtype=torch.float32).reshape(6, 8)   # A[i, j] = 8*i + j
stride_am, stride_ak = A_small.stride()
BLOCK_M_demo, BLOCK_K_demo = 4, 3
offs_am = np.arange(BLOCK_M_demo)             # pid_m = 0
offs_k = np.arange(BLOCK_K_demo)              # k = 0
a_offsets = offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
print("stride_am, stride_ak =", (stride_am, stride_ak))
print("offs_am[:, None] 모양:", offs_am[:, None].shape, " offs_k[None, :] 모양:", offs_k[None, :].shape,
      " → 포인터 블록 모양:", a_offsets.shape)
print(a_offsets)
block = A_small.flatten()[torch.from_numpy(a_offsets)]
same = torch.equal(block, A_small[:BLOCK_M_demo, :BLOCK_K_demo])
print("펼친 메모리에서 읽은 블록 == A[0:4, 0:3] ?", "✅" if same else "❌")

# %%
fig = pointers.broadcast_figure(offs_am, offs_k, stride_am, stride_ak)

# %% [markdown]
# B는 K가 **행** 방향이므로 `offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn`으로 `[BK, BN]`
# 블록을 만듭니다. stride를 곱해 쓰기 때문에 전치된(transposed) 텐서처럼 메모리가 연속이 아닌 입력도 같은
# 코드로 읽을 수 있습니다: 아래에서 `B.t()`의 stride는 `(1, 5)`입니다.

# %%
B_t = torch.arange(5 * 6, dtype=torch.float32).reshape(5, 6).t()   # [6, 5] view, 연속 아님
stride_bk, stride_bn = B_t.stride()
offs_k_b, offs_bn = np.arange(3), np.arange(4)
b_offsets = offs_k_b[:, None] * stride_bk + offs_bn[None, :] * stride_bn
memory = torch.as_strided(B_t, (B_t.numel(),), (1,), 0)          # B_t가 놓인 메모리를 펼친 것
ok_b = torch.equal(memory[torch.from_numpy(b_offsets)], B_t[:3, :4])
print("stride_bk, stride_bn =", (stride_bk, stride_bn))
print(b_offsets)
print("B 블록 [BK=3, BN=4] == B_t[0:3, 0:4] ?", "✅" if ok_b else "❌")

# %% [markdown]
# ## 3. K 루프: 포인터 블록 전체를 `BLOCK_K × stride`만큼 전진
#
# ```python
# for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
#     a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
#     b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
#     accumulator = tl.dot(a, b, accumulator)
#     a_ptrs += BLOCK_SIZE_K * stride_ak     # A: K는 열 방향
#     b_ptrs += BLOCK_SIZE_K * stride_bk     # B: K는 행 방향
# ```
#
# 포인터 블록의 **모든 원소**에 같은 수를 더하므로 블록 모양은 그대로이고, 창(window)만 K 방향으로
# 한 타일씩 미끄러집니다. 아래 그림은 연습문제 1의 크기(500×600×300, 128×128×64)에서 우하단 프로그램
# `(pid_m=3, pid_n=4)`가 읽는 A·B 타일을 K 단계별 색으로 보여 줍니다. 빗금은 K를 넘어가 `other=0.0`으로
# 채워지는 부분입니다.

# %%
a_offsets_k1 = a_offsets + BLOCK_K_demo * stride_ak
print("k=1의 A 포인터 블록 (k=0 블록 + BLOCK_K * stride_ak):")
print(a_offsets_k1)
print("A[0:4, 3:6]와 같은가?",
      "✅" if torch.equal(A_small.flatten()[torch.from_numpy(a_offsets_k1)], A_small[:4, 3:6]) else "❌")
fig = pointers.pointer_walk_figure(500, 600, 300, 128, 128, 64, pid_m=3, pid_n=4)

# %% [markdown]
# ## 4. 왜 M·N축에는 `% M`, `% N`을 쓰고 K축에는 `mask`와 `other=0.0`을 쓸까?
#
# | 축과 위치 | Tutorial 03의 처리 | 결과가 정확한 이유 |
# | --- | --- | --- |
# | A의 행(M), B의 열(N) 읽기 | `offs_am = (...) % M`, `offs_bn = (...) % N` | 범위 밖 행·열이 유효한 주소(예: 0번 행)를 가리키게 감쌉니다. 그 값은 accumulator의 **범위 밖 칸에만** 더해지고, `tl.store`의 `c_mask`가 버립니다. |
# | A의 열(K), B의 행(K) 읽기 | `mask = offs_k < K - k * BLOCK_SIZE_K`, `other = 0.0` | K축은 **곱해서 더하는** 축입니다. 빈자리에 0이 아닌 값이 들어가면 유효한 출력 원소의 내적 합에 섞입니다. 0 × 0 = 0이라야 합이 그대로입니다. |
# | C의 행·열 쓰기 | `c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)` | 유효 범위 안쪽 원소만 HBM에 기록합니다. |
#
# > ⚠️ CPU 해석기는 마스크 없이 범위 밖을 읽거나 써도 **오류를 내지 않습니다** (조용히 옆 메모리를 읽고
# > 씁니다). 그래서 이 노트북의 채점기는 입력·출력을 "독(poison) 값으로 채운 더 큰 버퍼"의 한가운데
# > 뷰(view)로 만들어, 마스크가 빠지면 결과가 틀리거나 여백이 바뀐 것을 잡아냅니다.

# %% [markdown]
# ## 5. FP16을 곱하면서 누산기는 왜 FP32일까?
#
# FP16은 가수부가 10비트라 2048을 넘으면 정수 1 간격도 표현하지 못합니다(2048 다음 수가 2050).
# 그래서 **1.0을 4096번 더하면** FP16 누산은 2048에서 멈춥니다. 직접 해 봅시다.

# %%
K_demo = 4096
ones = torch.ones(K_demo, dtype=torch.float16)
acc16 = torch.zeros((), dtype=torch.float16)
acc32 = torch.zeros((), dtype=torch.float32)
for x in ones:
    acc16 = acc16 + x                 # FP16에 누적 (매번 FP16으로 반올림)
    acc32 = acc32 + x.float()         # FP32에 누적
print(f"1.0을 {K_demo}번 더하기: FP16 누산 = {acc16.item():.1f}, FP32 누산 = {acc32.item():.1f}")

# %% [markdown]
# 정밀도(가수부)만이 아니라 **범위**(지수부)도 좁습니다. FP16의 가장 큰 유한값은 65,504이고, 그보다 큰 값은 `inf`로
# 넘칩니다(overflow). 크기 300 정도의 원소 두 개만 곱해도 FP16 한계를 넘습니다. FP32의 최댓값은 약 3.4 × 10³⁸입니다.

# %%
f16, f32 = torch.finfo(torch.float16), torch.finfo(torch.float32)
print(f"FP16: 최댓값 {f16.max:,.0f}, 1 다음 수와의 간격(eps) {f16.eps} (= 2^-10: 가수부 10비트)")
print(f"FP32: 최댓값 {f32.max:.3e}, eps {f32.eps:.3e}")
big16 = torch.tensor([300.0, 65504.0], dtype=torch.float16)
print("FP16 300 × 300 =", (big16[0] * big16[0]).item(), " (90,000 > 65,504 → inf)")
print("FP16 65504 + 8 =", (big16[1] + torch.tensor(8.0, dtype=torch.float16)).item(),
      " (간격 32보다 작아 반올림되어 그대로),  65504 + 32 =",
      (big16[1] + torch.tensor(32.0, dtype=torch.float16)).item(), " (넘침)")
print("FP32로 누산하면 300 × 300 =", (big16[0].float() * big16[0].float()).item())

# %% [markdown]
# 무작위 입력의 내적(K = 4096, 64개 행)에서도 차이가 납니다. 곱은 FP16 값 그대로 두고, 더하는 곳(누산기)의
# 자료형만 바꿔 FP64 기준값과의 상대 오차를 잽니다.

# %%
gen = torch.Generator().manual_seed(0)
a_vec = torch.randn(64, K_demo, generator=gen).half()
b_vec = torch.randn(K_demo, generator=gen).half()
acc16 = torch.zeros(64, dtype=torch.float16)
acc32 = torch.zeros(64, dtype=torch.float32)
for k in range(K_demo):
    prod = a_vec[:, k] * b_vec[k]          # FP16 × FP16
    acc16 = acc16 + prod                   # FP16 누산
    acc32 = acc32 + prod.float()           # FP32 누산 (tl.dot의 accumulator)
ref = a_vec.double() @ b_vec.double()
accumulation = pd.DataFrame({
    "누산기": ["FP16", "FP32"],
    "상대 오차 ||out-ref||/||ref||": [((acc16.double() - ref).norm() / ref.norm()).item(),
                                      ((acc32.double() - ref).norm() / ref.norm()).item()],
    "최대 절대 오차": [(acc16.double() - ref).abs().max().item(), (acc32.double() - ref).abs().max().item()],
})
accumulation

# %% [markdown]
# Tensor Core 명령도 FP16/BF16 입력을 받아 FP32 누산기 레지스터에 더하는 모드를 기본으로 지원합니다.
# 그래서 `accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)`로 선언해 K 루프 내내
# 정밀도를 지키고, 루프가 끝난 뒤 **한 번만** `c = accumulator.to(tl.float16)`으로 바꿔 저장합니다.
#
# ## 6. 에필로그 결합(Epilogue Fusion): 아끼는 HBM 이동량
#
# 루프 직후 accumulator가 아직 레지스터(FP32)에 있을 때
# `if ACTIVATION == "leaky_relu": accumulator = leaky_relu(accumulator)`를 하면, 활성화 함수를 위해 C를
# HBM에 썼다가 다시 읽는 별도 커널이 필요 없습니다. 별도 커널은 FP16 C(`2 Byte × M × N` = Q_write)를 한 번
# 읽고 한 번 더 써야 하므로 **2 × Q_write = 2 × 2MN = 4MN Byte**가 추가됩니다.
#
# > ⚠️ 과정의 원래 참고자료는 이 양을 "2MN × 2 Byte × 2회 = 8MN Byte"로 적었는데, 이는 **틀렸습니다**: 2MN은 이미
# > 읽기와 쓰기를 합친 **원소 수**(MN개 읽기 + MN개 쓰기)이므로 원소당 2 Byte를 곱하면 4MN Byte이고, "× 2회"를 한 번
# > 더 곱하면 읽기·쓰기를 두 번 센 것입니다. 아래 셀이 계산기로 직접 확인합니다.
#
# 4096³, 후보 2(128×128×32)의 숫자를 계산기로 봅시다(가상 하드웨어 1 TB/s 기준).

# %%
row = calc.roofline(4096, 4096, 4096, calc.SEED_CONFIGS[1])
separate_bytes = 2 * row.q_write                 # 별도 활성화 커널: C 읽기 + C 쓰기
separate_ms = separate_bytes / row.q_total * row.t_memory_ms
print(f"추가 이동량 = {separate_bytes:,} B = {separate_bytes // (4096 * 4096)} × M × N Byte "
      f"(참고자료의 8MN이라면 {8 * 4096 * 4096:,} B)")
pd.DataFrame({
    "항목": ["행렬곱 총 HBM 이동량 Q (결합)", "별도 leaky_relu 커널의 추가 이동량 (C 읽기+쓰기)",
           "추가 이동량 / Q", "추가 메모리 시간 (ms, 1 TB/s)"],
    "값": [f"{row.q_total:,} B", f"{separate_bytes:,} B", f"{separate_bytes / row.q_total:.2%}",
          f"{separate_ms:.4f}"],
})

# %% [markdown]
# GPU가 있으면 같은 커널을 `activation="leaky_relu"`로 결합했을 때와, 결합하지 않고 torch로 따로 적용했을
# 때를 `gemm_lab.bench.do_bench_ms`(`return_mode="median"`: **중앙값(median)**)로 잽니다. `triton.testing.do_bench`를
# 그냥 부르면 기본값이 평균(mean)이라 `results/`의 중앙값과 섞어 비교할 수 없습니다. CPU 해석기의 실행시간은 의미가
# 없으므로 재지 않습니다.

# %%
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
elif runtime.on_gpu():
    from gemm_lab import bench, kernels

    a_big = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    b_big = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    fused_ms = bench.do_bench_ms(lambda: kernels.matmul(a_big, b_big, activation="leaky_relu"))
    split_ms = bench.do_bench_ms(
        lambda: torch.nn.functional.leaky_relu(kernels.matmul(a_big, b_big), 0.01))
    env = bench.env_info()
    print(f"결합(fused): {fused_ms:.4f} ms, 분리(matmul 후 leaky_relu): {split_ms:.4f} ms (중앙값; "
          f"{env['gpu']}, compute capability {env['compute_capability']}, triton {env['triton']})")
else:
    print("GPU가 없어 실행시간은 재지 않습니다 (GPU에서 이 셀이 결합/분리 커널의 시간을 잽니다).")

# %% [markdown]
# ---
# # 연습문제 1 — 나누어떨어지지 않는 행렬(500 × 600 × 300)에서 모듈로(%)와 마스킹 (11점)
#
# Tutorial 03의 `matmul_kernel`로 **M = 500, N = 600, K = 300**인 FP16 행렬곱
# `A[500, 300] @ B[300, 600] = C[500, 600]`을 계산합니다. 타일은 **BLOCK_M = 128, BLOCK_N = 128,
# BLOCK_K = 64**입니다. 답은 파이썬 값(정수 또는 실수)으로 적으세요. 계산에 파이썬을 써도 됩니다.
#
# ### 1.1 그리드와 K 루프 (2점)
# `num_pid_m = cdiv(500, 128)`, `num_pid_n = cdiv(600, 128)`, 전체 프로그램 수 `grid`,
# 프로그램마다 도는 K 루프 횟수 `k_steps = cdiv(300, 64)`를 구하세요.

# %% nbgrader={"grade": false, "grade_id": "ex1_1_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
num_pid_m = (500 + 128 - 1) // 128
num_pid_n = (600 + 128 - 1) // 128
grid = num_pid_m * num_pid_n
k_steps = (300 + 64 - 1) // 64
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex1_1_grid_and_k_steps", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""1.1: num_pid_m, num_pid_n, grid, k_steps of 500x600x300 with 128x128x64 tiles."""
from gemm_lab.grading import fresh
g = fresh()
_tg = g.calc.tile_grid(500, 600, 300, 128, 128, 64)
g.check_value("num_pid_m", num_pid_m, _tg.num_pid_m)
g.check_value("num_pid_n", num_pid_n, _tg.num_pid_n)
g.check_value("grid", grid, _tg.grid)
### BEGIN HIDDEN TESTS
g.check_value("k_steps", k_steps, _tg.k_steps)
### END HIDDEN TESTS

# %% [markdown]
# ### 1.2 우하단 모서리 타일 (4점)
# 우하단 출력 타일을 맡은 프로그램(`pid_m = 3`, `pid_n = 4`)에서 `offs_cm`과 `offs_cn`이 가리키는 인덱스
# 범위(양 끝 포함: `row_start`–`row_end`, `col_start`–`col_end`), 그 가운데 C의 범위를 넘는 행의 수
# `rows_out`(`offs_cm >= M`)과 열의 수 `cols_out`(`offs_cn >= N`), 그리고 128 × 128 타일 안에서 `c_mask`가 참인
# 유효 원소 수 `valid`, 쓰기가 막히는 원소 수 `masked`를 구하세요.

# %% nbgrader={"grade": false, "grade_id": "ex1_2_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
row_start, row_end = 3 * 128, 3 * 128 + 127
col_start, col_end = 4 * 128, 4 * 128 + 127
rows_out = row_end + 1 - 500
cols_out = col_end + 1 - 600
valid = (500 - row_start) * (600 - col_start)
masked = 128 * 128 - valid
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex1_2_corner_tile_ranges", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""1.2: index ranges of offs_cm / offs_cn for the corner tile (pid_m=3, pid_n=4)."""
from gemm_lab.grading import fresh
g = fresh()
_edge = g.calc.edge_tile(500, 600, 128, 128, 3, 4)
g.check_value("row_start", row_start, _edge.row_start)
g.check_value("row_end", row_end, _edge.row_end)
g.check_value("col_start", col_start, _edge.col_start)
### BEGIN HIDDEN TESTS
g.check_value("col_end", col_end, _edge.col_end)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex1_2_rows_and_cols_out", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""1.2: rows and columns of the corner tile past M and N (the ones c_mask blocks)."""
from gemm_lab.grading import fresh
g = fresh()
_edge = g.calc.edge_tile(500, 600, 128, 128, 3, 4)
g.check_value("rows_out", rows_out, _edge.masked_rows,
              mistakes={_edge.valid_rows: "유효한 행의 수를 적었습니다. 범위를 넘는(offs_cm >= M) 행의 수입니다."})
g.check_value("cols_out", cols_out, _edge.masked_cols,
              mistakes={_edge.valid_cols: "유효한 열의 수를 적었습니다. 범위를 넘는(offs_cn >= N) 열의 수입니다."})

# %% nbgrader={"grade": true, "grade_id": "ex1_2_valid_and_masked", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""1.2: valid and masked element counts of the corner tile under c_mask."""
from gemm_lab.grading import fresh
g = fresh()
_edge = g.calc.edge_tile(500, 600, 128, 128, 3, 4)
g.check_value("valid", valid, _edge.valid)
### BEGIN HIDDEN TESTS
g.check_value("masked", masked, _edge.masked)
### END HIDDEN TESTS

# %% [markdown]
# ### 1.3 마지막 K 단계 (3점)
# 마지막 K 단계(`k = 4`)에서 `K - k * BLOCK_K`의 값 `remaining`, `offs_k`(0–63) 가운데 실제로 읽히는 칸 수
# `read`, `other`로 채워지는 칸 수 `padded`를 구하세요. 그리고 K축에 `other = 0.0` 대신 `other = 1.0`을
# 쓰면 **유효한 출력 원소 하나에 더해지는 가짜 값** `error_other_1`은 얼마일까요?

# %% nbgrader={"grade": false, "grade_id": "ex1_3_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
remaining = 300 - 4 * 64
read = remaining
padded = 64 - read
error_other_1 = padded * 1.0 * 1.0
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex1_3_k_tail_read_and_padded", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""1.3: the last K step's remaining width, read lanes and padded lanes."""
from gemm_lab.grading import fresh
g = fresh()
_tail = g.calc.k_tail(300, 64)
g.check_value("remaining", remaining, _tail.remaining)
g.check_value("read", read, _tail.read)
### BEGIN HIDDEN TESTS
g.check_value("padded", padded, _tail.padded)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex1_3_wrong_other_effect", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""1.3: what other=1.0 on the K axis adds to every valid output element."""
from gemm_lab.grading import fresh
g = fresh()
g.check_value("error_other_1", error_other_1, g.calc.padding_error(300, 64, 1.0))

# %% [markdown]
# 그림으로 확인해 봅시다 (계산기 `gemm_lab.calc.tiling`의 값으로 그립니다).

# %%
fig = pointers.edge_tile_figure(500, 600, 300, 128, 128, 64, pid_m=3, pid_n=4)

# %% [markdown]
# ### 1.4 설명해 보세요 (2점, 수동 채점)
# A의 행(`offs_am`)과 B의 열(`offs_bn`)에는 마스크 대신 `% M`, `% N`을 써서 0번 행·열 같은 값을 중복해서
# 읽어 오는데도 **유효한 출력 원소 값이 틀리지 않는 이유**와, 반대로 K축 읽기에서 `other = 0.0` 대신
# `other = 1.0`을 쓰면 **유효한 출력 원소까지 틀려지는 이유**를 자기 말로 설명하세요.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex1_4_explain_modulo_vs_other", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# `C[i, j] = Σ_k A[i, k] · B[k, j]`에서 출력의 행 i와 열 j는 서로 섞이지 않고 k 방향으로만 더해집니다.
# i ≥ M 또는 j ≥ N인 바깥 행·열이 `% M`, `% N`으로 0번 행·열 값을 읽어 계산해도 그 결과는 accumulator의
# 바깥 칸(i ≥ 500 또는 j ≥ 600)에만 남고, `tl.store`의 `c_mask`가 버립니다. 반면 K축의 빈칸은 유효한 (i, j)의
# 내적 합에 직접 더해지므로, `other = 1.0`이면 마지막 단계의 빈칸 20개가 1.0 × 1.0씩 더해져 모든 유효 원소가
# +20.0만큼 틀립니다. 0.0이라야 0 × 0 = 0으로 합이 그대로입니다.
# ### END SOLUTION

# %% [markdown]
# ---
# # 코딩 문제 — 커널의 TODO 1–3 채우기 (8점)
#
# 아래는 Tutorial 03 형태의 `matmul_kernel`입니다 (프로그램 순서는 단순 행 우선). 세 군데(TODO 1–3)를 채우세요.
# TODO의 번호는 persistent matmul 블로그 글(⑥ 노트북)의 TODO 1–3과 같지만, **코드는 Tutorial 03을 따릅니다**:
# M·N축은 `% M`, `% N`으로 감싸 읽고(마스크 없음) K축만 마스크를 겁니다. 블로그의 기본 커널은 M·N·K 세 축 모두에
# 마스크를 건 `tl.load`를 씁니다 — 둘 다 맞는 방법이고, 여기서는 §4의 표대로 Tutorial 03의 방식으로 채웁니다.
#
# * **TODO 1** — 포인터 블록과 마스크 재료: `offs_am`, `offs_bn`, `offs_k`, `a_ptrs` (`[BM, BK]`),
#   `b_ptrs` (`[BK, BN]`). (§2, §4)
# * **TODO 2** — K 루프: K 방향으로 `tl.cdiv(K, BLOCK_SIZE_K)`번 돌며 마스크(`other=0.0`)를 건 `tl.load`로
#   A·B 타일을 읽고 `accumulator = tl.dot(a, b, accumulator)`로 FP32 누산기에 더한 뒤 포인터를 전진. (§3)
# * **TODO 3** — 저장: `offs_cm`, `offs_cn`, `c_ptrs`, `c_mask`를 만들고 `tl.store(c_ptrs, c, mask=c_mask)`.
#
# 채점기는 여러분의 `student_matmul_kernel`을 **채점기 자신이 가진 `launch`**(아래에 주어진 것과 같은 코드)로 실제로
# 실행해 torch와 비교합니다. 크기는 타일의 배수가 아니고, 입력은 연속이 아닐 수도 있으며, 입력·출력은 독 값으로 채운
# 버퍼 속의 뷰입니다. 마스크를 빠뜨리면 틀립니다. 해석기에서 빨리 돌도록 타일은 작게(16×16×16) 씁니다.
#
# **점수 조건:** 커널 테스트(4점 + 4점)는 (1) 해석기 실행 결과가 맞고 (2) 커널이 sm_75/sm_80/sm_90용으로 **실제 컴파일**되며
# (3) K축 `tl.load`가 마스크를 쓸 때만 점수를 받습니다. 해석기에서만 돌고 컴파일러가 거부하는 커널은 0점입니다.
#
# **허용되는 변형:** 커널을 다른 이름으로 정의한 뒤 `student_matmul_kernel = my_kernel`처럼 묶어도, `tl.constexpr` 기본값을
# 모듈 상수(`BLOCK = 16` … `BLOCK_SIZE: tl.constexpr = BLOCK`)에서 가져와도, `import triton.language as tl2`처럼
# 다른 이름으로 가져와도 같은 점수를 받습니다. `@triton.autotune`·`@triton.heuristics`를 붙이면 채점기는 그 내용을
# 확인한 뒤 떼어 내고 주어진 `launch`가 넘기는 블록 크기로 실행합니다(튜닝 결과는 점수와 무관). 다만 주어진 `launch`는
# 블록 크기를 직접 넘기므로, 튜닝하는 인자와 겹치면 여러분의 노트북에서는 Triton이 오류를 냅니다 — 이 과제에는
# 붙이지 않는 편이 낫습니다. 커널 안에서는 `tl.*`와 다른 `@triton.jit` 함수만 부를 수 있습니다.

# %% nbgrader={"grade": false, "grade_id": "student_kernel", "locked": false, "schema_version": 3, "solution": true, "task": false}
@triton.jit
def student_matmul_kernel(
    # 포인터
    a_ptr, b_ptr, c_ptr,
    # 행렬 크기
    M, N, K,
    # stride: 한 축으로 한 칸 갈 때 포인터가 몇 원소 움직이는가
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    # 메타파라미터
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
):
    """C[M, N] = A[M, K] @ B[K, N]; one program computes one [BLOCK_SIZE_M, BLOCK_SIZE_N] tile of C."""
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    # TODO 1: offs_am, offs_bn, offs_k 와 포인터 블록 a_ptrs [BM, BK], b_ptrs [BK, BN] (§2, §4)
    ### BEGIN SOLUTION
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    ### END SOLUTION

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    # TODO 2: K 루프 — 마스크를 건 tl.load, tl.dot 누적, 포인터 전진 (§3)
    ### BEGIN SOLUTION
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    ### END SOLUTION
    c = accumulator.to(c_ptr.dtype.element_ty)

    # TODO 3: offs_cm, offs_cn, c_ptrs, c_mask 를 만들고 c를 저장 (§4)
    ### BEGIN SOLUTION
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)
    ### END SOLUTION


# %% [markdown]
# 아래 `launch`는 주어진 실행기(launcher)입니다. 수정하지 마세요.

# %% nbgrader={"grade": false, "grade_id": "given_launcher", "locked": true, "schema_version": 3, "solution": false, "task": false}
def launch(a, b, c, BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16):
    """Run student_matmul_kernel: c[M, N] = a[M, K] @ b[K, N] (c is written in place)."""
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, BLOCK_SIZE_M) * triton.cdiv(N, BLOCK_SIZE_N),)
    student_matmul_kernel[grid](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_SIZE_M=BLOCK_SIZE_M, BLOCK_SIZE_N=BLOCK_SIZE_N, BLOCK_SIZE_K=BLOCK_SIZE_K,
    )
    return c


# %% [markdown]
# 먼저 직접 확인해 보세요 (채점하지 않는 셀): 타일의 배수가 아닌 크기에서 torch(FP32 기준)와 비교합니다.

# %%
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
else:
    try:
        gen = torch.Generator().manual_seed(1)
        a_try = torch.randn(70, 50, generator=gen).half().to(DEVICE)
        b_try = torch.randn(50, 40, generator=gen).half().to(DEVICE)
        c_try = torch.empty(70, 40, dtype=torch.float16, device=DEVICE)
        launch(a_try, b_try, c_try)
        ref_try = (a_try.float() @ b_try.float())
        rel = ((c_try.float() - ref_try).norm() / ref_try.norm()).item()
        print(("✅" if rel < 1e-3 else "❌"), f"70×40×50: 상대 오차 {rel:.2e} (FP16 출력이면 1e-3보다 작아야 합니다)")
    except Exception as exc:  # 해석기는 TODO의 NotImplementedError를 InterpreterError로 감싸서 올립니다
        if "NotImplementedError" not in repr(exc):
            raise
        print("❌ 아직 TODO를 채우지 않았습니다.")

# %% nbgrader={"grade": true, "grade_id": "kernel_matches_torch_visible_shapes", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
"""Coding: the student's kernel matches torch on random shapes (poisoned margins, non-contiguous inputs)."""
from gemm_lab.grading import fresh
g = fresh()
g.check_matmul(student_matmul_kernel)

# %% nbgrader={"grade": true, "grade_id": "kernel_matches_torch_hidden_shapes", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
"""Coding: the student's kernel matches torch on hidden shapes (edges, K tails, tiny and skinny)."""
from gemm_lab.grading import fresh
g = fresh()
g.check_matmul(student_matmul_kernel, shapes=[(3, 5, 7)])     # 공개: 타일 하나보다 작은 행렬
### BEGIN HIDDEN TESTS
g.check_matmul(student_matmul_kernel, hidden=True, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ---
# ## 7. FP16 결과는 어떻게 비교해야 할까? (`atol=1e-2`의 함정)
#
# 이 과정의 원래 과제 안내는 정확도 확인으로 **512 × 512 FP16 입력**과 2의 거듭제곱이 아닌 **500 × 600 × 300**에서
# `torch.allclose(triton, torch, atol=1e-2, rtol=0)`를 제안합니다. 하지만 FP16 출력의 크기가 16–32이면 FP16의
# 간격(ulp)이 0.0156이라, 누산 순서만 다른 **올바른** 커널도 1–2 ulp(최대 0.03125) 차이가 납니다. 두 크기에서 이 과정의
# 참조 커널(`gemm_lab.kernels.matmul`, 64×64×32)로 직접 봅시다. (H200, compute capability 9.0, triton 3.6.0에서도
# 500×600×300에서 이 검사가 실패했습니다: 정답 커널인데도요. GPU가 없으면 아래는 CPU 해석기의 결과입니다.)

# %%
from gemm_lab import kernels
from gemm_lab.kernels import check

accuracy_rows = []
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
else:
    for M_chk, N_chk, K_chk in ((512, 512, 512), (500, 600, 300)):
        gen = torch.Generator().manual_seed(7)
        a_chk = torch.randn(M_chk, K_chk, generator=gen).half().to(DEVICE)
        b_chk = torch.randn(K_chk, N_chk, generator=gen).half().to(DEVICE)
        c_chk = kernels.matmul(a_chk, b_chk, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
        ref32 = a_chk.float() @ b_chk.float()
        c_torch = ref32.half()      # torch, FP32로 곱해 FP16으로 반올림
        accuracy_rows.append({
            "크기 M×N×K": f"{M_chk}×{N_chk}×{K_chk}",
            "allclose(atol=1e-2, rtol=0)": "✅ 통과" if torch.allclose(c_chk, c_torch, atol=1e-2, rtol=0) else "❌ 실패",
            "최대 |차이|": round((c_chk.float() - c_torch.float()).abs().max().item(), 5),
            "상대 오차 (Frobenius)": f"{check.relative_error(c_chk, ref32):.2e}",
            "최대 ulp 오차 (FP32 기준값 대비)": round(check.max_ulp_error(c_chk, ref32), 2),
        })
    info = runtime.describe()
    print("실행 장치:", info["device_name"],
          f"(compute capability {info['compute_capability']})" if info["compute_capability"] else "")
    display(pd.DataFrame(accuracy_rows).set_index("크기 M×N×K"))

# %% [markdown]
# 올바른 검사는 **출력 크기에 맞춰 늘어나는** 허용 오차를 씁니다: 상대 오차(‖out − ref‖ / ‖ref‖)나, FP32 기준값
# 대비 원소별 ulp 오차입니다. 채점기 `grading.check_matmul`도 이렇게 비교합니다. (검사 방법은 ⑤ 노트북에서 더 자세히
# 다루고 직접 작성해 봅니다.)

# %%
if accuracy_rows:  # 위 셀에서 마지막으로 잰 500×600×300
    try:
        check.assert_close(c_chk, a_chk.float() @ b_chk.float())
        print("✅ 상대 오차·ulp 기준으로는 정답 커널이 통과합니다.")
    except AssertionError as exc:
        print("❌", exc)

# %% [markdown]
# ## 정리
# * 포인터 블록 = `base + rows[:, None] * stride_row + cols[None, :] * stride_col` (브로드캐스팅으로 `[BM, BK]`,
#   `[BK, BN]`). K 루프마다 `BLOCK_K × stride_ak` / `BLOCK_K × stride_bk`만큼 통째로 전진합니다.
# * M·N축 가장자리는 `% M`, `% N`으로 감싸 읽고 `c_mask`로 버리며, 곱해서 더해지는 K축만 `other = 0.0`이어야
#   합니다.
# * 누산기는 FP32: FP16 누산은 2048을 넘으면 +1도 잃습니다. 변환은 루프 뒤 한 번.
# * FP16은 가수부 10비트(2048 넘으면 +1을 잃음)에 최댓값 65,504(넘으면 `inf`)라 누산기는 FP32입니다.
# * 에필로그 결합은 활성화 함수를 레지스터 위에서 처리해 C의 추가 왕복(FP16 C 읽기 + 쓰기 = **4MN Byte**; 참고자료의
#   8MN은 두 번 센 값)을 없앱니다.
# * FP16 결과는 `atol` 하나가 아니라 상대 오차/ulp로 비교합니다.
#
# **핵심 용어 3개:** 2차원 포인터 블록(Block of Pointers, 브로드캐스팅), K축 누적(`tl.dot` + FP32 accumulator),
# 에필로그 결합(Epilogue Fusion)
#
# 다음 노트북(②)에서는 같은 커널의 **프로그램 실행 순서**가 L2 캐시를 통해 성능을 바꾸는 이유를 셉니다.
