# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 7주차 ⑥ Persistent 루프 — 블로그의 TODO 4
#
# > 프로그램(program) 하나가 타일(tile) 하나가 아니라 **여러 타일**을 계산하게 하려면 커널에 무엇을 더해야 할까?
#
# 사례 연구 노트북 `notebooks/persistent_case_study`(블로그 「persistent kernel은 그 자체로 빠르지 않다」)의
# naive persistent 커널은 SM 수만큼의 프로그램만 띄우고, 각 프로그램이 일정한 간격으로 여러 C 타일을 순회합니다.
# 이 과제에서는 블로그의 TODO 4를 그대로 풉니다: **persistent 루프**와 그 본문 — 타일 번호에서 `(tile_m, tile_n)`을
# 구하고, 포인터·마스크와 누산기(accumulator)를 타일마다 새로 만들고, K 루프를 돌고, C 타일을 저장하는 것 — 을 모두
# 직접 씁니다. 주어지는 것은 채점용 기록 helper(`record_tile`) 하나뿐입니다.
#
# ## 이번 노트북에서 배우는 것
# 1. persistent grid: `num_programs = min(num_sms × programs_per_sm, num_tiles)`
# 2. 프로그램 `pid`가 맡는 타일: `pid, pid + num_programs, pid + 2·num_programs, …` — 프로그램마다 타일 몇 개?
# 3. `for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS)` 루프 안에 타일 GEMM 본문(블로그의 TODO 4)을 옮겨
#    커널을 완성하기: 누산기는 타일마다 0에서 다시 시작해야 합니다
# 4. 프로그램 수가 1개일 때, 3개일 때, 타일보다 많을 때 모두 torch와 같은 답을 내는지 확인하기 — 프로그램 하나가
#    타일을 2개 이상 맡아야(프로그램 수 < 타일 수) 누산기를 초기화하지 않은 실수가 드러납니다
#
# ## GPU가 필요한 부분
# **없습니다.** GPU가 없으면 커널은 CPU 해석기(`TRITON_INTERPRET=1`)로 돌고, GPU가 있으면 GPU에서 돕니다.
# 채점도 해석기로 합니다.
#
# 점수: 연습 1 (2점) + 코딩 문제 (8점) + 설명 (2점) = 12점.
# 코딩 문제의 커널 테스트는 **CPU 해석기 실행**과 **sm_75/80/90 교차 컴파일**(실제 Triton 컴파일러)이 모두 통과해야
# 점수를 받습니다. 채점기는 노트북의 `launch`가 아니라 **자기 사본의 실행기**로 `student_persistent_kernel`을 실행합니다.
#
# ## 읽을거리
# * Triton Tutorial 03 — Matrix Multiplication: <https://triton-lang.org/main/getting-started/tutorials/03-matrix-multiplication.html>
# * Triton Tutorial 01/02 (6주차): <https://triton-lang.org/main/getting-started/tutorials/01-vector-add.html>,
#   <https://triton-lang.org/main/getting-started/tutorials/02-fused-softmax.html>
# * Triton Programming Guide, Chapter 1: <https://triton-lang.org/main/programming-guide/chapter-1/introduction.html>
# * Triton 논문 (MAPL 2019) §4.2, §5.1–5.3: <https://doi.org/10.1145/3315508.3329973>
#   (PDF: <https://www.eecs.harvard.edu/~htk/publication/2019-mapl-tillet-kung-cox.pdf>)
# * MLIR 개요: <https://mlir.llvm.org/>
# * NVIDIA Matrix Multiplication Background: <https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html>
# * Triton Tutorial 09 — Persistent Matmul: <https://triton-lang.org/main/getting-started/tutorials/09-persistent-matmul.html>
# * API: `tl.range` <https://triton-lang.org/main/python-api/generated/triton.language.range.html>,
#   `tl.program_id` <https://triton-lang.org/main/python-api/generated/triton.language.program_id.html>
# * Modern GPU Programming for MLSys — What Makes a Kernel Fast (GEMM, The Optimization Ladder, Reducing Idle Time
#   Through Overlap, Occupancy and Resource Pressure 절 — 특히 점유율과 자원 압박; 예시 수치는 B200의 것):
#   <https://mlc.ai/modern-gpu-programming-for-mlsys/chapter_performance/index.html>
# * CUDA Programming Guide, 계산 능력별 한계(레지스터·shared memory·block 수):
#   <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#features-and-technical-specifications-technical-specifications-per-compute-capability>
# * 사례 연구 노트북 `notebooks/persistent_case_study` (블로그 「persistent kernel은 그 자체로 빠르지 않다」 1부)

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false, "task": false}
from gemm_lab import runtime  # triton보다 먼저: GPU가 없으면 해석기를 켭니다

