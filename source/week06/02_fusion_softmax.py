# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 6주차 ③④ 커널 결합(Kernel Fusion)과 HBM 왕복, 행 단위 리덕션과 패딩값(other)
#
# > “여러 연산을 한 커널로 묶으면 왜 빨라질까? 한 행을 블록 하나에 안전하게 담으려면?”
#
# ## 이번 노트북에서 배우는 것
# 1. 단일 `x + y`와 달리 Softmax처럼 여러 단계를 거치는 연산은 왜 한 커널로 묶을 때 크게 빨라지는지
# 2. `naive_softmax`의 다섯 단계(max, 뺄셈, exp, sum, 나눗셈)가 HBM을 몇 번 왕복하는지 세기:
#    `8MN + 4M` 원소 대 결합 커널의 `2MN` 원소, Byte와 가상 하드웨어의 시간, 속도 향상 배수
# 3. 행 단위 리덕션(`tl.max`, `tl.sum`)과 `BLOCK_SIZE = triton.next_power_of_2(N)`, `row_start_ptr`
# 4. 빈자리를 `other=-float('inf')`로 채워야 하는 이유 — `0.0`으로 채우면 무엇이 틀어지는지 **직접 실행해서** 확인
# 5. 직접 작성: 결합 Softmax 커널 (채점: 무작위·숨겨진 모양, 독이 든 여백 안에서 torch와 비교)
#
# ## GPU가 필요한 부분
# **없습니다.** 이동량과 시간은 `gemm_lab.calc`의 가상 하드웨어(3·4주차와 같은 FP32 20 TFLOP/s,
# HBM 1 TB/s)로 계산하고, 커널은 GPU가 없으면 CPU 해석기에서 실행합니다. 실제 GPU 측정은 다음 노트북(⑤)에서 합니다.
#
# 점수: 연습 1 (8점), 연습 2 (4점), 연습 3 (2점, 서술), 연습 4 (6점, 코딩) — 모두 20점.
# 연습 4의 커널 테스트는 **CPU 해석기 실행**과 **sm_75/80/90 교차 컴파일**(실제 Triton 컴파일러)이 모두 통과해야 점수를 받습니다.
#
# ## 읽을거리
# * Triton Tutorial 02 — Fused Softmax: <https://triton-lang.org/main/getting-started/tutorials/02-fused-softmax.html>
# * Triton Tutorial 01 — Vector Addition (6주차 ①②): <https://triton-lang.org/main/getting-started/tutorials/01-vector-add.html>
# * Triton Programming Guide, Chapter 1: <https://triton-lang.org/main/programming-guide/chapter-1/introduction.html>
# * API: `tl.load`(`other`) <https://triton-lang.org/main/python-api/generated/triton.language.load.html>,
#   `tl.max` <https://triton-lang.org/main/python-api/generated/triton.language.max.html>,
#   `tl.sum` <https://triton-lang.org/main/python-api/generated/triton.language.sum.html>,
#   `triton.next_power_of_2` <https://triton-lang.org/main/python-api/generated/triton.next_power_of_2.html>
# * Triton Semantics (브로드캐스팅과 자료형 승격: 행 최댓값을 빼는 `row - row_max`, 패딩값 `other`의 자료형):
#   <https://triton-lang.org/main/python-api/triton-semantics.html>
# * NVIDIA Matrix Multiplication Background §2 (Math and Memory Bounds — 메모리 병목의 뜻):
#   <https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html>

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false, "task": false}
from gemm_lab import runtime  # triton보다 먼저: GPU가 없으면 CPU 해석기를 켭니다

import pandas as pd
import torch
import triton
import triton.language as tl

from gemm_lab.calc.softmax import naive_softmax_passes, softmax_traffic
from gemm_lab.calc.tiling import k_tail
from gemm_lab.kernels import naive_softmax
from gemm_lab.viz import blocks as viz

DEVICE = runtime.device()
print("커널이 실행될 장치:", DEVICE, "(CPU 해석기)" if runtime.INTERPRET else "")

