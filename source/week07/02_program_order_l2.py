# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 7주차 ② 프로그램 실행 순서와 L2 캐시 (Grouped Ordering)
#
# > 같은 타일 크기인데 왜 실행 순서가 성능을 바꿀까?
#
# 4주차 손계산에서는 "서로 다른 출력 타일 사이의 캐시 재사용은 없다"고 가정했습니다. 하지만 실제 GPU에는
# **모든 SM이 공유하는 L2 캐시**가 있습니다. 같은 A 행 타일이나 B 열 타일을 쓰는 프로그램들을 시간상 가깝게
# 실행하면, 먼저 실행된 프로그램이 HBM에서 L2로 가져온 타일을 이웃 프로그램이 L2에서 바로 재사용합니다.
#
# ## 이번 노트북에서 배우는 것
# 1. Tutorial 03의 `pid → (pid_m, pid_n)` 식: 행 우선(row-major)과 그룹 순서(grouped ordering, `GROUP_SIZE_M`)
# 2. 9×9 블록 예시(GROUP_SIZE_M = 3)에서 처음 9개 프로그램이 쓰는 입력 타일이 **90개 → 54개**로 줄어드는 이유
# 3. 그림: 타일 그리드 위의 실행 순서(heat map)와 `GROUP_M` 슬라이더
# 4. 연습문제 2.1 (8×8, GROUP_SIZE_M = 2: 72 → 48)
# 5. 실제 GPU에서 두 순서의 속도 차이 (GPU가 없으면 H200에서 측정해 커밋한 값)
#
# ## GPU가 필요한 부분
# 마지막 3절의 속도 측정만 GPU가 필요합니다. GPU가 없으면 `results/`에 커밋된 H200 측정값을 보여 줍니다.
# 커밋된 H200 측정은 모두 **triton 3.6.0**(torch 2.11.0+cu130)으로 잰 것으로, 이 과정이 고정한 triton 3.7.1(`pyproject.toml`)과 버전이 다릅니다: 표와 출력 줄의 `triton` 값이 잰 버전입니다.
# 나머지는 모두 계산과 그림이라 CPU에서 돌아갑니다.
#
# 점수: 예제 확인 (3점) + 연습문제 2.1 (6점) + 설명 (2점) = 11점.
#
# ## 읽을거리
# * Triton Tutorial 03 — Matrix Multiplication, **L2 Cache Optimizations** 절:
#   <https://triton-lang.org/main/getting-started/tutorials/03-matrix-multiplication.html>
# * NVIDIA Matrix Multiplication Background (타일, 웨이브, 메모리 병목):
#   <https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html>
# * CUDA C++ Programming Guide — Device Memory L2 Access Management:
#   <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#device-memory-l2-access-management>
# * API: `tl.program_id` <https://triton-lang.org/main/python-api/generated/triton.language.program_id.html>,
#   `triton.testing.do_bench` <https://triton-lang.org/main/python-api/generated/triton.testing.do_bench.html>
# * Triton 논문 (MAPL 2019): <https://doi.org/10.1145/3315508.3329973>

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false, "task": false}
from gemm_lab import runtime  # triton보다 먼저: GPU가 없으면 해석기를 켭니다

import pandas as pd
from IPython.display import display

from gemm_lab import calc, results
from gemm_lab.calc import ordering
from gemm_lab.runtime import grading_mode
from gemm_lab.viz import ordering as viz_ordering

# %% [markdown]
# ## 1. 두 실행 순서의 식
#
# 프로그램 `pid`가 계산할 출력 블록 `C[pid_m, pid_n]`을 정하는 식입니다 (Tutorial 03, L2 Cache Optimizations).
#
# ```python
# # 행 우선 순서 (row-major)
# pid_m = pid // num_pid_n
# pid_n = pid % num_pid_n
#
# # 그룹 순서 (GROUP_SIZE_M개 행씩 묶어 열 방향으로 진행)
# num_pid_in_group = GROUP_SIZE_M * num_pid_n
# group_id = pid // num_pid_in_group
# first_pid_m = group_id * GROUP_SIZE_M
# group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)   # 마지막 그룹은 더 작을 수 있음
# pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
# pid_n = (pid % num_pid_in_group) // group_size_m
# ```
#
# `GROUP_SIZE_M = 1`이면 그룹 순서가 행 우선 순서와 같아집니다. 계산기 `gemm_lab.calc.ordering`이 이 식을
# 그대로 옮겨 두었습니다. 9×9 그리드, `GROUP_SIZE_M = 3`에서 pid 0–8을 대입해 봅시다.