import torch
import triton
import triton.language as tl

from gemm_lab.calc import occupancy, tiling
from gemm_lab.runtime import grading_mode

DEVICE = runtime.device()
print("커널을 실행할 장치:", DEVICE, "(해석기)" if runtime.INTERPRET else "")

# %% [markdown]
# ## 1. 프로그램 하나가 타일 여러 개: 몇 개씩?
#
# naive tiled 커널은 타일 수만큼 프로그램을 띄웁니다(`grid = cdiv(M, BLOCK_M) × cdiv(N, BLOCK_N)`).
# persistent 커널은 프로그램을 `num_programs = min(num_sms × programs_per_sm, num_tiles)`개만 띄우고,
# 프로그램 `pid`는 타일 번호 `pid, pid + num_programs, pid + 2·num_programs, …`(`num_tiles` 미만)을 차례로
# 계산합니다.
#
# 예를 들어 타일이 10개이고 프로그램이 4개면:
#
# | 프로그램 | 계산하는 타일 |
# | --- | --- |
# | 0 | 0, 4, 8 |
# | 1 | 1, 5, 9 |
# | 2 | 2, 6 |
# | 3 | 3, 7 |
#
# 프로그램마다 타일이 2개 또는 3개이고, 3개를 맡는 프로그램은 2개입니다.

# %%
ex_tiles, ex_programs = 10, 4
for pid in range(ex_programs):
    print(f"program {pid}: tiles {list(range(pid, ex_tiles, ex_programs))}")

# %% [markdown]
# ### 연습 1 (2점)
#
# 블로그의 설정: `M = N = K = 4096`, `BLOCK_M = 128`, `BLOCK_N = 64`, RTX 5090(SM 170개),
# `programs_per_sm = 2`. 다음 값을 구해 변수에 넣으세요(숫자로 적어도, 계산식으로 적어도 됩니다).
#
# * `num_tiles_4096`: C 타일의 개수
# * `num_programs_blog`: persistent 커널이 띄우는 프로그램 수
# * `tiles_min`, `tiles_max`: 프로그램 하나가 계산하는 타일 수의 최솟값과 최댓값
# * `programs_with_max`: `tiles_max`개를 계산하는 프로그램의 수