# %% [markdown]
# ## 1. 동기: 덧셈은 묶을 것이 없고, Softmax는 묶을 것이 많다 (③)
#
# `x + y`는 `x`와 `y`를 한 번 읽고 결과를 한 번 쓰면 끝입니다. Triton으로 써도 PyTorch 기본 연산과 HBM 이동량이 같으므로
# 속도도 비슷합니다. Softmax는 다릅니다. Tutorial 02의 `naive_softmax`는 다섯 줄의 PyTorch 연산이고, 각 줄이 **별도의 커널**로
# 실행되어 중간 텐서를 HBM에 썼다가 다음 커널이 다시 읽습니다.

# %%
import inspect

print(inspect.getsource(naive_softmax))

# %% [markdown]
# 행렬 `X[M, N]`에 대해 각 단계가 HBM에서 읽고 쓰는 원소 수를 세어 봅시다 (길이 `M`인 벡터 `x_max`, `denominator` 포함,
# 캐시 적중 없음). 예로 ⑤의 정확도 검사에 쓰는 `M = 1823`, `N = 781`을 씁니다 (연습 1에서는 `4096 × 1024`를 직접 셉니다).

# %%
M_DEMO, N_DEMO = 1823, 781
passes_demo = naive_softmax_passes(M_DEMO, N_DEMO)
display(passes_demo)
traffic_demo = softmax_traffic(M_DEMO, N_DEMO)
print(f"naive 합계: {traffic_demo.naive_elems:,} 원소 (= 8MN + 4M),  근사 8MN = {traffic_demo.naive_elems_approx:,}")
print(f"결합 커널:  {traffic_demo.fused_elems:,} 원소 (= 2MN: X를 한 번 읽고 Y를 한 번 씀)")

# %% [markdown]
# 결합 커널(`softmax_kernel`)은 한 행을 HBM에서 온칩(SRAM·레지스터)으로 **한 번** 읽고(`tl.load`), 최댓값·뺄셈·지수·합계·나눗셈을
# 모두 온칩에서 마친 뒤 결과를 **한 번** 씁니다(`tl.store`). 그림으로 비교하면:

# %%
fig = viz.plot_hbm_traffic(M_DEMO, N_DEMO)

# %% [markdown]
# 메모리 대역폭이 병목인(memory-bound) 연산이므로 시간은 대략 `이동 Byte ÷ HBM 대역폭`입니다. 가상 하드웨어에서:

# %%
pd.DataFrame(
    {
        "HBM 이동 원소": [traffic_demo.naive_elems, traffic_demo.fused_elems],
        "HBM 이동 Byte": [traffic_demo.naive_bytes, traffic_demo.fused_bytes],
        "메모리 시간 (ms)": [traffic_demo.naive_ms, traffic_demo.fused_ms],
    },
    index=["naive_softmax (5 커널)", "softmax_kernel (결합)"],
).style.format({"HBM 이동 원소": "{:,}", "HBM 이동 Byte": "{:,}", "메모리 시간 (ms)": "{:.5f}"})

# %%
print(f"이론적 속도 향상: {traffic_demo.speedup:.3f}배 — 연산량은 같고, HBM 왕복만 줄었습니다.")

# %% [markdown]
# ## 2. 행 단위 리덕션: 한 행 = 프로그램 하나 (④)
#
# 결합 커널은 **행 하나를 프로그램 하나**가 맡습니다(`grid = (M, )`). 행 전체가 한 블록에 들어가야 `tl.max`와 `tl.sum`을
# 블록 안에서 끝낼 수 있으므로 `BLOCK_SIZE`는 `N` 이상이어야 하고, `tl.arange`의 길이는 2의 거듭제곱이어야 하므로
# `BLOCK_SIZE = triton.next_power_of_2(N)`입니다.

# %%
tail_demo = k_tail(N_DEMO, triton.next_power_of_2(N_DEMO))
print(f"N = {N_DEMO} → BLOCK_SIZE = triton.next_power_of_2({N_DEMO}) = {triton.next_power_of_2(N_DEMO)}")
print(f"행마다 실제로 읽는 레인 {tail_demo.read}개, 마스크로 끄고 other로 채우는 레인 {tail_demo.padded}개")
fig = viz.plot_row_padding(N_DEMO, triton.next_power_of_2(N_DEMO), other=float("-inf"))

# %% [markdown]
# 행 `row_idx`의 시작 주소는 `row_start_ptr = input_ptr + row_idx * input_row_stride`입니다. 여기서 **`N`이 아니라
# 스트라이드(stride)** 를 곱하는 이유는, 행렬이 더 큰 버퍼의 일부(view)이면 한 행에서 다음 행까지의 거리가 `N`과 다르기
# 때문입니다.

