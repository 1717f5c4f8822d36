# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 6주차 ①② 블록 단위 프로그래밍 모델과 포인터·마스킹 (Vector Add)
#
# > “Python으로 작성한 Triton 커널은 데이터를 어떻게 블록 단위로 처리할까?”
#
# ## 이번 노트북에서 배우는 것
# 1. CUDA의 스칼라 프로그램(Scalar Program, Blocked Threads)과 Triton의 블록 프로그램(Blocked Program,
#    Scalar Threads)이 어떻게 다른지 — 스레드가 아니라 **블록**으로 생각하기
# 2. 실행 그리드 `grid = (triton.cdiv(N, BLOCK_SIZE), )`와 프로그램 인스턴스(`pid`)마다 맡는 구간을 그림으로 보기
# 3. 포인터 연산(Pointer Arithmetic): 시작 포인터 `x_ptr` + 오프셋 벡터 `offsets` = 포인터 블록
# 4. 마스킹(Masking): `mask = offsets < n_elements`가 범위 밖 메모리 접근을 막는 원리, 그리고 `BLOCK_SIZE: tl.constexpr`인 이유
# 5. 직접 작성: 마스크가 있는 `add_kernel` (채점: 무작위·숨겨진 길이, 독이 든 여백(poisoned margins) 안에서 torch와 비교)
#
# ## GPU가 필요한 부분
# **없습니다.** 모든 셀이 CPU에서 돌아갑니다. GPU가 없으면 Triton 커널은 CPU 해석기(`TRITON_INTERPRET=1`)에서
# 실행됩니다. GPU가 있으면 마지막 측정 절에서 Triton 덧셈과 `x + y`의 실효 대역폭을 비교합니다(선택).
# CPU 해석기는 프로그램 인스턴스를 NumPy로 하나씩 차례로 실행하므로 **동작과 마스크 확인에만** 쓰고 시간 비교에는 쓰지 않습니다.
#
# 점수: 연습 1 (4점), 연습 2 (2점, 서술), 연습 3 (2점, 서술), 연습 4 (6점, 코딩) — 모두 14점.
# 연습 4의 커널 테스트는 채점기가 **CPU 해석기 실행**과 **sm_75/80/90 교차 컴파일**(실제 Triton 컴파일러)을 모두
# 통과해야 점수를 줍니다: 해석기에서만 돌고 컴파일되지 않는 커널은 Colab T4에서도 돌지 않기 때문입니다.
#
# ## 읽을거리
# * Triton Tutorial 01 — Vector Addition: <https://triton-lang.org/main/getting-started/tutorials/01-vector-add.html>
# * Triton Programming Guide, Chapter 1 (Introduction — 블록 프로그램 vs 스칼라 스레드):
#   <https://triton-lang.org/main/programming-guide/chapter-1/introduction.html>
# * Debugging Triton (해석기, `tl.device_print`): <https://triton-lang.org/main/programming-guide/chapter-3/debugging.html>
# * API: `tl.load` <https://triton-lang.org/main/python-api/generated/triton.language.load.html>,
#   `tl.store` <https://triton-lang.org/main/python-api/generated/triton.language.store.html>,
#   `tl.arange` <https://triton-lang.org/main/python-api/generated/triton.language.arange.html>,
#   `triton.jit` <https://triton-lang.org/main/python-api/generated/triton.jit.html>
# * CUDA C++ Programming Guide — Programming Model (Thread Hierarchy):
#   <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#programming-model>
# * Triton 논문 (Tillet, Kung, Cox, MAPL 2019): <https://doi.org/10.1145/3315508.3329973>
#   (PDF: <https://www.eecs.harvard.edu/~htk/publication/2019-mapl-tillet-kung-cox.pdf>)

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false, "task": false}
from gemm_lab import runtime  # triton보다 먼저: GPU가 없으면 CPU 해석기를 켭니다

import pandas as pd
import torch
import triton
import triton.language as tl