# %%
rm9 = ordering.order_table(9, 9, 1, 9)
gr9 = ordering.order_table(9, 9, 3, 9)
table9 = pd.DataFrame({
    "pid": rm9["pid"],
    "행 우선 (pid_m, pid_n)": list(zip(rm9["pid_m"], rm9["pid_n"])),
    "그룹 순서 G=3 (pid_m, pid_n)": list(zip(gr9["pid_m"], gr9["pid_n"])),
})
table9

# %%
print("[행 우선: pid 0~8의 위치]")
print(ordering.format_order_grid(9, 9, 1, n_programs=9, rows=3))
print("\n[그룹 순서(GROUP_SIZE_M=3): pid 0~8의 위치]")
print(ordering.format_order_grid(9, 9, 3, n_programs=9, rows=3))

# %% [markdown]
# ## 2. 처음 9개 출력 블록이 쓰는 입력 타일 세기: 90 → 54
#
# 출력 블록 `C[pid_m, pid_n]` 하나를 끝까지 계산하려면 A의 `pid_m`번째 블록 행 전체(K 방향 타일 9개)와
# B의 `pid_n`번째 블록 열 전체(K 방향 타일 9개)가 필요합니다. 그러니 한 무리의 프로그램이 쓰는 고유 입력 타일
# 수는 **(서로 다른 `pid_m` 수 + 서로 다른 `pid_n` 수) × 9**입니다.
#
# ### 예제 확인: 직접 세어 보기 (3점)
# 위의 두 표(pid 0–8의 좌표)를 보고, 처음 9개 프로그램이 쓰는 고유 입력 타일 수를 행 우선 순서
# `ex_rm_tiles`와 그룹 순서(GROUP_SIZE_M = 3) `ex_grouped_tiles`에, 감소율(%, 소수 첫째 자리까지)을 `ex_reduction_pct`에
# 적으세요.
# 계산기를 부르지 말고 식으로 세어 보세요. 답은 바로 아래 계산기 결과로 확인할 수 있습니다.

# %% nbgrader={"grade": false, "grade_id": "ex0_answer_9x9", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
ex_rm_tiles = (1 + 9) * 9
ex_grouped_tiles = (3 + 3) * 9
ex_reduction_pct = (ex_rm_tiles - ex_grouped_tiles) / ex_rm_tiles * 100
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex0_unique_tiles", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""Worked example 1: unique input tiles of the first 9 programs on a 9x9 grid, row-major vs GROUP_SIZE_M=3."""
from gemm_lab.grading import fresh
g = fresh()
_cmp9 = g.calc.compare_orders(9, 9, 9, 3, 9)
g.check_value("ex_rm_tiles", ex_rm_tiles, _cmp9.row_major,
              hint="A 블록 행 1개와 B 블록 열 9개가 각각 K 방향 타일 9개씩 필요합니다")
g.check_value("ex_grouped_tiles", ex_grouped_tiles, _cmp9.grouped)
### BEGIN HIDDEN TESTS
g.check_value("ex_reduction_pct", ex_reduction_pct, _cmp9.reduction_pct, digits=1)
### END HIDDEN TESTS