# %%
big = torch.randn(4, 1024)
view = big[:, :N_DEMO]  # 각 행의 앞 781개만 보는 view
print("view.shape =", tuple(view.shape), " view.stride() =", view.stride(),
      f"→ 다음 행까지 {view.stride(0)}칸 (N = {view.shape[1]}이 아님)")

# %% [markdown]
# ## 3. 왜 `other=-float('inf')`이고 `0.0`이 아닌가 (④)
#
# 마스크로 끈 레인에는 `tl.load(..., mask=mask, other=...)`의 `other` 값이 들어가고, 그 값도 `tl.max`와 `tl.sum`에 참여합니다.
# `-inf`는 최댓값을 바꾸지 않고 `exp(-inf - max) = 0`이라 합계도 바꾸지 않습니다. `0.0`은 어떨까요? 모든 원소가 음수인
# 길이 781의 행을 `BLOCK_SIZE = 1024`로 읽는 커널을 `other`만 바꿔 실행해 봅시다. 아래 `row_stats_kernel`은 Softmax 커널의
# 앞부분(행 읽기, `tl.max`, `tl.sum(tl.exp(...))`)만 떼어 낸 것이고, `OTHER`가 패딩값입니다.

# %% nbgrader={"grade": false, "grade_id": "row_stats_kernel", "locked": true, "schema_version": 3, "solution": false, "task": false}
@triton.jit
def row_stats_kernel(x_ptr, max_ptr, sum_ptr, y_ptr, n_cols, BLOCK_SIZE: tl.constexpr, OTHER: tl.constexpr):
    """One row: its max, sum(exp(row - max)) and softmax, with masked lanes filled with OTHER."""
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    row = tl.load(x_ptr + col_offsets, mask=mask, other=OTHER)
    row_max = tl.max(row, axis=0)
    numerator = tl.exp(row - row_max)
    denominator = tl.sum(numerator, axis=0)
    tl.store(max_ptr, row_max)
    tl.store(sum_ptr, denominator)
    tl.store(y_ptr + col_offsets, numerator / denominator, mask=mask)


def row_stats(row, other):
    """(tl.max, tl.sum(tl.exp(row - max)), softmax row) of one 1-D row, read with next_power_of_2 lanes."""
    row = row.contiguous()
    row_max = torch.empty(1, device=row.device)
    row_sum = torch.empty(1, device=row.device)
    y = torch.empty_like(row)
    row_stats_kernel[(1,)](row, row_max, row_sum, y, row.numel(),
                           BLOCK_SIZE=triton.next_power_of_2(row.numel()), OTHER=other)
    return row_max.item(), row_sum.item(), y


# %%
torch.manual_seed(0)
negative_row = -1.0 - 4.0 * torch.rand(N_DEMO, device=DEVICE)  # 모든 원소가 [-5, -1) 사이의 음수
reference = torch.softmax(negative_row, dim=0)
rows = []
for other in (float("-inf"), 0.0):
    m, s, y = row_stats(negative_row, other)
    rows.append({
        "other": other, "tl.max": m, "tl.sum(tl.exp(row - max))": s,
        "softmax 행의 합": y.sum().item(), "torch.softmax와의 최대 오차": (y - reference).abs().max().item(),
    })
stats = pd.DataFrame(rows).set_index("other")
display(stats)
true_sum = torch.exp(negative_row).sum().item()
print(f"참고: 행의 실제 최댓값 = {negative_row.max().item():.6f},  sum(exp(row − 0)) = {true_sum:.4f}")
print(f"other = 0.0일 때 패딩이 합계에 더한 양: {stats.loc[0.0, 'tl.sum(tl.exp(row - max))'] - true_sum:.4f}"
      f"  (패딩 레인 {tail_demo.padded}개 × exp(0 − 0) = 1)")
for other, r in stats.iterrows():
    ok = abs(r["softmax 행의 합"] - 1.0) < 1e-5 and r["torch.softmax와의 최대 오차"] < 1e-6
    print(("✅" if ok else "❌"), f"other = {other}: softmax 행의 합 {r['softmax 행의 합']:.6f}")