from gemm_lab.calc.softmax import block_offsets
from gemm_lab.calc.tiling import cdiv
from gemm_lab.runtime import grading_mode
from gemm_lab.viz import blocks as viz

DEVICE = runtime.device()
print("커널이 실행될 장치:", DEVICE, "(CPU 해석기)" if runtime.INTERPRET else "")

# %% [markdown]
# ## 1. 동기: 스레드가 아니라 블록으로 생각하기 (①)
#
# CUDA에서는 **스레드 하나가 스칼라 원소 하나**를 맡습니다. 프로그래머가 스레드 블록(Thread Block) 크기를 고르고,
# `blockIdx.x * blockDim.x + threadIdx.x`로 자기 원소의 인덱스를 직접 계산합니다 (CUDA Programming Model:
# Thread Blocks and Grids).
#
# ```c
# // CUDA: Scalar Program, Blocked Threads — 스레드 하나 = 원소 하나
# __global__ void add(const float* x, const float* y, float* out, int n) {
#     int i = blockIdx.x * blockDim.x + threadIdx.x;   // 내 원소의 인덱스
#     if (i < n) out[i] = x[i] + y[i];                 // 범위 검사도 스레드마다
# }
# // add<<<(n + 255) / 256, 256>>>(x, y, out, n);
# ```
#
# Triton에서는 **프로그램 인스턴스(program instance) 하나가 원소 묶음(`BLOCK_SIZE`개) 전체**를 맡습니다.
# 커널 코드 속 변수는 스칼라가 아니라 길이 `BLOCK_SIZE`인 블록(텐서)입니다.
#
# ```python
# # Triton: Blocked Program, Scalar Threads — 프로그램 하나 = 블록 하나
# @triton.jit
# def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
#     pid = tl.program_id(axis=0)                          # 몇 번째 블록인가
#     offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)  # 이 블록이 맡는 원소들
#     mask = offsets < n_elements                          # 범위 검사도 블록 단위로
#     x = tl.load(x_ptr + offsets, mask=mask)
#     y = tl.load(y_ptr + offsets, mask=mask)
#     tl.store(output_ptr + offsets, x + y, mask=mask)
# ```
#
# 누가 무엇을 정하는지 비교하면 차이가 분명해집니다.
#
# | 결정 | CUDA | Triton |
# | --- | --- | --- |
# | 한 실행 단위가 맡는 데이터 | 스레드 하나 → 원소 하나 | 프로그램 하나 → `BLOCK_SIZE`개 원소 |
# | 블록 안에서 원소를 스레드에 나누는 배치 | 프로그래머 (`threadIdx`) | **컴파일러** (`num_warps`만 힌트로 줌) |
# | 메모리 접근 정렬·병합(coalescing), 벡터화 | 프로그래머가 인덱스 설계로 보장 | **컴파일러** (블록 레이아웃을 정하며 처리) |
# | 공유 메모리(Shared Memory) 사용·동기화 | 프로그래머 (`__shared__`, `__syncthreads()`) | **컴파일러** |
# | 그리드 크기 | 프로그래머 | 프로그래머 (`grid = (cdiv(N, BLOCK_SIZE), )`) |

# %% [markdown]
# ## 2. 실행 그리드와 `pid`가 맡는 구간 (①)
#
# 길이 `N`인 벡터를 `BLOCK_SIZE`씩 자르면 프로그램 인스턴스가 `grid = cdiv(N, BLOCK_SIZE)`개 필요합니다
# (올림 나눗셈: `(N + BLOCK_SIZE - 1) // BLOCK_SIZE`). 마지막 블록은 `N`이 `BLOCK_SIZE`의 배수가 아니면
# 일부만 찹니다. 예로 `N = 13`, `BLOCK_SIZE = 4`를 봅시다 (연습 1에서는 `N = 10`을 직접 풉니다).