# %% nbgrader={"grade": false, "grade_id": "ex1_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
num_tiles_4096 = (4096 // 128) * (4096 // 64)
num_programs_blog = min(170 * 2, num_tiles_4096)
tiles_min = num_tiles_4096 // num_programs_blog
tiles_max = -(-num_tiles_4096 // num_programs_blog)
programs_with_max = num_tiles_4096 % num_programs_blog
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex1_tiles_per_program_blog", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""Exercise 1: tile count, persistent grid and tiles per program for the blog's 4096³ run on 170 SMs × 2."""
from gemm_lab.grading import fresh
g = fresh()
_tiles = g.calc.tiling.tile_grid(4096, 4096, 4096, 128, 64, 32).grid
_programs = g.calc.occupancy.persistent_grid(170, 2, _tiles)
_split = g.calc.occupancy.tiles_per_program(_tiles, _programs)
g.check_value("num_tiles_4096", num_tiles_4096, _tiles)
g.check_value("num_programs_blog", num_programs_blog, _programs)
g.check_value("tiles_min", tiles_min, _split.min_tiles)
g.check_value("tiles_max", tiles_max, _split.max_tiles)
g.check_value("programs_with_max", programs_with_max, _split.programs_with_max)

# %% [markdown]
# ## 2. 코딩 문제: persistent 루프 — 블로그의 TODO 4 (8점)
#
# 블로그의 naive persistent 커널은 naive tiled 커널의 본문(TODO 1–3: 포인터와 M/N/K 마스크, K 루프, 저장)을
# persistent 루프 안으로 옮긴 것입니다(TODO 4). 블로그의 주석 그대로, **누산기와 포인터는 타일마다 새로
# 초기화해야 합니다** (acc와 pointer는 tile마다 새로 초기화해야 한다). 타일 하나만 계산하던 커널에서는 드러나지
# 않던 실수입니다: 누산기를 루프 밖에서 한 번만 만들면, 프로그램의 두 번째 타일부터 앞 타일의 합이 더해집니다.
#
# 채점을 위해 주어지는 것은 아래 `record_tile` 하나입니다. 수정하지 마세요. 타일 하나를 계산하고 나서 호출하면
# `visits[tile_id]`에 1을 더하고(그 타일이 몇 번 계산되었나), `owner[tile_id]`에 자기 `program_id`를 적습니다.

# %% nbgrader={"grade": false, "grade_id": "given_record_tile", "locked": true, "schema_version": 3, "solution": false, "task": false}
@triton.jit
def record_tile(tile_id, visits_ptr, owner_ptr):
    """Grading record: tile ``tile_id`` was computed once more, and by this program."""
    tl.atomic_add(visits_ptr + tile_id, 1)
    tl.store(owner_ptr + tile_id, tl.program_id(0))


# %% [markdown]
# 이제 커널을 완성하세요. 할 일은 다음과 같습니다(블로그의 `_persistent_matmul_kernel`과 같은 순서).
#
# 1. 내 프로그램 번호 `pid`(`tl.program_id(0)`), N축 타일 수 `num_n_tiles`, 타일 개수 `num_tiles`
#    (`tl.cdiv`로 M축·N축 타일 수를 곱한 값)
# 2. **persistent 루프**: `pid`에서 시작해 `NUM_PROGRAMS`씩 건너뛰며 `num_tiles` 미만의 모든 `tile_id`를 순회
#    (`range` 또는 `tl.range`)
# 3. 루프 안에서 타일 하나를 계산 (TODO 4):
#    * 타일 좌표: `tile_m = tile_id // num_n_tiles`, `tile_n = tile_id % num_n_tiles` (row-major 타일 순서)
#    * 포인터와 M/N 마스크: `tile_m * BLOCK_M + tl.arange(0, BLOCK_M)` 등으로 타일마다 새로 만들기
#    * FP32 누산기를 **타일마다** `tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)`로 초기화하고, K축을 `BLOCK_K`씩
#      돌며 K 마스크를 준 `tl.load`(`other=0.0`)와 `tl.dot`으로 누적하기
#    * C 타일을 출력 dtype으로 바꿔(`acc.to(c_ptr.dtype.element_ty)`) 마스크와 함께 `tl.store`
#    * 마지막으로 채점용 기록: `record_tile(tile_id, visits_ptr, owner_ptr)`
#
# 채점은 아래의 `launch(a, b, c, num_programs=...)`와 같은 실행기로 커널을 실제로 실행해 torch와 비교합니다.
# 프로그램 수는 1개(프로그램 하나가 모든 타일을 계산), 3개(타일이 고르게 나뉘지 않음), 타일 수보다 많은 경우까지
# 바꿔 가며, 크기는 타일의 배수가 아니고, 입력·출력은 독 값으로 채운 버퍼 속의 뷰입니다. 그리고 **모든 타일이
# 정확히 한 번씩**, 올바른 프로그램에 의해 계산되었는지도 봅니다: 채점기가 해석기에서 어느 프로그램이 어느 원소를
# 썼는지 직접 관찰합니다(`record_tile`의 기록은 여러분이 확인하는 도구일 뿐, 채점에는 쓰이지 않습니다).
#
# **점수 조건:** 커널 테스트(3점 + 3점 + 2점)는 (1) 해석기 실행 결과가 맞고 (2) 커널이 sm_75/sm_80/sm_90용으로
# **실제 컴파일**될 때만 점수를 받습니다. 채점기는 `student_persistent_kernel`을 자기 사본의 실행기(아래 `launch`와
# 같은 코드)로 실행하므로, `launch`나 `record_tile`을 고쳐도 채점에는 영향이 없습니다.
#
# **허용되는 변형:** 커널을 다른 이름으로 정의한 뒤 `student_persistent_kernel = my_kernel`처럼 묶어도, `tl.constexpr` 기본값을
# 모듈 상수(`BLOCK = 16` … `BLOCK_SIZE: tl.constexpr = BLOCK`)에서 가져와도, `import triton.language as tl2`처럼
# 다른 이름으로 가져와도 같은 점수를 받습니다. `@triton.autotune`·`@triton.heuristics`를 붙이면 채점기는 그 내용을
# 확인한 뒤 떼어 내고 주어진 `launch`가 넘기는 블록 크기로 실행합니다(튜닝 결과는 점수와 무관). 다만 주어진 `launch`는
# 블록 크기를 직접 넘기므로, 튜닝하는 인자와 겹치면 여러분의 노트북에서는 Triton이 오류를 냅니다 — 이 과제에는
# 붙이지 않는 편이 낫습니다. 커널 안에서는 `tl.*`와 다른 `@triton.jit` 함수만 부를 수 있습니다.

# %% nbgrader={"grade": false, "grade_id": "student_kernel", "locked": false, "schema_version": 3, "solution": true, "task": false}
@triton.jit
def student_persistent_kernel(
    # 포인터 (visits, owner: 채점용 기록)
    a_ptr, b_ptr, c_ptr, visits_ptr, owner_ptr,
    # 행렬 크기
    M, N, K,
    # stride
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    # 메타파라미터: 띄운 프로그램 수와 타일 크기
    NUM_PROGRAMS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """C[M, N] = A[M, K] @ B[K, N]; program pid computes tiles pid, pid + NUM_PROGRAMS, ..."""
    # TODO 4: pid와 타일 개수, persistent 루프, 그리고 루프 안의 타일 GEMM 본문(타일 좌표, 포인터와 마스크,
    # 타일마다 새 FP32 누산기와 K 루프, 저장, record_tile)을 쓰세요.
    ### BEGIN SOLUTION
    pid = tl.program_id(0)
    num_n_tiles = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * num_n_tiles
    for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS):
        tile_m = tile_id // num_n_tiles
        tile_n = tile_id % num_n_tiles

        # 포인터와 M/N 마스크: 타일마다 새로 만든다
        offsets_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offsets_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
        a_row = a_ptr + offsets_m[:, None] * stride_am
        b_col = b_ptr + offsets_n[None, :] * stride_bn
        mask_m = offsets_m[:, None] < M
        mask_n = offsets_n[None, :] < N

        # K 루프: FP32 누산기도 타일마다 0에서 다시 시작한다
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            offsets_k = k + tl.arange(0, BLOCK_K)
            mask_a = mask_m & (offsets_k[None, :] < K)
            mask_b = mask_n & (offsets_k[:, None] < K)
            a_tile = tl.load(a_row + offsets_k[None, :] * stride_ak, mask=mask_a, other=0.0)
            b_tile = tl.load(b_col + offsets_k[:, None] * stride_bk, mask=mask_b, other=0.0)
            acc = tl.dot(a_tile, b_tile, acc)

        # C 타일 저장, 그리고 채점용 기록
        c = acc.to(c_ptr.dtype.element_ty)
        tl.store(c_ptr + offsets_m[:, None] * stride_cm + offsets_n[None, :] * stride_cn, c, mask=mask_m & mask_n)
        record_tile(tile_id, visits_ptr, owner_ptr)
    ### END SOLUTION


# %% [markdown]
# 아래 `launch`는 주어진 실행기(launcher)입니다. 수정하지 마세요. `num_programs`를 주지 않으면 블로그처럼
# `min(num_sms × programs_per_sm, num_tiles)`개를 띄웁니다(해석기에는 SM이 없으니 `num_sms=4`로 봅니다).

# %% nbgrader={"grade": false, "grade_id": "given_launcher", "locked": true, "schema_version": 3, "solution": false, "task": false}
def launch(a, b, c, num_programs=None, *, programs_per_sm=1, visits=None, owner=None,
           BLOCK_M=32, BLOCK_N=32, BLOCK_K=32):
    """Run student_persistent_kernel: c[M, N] = a[M, K] @ b[K, N] (c is written in place).

    ``visits``/``owner``: optional int32 tensors of num_tiles elements that record, per tile, how often
    it was computed and by which program (zeros / -1 are used when not given).
    """
    M, K = a.shape
    N = b.shape[1]
    num_tiles = tiling.cdiv(M, BLOCK_M) * tiling.cdiv(N, BLOCK_N)
    if num_programs is None:
        num_sms = runtime.num_sms() if runtime.on_gpu() else 4
        num_programs = occupancy.persistent_grid(num_sms, programs_per_sm, max(num_tiles, 1))
    if visits is None:
        visits = torch.zeros(max(num_tiles, 1), dtype=torch.int32, device=a.device)
    if owner is None:
        owner = torch.full((max(num_tiles, 1),), -1, dtype=torch.int32, device=a.device)
    student_persistent_kernel[(num_programs,)](
        a, b, c, visits, owner, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        NUM_PROGRAMS=num_programs, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return c


# %% [markdown]
# 먼저 직접 확인해 보세요 (채점하지 않는 셀): `80×80`인 C를 32×32 타일로 나누면 3 × 3 = 9개 타일입니다.
# 프로그램 1개, 3개, 20개(타일보다 많음)로 계산해 torch와 비교하고, 타일마다 몇 번, 어느 프로그램이 계산했는지
# 봅니다. 20개일 때만 맞고 1개·3개일 때 틀린다면 프로그램이 맡은 두 번째 타일부터 틀린 것이니, 누산기를 타일마다
# 새로 만들었는지 보세요.

# %%
if grading_mode():  # an interpreter run without points
    print("(채점 중: 시연 셀은 건너뜁니다)")
else:
    try:
        gen = torch.Generator().manual_seed(1)
        a_try = torch.randn(80, 48, generator=gen).half().to(DEVICE)
        b_try = torch.randn(48, 80, generator=gen).half().to(DEVICE)
        ref_try = a_try.float() @ b_try.float()
        n_tiles_try = tiling.cdiv(80, 32) * tiling.cdiv(80, 32)
        for P in (1, 3, 20):
            c_try = torch.full((80, 80), float("nan"), dtype=torch.float16, device=DEVICE)
            visits_try = torch.zeros(n_tiles_try, dtype=torch.int32, device=DEVICE)
            owner_try = torch.full((n_tiles_try,), -1, dtype=torch.int32, device=DEVICE)
            launch(a_try, b_try, c_try, num_programs=P, visits=visits_try, owner=owner_try)
            rel = ((c_try.float() - ref_try).norm() / ref_try.norm()).item()
            print(("✅" if rel < 1e-3 else "❌"), f"프로그램 {P}개: 상대 오차 {rel:.2e},",
                  f"타일별 계산 횟수 {visits_try.tolist()}, 계산한 프로그램 {owner_try.tolist()}")
    except Exception as exc:  # 해석기는 TODO의 NotImplementedError를 InterpreterError로 감싸서 올립니다
        if "NotImplementedError" not in repr(exc):
            raise
        print("❌ 아직 커널을 채우지 않았습니다.")

# %% nbgrader={"grade": true, "grade_id": "persistent_matches_torch_visible", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""Coding: the persistent kernel matches torch for 1, 3 and more-than-tiles programs (poisoned margins)."""
from gemm_lab.grading import fresh
g = fresh()
# 1, 3: 프로그램 하나가 타일 여러 개 (누산기를 타일마다 초기화해야 맞음), 40: 타일보다 많은 프로그램
g.check_persistent(student_persistent_kernel, num_programs=[1, 3, 40])

# %% nbgrader={"grade": true, "grade_id": "persistent_matches_torch_hidden", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""Coding: the persistent kernel matches torch on hidden shapes and program counts."""
from gemm_lab.grading import fresh
g = fresh()
### BEGIN HIDDEN TESTS
g.check_persistent(student_persistent_kernel, hidden=True, num_programs=[1, 2, 5, 40], seed=1)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "every_tile_once_by_its_program", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""Coding: every tile is computed exactly once, by program tile_id % num_programs (no redundant work)."""
from gemm_lab.grading import fresh
g = fresh()
# the grader's launcher records, per tile, how often it was computed and by which program
g.check_persistent(student_persistent_kernel, num_programs=[1, 3, 7, 1000], ownership=True, seed=2,
                   hint="프로그램 pid는 타일 pid, pid + NUM_PROGRAMS, pid + 2·NUM_PROGRAMS, …를 한 번씩 계산해야 합니다.")

# %% [markdown]
# ## 3. 설명 (2점)
#
# 먼저 블로그의 숫자로 SM당 block 수를 계산해 봅시다(`occupancy.blocks_per_sm`, sm_120 = RTX 5090의 한계).
# 블로그(ncu)는 레지스터를 **174개/thread**라고 보고하지만, 하드웨어는 레지스터를 warp 단위로 **256개씩**
# 할당합니다(`reg_alloc_unit`). 174 × 32 = 5,568개는 256의 배수로 올림되어 warp당 5,632개, 즉 thread당
# **176개**로 잡힙니다. 그래서 아래 계산(과 풀이)은 65,536 / (176 × 128)로 나눕니다. 174로 나눠도 이 경우 답(2)은
# 같지만, 경계 근처에서는 올림한 값으로 계산해야 ncu의 "Block Limit Registers"와 맞습니다.

# %%
blog_occ = occupancy.blocks_per_sm(174, 4, 36_864, "sm_120")
print(f"warp당 할당 레지스터 {blog_occ.regs_per_warp:,}개 = thread당 {blog_occ.regs_per_warp // 32}개 (보고값 174개에서 올림)")
print(f"SM당 block: 레지스터 기준 {blog_occ.by_regs}, shared memory 기준 {blog_occ.by_smem} "
      f"(block당 {blog_occ.smem_per_block_alloc:,} B = 36,864 B + 예약 1 KiB) → {blog_occ.blocks}개, 한계: {blog_occ.limiter}")
print(f"이론 점유율 {blog_occ.occupancy:.1%} (SM당 warp {blog_occ.warps_per_sm}개 / 48개)")

# %% [markdown]
#
# 블로그는 RTX 5090에서 `programs_per_sm = 1`(grid = SM 170개)인 naive persistent 커널이 naive tiled 커널보다
# 느렸고, ncu의 Waves Per SM이 1이 아니라 0.50이었다고 보고했습니다. 레지스터 174개/thread, shared memory
# 36,864 B/block, 4 warps/block에서 SM당 block 슬롯이 2개라는 것과 연결해, 왜 느렸는지 두세 문장으로
# 설명하세요. `programs_per_sm = 2`로 바꿨을 때 무엇이 좋아지고, 무엇이 여전히 남는지도 한 문장씩 적으세요.

# %% [markdown] nbgrader={"grade": true, "grade_id": "explain_waves_and_overhead", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 레지스터(⌊65,536 / (176 × 128)⌋ = 2)와 shared memory(⌊100 KB / (36,864 B + 1 KB)⌋ = 2)가 SM당 block을 2개까지
# 허용하는데 grid가 SM 수(170)뿐이라 SM마다 슬롯 하나가 비고(Waves Per SM = 170 / (170 × 2) = 0.50, 점유율
# 16.7% 대신 8.3%), 한 block이 메모리를 기다리는 동안 지연을 숨겨 줄 다른 block이 없다. `programs_per_sm = 2`로
# 두 슬롯을 다 채우면(Waves 1.0) 5% 남짓 빨라지지만, 타일마다 루프 안에서 타일 인덱스(정수 나눗셈)·offset·
# mask를 다시 계산하는 정수/uniform 명령어가 늘어난 만큼의 오버헤드(와 프로그램마다 6개/7개 타일의 불균형)는
# 남아 naive tiled보다 약간 느리다.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade": false, "grade_id": "summary", "locked": true, "schema_version": 3, "solution": false, "task": false}
# ## 정리
#
# * persistent 커널은 타일 수가 아니라 `min(num_sms × programs_per_sm, num_tiles)`개의 프로그램을 띄우고,
#   프로그램 `pid`가 `range(pid, num_tiles, NUM_PROGRAMS)`의 타일을 차례로 계산합니다. 프로그램마다 타일은
#   `⌊T / P⌋`개 또는 `⌈T / P⌉`개이고, `T mod P`개의 프로그램이 하나를 더 계산합니다.
# * 타일 본문(포인터·mask·누산기)은 타일마다 새로 만들어야 합니다. 누산기를 루프 밖에서 한 번만 만들면 프로그램의
#   두 번째 타일부터 답이 틀리는데, 프로그램이 타일을 하나씩만 맡는 grid(프로그램 수 ≥ 타일 수)에서는 드러나지
#   않습니다. 타일마다 다시 하는 이 계산(타일 좌표의 정수 나눗셈, offset, mask)이 블로그가 찾은 명령어 오버헤드입니다.
# * 이 루프를 가진 커널이 왜 그 자체로는 빠르지 않은지(SM당 block 슬롯과 Waves Per SM), 그리고 무엇을 더해야
#   빨라지는지(grouped 순서, TMA)는 사례 연구 노트북 `notebooks/persistent_case_study`에서 측정값과 함께 봅니다.
#
# **핵심 용어 3개:** 영속 커널(Persistent Kernel, `NUM_PROGRAMS`개만 띄우는 grid), 타일 순회(Tile Loop,
# `range(pid, num_tiles, NUM_PROGRAMS)`), 타일마다 누산기 초기화(Per-tile Accumulator Reset)