# %% [markdown]
# `other = 0.0`이면 음수뿐인 행의 최댓값이 패딩의 `0.0`으로 바뀌고(실제 최댓값은 음수), 패딩 레인마다
# `exp(0 − 0) = 1`이 합계에 더해집니다 — 합계가 패딩 레인 수만큼 커지고, 출력 행의 합은 1보다 훨씬 작아집니다.
# 값이 더 작은(예: −100 근처) 행이라면 `exp(x − 0)`이 0으로 언더플로해 출력 전체가 0이 되기도 합니다. `-inf`는 최댓값을
# 바꾸지 않고(`max(x, -inf) = x`), `exp(-inf − max) = 0`이라 합계도 바꾸지 않습니다.
#
# **행이 아주 길면?** 한 행 전체(`BLOCK_SIZE`개 원소)를 한 프로그램의 레지스터(와 공유 메모리)에 올려야 하므로 `N`이 커질수록
# 스레드당 레지스터가 늘고, 한계를 넘으면 레지스터가 로컬 메모리로 넘치거나(spill) 컴파일·실행 자원이 부족해집니다.
# `gemm_lab.kernels.softmax`도 이런 이유로 너무 긴 행을 거절합니다(아래). 그보다 긴 행은 행을 여러 블록으로 나눠 돌며
# 최댓값과 합계를 이어서 갱신하는 방식(online softmax)이 필요합니다.

# %%
from gemm_lab.kernels import softmax as fused_softmax
from gemm_lab.kernels.softmax import MAX_BLOCK_SIZE

try:
    fused_softmax(torch.zeros(1, MAX_BLOCK_SIZE + 1, device=DEVICE))
except ValueError as exc:
    print("ValueError:", exc)

# %% [markdown]
# ## 4. 정리
#
# * `naive_softmax`의 다섯 커널은 `8MN + 4M` 원소를 HBM으로 옮기고, 결합 커널은 `2MN` 원소만 옮깁니다. 메모리 병목
#   연산에서는 이동량 비율이 곧 이론적 속도 향상입니다.
# * 결합 커널은 한 행을 프로그램 하나가 맡고, `BLOCK_SIZE = next_power_of_2(N)` 레인으로 읽어 `tl.max`·`tl.sum`을 온칩에서 끝냅니다.
# * 행의 시작은 `input_ptr + row_idx * input_row_stride`(스트라이드, `N`이 아님), 빈자리는 `other=-inf`입니다.
#
# **핵심 용어 3개:** 커널 결합(Kernel Fusion), HBM 왕복(HBM Round Trip), 행 단위 리덕션(Row-wise Reduction)

# %% [markdown]
# ## 연습 1. `M = 4096`, `N = 1024` FP32 Softmax의 HBM 이동량 (8점)
#
# 입력 `X`는 이미 장치 메모리에 있고 커널 사이의 캐시 적중은 없습니다. 가상 하드웨어의 HBM 대역폭은 1 × 10¹² Byte/s입니다.
#
# * `naive_steps`: `naive_softmax` 다섯 단계의 HBM **읽기·쓰기 원소 수**, 단계 순서대로 `[읽기, 쓰기]` 5행
#   (max, 뺄셈, exp, sum, 나눗셈). 리스트의 리스트 또는 `reads`, `writes` 열이 있는 DataFrame
# * `naive_elems` (`8MN + 4M`), `naive_elems_approx` (길이 `M` 벡터를 생략한 `8MN`), `fused_elems` (`2MN`)
# * `naive_bytes`, `fused_bytes`: 총 이동 Byte (원소당 4 Byte, 전체 원소 수 기준). Byte 수는 **정수로 정확히** 적으세요:
#   `8MN` 근사와 `8MN + 4M`은 길이 `M` 벡터의 `4M` 원소만큼만 달라 상대 오차 0.1%로는 구별되지 않기 때문입니다
# * `naive_ms`, `fused_ms`: 가상 하드웨어에서의 메모리 시간(ms), `speedup`: 이론적 속도 향상 배수 (`naive_ms / fused_ms`)
#
# 실수 답은 **유효숫자 4자리 이상**으로 적으세요 (상대 오차 0.1% 안이면 정답; 계산 결과를 그대로 두어도 됩니다).