# %%
N_DEMO, BLOCK_DEMO = 13, 4
print(f"grid = cdiv({N_DEMO}, {BLOCK_DEMO}) =", cdiv(N_DEMO, BLOCK_DEMO),
      "  (triton.cdiv와 같은 값:", triton.cdiv(N_DEMO, BLOCK_DEMO), ")")
fig = viz.plot_pid_blocks(N_DEMO, BLOCK_DEMO)

# %% [markdown]
# 색은 원소를 맡은 `pid`입니다. 회색 빗금 칸은 마지막 블록의 레인(lane) 중 `offsets >= N`인 것들로,
# 마스크가 꺼서 읽지도 쓰지도 않습니다. 같은 내용을 `pid`(행) × 레인 `i`(열) 표로 보면 다음과 같습니다.

# %%
demo_table = block_offsets(N_DEMO, BLOCK_DEMO)
display(demo_table)
fig = viz.plot_block_masks(N_DEMO, BLOCK_DEMO)

# %% [markdown]
# ## 3. 포인터 연산: 커널은 텐서가 아니라 **포인터**를 받는다 (②)
#
# `add_kernel[grid](x, y, out, n, BLOCK_SIZE=...)`처럼 `torch.Tensor`를 넘기면 `@triton.jit` 커널은
# 텐서 객체가 아니라 **첫 원소의 주소**(`x.data_ptr()`)와 원소 자료형(`pointer<fp32>`)을 받습니다. 모양(shape)도
# 스트라이드(stride)도 따라오지 않으므로 길이 `n_elements`는 따로 넘겨야 합니다.
# `x_ptr + offsets`는 포인터 하나에 오프셋 벡터를 더해 **포인터 블록**을 만들고, 원소 `i`의 주소는
# `x.data_ptr() + i × 원소 크기(Byte)`입니다.

# %%
x_demo = torch.arange(N_DEMO, dtype=torch.float32, device=DEVICE)
print("x.data_ptr()      =", hex(x_demo.data_ptr()))
print("x.element_size()  =", x_demo.element_size(), "Byte (FP32)")
print("x[5]의 주소        =", hex(x_demo[5:].data_ptr()),
      "= data_ptr + 5 ×", x_demo.element_size(), "→",
      x_demo[5:].data_ptr() - x_demo.data_ptr() == 5 * x_demo.element_size())

# %% [markdown]
# 실제 커널을 돌려(GPU가 없으면 해석기에서) 각 프로그램이 계산한 `offsets`와 `mask`를 그대로 기록해 봅시다. 아래의
# `probe_kernel`은 레인마다 자기 오프셋과 마스크를 `[grid, BLOCK_SIZE]` 표에 써 넣습니다 — 기록용 표는
# 꽉 차 있으므로 이 저장에는 마스크가 필요 없습니다.

# %% nbgrader={"grade": false, "grade_id": "probe_kernel", "locked": true, "schema_version": 3, "solution": false, "task": false}
@triton.jit
def probe_kernel(offsets_out_ptr, mask_out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    lanes = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)  # 기록용 표의 칸: 항상 범위 안
    tl.store(offsets_out_ptr + lanes, offsets)
    tl.store(mask_out_ptr + lanes, mask.to(tl.int32))


grid_demo = (triton.cdiv(N_DEMO, BLOCK_DEMO),)
offs_seen = torch.empty(grid_demo[0] * BLOCK_DEMO, dtype=torch.int32, device=DEVICE)
mask_seen = torch.empty(grid_demo[0] * BLOCK_DEMO, dtype=torch.int32, device=DEVICE)
probe_kernel[grid_demo](offs_seen, mask_seen, N_DEMO, BLOCK_SIZE=BLOCK_DEMO)
seen = pd.DataFrame({
    "pid": range(grid_demo[0]),
    "offsets": offs_seen.view(-1, BLOCK_DEMO).tolist(),
    "mask": mask_seen.view(-1, BLOCK_DEMO).bool().tolist(),
})
same = (seen["offsets"].tolist() == demo_table["offsets"].tolist()
        and seen["mask"].tolist() == [list(map(bool, m)) for m in demo_table["mask"]])