# %%
cmp9 = calc.compare_orders(9, 9, 9, 3, 9)
pd.DataFrame({
    "행 우선": [cmp9.row_major_tiles.a_rows, cmp9.row_major_tiles.a_tiles, cmp9.row_major_tiles.b_cols,
              cmp9.row_major_tiles.b_tiles, cmp9.row_major],
    "그룹 순서 (G=3)": [cmp9.grouped_tiles.a_rows, cmp9.grouped_tiles.a_tiles, cmp9.grouped_tiles.b_cols,
                     cmp9.grouped_tiles.b_tiles, cmp9.grouped],
}, index=["A의 고유 블록 행 수", "A 입력 타일 수 (행당 9개)", "B의 고유 블록 열 수",
          "B 입력 타일 수 (열당 9개)", "총 고유 입력 타일 수"])

# %%
print(f"같은 9개 출력 블록인데 입력 타일 {cmp9.row_major}개 → {cmp9.grouped}개 "
      f"({cmp9.saved}개, {cmp9.reduction_pct:.1f}% 감소)")

# %% [markdown]
# 그림으로 보면 분명합니다. 칸의 숫자와 색은 그 출력 블록을 계산하는 `pid`(실행 순서)이고, 빨간 테두리가 처음
# 9개 프로그램, 왼쪽 주황 막대가 필요한 A 블록 행, 위쪽 파란 막대가 필요한 B 블록 열입니다.

# %%
fig = viz_ordering.compare_orders_figure(9, 9, 3, window=9)

# %% [markdown]
# ### `GROUP_M`을 바꿔 보기
# 아래 슬라이더로 `GROUP_M`을 바꾸면 그룹 순서의 그림이 다시 그려집니다 (Jupyter/Colab에서 동작합니다.
# 슬라이더가 보이지 않는 환경을 위해 아래에 `GROUP_M`별 표와 정적 그림도 함께 둡니다).

# %%
widget = viz_ordering.group_m_widget(9, 9, window=9)
if widget is not None:
    display(widget)

# %%
sweep = pd.DataFrame([
    {"GROUP_M": g, "A 블록 행": t.a_rows, "B 블록 열": t.b_cols, "입력 타일": t.tiles}
    for g in range(1, 10)
    for t in [ordering.unique_input_tiles(9, 9, 9, g, 9)]
]).set_index("GROUP_M")
sweep

# %%
fig = viz_ordering.compare_orders_figure(9, 9, 9, window=9)

# %% [markdown]
# 위 표에서 입력 타일 수가 가장 작은 것은 **정사각형에 가까운 구역**(3 × 3)일 때입니다. 9개 블록을 `r × c`
# 직사각형으로 덮으면 필요한 타일은 `(r + c) × 9`이고, 넓이가 같을 때 둘레(r + c)는 정사각형에서 가장 짧습니다
# (1 + 9 = 10, 3 + 3 = 6). `GROUP_M = 9`는 9 × 1 세로 막대라 다시 나빠집니다.
#
# > ⚠️ 그룹 순서는 총 연산량(2MNK)도, 프로그램 하나가 하는 `tl.load` 횟수도 바꾸지 않습니다. 이웃한 프로그램들이
# > 같은 A·B 타일을 **비슷한 시점에** 요청하게 만들어 L2 적중률(hit rate)을 높이고, 실제로 HBM까지 나가는 트래픽을 줄이는
# > 스케줄링 기법입니다. 그래서 효과는 L2가 부족할 때(큰 행렬, 작은 타일) 커집니다.

# %% [markdown]
# ---
# # 연습문제 2.1 — 8×8 그리드의 L2 그룹핑 (6점)
#
# A와 B가 각각 8×8개의 블록으로 나뉜 행렬곱(`num_pid_m = 8`, `num_pid_n = 8`, K / BK = 8)에서 처음 **8개의
# 프로그램**(pid = 0–7)을 실행합니다.
#
# 1. 행 우선 순서에서 pid 0–7의 `(pid_m, pid_n)`을 순서대로 `rm_pairs`에 리스트로 적으세요. (1점)
# 2. `GROUP_SIZE_M = 2`인 그룹 순서에서 pid 0–7의 `(pid_m, pid_n)`을 `grouped_pairs`에 적으세요. (2점)
# 3. 두 순서가 필요로 하는 고유 입력 타일(K-타일 포함) 수 `rm_tiles`, `grouped_tiles`와 감소율
#    `reduction_pct`(%, 소수 둘째 자리까지, 예: 12.34)를 구하세요. (3점)
#
# 좌표는 `[(0, 0), (0, 1), ...]`처럼 튜플의 리스트로 적습니다. 위의 `ordering.pid_to_tile`을 호출하지 말고
# 식을 손으로 따라가 보세요.