# %% nbgrader={"grade": false, "grade_id": "ex1_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
M, N = 4096, 1024
# naive_steps = [[읽기, 쓰기], ...]  # 5행
# naive_elems = ...; naive_elems_approx = ...; fused_elems = ...
# naive_bytes = ...; fused_bytes = ...
# naive_ms = ...; fused_ms = ...; speedup = ...
### BEGIN SOLUTION
naive_steps = [
    [M * N, M],          # x.max(dim=1)
    [M * N + M, M * N],  # x - x_max[:, None]
    [M * N, M * N],      # torch.exp(z)
    [M * N, M],          # numerator.sum(dim=1)
    [M * N + M, M * N],  # numerator / denominator[:, None]
]
naive_elems = 8 * M * N + 4 * M
naive_elems_approx = 8 * M * N
fused_elems = 2 * M * N
naive_bytes = naive_elems * 4
fused_bytes = fused_elems * 4
naive_ms = naive_bytes / 1e12 * 1e3
fused_ms = fused_bytes / 1e12 * 1e3
speedup = naive_ms / fused_ms
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex1_naive_steps_table", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""naive_steps holds the reads and writes (elements) of the five naive_softmax steps."""
from gemm_lab.grading import fresh
g = fresh()
_steps = g.calc.naive_softmax_passes(4096, 1024)
g.check_value("naive_steps의 행 수", len(naive_steps), len(_steps))
### BEGIN HIDDEN TESTS
_expected = _steps.set_index("step")[["reads", "writes"]]
g.check_table("naive_steps", naive_steps, _expected, row_name="{}단계")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex1_element_totals", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""naive_elems = 8MN + 4M, naive_elems_approx = 8MN, fused_elems = 2MN at 4096 x 1024."""
from gemm_lab.grading import fresh
g = fresh()
_key = g.calc.softmax_traffic(4096, 1024)
g.check_value("fused_elems", fused_elems, _key.fused_elems)
### BEGIN HIDDEN TESTS
g.check_value("naive_elems", naive_elems, _key.naive_elems,
                    mistakes={_key.naive_elems_approx: "길이 M 벡터(x_max, denominator)의 읽기·쓰기 4M을 빠뜨렸습니다."})
g.check_value("naive_elems_approx", naive_elems_approx, _key.naive_elems_approx)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex1_bytes", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""naive_bytes and fused_bytes are the element totals times 4 bytes, exactly (8MN x 4 is wrong)."""
from gemm_lab.grading import fresh
g = fresh()
_key = g.calc.softmax_traffic(4096, 1024)
g.check_value("fused_bytes", fused_bytes, _key.fused_bytes)
### BEGIN HIDDEN TESTS
g.check_value("naive_bytes", naive_bytes, _key.naive_bytes,
              mistakes={_key.naive_elems_approx * 4: "8MN 근사로 계산했습니다. naive_bytes는 전체 원소 수(8MN + 4M) × 4 Byte입니다."})
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex1_times_ms", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""naive_ms and fused_ms are the bytes over 1 TB/s, in milliseconds."""
from gemm_lab.grading import fresh
g = fresh()
_key = g.calc.softmax_traffic(4096, 1024)
g.check_value("fused_ms", fused_ms, _key.fused_ms, rel=1e-3,
                    mistakes={_key.fused_ms * 1e-3: "초(s)로 답했습니다. 밀리초(ms)로 바꾸세요."})
### BEGIN HIDDEN TESTS
g.check_value("naive_ms", naive_ms, _key.naive_ms, rel=1e-3,
                    mistakes={_key.naive_ms * 1e-3: "초(s)로 답했습니다. 밀리초(ms)로 바꾸세요."})
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex1_speedup", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""speedup = naive_ms / fused_ms (about 4)."""
from gemm_lab.grading import fresh
g = fresh()
_key = g.calc.softmax_traffic(4096, 1024)
g.check_value("speedup", speedup, _key.speedup, rel=1e-3,
                    mistakes={1 / _key.speedup: "fused_ms / naive_ms로 나눴습니다. 느린 쪽 ÷ 빠른 쪽입니다."})

# %% [markdown]
# ## 연습 2. 한 행의 크기와 패딩 (4점)
#
# * `row_bytes`: `M = 4096`, `N = 1024` FP32 행렬에서 결합 커널이 한 행을 온칩에 올릴 때 필요한 최소 데이터 크기(Byte)
# * `N = 1000`인 행을 결합 커널로 읽을 때: `block_1000` (`BLOCK_SIZE`), `padded_1000` (마스크로 끄는 레인 수)
# * 같은 행의 원소가 모두 음수이고 `other = 0.0`으로 잘못 채웠을 때: `max_1000_zero` (`tl.max`가 돌려주는 값),
#   `extra_sum_1000` (패딩 레인 때문에 `tl.sum(tl.exp(row - row_max))`에 더해지는 양)