display(seen)
print("✅ 커널이 계산한 offsets·mask가 gemm_lab.calc의 표와 같습니다" if same else "❌ 표와 다릅니다")

# %% [markdown]
# ## 4. 마스크가 없으면? 범위 밖 접근은 **조용히** 일어난다 (②)
#
# 마스크를 빼면 마지막 블록의 레인들이 텐서 끝을 넘어 읽고 씁니다. GPU에서는 운이 좋으면 잘못된 주소 오류로
# 멈추지만, 대개는 **옆 메모리를 조용히 덮어씁니다**. CPU 해석기도 이 접근을 잡아주지 않습니다. 그래서 이
# 노트북의 채점기는 입력과 출력을 더 큰 버퍼의 가운데(view)에 두고 여백을 독 값(입력은 NaN, 출력은 표식 값)으로
# 채운 뒤, 커널이 끝나면 여백이 그대로인지 확인합니다 — 아래가 그 원리입니다.

# %% nbgrader={"grade": false, "grade_id": "unmasked_demo", "locked": true, "schema_version": 3, "solution": false, "task": false}
@triton.jit
def add_kernel_no_mask(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets)          # 마스크 없음!
    y = tl.load(y_ptr + offsets)
    tl.store(output_ptr + offsets, x + y)  # 마스크 없음!


MARGIN = 4
POISON_IN = -1000.0  # 입력 버퍼의 여백: 읽히면 결과에 드러나는 값
x_buf = torch.full((N_DEMO + 2 * MARGIN,), POISON_IN, device=DEVICE)
y_buf = torch.full_like(x_buf, POISON_IN)
out_buf = torch.full_like(x_buf, float("nan"))  # 출력 버퍼의 여백: NaN이어야 정상
x_v, y_v, out_v = (b[MARGIN:MARGIN + N_DEMO] for b in (x_buf, y_buf, out_buf))
x_v.copy_(torch.arange(N_DEMO, dtype=torch.float32))
y_v.fill_(100.0)
add_kernel_no_mask[grid_demo](x_v, y_v, out_v, N_DEMO, BLOCK_SIZE=BLOCK_DEMO)
right_margin = out_buf[MARGIN + N_DEMO:]
written = int((~torch.isnan(right_margin)).sum())
print("결과 view (x + y):     ", out_v.tolist())
print("✅ view 안의 결과는 맞습니다" if torch.equal(out_v, x_v + y_v) else "❌ view 안의 결과가 틀립니다")
print("출력의 오른쪽 여백:     ", right_margin.tolist())
print(f"❌ 마스크 없는 커널이 텐서 밖 {written}칸에 썼습니다 "
      f"(grid × BLOCK_SIZE − N = {grid_demo[0] * BLOCK_DEMO} − {N_DEMO}); 값은 입력 여백을 읽어 더한 것입니다")

# %% [markdown]
# view 안의 결과만 보면 커널은 맞아 보입니다. **버그는 여백을 봐야 보입니다** — 그래서 연습 4의 채점기는
# 여백을 확인합니다.
#
# ## 5. 왜 `BLOCK_SIZE: tl.constexpr`인가 (②)
#
# `tl.arange(0, BLOCK_SIZE)`가 만드는 블록의 **모양은 컴파일 시점에 정해져야** 합니다. 컴파일러는 이 모양을 보고
# 블록의 원소를 워프·스레드·레지스터에 나누는 배치(layout)와 벡터화된 load/store를 정하기 때문입니다. 그래서
# `BLOCK_SIZE`는 실행 시점 값(런타임 인자)이 아니라 `tl.constexpr`(컴파일 시점 상수)이어야 하고, 값이 바뀌면 커널이
# 새로 컴파일(특수화, specialization)됩니다. 또 `tl.arange`의 길이는 2의 거듭제곱이어야 합니다. 직접 확인해 봅시다.