# %% nbgrader={"grade": false, "grade_id": "ex2_1_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
rm_pairs = [(pid // 8, pid % 8) for pid in range(8)]
grouped_pairs = [((pid % 16) % 2, (pid % 16) // 2) for pid in range(8)]
rm_tiles = (1 + 8) * 8
grouped_tiles = (2 + 4) * 8
reduction_pct = (rm_tiles - grouped_tiles) / rm_tiles * 100
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex2_1_row_major_pairs", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""2.1: (pid_m, pid_n) of pid 0..7 in row-major order on an 8x8 grid."""
from gemm_lab.grading import fresh
g = fresh()
_rm = g.calc.order_table(8, 8, 1, 8)
g.check_pairs("rm_pairs", rm_pairs, list(zip(_rm["pid_m"], _rm["pid_n"])))

# %% nbgrader={"grade": true, "grade_id": "ex2_1_grouped_pairs_g2", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""2.1: (pid_m, pid_n) of pid 0..7 in grouped order (GROUP_SIZE_M=2) on an 8x8 grid."""
from gemm_lab.grading import fresh
g = fresh()
_gr = g.calc.order_table(8, 8, 2, 8)
g.check_pairs("grouped_pairs", grouped_pairs, list(zip(_gr["pid_m"], _gr["pid_n"])))

# %% nbgrader={"grade": true, "grade_id": "ex2_1_unique_tiles", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""2.1: unique input tiles of the first 8 programs (row-major vs grouped) and the reduction in percent."""
from gemm_lab.grading import fresh
g = fresh()
_cmp8 = g.calc.compare_orders(8, 8, 8, 2, 8)
g.check_value("rm_tiles", rm_tiles, _cmp8.row_major)
g.check_value("grouped_tiles", grouped_tiles, _cmp8.grouped)
### BEGIN HIDDEN TESTS
g.check_value("reduction_pct", reduction_pct, _cmp8.reduction_pct, digits=2)
### END HIDDEN TESTS

# %% [markdown]
# ### 설명해 보세요 (2점, 수동 채점)
# 그룹 순서가 (1) 무엇을 줄이고 (2) 무엇은 바꾸지 않는지, 그리고 (3) 왜 정사각형에 가까운 구역을 함께 계산할
# 때 입력 타일이 가장 적은지 자기 말로 설명하세요.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex2_1_explain_grouping", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# (1) 동시에(또는 연이어) 실행되는 프로그램들이 요청하는 **고유 입력 타일 수**를 줄여 L2 적중률을 높이고 HBM
# 트래픽을 줄입니다. (2) 총 연산량 2MNK와 프로그램마다의 `tl.load` 횟수는 그대로입니다: 실행 순서만 바뀝니다.
# (3) 출력 블록 `r × c` 구역에는 A 블록 행 r개와 B 블록 열 c개가 필요해 타일 수가 `(r + c) × K/BK`입니다.
# 넓이 `r × c`가 같을 때 `r + c`는 정사각형일 때 가장 작습니다 (8개: 1 + 8 = 9 대신 2 + 4 = 6).
# ### END SOLUTION

# %% [markdown]
# ---
# ## 3. 실제 GPU에서: 두 순서의 속도
#
# 효과가 가장 잘 보이는 조건은 **작은 타일 + 큰 행렬**입니다 (출력 블록 수가 많아 L2가 모자람). 같은 커널
# (`gemm_lab.kernels.matmul`, Tutorial 03 후보 1: 64×32×32, `num_stages=5`, `num_warps=2`)을 8192³에서
# `GROUP_M = 1`(행 우선)과 `GROUP_M = 8`로 돌려 `gemm_lab.bench.do_bench_ms`로 잽니다: 시간은 **중앙값(median)**
# (`return_mode="median"`; `triton.testing.do_bench`의 기본값은 평균입니다). GPU가 없으면 `results/`에 커밋된 H200
# 측정값(역시 중앙값)을 읽어 보여 줍니다 (숫자를 손으로 옮겨 적지 않습니다). GPU 이름과 컴퓨트 능력을 함께 적습니다.

# %%
ORDERING_RESULTS = "group_order.csv"   # make bench가 GPU에서 쓰는 파일 (results/README.md)
measured, source = None, ""
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
elif runtime.on_gpu():
    import torch

    from gemm_lab import bench, kernels

    size = 8192
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    env = bench.env_info()
    rows = []
    for group_m in (1, 8):
        ms = bench.do_bench_ms(lambda: kernels.matmul(
            a, b, BLOCK_M=64, BLOCK_N=32, BLOCK_K=32, GROUP_M=group_m, num_warps=2, num_stages=5))
        rows.append({"gpu": env["gpu"], "compute_capability": env["compute_capability"], "triton": env["triton"],
                     "tile": "64x32x32 s5 w2", "GROUP_M": group_m, "ms": ms,
                     "tflops": calc.tflops(size, size, size, ms)})
    measured = pd.DataFrame(rows)
    source = f"이 GPU에서 지금 측정 (중앙값): {env['gpu']}, compute capability {env['compute_capability']}, {size}³ FP16"
else:
    measured = results.load_csv(ORDERING_RESULTS)
    if measured is not None and "GROUP_M" in measured.columns:
        measured = measured[measured["GROUP_M"].notna()]          # torch.matmul 행은 빼고 두 순서만
        measured = measured.astype({"GROUP_M": int})
    source = f"results/{ORDERING_RESULTS} (커밋된 GPU 측정값, do_bench 중앙값)"
if measured is None:
    if not grading_mode():
        print(f"GPU가 없고 커밋된 측정값(results/{ORDERING_RESULTS})도 없습니다. "
              "GPU에서 이 셀을 실행하면 두 순서의 TFLOP/s를 잽니다.")
else:
    print(source)
    shown = [c for c in ("gpu", "compute_capability", "triton", "M", "N", "K", "tile", "config", "GROUP_M", "ms",
                         "tflops")
             if c in measured.columns]
    display(measured[shown])

# %%
label = "tile" if measured is not None and "tile" in measured.columns else "config"
if measured is not None and {label, "GROUP_M", "tflops"} <= set(measured.columns):
    fig = viz_ordering.speed_figure(measured, x=label)
    wide = measured.pivot_table(index=label, columns="GROUP_M", values="tflops", aggfunc="median")
    if 1 in wide.columns and 8 in wide.columns:
        for tile, r in wide.iterrows():
            print(f"{tile}: GROUP_M=8 / GROUP_M=1 = {r[8] / r[1]:.2f}배")

# %% [markdown]
# ## 정리
# * 실행 순서는 `pid → (pid_m, pid_n)` 식 하나로 정해집니다. `GROUP_SIZE_M`개 행을 묶어 열 방향으로 진행하면
#   동시에 실행되는 프로그램들이 정사각형에 가까운 구역을 맡습니다.
# * 9×9(G=3)의 처음 9개 프로그램: 입력 타일 90 → 54 (40% 감소). 8×8(G=2)의 처음 8개: 72 → 48.
# * 연산량과 `tl.load` 횟수는 그대로이고, 바뀌는 것은 L2 적중률(= HBM 트래픽)입니다. 그래서 효과는 행렬이 크고
#   타일이 작을 때 큽니다.
#
# **핵심 용어 3개:** 그룹 순서(Grouped Ordering, `GROUP_SIZE_M`), L2 적중률(L2 Hit Rate), 고유 입력 타일(Unique Input Tiles)
#
# 다음 노트북(③)에서는 타일 크기·`num_stages`·`num_warps`가 산술 강도와 Shared Memory를 어떻게 바꾸는지 계산합니다.