# %% nbgrader={"grade": false, "grade_id": "ex2_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
# row_bytes = ...
# block_1000 = ...; padded_1000 = ...
# max_1000_zero = ...; extra_sum_1000 = ...
### BEGIN SOLUTION
row_bytes = 1024 * 4
block_1000 = 1024
padded_1000 = 1024 - 1000
max_1000_zero = 0.0
extra_sum_1000 = 24.0
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex2_row_bytes", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""row_bytes is N x 4 bytes (4 KiB) for N = 1024 FP32."""
from gemm_lab.grading import fresh
g = fresh()
g.check_value("row_bytes", row_bytes, g.calc.softmax_traffic(4096, 1024).row_bytes,
                    mistakes={1024: "원소 수입니다. 원소당 4 Byte를 곱하세요.", 4: "KiB 단위입니다. Byte로 답하세요."})

# %% nbgrader={"grade": true, "grade_id": "ex2_block_and_padding_1000", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""block_1000 is next_power_of_2(1000) and padded_1000 the masked lanes."""
from gemm_lab.grading import fresh
g = fresh()
_block = 1 << (1000 - 1).bit_length()  # next_power_of_2(1000)
_tail = g.calc.k_tail(1000, _block)
g.check_value("block_1000", block_1000, _tail.read + _tail.padded)
### BEGIN HIDDEN TESTS
g.check_value("padded_1000", padded_1000, _tail.padded)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex2_wrong_other_effect", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""With other=0.0 an all-negative row of 1000 gets max 0.0 (the padding) and one exp(0 - 0) = 1 per padded lane."""
from gemm_lab.grading import fresh
g = fresh()
_other = 0.0  # the wrong padding value of the question: every real element is below it
_tail = g.calc.k_tail(1000, 1 << (1000 - 1).bit_length())
g.check_value("max_1000_zero", max_1000_zero, _other, abs=1e-6)
### BEGIN HIDDEN TESTS
g.check_value("extra_sum_1000", extra_sum_1000, _tail.padded * 1.0, rel=1e-3,
              hint="패딩 레인 하나가 exp(0 − 0) = 1을 더합니다 (3절에서 실행해 본 값).")
### END HIDDEN TESTS

# %% [markdown]
# ## 연습 3. 행이 온칩 메모리보다 길면 (2점, 서술)
#
# 결합 Softmax 커널은 `N`이 아주 커지면(예: `N = 200,000`) 어떤 제약에 부딪히는지, 그리고 그때는 커널을 어떻게 바꿔야
# 하는지 두세 문장으로 설명하세요.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex3_long_rows", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 한 프로그램이 한 행 전체(`next_power_of_2(N)`개 원소)를 레지스터·공유 메모리에 올려야 하므로, `N`이 커지면 스레드당
# 레지스터가 한계를 넘어 spill이 생기거나 컴파일·실행 자원(OutOfResources)이 부족해지고, 한 SM에 올라갈 수 있는 프로그램
# 수(occupancy)도 줄어듭니다. 그때는 행을 `BLOCK_SIZE`씩 여러 번 나눠 읽으며 최댓값과 지수 합을 이어서 갱신하는
# online softmax(두 번 읽기 또는 한 번 읽기 + 보정)나 행을 여러 프로그램에 나누는 방식이 필요합니다.
# ### END SOLUTION