# %%
@triton.jit
def add_kernel_runtime_block(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE):  # constexpr 아님
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(output_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


def first_error_line(fn):
    try:
        fn()
    except Exception as exc:  # 해석기는 InterpreterError, GPU는 CompilationError
        return f"{type(exc).__name__}: " + str(exc).strip().splitlines()[-1][:160]
    return "오류 없음"


x_small = torch.randn(N_DEMO, device=DEVICE)
y_small = torch.randn(N_DEMO, device=DEVICE)
out_small = torch.empty_like(x_small)
print("BLOCK_SIZE를 런타임 인자로:", first_error_line(
    lambda: add_kernel_runtime_block[grid_demo](x_small, y_small, out_small, N_DEMO, BLOCK_DEMO)))
print("BLOCK_SIZE = 3 (2의 거듭제곱 아님):", first_error_line(
    lambda: add_kernel_no_mask[(triton.cdiv(N_DEMO, 3),)](x_small, y_small, out_small, N_DEMO, BLOCK_SIZE=3)))

# %% [markdown]
# ## 6. 해석기로 커널 디버깅하기
#
# `TRITON_INTERPRET=1`(GPU가 없으면 이 노트북이 켜 둡니다)에서는 커널 본문이 **보통의 Python**으로 한 프로그램씩 차례로
# 실행되고, 블록은 NumPy 배열입니다. 그래서 다음 도구를 그대로 쓸 수 있습니다 (Debugging Triton 문서, 읽을거리).
#
# * `print(...)`: 커널 안에서 블록 전체를 찍습니다. 아래 셀처럼 `pid`별로 `offsets`, `mask`, 읽은 값을 봅니다.
# * `import pdb; pdb.set_trace()` (또는 `breakpoint()`): 커널 안에서 멈추고 변수를 살펴봅니다 (해석기에서만).
# * `tl.device_print("이름", 블록)`: 해석기와 **GPU 모두에서** 동작하는 출력 (GPU에서는 스레드마다 한 줄씩 나옵니다).
#   `tl.static_print`는 컴파일 시점(모양·자료형)만 찍습니다.
#
# 해석기가 **못 하는 것**도 알아 두세요: (1) 마스크 없는 범위 밖 접근을 잡지 못합니다(4절). (2) 실행시간은 GPU 성능과
# 무관합니다. (3) `tl.dot`은 NumPy 행렬곱이라 FP32 입력도 TF32가 아니라 정확히 계산됩니다. (4) 안내문의 "bfloat16 미지원"은
# `tl.dot`만의 문제가 아닙니다: NumPy에는 bfloat16이 없어서 해석기는 bf16 값을 **16비트 정수 비트 패턴**으로 들고 다닙니다.
# 그래서 bf16끼리의 연산(덧셈, `tl.sum`, `tl.dot` 등)은 비트 패턴을 정수처럼 계산해 **틀린 값**(덧셈에서는 NaN까지)을 내고
# (triton 이슈 #11584), FP32 → bf16 변환(`.to(tl.bfloat16)`)은 GPU처럼 가장 가까운 값으로 반올림하지 않고 **잘라 내서**
# 마지막 자리가 달라집니다. bf16을 읽어 곧바로 `.to(tl.float32)`로 바꾼 뒤의 FP32 계산만 맞습니다(triton 3.7.1의 해석기에서
# 덧셈·`tl.sum`·`tl.dot`·변환을 직접 돌려 확인). bf16 커널은 GPU에서 검증하세요. (5) 컴파일러가 거부하는
# 코드(예: 16보다 작은 블록의 `tl.dot`)도 돌려 버립니다 — 그래서 채점기는 커널을 실제 컴파일러로 교차 컴파일까지 합니다.

# %%
@triton.jit
def debug_kernel(x_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.device_print("x", x)  # 해석기와 GPU 모두에서 동작


if runtime.INTERPRET:
    debug_kernel[(triton.cdiv(6, 4),)](torch.arange(6, dtype=torch.float32, device=DEVICE), 6, BLOCK_SIZE=4)
else:
    print("GPU에서는 tl.device_print가 스레드마다 한 줄씩 찍으므로 여기서는 건너뜁니다 (해석기에서 실행해 보세요).")

# %% [markdown]
# ## 7. 측정: Triton 덧셈 vs `x + y` (GPU에서만)
#
# 덧셈 한 번은 `x`, `y`를 한 번 읽고 `out`을 한 번 쓰는 것이 전부(원소당 3 × 4 Byte)라 묶을(fusion) 연산이 없습니다.
# 그래서 Triton으로 써도 PyTorch 기본 연산과 속도가 비슷합니다 — 차이가 커지는 경우는 다음 노트북(③)의 Softmax입니다.
# 시간은 `gemm_lab.bench.do_bench_ms`(`triton.testing.do_bench`, `return_mode="median"`)가 돌려주는 **중앙값**(median)이고,
# GPU 이름과 컴퓨트 능력(compute capability)을 함께 적습니다.

# %%
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
elif runtime.on_gpu():
    from gemm_lab import bench
    from gemm_lab.kernels import vector_add

    size = 1 << 24
    a = torch.randn(size, device="cuda")
    b = torch.randn(size, device="cuda")
    rows = []
    for name, fn in (("torch x + y", lambda: a + b), ("Triton vector_add", lambda: vector_add(a, b))):
        ms = bench.do_bench_ms(fn)
        rows.append({"kernel": name, "ms (중앙값)": ms, "GB/s": bench.gbps(3 * size * a.element_size(), ms)})
    env = bench.env_info()
    print(f"GPU: {env['gpu']}, compute capability {env['compute_capability']}, torch {env['torch']}, "
          f"triton {env['triton']}")
    display(pd.DataFrame(rows).set_index("kernel").round(3))
else:
    print("GPU가 없어 측정을 건너뜁니다: CPU 해석기의 실행시간은 GPU 성능과 무관합니다.")

# %% [markdown]
# ## 8. 정리
#
# * Triton 커널의 한 실행 단위는 **프로그램 인스턴스**이고, 그 안의 변수는 길이 `BLOCK_SIZE`인 블록입니다.
#   블록 안의 스레드 배치와 메모리 접근 병합(coalescing)은 컴파일러가 맡습니다.
# * `grid = (triton.cdiv(N, BLOCK_SIZE), )`개의 프로그램이 `offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)`
#   구간을 나눠 맡습니다.
# * `N`이 `BLOCK_SIZE`의 배수가 아니면 마지막 블록의 일부 레인이 범위를 벗어나므로 `mask = offsets < n_elements`를
#   `tl.load`와 `tl.store`에 모두 넘깁니다. 마스크를 빼도 오류가 나지 않고 **조용히** 옆 메모리를 읽고 씁니다.
# * `BLOCK_SIZE`는 블록의 모양을 정하므로 `tl.constexpr`(컴파일 시점 상수, 2의 거듭제곱)입니다.
#
# **핵심 용어 3개:** 프로그램 인스턴스(Program Instance, `pid`), 오프셋·포인터 블록(Offsets / Block of Pointers),
# 마스크(Mask)

# %% [markdown]
# ## 연습 1. `N = 10`, `BLOCK_SIZE = 4`의 그리드와 마스크 (4점)
#
# 길이 `N = 10`인 벡터를 `BLOCK_SIZE = 4`로 처리합니다. 손으로 계산해 아래 값을 채우세요.
#
# * `grid_10`: 실행 그리드 크기 `triton.cdiv(10, 4)` (정수)
# * `offsets_10`: `pid = 0, 1, 2`가 만드는 `offsets`를 `pid` 순서대로 담은 리스트의 리스트
# * `mask_10`: 같은 모양으로 `mask = offsets < 10` (`True`/`False`)
#
# 예: `offsets_10 = [[...], [...], [...]]`

# %% nbgrader={"grade": false, "grade_id": "ex1_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
# grid_10 = ...
# offsets_10 = [[...], [...], [...]]
# mask_10 = [[...], [...], [...]]
### BEGIN SOLUTION
grid_10 = 3
offsets_10 = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
mask_10 = [[True, True, True, True], [True, True, True, True], [True, True, False, False]]
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex1_grid", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""grid_10 is cdiv(10, 4)."""
from gemm_lab.grading import fresh
g = fresh()
g.check_value("grid_10", grid_10, g.calc.cdiv(10, 4))

# %% nbgrader={"grade": true, "grade_id": "ex1_offsets", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""offsets_10 lists pid * 4 + tl.arange(0, 4) for pid = 0, 1, 2."""
from gemm_lab.grading import fresh
g = fresh()
_expected = g.calc.block_offsets(10, 4)
g.check_pairs("offsets_10", offsets_10, [list(o) for o in _expected["offsets"]], item_name="pid")

# %% nbgrader={"grade": true, "grade_id": "ex1_masks", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""mask_10 is offsets < 10 for every pid (the last block switches two lanes off)."""
from gemm_lab.grading import fresh
g = fresh()
_expected = g.calc.block_offsets(10, 4)
g.check_value("mask_10의 행 수 (= grid)", len(mask_10), len(_expected))
### BEGIN HIDDEN TESTS
g.check_pairs("mask_10", mask_10, [[bool(m) for m in row] for row in _expected["mask"]], item_name="pid")
### END HIDDEN TESTS

# %% [markdown]
# ## 연습 2. 블록 안의 배치는 누가 정하나 (2점, 서술)
#
# CUDA에서 프로그래머가 정하던 것 중, Triton에서는 **컴파일러**가 맡는 것 두 가지를 들고, 그 대신 프로그래머가
# Triton에서 정하는 것은 무엇인지 두세 문장으로 설명하세요.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex2_who_decides_layout", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 블록의 원소를 워프·스레드에 나누는 배치(layout)와 메모리 접근 병합(coalescing)·벡터화, 그리고 공유 메모리 사용과
# 동기화는 Triton 컴파일러가 정합니다. 프로그래머는 프로그램 하나가 맡을 블록의 크기(`BLOCK_SIZE`, `num_warps`)와
# 그리드 크기, 그리고 블록 단위의 오프셋·마스크 계산만 씁니다.
# ### END SOLUTION

# %% [markdown]
# ## 연습 3. 왜 `tl.constexpr`인가 (2점, 서술)
#
# 5절의 두 오류 메시지를 근거로, `BLOCK_SIZE`를 `tl.constexpr`로 지정해야 하는 이유와 `BLOCK_SIZE` 값을 바꿔
# 호출하면 무슨 일이 일어나는지 설명하세요.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex3_why_constexpr", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# `tl.arange(0, BLOCK_SIZE)`가 만드는 블록의 모양(길이)은 컴파일 시점에 알려져야 컴파일러가 레지스터 배치와 벡터화된
# load/store를 정할 수 있습니다. 그래서 인자가 `tl.constexpr`가 아니면 `tl.arange`가 거부하고, 길이도 2의 거듭제곱이어야
# 합니다. `BLOCK_SIZE` 값이 바뀌면 그 값에 특수화된 커널이 새로 컴파일되어 캐시에 따로 저장됩니다.
# ### END SOLUTION

# %% [markdown]
# ## 연습 4. 마스크가 있는 `add_kernel` 직접 작성하기 (6점, 코딩)
#
# 아래 `add_kernel`의 TODO를 채우세요. 호출 함수 `launch(x, y, out)`는 주어져 있습니다(수정하지 마세요).
# 채점기는 여러분의 `add_kernel`을 **채점기 자신이 가진 `launch`와 같은 호출 코드**로 무작위 길이(2의 거듭제곱이 아닌
# 길이 포함)와 **숨겨진 길이**에 실행하고, 입력과 출력을 독이 든 여백(poisoned margins) 안의 view로 넘겨 `out`이
# `x + y`와 같은지, 여백이 그대로인지 확인합니다. GPU가 없으면 CPU 해석기에서 실행됩니다.
#
# **점수 조건:** 커널 테스트(3점 + 3점)는 (1) 해석기 실행 결과가 맞고 (2) 커널이 sm_75/sm_80/sm_90용으로 **실제 컴파일**되며
# (3) `tl.load`·`tl.store`가 마스크를 쓸 때만 점수를 받습니다. 해석기에서만 돌고 컴파일러가 거부하는 코드는 0점입니다.
#
# **허용되는 변형:** 커널을 다른 이름으로 정의한 뒤 `add_kernel = my_kernel`처럼 묶어도, `tl.constexpr` 기본값을
# 모듈 상수(`BLOCK = 16` … `BLOCK_SIZE: tl.constexpr = BLOCK`)에서 가져와도, `import triton.language as tl2`처럼
# 다른 이름으로 가져와도 같은 점수를 받습니다. `@triton.autotune`·`@triton.heuristics`를 붙이면 채점기는 그 내용을
# 확인한 뒤 떼어 내고 주어진 `launch`가 넘기는 블록 크기로 실행합니다(튜닝 결과는 점수와 무관). 다만 주어진 `launch`는
# 블록 크기를 직접 넘기므로, 튜닝하는 인자와 겹치면 여러분의 노트북에서는 Triton이 오류를 냅니다 — 이 과제에는
# 붙이지 않는 편이 낫습니다. 커널 안에서는 `tl.*`와 다른 `@triton.jit` 함수만 부를 수 있습니다.
#
# * TODO 1: `pid = tl.program_id(axis=0)`
# * TODO 2: `offsets` — 이 프로그램이 맡는 `BLOCK_SIZE`개의 오프셋
# * TODO 3: `mask` — 범위 안의 레인만 `True`
# * TODO 4: `x`, `y`를 마스크와 함께 읽고(`tl.load`), 합을 마스크와 함께 저장(`tl.store`)

# %% nbgrader={"grade": false, "grade_id": "ex4_add_kernel", "locked": false, "schema_version": 3, "solution": true, "task": false}
@triton.jit
def add_kernel(x_ptr,  # 첫 번째 입력의 포인터
               y_ptr,  # 두 번째 입력의 포인터
               output_ptr,  # 출력의 포인터
               n_elements,  # 원소 수
               BLOCK_SIZE: tl.constexpr,  # 프로그램 하나가 맡는 원소 수
               ):
    # TODO 1: pid = 이 프로그램 인스턴스의 번호 (axis=0)
    # TODO 2: offsets = 이 프로그램이 맡는 BLOCK_SIZE개의 오프셋
    # TODO 3: mask = 범위 안(offsets < n_elements)인 레인만 True
    # TODO 4: x, y를 mask와 함께 tl.load → 더하기 → output_ptr + offsets에 mask와 함께 tl.store
    ### BEGIN SOLUTION
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "ex4_launcher", "locked": true, "schema_version": 3, "solution": false, "task": false}
def launch(x, y, out):
    """out[:] = x + y for 1-D tensors of the same length (given: do not edit)."""
    n_elements = out.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=128)
    return out


# %% nbgrader={"grade": true, "grade_id": "ex4_vector_add_random", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""The student's add_kernel matches x + y on random lengths, margins untouched."""
from gemm_lab.grading import fresh
g = fresh()
g.check_vector_add(add_kernel)

# %% nbgrader={"grade": true, "grade_id": "ex4_vector_add_hidden", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""The student's add_kernel matches x + y on hidden lengths (1, one past a block, a large odd length)."""
from gemm_lab.grading import fresh
g = fresh()
### BEGIN HIDDEN TESTS
g.check_vector_add(add_kernel, hidden=True)
### END HIDDEN TESTS