# %% [markdown]
# ## 연습 4. 결합 Softmax 커널 직접 작성하기 (6점, 코딩)
#
# 아래 `softmax_kernel`의 TODO를 채우세요. 프로그램 하나가 행 하나를 맡습니다. 호출 함수 `launch(x, out)`는 주어져
# 있습니다(수정하지 마세요). 채점기는 여러분의 `softmax_kernel`을 **자기가 가진 같은 호출 코드**로 무작위 모양과
# **숨겨진 모양**(2의 거듭제곱이 아닌 `N`, 한 행짜리 행렬 등)에 실행하고, 입력을 독이 든 여백 안의 view로 넘겨
# `out`이 `torch.softmax(x, dim=1)`과 같은지, 여백이 그대로인지 확인합니다.
#
# **점수 조건:** 커널 테스트(3점 + 3점)는 해석기 실행 결과가 맞고, 커널이 sm_75/sm_80/sm_90용으로 **실제 컴파일**되며,
# `tl.load`가 마스크를 쓸 때만 점수를 받습니다.
#
# **허용되는 변형:** 커널을 다른 이름으로 정의한 뒤 `softmax_kernel = my_kernel`처럼 묶어도, `tl.constexpr` 기본값을
# 모듈 상수(`BLOCK = 16` … `BLOCK_SIZE: tl.constexpr = BLOCK`)에서 가져와도, `import triton.language as tl2`처럼
# 다른 이름으로 가져와도 같은 점수를 받습니다. `@triton.autotune`·`@triton.heuristics`를 붙이면 채점기는 그 내용을
# 확인한 뒤 떼어 내고 주어진 `launch`가 넘기는 블록 크기로 실행합니다(튜닝 결과는 점수와 무관). 다만 주어진 `launch`는
# 블록 크기를 직접 넘기므로, 튜닝하는 인자와 겹치면 여러분의 노트북에서는 Triton이 오류를 냅니다 — 이 과제에는
# 붙이지 않는 편이 낫습니다. 커널 안에서는 `tl.*`와 다른 `@triton.jit` 함수만 부를 수 있습니다.
#
# * TODO 1: 행 번호 `row_idx`와 행의 시작 포인터 `row_start_ptr` (스트라이드 사용)
# * TODO 2: 열 오프셋 `col_offsets`, 마스크 `mask`, 한 행 읽기 (`other`에 주의!)
# * TODO 3: 최댓값 빼기, `tl.exp`, 합계, 나눗셈 — 모두 온칩에서
# * TODO 4: 출력 행의 포인터를 만들고 마스크와 함께 저장

# %% nbgrader={"grade": false, "grade_id": "ex4_softmax_kernel", "locked": false, "schema_version": 3, "solution": true, "task": false}
@triton.jit
def softmax_kernel(output_ptr, input_ptr,  # 출력과 입력의 포인터
                   input_row_stride, output_row_stride,  # 한 행에서 다음 행까지의 거리 (원소 수)
                   input_col_stride, output_col_stride,  # 한 열에서 다음 열까지의 거리 (보통 1)
                   n_rows, n_cols,  # 행렬의 모양
                   BLOCK_SIZE: tl.constexpr,  # next_power_of_2(n_cols)
                   ):
    # TODO 1: row_idx = tl.program_id(0), row_start_ptr = input_ptr + row_idx * input_row_stride
    # TODO 2: col_offsets = tl.arange(0, BLOCK_SIZE), mask, 한 행 읽기 (빈자리는 other=?)
    # TODO 3: 최댓값 빼기 → tl.exp → tl.sum → 나누기 (모두 온칩에서)
    # TODO 4: 출력 행의 포인터 (output_row_stride, output_col_stride) → tl.store(..., mask=mask)
    ### BEGIN SOLUTION
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    row = tl.load(row_start_ptr + col_offsets * input_col_stride, mask=mask, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    tl.store(output_row_start_ptr + col_offsets * output_col_stride, softmax_output, mask=mask)
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "ex4_launcher", "locked": true, "schema_version": 3, "solution": false, "task": false}
def launch(x, out):
    """out[:, :] = softmax(x, dim=1) for a 2-D FP32 tensor, one program per row (given: do not edit)."""
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    softmax_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), x.stride(1), out.stride(1),
                              n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE)
    return out


# %% nbgrader={"grade": true, "grade_id": "ex4_softmax_random", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""The student's softmax_kernel matches torch.softmax on random shapes, margins untouched."""
from gemm_lab.grading import fresh
g = fresh()
g.check_softmax(softmax_kernel)

# %% nbgrader={"grade": true, "grade_id": "ex4_softmax_hidden", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""The student's softmax_kernel matches torch.softmax on hidden shapes (one row, N = 128, N = 100, N = 3)."""
from gemm_lab.grading import fresh
g = fresh()
### BEGIN HIDDEN TESTS
g.check_softmax(softmax_kernel, hidden=True)
### END HIDDEN TESTS
