# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown]
# # Persistent matmul 사례 연구 — persistent kernel은 그 자체로 빠르지 않다, 그리고 무엇이 빠르게 만드는가
#
# 이 노트북은 블로그 글 **「(1/n) Triton matmul 커널 탐험 - persistent kernel은 그 자체로 빠르지 않다」**
# (2026년 8월 30일, RTX 5090)를 `gemm_lab`으로 **직접 재현**하고, 글이 예고한 다음 편 —
# persistent 커널을 *실제로* 빠르게 만드는 기법들 — 을 이어서 써 봅니다.
# 글의 숫자를 옮겨 적는 대신, 커널을 실행하고(CPU에서는 인터프리터), 컴파일러에게 묻고(cross-compile),
# 계산기(`gemm_lab.calc`)로 계산하고, H200에서 측정해 커밋한 결과(`results/`)를 읽습니다.
# 커밋된 H200 측정은 모두 **triton 3.6.0**(torch 2.11.0+cu130)으로 잰 것으로, 이 과정이 고정한 triton 3.7.1(`pyproject.toml`)과 버전이 다릅니다: 표와 출력 줄의 `triton` 값이 잰 버전입니다.
#
# ## 이번 노트북에서 배우는 것
#
# 1. **naive tiled** 커널(타일(tile) 하나 = 프로그램(program) 하나)과 **naive persistent** 커널(SM 수만큼의 프로그램이
#    여러 타일을 순회)의 차이와, 둘 다 `torch.matmul`과 같은 답을 내는지 확인하는 법
# 2. 컴파일된 커널의 **레지스터 수(`n_regs`)·spill(`n_spills`)·shared memory**를 읽는 법
# 3. 그 숫자들로 **점유율(Occupancy)** 을 직접 계산하기: 자원별 block limit(registers, shared memory,
#    warps), SM당 block 슬롯, **Waves Per SM**
# 4. `programs_per_sm` sweep — grid를 늘리면 왜 빨라지는지, 어디서 멈추는지, 그리고 남는 차이는 어디서
#    오는지(**명령어 오버헤드(instruction overhead)**)
# 5. 2부: persistent 루프 안의 **grouped 순서(Grouped Ordering)**, Hopper의 **tensor descriptor(TMA)**
#    와 Tutorial 09의 기법들 — 각각 **측정 전에 예측을 적고**, 측정한 뒤 예측과 비교하기
#
# ## GPU가 필요한 부분
#
# | 부분 | GPU 없이(CPU) | GPU에서 |
# | --- | --- | --- |
# | 커널 실행과 torch 비교 | 인터프리터(`TRITON_INTERPRET=1`)로 작은 행렬 | 같은 검사를 GPU에서 |
# | `n_regs`, `n_spills`, shared memory | shared memory는 sm_90으로 cross-compile, `n_regs`는 H200에서 커밋된 값 | 내 GPU에서 컴파일한 값 |
# | 점유율 계산 | 블로그의 RTX 5090 → H200 | 블로그의 RTX 5090 → 내 GPU |
# | 속도 측정(sweep, 변형들) | H200에서 커밋된 결과(`results/`) | 내 GPU에서 직접 측정 + 커밋된 결과 |
#
# GPU가 없어도 이 노트북은 끝까지 실행되고, 같은 이야기를 H200의 측정값으로 읽습니다.
#
# ## 동기: 왜 persistent 커널인가
#
# 최신 GEMM 구현(Triton Tutorial 09의 persistent matmul, CUTLASS의 persistent/Stream-K 커널)은 대부분
# persistent 커널입니다. 프로그램이 타일 하나를 끝내고 사라지는 대신 SM에 머물며 다음 타일로 넘어가면,
# 타일 순서를 커널이 정하고, 한 타일의 저장과 다음 타일의 load를 겹치고, 타일을 SM에 고르게 나눌 수 있습니다.
# 그러니 "grid만 SM 수로 바꾸면 빨라지겠지"라고 기대하기 쉽습니다. 블로그는 바로 그 기대를 재 보았고, 결과는
# 반대였습니다. 1부에서는 그 이유를 숫자로 따라가고, 2부에서는 persistent 구조가 값을 하게 만드는 기법을
# 하나씩 더해 `torch.matmul`(cuBLAS)까지 가 봅니다.

# %% [markdown]
# ## 0. 준비
#
# `gemm_lab.runtime`을 가장 먼저 import합니다. GPU가 없으면 triton이 로드되기 전에 인터프리터 모드를 켭니다.

# %%
from gemm_lab import runtime  # noqa: I001  (triton보다 먼저)

import matplotlib.pyplot as plt
import pandas as pd
import torch

from gemm_lab import compile as gcompile
from gemm_lab import bench, kernels, results
from gemm_lab.calc import autotune, devices, occupancy, ordering, smem, tiling
from gemm_lab.calc.roofline import BLOG_CONFIG
from gemm_lab.viz import bench_plots
from gemm_lab.viz import occupancy as occ_viz

try:
    from IPython.display import display
except ImportError:  # 노트북 밖(python 스크립트)에서 실행할 때
    display = print

ON_GPU = runtime.on_gpu()
INFO = runtime.describe()
NOISE = 0.05  # results/README.md: 5% 안쪽의 차이는 잡음
print("GPU에서 실행" if ON_GPU else "CPU에서 실행: 커널은 인터프리터로, 속도는 커밋된 H200 결과로 봅니다")
print("블로그의 설정:", BLOG_CONFIG)

# %% [markdown]
# 이 노트북은 측정값을 직접 적지 않습니다. 측정값은 모두 `results/`의 CSV에서 읽습니다
# (`python -m gemm_lab.bench`가 H200에서 쓰고 커밋한 파일; 스키마는 `results/README.md`).
# GPU가 있으면 같은 함수(`gemm_lab.bench`)로 지금 GPU에서 다시 재고, 두 결과를 나란히 봅니다.
# 파일이 없으면 해당 셀은 그 사실을 말하고 넘어갑니다.
#
# | 파일 | 내용 |
# | --- | --- |
# | `persistent_programs.csv` | naive tiled와 naive persistent(`programs_per_sm` = 1, 2, 3, 4), 4096³·8192³ |
# | `persistent_variants.csv` | persistent 변형들과 naive tiled·autotuned 커널, 4096³·8192³ |
# | `compiled_kernels.csv` | 컴파일된 커널의 shared memory·`n_regs`·`n_spills` (GPU에서 컴파일) |

# %%
COMMITTED = {name: results.load_csv(f"{name}.csv")
             for name in ("persistent_programs", "persistent_variants", "compiled_kernels")}
if COMMITTED["persistent_variants"] is None:  # 첫 GPU 호출에서 짧게 잰 같은 표가 있으면 그것으로
    COMMITTED["persistent_variants"] = results.load_csv("persistent_variants_quick.csv")
for name, df in COMMITTED.items():
    if df is None:
        print(f"❌ results/{name}.csv 없음: 이 파일이 필요한 셀은 '결과 없음'이라고만 말합니다.")
    else:
        print(f"✅ results/{name}.csv: {len(df)}행, {df['gpu'].iloc[0]} (torch {df['torch'].iloc[0]}, "
              f"triton {df['triton'].iloc[0]}, {df['date'].iloc[0]})")


def committed_regs():
    """{blog kernel: n_regs} from results/compiled_kernels.csv ({} when it is missing)."""
    df = COMMITTED["compiled_kernels"]
    if df is None or "n_regs" not in df:
        return {}
    found = {}
    for name, kernel in BLOG_KERNELS.items():
        rows = df[(df["kernel"] == kernel) & df["n_regs"].notna()]
        if len(rows):
            found[name] = int(rows["n_regs"].iloc[0])
    return found


def rows_of(df, kernel, size=None, config=None):
    """Rows of a results table for one kernel (and size M = N = K, and config substring)."""
    if df is None:
        return None
    sel = df[df["kernel"] == kernel]
    if size is not None:
        sel = sel[(sel["M"] == size) & (sel["N"] == size) & (sel["K"] == size)]
    if config is not None:
        sel = sel[sel["config"].str.contains(config, regex=False)]
    return sel if len(sel) else None

# %% [markdown]
# # 1부. 블로그 재현
#
# ## 1.1 두 커널: naive tiled와 naive persistent
#
# **naive tiled matmul**은 출력 C의 `BLOCK_M × BLOCK_N` 타일 하나를 프로그램 하나가 계산합니다.
# grid는 타일 수와 같고(`cdiv(M, BLOCK_M) × cdiv(N, BLOCK_N)`), 어느 프로그램을 어느 SM에 올릴지는
# 하드웨어 스케줄러(block scheduler)가 정합니다. 블로그의 커널은 타일을 행 우선(row-major) 순서로
# 배정합니다 — Tutorial 03 커널(`gemm_lab.kernels.matmul`)의 `GROUP_M=1`과 같은 순서입니다.
#
# **naive persistent matmul**은 SM 수만큼만 프로그램을 띄우고, 각 프로그램이 `NUM_PROGRAMS` 간격으로
# 여러 타일을 순회합니다. 타일 배정을 하드웨어 대신 커널이 직접 쥐는 것이고, 그 위에 cross-tile
# pipelining이나 Stream-K 같은 기법을 얹을 수 있습니다. 본문은 tiled 커널과 같고, 바깥에 루프 하나가
# 더 있을 뿐입니다(블로그의 TODO 4 — week 7 과제 `06_persistent_loop`에서 직접 써 봅니다).
#
# `gemm_lab.kernels`에 있는 두 커널(`tiled_matmul_kernel`, `persistent_matmul_kernel`)의 소스 차이(diff)를 봅시다.

# %%
import difflib
import inspect

tiled_src = inspect.getsource(kernels.tiled_matmul_kernel.fn).splitlines()
persistent_src = inspect.getsource(kernels.persistent_matmul_kernel.fn).splitlines()
print("\n".join(difflib.unified_diff(tiled_src, persistent_src, "tiled_matmul_kernel",
                                     "persistent_matmul_kernel", lineterm="", n=1)))

# %% [markdown]
# `+`로 시작하는 줄이 persistent 커널에 더해진 것입니다: `NUM_PROGRAMS`, 타일 수 계산, 그리고
# `for tile_id in tl.range(start_tile, num_tiles, NUM_PROGRAMS)` 루프. 나머지(pointer, mask, K 루프,
# 저장)는 한 단계 들여쓰기 되었을 뿐 그대로입니다.

# %% [markdown]
# ## 1.2 torch와 같은 답을 내는가
#
# 속도를 재기 전에 답부터 확인합니다. 타일 크기의 배수가 아닌 작은 행렬(가장자리 타일에 mask가 필요한
# 크기)에서 naive tiled와 naive persistent(프로그램 1개가 모든 타일을 도는 경우, `programs_per_sm=1`, `2`)를
# 실행해 fp32 참값(`kernels.reference_matmul`)과 비교합니다. CPU에서는 인터프리터가 프로그램을 하나씩 차례로
# 실행하고, SM이 없으니 SM 수를 작은 값(`kernels.persistent.INTERPRETER_NUM_SMS`)으로 봅니다.

# %%
DEVICE = runtime.device()
M_T, N_T, K_T = (1000, 1096, 520) if ON_GPU else (200, 136, 72)  # 타일(128×64×32)의 배수가 아님
torch.manual_seed(0)
a = torch.randn(M_T, K_T, device=DEVICE, dtype=torch.float16)
b = torch.randn(K_T, N_T, device=DEVICE, dtype=torch.float16)
ref = kernels.reference_matmul(a, b)  # fp32 참값

tile_info = tiling.tile_grid(M_T, N_T, K_T, BLOG_CONFIG.BLOCK_M, BLOG_CONFIG.BLOCK_N, BLOG_CONFIG.BLOCK_K)
sms_here = runtime.num_sms() if ON_GPU else kernels.persistent.INTERPRETER_NUM_SMS
print(f"{M_T}×{N_T}×{K_T}: 타일 {tile_info.num_pid_m}×{tile_info.num_pid_n} = {tile_info.grid}개, SM {sms_here}개로 계산")

runs = {
    "naive tiled": lambda: kernels.naive_tiled_matmul(a, b),
    "naive persistent, 1 program": lambda: kernels.persistent_matmul(a, b, num_sms=1),
    "naive persistent, programs_per_sm=1": lambda: kernels.persistent_matmul(a, b),
    "naive persistent, programs_per_sm=2": lambda: kernels.persistent_matmul(a, b, programs_per_sm=2),
}
for name, run in runs.items():
    out = run()
    err = kernels.relative_error(out, ref)
    try:
        kernels.assert_close(out, ref, name=name)
        print(f"✅ {name}: torch와 일치 (상대 오차 {err:.1e})")
    except AssertionError as exc:
        print(f"❌ {name}: {exc}")

# %% [markdown]
# ## 1.3 grid: 타일 수 대 프로그램 수
#
# 블로그의 측정 조건은 `M = N = K = 4096`, `BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, num_stages=4`
# (`BLOG_CONFIG`)입니다. 타일은 몇 개이고, SM이 170개인 RTX 5090에서 persistent 커널은 프로그램을 몇 개
# 띄울까요? grid는 블로그와 같이 `num_programs = min(num_sms × programs_per_sm, num_tiles)`입니다.

# %%
M = N = K = 4096
RTX5090 = devices.get_device("rtx5090")
blog_grid = tiling.tile_grid(M, N, K, BLOG_CONFIG.BLOCK_M, BLOG_CONFIG.BLOCK_N, BLOG_CONFIG.BLOCK_K)
num_tiles = blog_grid.grid
P1 = occupancy.persistent_grid(RTX5090.sms, 1, num_tiles)
split1 = occupancy.tiles_per_program(num_tiles, P1)
print(f"타일 수: {blog_grid.num_pid_m} × {blog_grid.num_pid_n} = {num_tiles:,}")
print(f"naive tiled의 grid: 프로그램 {num_tiles:,}개 (타일마다 하나)")
print(f"naive persistent의 grid ({RTX5090.name}, SM {RTX5090.sms}개): {P1} programs, "
      f"프로그램마다 타일 {split1.min_tiles}~{split1.max_tiles}개 ({split1.max_tiles}개인 프로그램 {split1.programs_with_max}개)")

# %% [markdown]
# ## 1.4 측정 전 기대, 그리고 블로그의 측정
#
# 블로그의 기대는 이랬습니다. *"naive persistent는 naive tiled와 비슷하거나 미세하게 빠를 것이다 —
# block scheduling과 prologue 비용을 조금 줄여 주니까. 타일이 SM에 배정되어 계산되는 시간은 대략
# `ceil(num_tiles / NUM_SMS)`로 비슷할 것이다."*
#
# 결과는 반대였습니다. 아래 표는 블로그가 RTX 5090(torch 2.13.0+cu130, triton 3.7.1)에서 잰 시간이고
# (seed에 적힌 그대로 옮긴 **블로그의 측정값**입니다), TFLOP/s와 비율은 그 시간으로부터
# `gemm_lab.calc.autotune`이 계산합니다.

# %%
# 블로그가 RTX 5090에서 잰 시간 (ms) — seed 글에 적힌 측정값
BLOG_MS = {"torch.matmul": 0.6277, "naive tiled": 0.6448, "naive persistent": 0.7042}
blog = pd.DataFrame({"ms": BLOG_MS})
blog["TFLOP/s"] = [autotune.tflops(M, N, K, ms) for ms in blog["ms"]]
blog["torch 대비"] = [autotune.speedup(BLOG_MS["torch.matmul"], ms) for ms in blog["ms"]]  # t_torch / t
blog.round(3)

# %% [markdown]
# 블로그 본문은 TFLOPS를 **218.95**(torch)와 **213.16**(naive tiled)으로 적었는데, 위 표는 218.956과 213.150입니다. 블로그가
# ms를 소수 넷째 자리까지 **반올림해** 적었기 때문입니다: 반올림된 0.6277 ms는 실제로 0.62765~0.62775 ms 사이의 어떤 값이고,
# 그 구간에서 계산한 TFLOP/s는 아래처럼 블로그의 값을 포함합니다. (블로그의 TFLOPS는 반올림 전의 ms에서 계산한 것입니다.)

# %%
BLOG_TFLOPS = {"torch.matmul": 218.95, "naive tiled": 213.16}  # 블로그 본문에 적힌 값
for name, shown in BLOG_TFLOPS.items():
    lo = autotune.tflops(M, N, K, BLOG_MS[name] + 0.00005)
    hi = autotune.tflops(M, N, K, BLOG_MS[name] - 0.00005)
    print(f"{name}: ms {BLOG_MS[name]} ± 0.00005 → {lo:.2f} ~ {hi:.2f} TFLOP/s, 블로그 {shown} "
          f"{'(구간 안)' if lo <= shown <= hi else '(구간 밖!)'}")

# %% [markdown]
# naive tiled는 torch에 거의 붙었지만 naive persistent는 눈에 띄게 떨어집니다(표의 "torch 대비"). 왜 느릴까요? 블로그는 ncu의
# LaunchStats와 Occupancy 섹션을 봅니다. 그 숫자들을 우리도 구해 봅시다 — 먼저 컴파일된 커널에서.
#
# ## 1.5 컴파일된 커널이 쓰는 자원: `n_regs`, `n_spills`, shared memory
#
# Triton 커널을 launch하면 컴파일된 커널 객체에서 thread당 레지스터 수(`n_regs`), spill된 레지스터 수
# (`n_spills`), CTA(block)당 shared memory(`metadata.shared`), `num_warps`를 읽을 수 있습니다.
# 블로그는 RTX 5090에서 두 커널 모두 spill 0, shared 36,864 B, 4 warps였고 레지스터만
# 128(tiled)과 174(persistent)로 달랐습니다.
#
# 블로그가 이 숫자들(과 아래의 Occupancy·SpeedOfLight 섹션)을 얻은 ncu 명령은 다음과 같습니다(블로그에 적힌 그대로):
#
# ```bash
# ncu --target-processes all \
#   --section LaunchStats --section Occupancy --section SpeedOfLight \
#   --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
#   --section SchedulerStats --section WarpStateStats \
#   --kernel-name 'regex:^_persistent_matmul_kernel$' --launch-count 1 \
#   uv run --frozen python trition_tutorial/persistent_matmul/benchmark.py
# ```
#
# - **GPU에서**: `gemm_lab.compile`이 지금 GPU용으로 컴파일한 값을 읽습니다.
# - **CPU에서**: sm_90(H100/H200)용으로 cross-compile해서 shared memory를 읽습니다. `n_regs`/`n_spills`는
#   실제 GPU에서 컴파일(로드)될 때만 생기므로, H200에서 커밋된 값을 씁니다.

# %%
# 블로그가 RTX 5090에서 본 값 (seed 글의 측정값)
BLOG_NCU = {"regs/thread (tiled)": 128, "regs/thread (persistent)": 174, "shared/CTA": 36_864, "num_warps": 4}
BLOG_KERNELS = {"naive tiled": "blog_tiled", "naive persistent": "persistent"}
TARGET = None if ON_GPU else "sm_90"  # None: 지금 GPU용으로 컴파일 (n_regs/n_spills 포함)
ARTS = {name: gcompile.compile_artifacts(k, BLOG_CONFIG, target=TARGET) for name, k in BLOG_KERNELS.items()}
ARTS_5090 = {name: gcompile.compile_artifacts(k, BLOG_CONFIG, target="sm_120") for name, k in BLOG_KERNELS.items()}


def resources(arts):
    return pd.DataFrame({name: {"target": art.target, "shared/CTA (B)": art.shared,
                                "num_warps": art.metadata.get("num_warps"),
                                "num_stages": art.metadata.get("num_stages"),
                                "n_regs": art.metadata.get("n_regs"), "n_spills": art.metadata.get("n_spills")}
                         for name, art in arts.items()})


print("지금 GPU용으로 컴파일:" if ON_GPU else "sm_90(H100/H200)용 cross-compile (n_regs/n_spills는 GPU에서만):")
display(resources(ARTS))  # noqa: F821
print("sm_120(RTX 5090, 블로그의 GPU)용 cross-compile:")
display(resources(ARTS_5090))  # noqa: F821
for name, art in ARTS_5090.items():
    print(f"{'✅' if art.shared == BLOG_NCU['shared/CTA'] else '❌'} {name}: sm_120용 shared/CTA {art.shared:,} B "
          f"(블로그의 ncu: {BLOG_NCU['shared/CTA']:,} B)")

# %% [markdown]
# ### shared memory는 왜 36,864 B인가 (그리고 H200에서는 왜 다른가)
#
# 한 단계(stage)의 입력 타일은 `2 × (BLOCK_M·BLOCK_K + BLOCK_K·BLOCK_N)` = `2 × (128·32 + 32·64)` B입니다.
# 블로그는 36,864 B가 그 딱 3배라는 것을 보고 "num_stages=4를 줬지만 3단계 스테이징이 되었다"고 읽었습니다.
# 이것은 아키텍처에 따라 다릅니다: mma.sync 경로(Ampere, Ada, consumer Blackwell — RTX 5090은 sm_120)는
# `num_stages − 1`개의 버퍼를, Hopper의 wgmma 경로는 `num_stages`개의 버퍼를 잡습니다.
# `gemm_lab.calc.smem`의 교과서 공식과 컴파일러 규칙으로 확인해 봅시다.

# %%
c = BLOG_CONFIG
print(f"한 stage = 2 × ({c.BLOCK_M}·{c.BLOCK_K} + {c.BLOCK_K}·{c.BLOCK_N}) = {smem.stage_bytes(c):,} B, "
      f"num_stages = {c.num_stages}")
rows = []
for arch in ("sm_120", "sm_90", "sm_80"):
    rows.append({"arch": arch,
                 "교과서 (num_stages × stage)": smem.textbook_smem(c),
                 "컴파일러 규칙 (calc.smem)": smem.compiler_smem(c, arch),
                 "컴파일러 (cross-compile)": gcompile.compile_artifacts("persistent", c, target=arch).shared,
                 "stage 버퍼 수": smem.compiler_buffers(c, arch)})
smem_table = pd.DataFrame(rows).set_index("arch")
rule_5090 = smem_table.loc["sm_120", "컴파일러 규칙 (calc.smem)"]
print(f"블로그가 RTX 5090(sm_120)에서 본 shared/CTA {BLOG_NCU['shared/CTA']:,} B, 규칙 {rule_5090:,} B:",
      "✅ 일치" if rule_5090 == BLOG_NCU["shared/CTA"] else "❌ 불일치")
smem_table

# %% [markdown]
# ## 1.6 Waves Per SM: 왜 1이 아니라 0.50인가
#
# ncu는 persistent 커널(grid 170)의 **Waves Per SM**을 0.50으로, naive tiled(grid 2,048)를 6.02로
# 보고했습니다. 블로그의 처음 생각은 "SM당 프로그램 하나니까 1이어야 한다"였습니다. 하지만 Waves Per SM은
# **SM당 block 슬롯** 기준입니다:
#
# $$\text{waves} = \frac{\text{grid}}{\text{SM 수} \times \text{SM당 block 슬롯}}$$
#
# 슬롯이 2라면 170 / (170 × 2) = 0.50이고, 2,048 / (170 × 2) = 6.02입니다. 슬롯이 왜 2일까요?

# %% [markdown]
# ## 1.7 Block limit 직접 계산하기 (RTX 5090)
#
# SM 하나에 동시에 올라갈 수 있는 block 수는 자원마다 따로 정해지고, 그중 **최솟값**이 실제 슬롯입니다.
#
# - **warps**: SM당 최대 thread 1,536 = 48 warps, block당 4 warps → 48 / 4 = 12
# - **registers**: SM당 65,536개, block당 `174 × 128` = 22,272개 → ⌊65,536 / 22,272⌋ = 2. (하드웨어는
#   레지스터를 warp마다 256개 단위로, SM의 4개 sub-partition에서 나눠 주므로 `calc.occupancy`는 174를 176으로
#   올리고 sub-partition별로 셉니다. 이 경우 답은 같습니다.)
# - **shared memory**: sm_120에서 SM의 shared memory는 최대 100 KB로 설정되고, block마다 CUDA 런타임이
#   1 KB를 따로 잡습니다 → ⌊100 KB / (36,864 B + 1 KB)⌋ = 2
# - **SM당 block 수**: 하드웨어 상한(ncu는 24로 보고)
#
# 블로그의 ncu 리포트(RTX 5090, **블로그의 값**)에는 **Block Limit Barriers 24**도 있습니다: 블록이 쓰는 배리어(PTX의
# `bar.sync`/`barrier.cta.sync`) 수로 정해지는 한계로, 블로그는 PTX에서 배리어 명령을 세어 보니 1개였고 한계가 24라 SM 상한과
# 같다고 추정했습니다. 또 블로그에 따르면 CC 12.0(sm_120)에서는 SM의 128 KB(shared memory + L1)를 나누는 shared memory
# 크기(carve-out)를 **0, 8, 16, 32, 64, 100 KB** 중에서 고를 수 있고, 1 KB는 CUDA 런타임이 block마다 씁니다. 아래 계산이 100 KB를
# 쓰는 이유입니다(ncu의 "Shared Memory Configuration Size 102.40 KB").
#
# 이 계산을 `gemm_lab.calc.occupancy.blocks_per_sm`으로 합니다. 입력은 블로그의 ncu가 보고한 자원 사용량
# (174 regs, 36,864 B, 4 warps)과 sm_120의 한계(`SM_LIMITS["sm_120"]`)입니다.

# %%
SM_5090 = occupancy.get_sm_limits(RTX5090.arch)
occ_5090 = {
    "naive persistent (174 regs)": occupancy.blocks_per_sm(BLOG_NCU["regs/thread (persistent)"],
                                                          BLOG_NCU["num_warps"], BLOG_NCU["shared/CTA"], SM_5090),
    "naive tiled (128 regs)": occupancy.blocks_per_sm(BLOG_NCU["regs/thread (tiled)"],
                                                     BLOG_NCU["num_warps"], BLOG_NCU["shared/CTA"], SM_5090),
}
pd.DataFrame({name: {"Block Limit Registers": o.by_regs, "Block Limit Shared Mem": o.by_smem,
                     "Block Limit Warps": o.by_warps, "Block Limit SM": o.by_blocks,
                     "SM당 block 슬롯": o.blocks, "한계 자원": o.limiter,
                     "이론 점유율 (%)": round(100 * o.occupancy, 2)}
              for name, o in occ_5090.items()})

# %%
occ_viz.compare_block_limits(occ_5090, title="RTX 5090 (sm_120), blog's kernels: block limits per SM");

# %% [markdown]
# persistent 커널은 레지스터와 shared memory가 **동시에** 2에서 막힙니다(ncu의 "limited by the number of
# required registers, and the required amount of shared memory"). tiled 커널은 레지스터로는 4개까지 되지만
# shared memory가 2에서 막으니, 두 커널 모두 SM당 슬롯은 2개입니다. 이제 Waves Per SM을 계산해 봅시다.

# %%
slots = occ_5090["naive persistent (174 regs)"].blocks
for name, programs in [("naive persistent (grid = SM 수)", P1), ("naive tiled (grid = 타일 수)", num_tiles)]:
    waves = occupancy.waves_per_sm(programs, RTX5090.sms, slots)
    print(f"{name}: grid {programs:,} / ({RTX5090.sms} SMs × {slots} 슬롯) = Waves Per SM {waves:.2f}")
print(f"persistent의 점유율: SM당 block 1개 × {BLOG_NCU['num_warps']} warps / {SM_5090.max_warps_per_sm} warps = "
      f"{100 * BLOG_NCU['num_warps'] / SM_5090.max_warps_per_sm:.2f}% "
      f"(이론 {100 * occ_5090['naive persistent (174 regs)'].occupancy:.2f}%)")

# %% [markdown]
# 점유율(Occupancy) = SM에 상주하는 warp 수 / SM이 담을 수 있는 최대 warp 수입니다. 슬롯 2개 × 4 warps
# = 8 warps / 48 = 16.67%가 이론 점유율(Theoretical Occupancy)이고, persistent 커널이 grid 170으로 SM당
# block을 **하나만** 올리면 4 / 48 = 8.33%가 됩니다 — ncu의 Achieved Occupancy 8.33%와 같습니다.
# SM마다 슬롯 하나가 비어 있는 것입니다.

# %% [markdown]
# ## 1.8 내 GPU에서는? (GPU가 없으면 H200)
#
# 같은 계산을 지금 이 노트북이 도는 GPU로 해 봅니다. GPU가 없으면 H200(sm_90, SM 132개)으로 합니다.
# 레지스터와 shared memory는 1.5절에서 구한 값을 씁니다.

# %%
if ON_GPU:
    MY_NAME, MY_ARCH, MY_SMS = INFO["device_name"], INFO["arch"], INFO["sms"]
    my_regs = {name: art.metadata.get("n_regs") for name, art in ARTS.items()}
    regs_source = "방금 이 GPU에서 컴파일한 값"
else:
    H200 = devices.get_device("h200")
    MY_NAME, MY_ARCH, MY_SMS = H200.name, H200.arch, H200.sms
    my_regs = committed_regs()
    regs_source = "H200에서 커밋된 값 (results/)"
my_smem = {name: art.shared for name, art in ARTS.items()}
try:
    MY_SM = occupancy.get_sm_limits(MY_ARCH)
except ValueError:
    MY_SM = None
    print(f"{MY_ARCH}의 SM 한계가 gemm_lab.calc.occupancy.SM_LIMITS에 없습니다: 점유율 계산을 건너뜁니다.")

occ_mine = {}
if MY_SM is not None:
    for name in BLOG_KERNELS:
        if my_regs.get(name) is None:
            print(f"{name}: n_regs 없음 ({regs_source}) — 레지스터 한계를 계산할 수 없습니다.")
            continue
        occ_mine[name] = occupancy.blocks_per_sm(my_regs[name], BLOG_CONFIG.num_warps, my_smem[name], MY_SM)
if occ_mine:
    print(f"{MY_NAME} ({MY_ARCH}, SM {MY_SMS}개) — n_regs: {regs_source}, shared: 컴파일러")
    display(pd.DataFrame({name: {"n_regs": my_regs[name], "shared/CTA (B)": my_smem[name],  # noqa: F821
                                 "Block Limit Registers": o.by_regs, "Block Limit Shared Mem": o.by_smem,
                                 "Block Limit Warps": o.by_warps, "Block Limit SM": o.by_blocks,
                                 "SM당 block 슬롯": o.blocks, "한계 자원": o.limiter}
                          for name, o in occ_mine.items()}))
    occ_viz.compare_block_limits(occ_mine, title=f"{MY_NAME} ({MY_ARCH}): block limits per SM")
    my_tiles = num_tiles  # 같은 4096³, 128×64 타일
    slots_p = occ_mine.get("naive persistent", next(iter(occ_mine.values()))).blocks
    for pps in range(1, slots_p + 2):
        P = occupancy.persistent_grid(MY_SMS, pps, my_tiles)
        sp = occupancy.tiles_per_program(my_tiles, P)
        print(f"programs_per_sm={pps}: grid {P}, Waves Per SM {occupancy.waves_per_sm(P, MY_SMS, slots_p):.2f}, "
              f"프로그램마다 타일 {sp.min_tiles}~{sp.max_tiles}개")

# %% [markdown]
# 표에서 이 GPU의 SM당 슬롯 수와 그것을 정하는 자원이 블로그의 RTX 5090과 같은지 보세요(레지스터 수는
# 아키텍처와 triton 버전에 따라 달라집니다). 슬롯 수를 넘는 `programs_per_sm`에서는 Waves Per SM이 1을 넘습니다.
# 1.9절에서 이 계산이 가장 빠른 `programs_per_sm`을 맞히는지 측정값으로 확인합니다.
#
# ## 1.9 grid 크기 조정: `programs_per_sm`
#
# 슬롯이 2개라면 프로그램도 SM당 2개를 띄워야 합니다. 블로그는 grid 계산에 `programs_per_sm`을 곱했습니다:
#
# ```python
# num_programs = min(num_sms * programs_per_sm, num_tiles)  # programs_per_sm=2
# ```
#
# 그러자 Waves Per SM이 1이 되었고 persistent 커널이 빨라졌지만, 여전히 naive tiled보다 조금 느렸습니다.
# 이때 grid는 340이고 타일은 2,048개이니, 대부분의 프로그램은 6개를, 일부는 7개를 처리합니다.
# 블로그는 이때 ncu의 **Achieved Occupancy가 15.11%**(블로그의 값)로 이론 점유율 16.67%(슬롯 2 × 4 warps / 48)에 가까워졌고,
# 남은 차이는 6개/7개 타일 불균형 때문으로 추정했습니다.

# %%
BLOG_MS_X2 = 0.6655  # 블로그가 programs_per_sm=2로 잰 시간 (ms) — seed 글의 측정값
print(f"블로그, programs_per_sm=2: {autotune.tflops(M, N, K, BLOG_MS_X2):.2f} TFLOP/s, "
      f"실행 시간이 programs_per_sm=1보다 {100 * (1 - BLOG_MS_X2 / BLOG_MS['naive persistent']):.1f}% 줄었지만 "
      f"TFLOP/s는 naive tiled보다 {100 * (1 - autotune.speedup(BLOG_MS['naive tiled'], BLOG_MS_X2)):.1f}% 낮음")
P2 = occupancy.persistent_grid(RTX5090.sms, 2, num_tiles)
split2 = occupancy.tiles_per_program(num_tiles, P2)
print(f"RTX 5090, programs_per_sm=2: grid {P2}, Waves Per SM {occupancy.waves_per_sm(P2, RTX5090.sms, slots):.2f}")
print(f"프로그램마다 타일 {split2.min_tiles}개, 그중 {split2.programs_with_max}개 프로그램은 {split2.max_tiles}개"
      f" → 마지막 타일을 도는 동안 {P2 - split2.programs_with_max}개 프로그램의 슬롯이 논다")

# %% [markdown]
# 이제 `programs_per_sm`을 1, 2, 3, 4로 늘려 가며 잰 결과를 봅시다. GPU가 있으면 `gemm_lab.bench`로 지금 재고
# (4096³과 8192³, 1분 남짓), 없으면 H200에서 커밋된 결과를 읽습니다.

# %%
LIVE = {}
if ON_GPU:
    top = max(4, occ_mine["naive persistent"].blocks + 1) if "naive persistent" in occ_mine else 4
    LIVE["persistent_programs"] = bench.bench_persistent_programs(sizes=(4096, 8192), programs=tuple(range(1, top + 1)),
                                                                  warmup=25, rep=100)


def current(name):
    """The table this notebook reads: measured just now on a GPU, else the committed H200 one."""
    return LIVE.get(name) if ON_GPU else COMMITTED[name]


def programs_table(df):
    """TFLOP/s and ratio to the naive tiled kernel, one row per programs_per_sm, one column group per size."""
    per = df[df["kernel"] == "persistent_naive"].copy()
    per["size"] = per["M"].map(lambda m: f"{m}³")
    per["programs_per_sm"] = per["programs_per_sm"].astype(int)
    return per.pivot_table(index="programs_per_sm", columns="size", values=["tflops", "ratio_to_tiled"])


PROG = current("persistent_programs")
if PROG is None:
    print("결과 없음: results/persistent_programs.csv가 없고 GPU도 없습니다.")
else:
    print(f"{PROG['gpu'].iloc[0]}: naive persistent의 TFLOP/s와 naive tiled 대비 비율")
    display(programs_table(PROG).round(3))
    tiled_rows = PROG[PROG["kernel"] == "blog_tiled"]
    refs = {f"naive tiled, {m}³": t for m, t in zip(tiled_rows["M"], tiled_rows["tflops"], strict=True)}
    bench_plots.programs_per_sm_plot(programs_table(PROG)["tflops"], references=refs,
                                     title=f"naive persistent over programs_per_sm ({PROG['gpu'].iloc[0]})")
    plt.show()
    slots_here = occ_mine["naive persistent"].blocks if "naive persistent" in occ_mine else None
    sweep = programs_table(PROG)["tflops"]
    for size in sweep.columns:
        pps = int(sweep[size].idxmax())
        if slots_here is None or slots_here not in sweep.index:
            print(f"{size}: 가장 빠른 programs_per_sm = {pps} (SM당 슬롯 수를 계산하지 못했거나 재지 않았습니다)")
            continue
        at_slots = sweep.loc[slots_here, size] / sweep[size].max()
        print(f"{'✅' if at_slots >= 1 - NOISE else '❌'} {size}: 가장 빠른 programs_per_sm = {pps}; "
              f"1.8절에서 계산한 SM당 슬롯 수 {slots_here}에서 최고의 {at_slots:.2f}배 "
              f"(잡음 {NOISE:.0%} 안쪽이면 ✅)")

# %% [markdown]
# **읽는 법.** `programs_per_sm`이 SM당 block 슬롯 수(1.8절의 계산)에 이를 때까지는 빈 슬롯이 채워지며 빨라집니다.
# 슬롯보다 많이 띄우면 넘치는 프로그램들은 처음부터 SM에 올라가지 못하고, 앞선 프로그램이 **모든** 타일을 끝낸
# 뒤에야 시작합니다 — persistent 커널에서는 이것이 두 번째 wave가 되어 오히려 느려집니다. 그래서 persistent
# 커널의 grid는 "SM 수"가 아니라 "SM 수 × SM당 슬롯 수"여야 하고, 슬롯 수는 컴파일된 커널의 자원에서 계산할
# 수 있습니다(블로그: "warmup으로 얻은 사용량으로 SM별 최대 프로그램 수를 미리 구해 grid에 넣을 수도 있다").
#
# ## 1.10 나머지 몇 %: 명령어 오버헤드
#
# programs_per_sm을 늘려도 naive tiled를 완전히 따라잡지는 못합니다. 블로그는 두 가설을 검증했습니다.
#
# **가설 1: 프로그램 간 종료 시간 불균형(load imbalance).** ncu의 SpeedOfLight에서 SM Active Cycles /
# Elapsed Cycles를 비교하면 persistent 91.61%, tiled 92.45%로 0.84%p 차이뿐이라 3.1%를 설명하지 못합니다.
# tiled도 wave 사이의 불균형은 똑같이 겪습니다.
#
# 블로그가 ncu로 본 두 커널의 지표(programs_per_sm = 2, **블로그의 값**을 그대로 옮긴 것)와 그 차이를 계산하면:

# %%
BLOG_SOL = pd.DataFrame(  # 블로그의 ncu SpeedOfLight / SchedulerStats 값 (RTX 5090)
    {"persistent": [91.61, 88.06, 748.26, 0.47, 10.97], "tiled": [92.45, 90.35, 730.05, 0.44, 10.29]},
    index=["SM Active / Elapsed (%)", "Compute Throughput (%)", "Duration (µs)", "Executed IPC (Active)",
           "Issue Slots Busy (%)"])
BLOG_SOL["persistent / tiled − 1 (%)"] = (100 * (BLOG_SOL["persistent"] / BLOG_SOL["tiled"] - 1)).round(1)
BLOG_SOL

# %% [markdown]
# Duration은 2.5% 길고 Compute Throughput은 2.5% 낮은데, IPC와 issue slot은 오히려 6~7% **높습니다**: 같은 연산을 하면서
# 명령어를 더 많이 발행한다는 뜻입니다.
#
# **가설 2: persistent 커널 자체의 명령어 오버헤드.** 타일마다 `tile_id // num_n_tiles`,
# `tile_id % num_n_tiles`(정수 나눗셈 2회), offset 재계산, `acc` 초기화, mask 재계산이 프로그램당 6~7번
# 반복되면서 issue slot을 차지하고, 그동안 tensor core가 쉽니다. 블로그가 ncu로 발행된 명령어를 파이프별로
# 센 표(블로그의 측정값)를 봅시다.

# %%
# 블로그가 ncu(--metrics smsp__inst_executed_*)로 잰 발행 명령어 수 — seed 글에 적힌 측정값
BLOG_INST = pd.DataFrame(
    {"tiled": [125_485_056, 33_554_432, 6_438_912, 3_284_992, 65_536, 24_592_384, 16_384, 14_286_848,
               38_109_184, 10_493_952],
     "persistent": [136_401_632, 33_554_432, 6_438_912, 3_284_992, 65_536, 24_585_552, 9_552, 13_001_936,
                    44_017_920, 16_799_040]},
    index=["총합", "tensor (HMMA)", "ldgsts", "shared_ld", "global_st", "lsu", "cbu", "fma", "alu", "uniform"])
BLOG_INST["차이"] = BLOG_INST["persistent"] - BLOG_INST["tiled"]
BLOG_INST["증가율 (%)"] = (100 * BLOG_INST["차이"] / BLOG_INST["tiled"]).round(1)
BLOG_INST

# %% [markdown]
# tensor(HMMA)·async copy(ldgsts)·shared load·global store는 한 개도 다르지 않습니다 — 연산과 데이터 이동은
# 같습니다. 늘어난 것은 **alu**(정수 산술·논리: offset과 mask 계산)와 **uniform**(warp 안의 모든 thread가
# 같은 값을 다루는 scalar 연산: 타일 인덱스 계산)입니다. 타일 인덱스·offset·mask 계산이 루프 변수
# `tile_id`에 의존하게 되면서 컴파일 결과가 달라졌고, 그만큼 issue slot을 더 쓰면서 실행 시간이 늘었습니다.
#
# 우리도 같은 차이를 컴파일러 산출물에서 볼 수 있습니다. 두 커널을 블로그의 GPU와 같은 sm_120용으로 cross-compile하고,
# 그 SASS(CUBIN을 디스어셈블한 기계어)에서 명령어를 종류별로 세어 봅니다(정적 개수 — 실행 횟수가 아니라 코드에 적힌
# 개수입니다).

# %%
# SASS 명령어를 블로그 표의 파이프 이름으로 나눈다 (줄마다 정규식 하나; 정적 개수)
SASS_CLASSES = {
    "tensor (HMMA/HGMMA)": r"\t(@\S+\s+)?H[G]?MMA\b",
    "ldgsts": r"\t(@\S+\s+)?LDGSTS\b",
    "shared_ld (LDS/LDSM)": r"\t(@\S+\s+)?LDS(M)?\b",
    "global_st (STG)": r"\t(@\S+\s+)?STG\b",
    "fma (IMAD/FFMA)": r"\t(@\S+\s+)?(IMAD|FFMA)\b",
    "alu (IADD/ISETP/LOP3/SHF/SEL/LEA…)": r"\t(@\S+\s+)?(IADD3?|VIADD|ISETP|LOP3|PLOP3|SHF|SEL|LEA|IABS|SGXT)\b",
    "uniform (U…)": r"\t(@\S+\s+)?U[A-Z0-9]+\b",
    "branch (BRA)": r"\t(@\S+\s+)?BRA\b",
}


def sass_classes(arts):
    if not all(art.sass for art in arts.values()):
        return None
    table = pd.DataFrame({name: {cls: art.count(rx, stage="sass") for cls, rx in SASS_CLASSES.items()}
                          for name, art in arts.items()})
    table["차이"] = table["naive persistent"] - table["naive tiled"]
    return table


static_5090 = sass_classes(ARTS_5090)
if static_5090 is None:
    print("이 환경에서는 CUBIN을 디스어셈블할 수 없습니다(cuobjdump 없음). PTX로 보려면 ARTS_5090[...].ptx를 읽으세요.")
else:
    print("sm_120(RTX 5090)용 SASS에 적힌 명령어 수 (실행 횟수가 아님):")
    display(static_5090)  # noqa: F821
    pairs = {"tensor (HMMA/HGMMA)": "tensor (HMMA)", "ldgsts": "ldgsts", "global_st (STG)": "global_st",
             "fma (IMAD/FFMA)": "fma", "alu (IADD/ISETP/LOP3/SHF/SEL/LEA…)": "alu", "uniform (U…)": "uniform"}
    for ours, theirs in pairs.items():
        a, b = static_5090.loc[ours, "차이"], BLOG_INST.loc[theirs, "차이"]
        same = (a > 0) == (b > 0) and (a < 0) == (b < 0)
        print(f"{'✅' if same else '❌'} {ours}: 정적 개수 차이 {a:+d}, 블로그의 실행 횟수 차이 {b:+,d}")

# %% [markdown]
# 정적 개수는 "코드에 몇 줄 있는가"이고, ncu의 수는 "몇 번 실행되었는가"입니다. 그래도 방향은 같습니다:
# tensor core 명령어와 메모리 명령어는 그대로이고, 정수 곱셈-덧셈(IMAD, fma 파이프)은 줄고 정수 산술·비교
# (alu)와 uniform 명령어가 늘어납니다(✅/❌ 줄이 이 노트북의 triton으로 확인한 결과입니다). 루프 안에 있는
# 명령어는 프로그램마다 타일 수(6~7번)만큼 실행되니, 몇 줄의 차이가 수백만 번의 실행 차이가 됩니다.
#
# ## 1.11 H200에서도 재현되는가
#
# 블로그는 RTX 5090(sm_120)에서 쟀습니다. 같은 커널을 H200(sm_90)에서 잰 결과로, 결론이 하드웨어를 바꿔도
# 성립하는지 봅시다.

# %%
H200_PROG = COMMITTED["persistent_programs"]
if H200_PROG is None:
    print("결과 없음: results/persistent_programs.csv가 없습니다.")
else:
    ratios = programs_table(H200_PROG)["ratio_to_tiled"]
    for size in ratios.columns:
        one, best_pps = ratios.loc[1, size], ratios[size].idxmax()
        print(f"H200, {size}: programs_per_sm=1 → naive tiled의 {one:.2f}배, "
              f"가장 빠른 programs_per_sm={best_pps} → {ratios.loc[best_pps, size]:.2f}배")
    blog_ratio = autotune.speedup(BLOG_MS["naive tiled"], BLOG_MS["naive persistent"])
    print(f"블로그(RTX 5090, 4096³): programs_per_sm=1 → naive tiled의 {blog_ratio:.2f}배")
    slower = bool((ratios.loc[1] < 1).all())
    print(("✅" if slower else "❌"), "H200에서도 programs_per_sm=1인 naive persistent가 naive tiled보다 느린가:", slower)
    for size in ratios.columns:
        best = ratios[size].max()
        where = ("여전히 느리다 (블로그와 같음)" if best < 1 - NOISE else
                 f"잡음(±{NOISE:.0%}) 안쪽까지 따라잡는다" if best <= 1 + NOISE else "naive tiled를 넘는다")
        print(f"{size}: programs_per_sm을 늘리면 naive tiled의 {best:.2f}배 → {where}")

# %% [markdown]
# 블로그의 결론이 H200(Hopper, SM 132개)에서도 재현되는지는 위의 ✅/❌ 줄이 말해 줍니다. 블로그의 RTX 5090보다
# 차이가 크게 나오는 것은 (추측입니다) H200의 SM 하나가 wgmma로 훨씬 많은 연산을 처리하므로, SM에 block이
# 하나뿐이라 메모리 지연을 숨겨 줄 다른 block이 없을 때 잃는 몫이 더 크기 때문일 것입니다. 1.8절의 계산대로
# H200에서도 SM당 슬롯이 여러 개이니, `programs_per_sm=1`은 그 슬롯의 일부만 씁니다.

# %% [markdown]
# **1부 정리.** naive persistent 커널은 타일 배정을 하드웨어 스케줄러에서 커널 루프로 가져왔지만, 그 대가로
# 더 나은 정책을 하나도 추가하지 않았습니다. 남은 것은 비용뿐입니다:
#
# 1. grid를 SM 수로 맞추면 SM당 block 슬롯(점유율)의 절반을 버린다 → `programs_per_sm`으로 채운다.
# 2. 슬롯을 채워도 타일 인덱스·offset·mask 계산이 루프 안에서 반복되어 명령어가 늘어난다.
#
# 그렇다면 persistent 커널은 언제, 무엇으로 빨라질까요? 그것이 2부입니다.

# %% [markdown]
# # 2부. persistent 커널을 빠르게 만드는 것
#
# 1부의 결론을 뒤집어 읽으면 persistent 커널이 이기려면 무엇이 필요한지가 보입니다. 프로그램이 여러 타일을
# 순회한다는 구조 덕분에 **커널이 직접 정할 수 있게 된 것**을 써야 합니다.
#
# | 1부에서 본 비용 | 그것을 갚는 기법 | 어디서 |
# | --- | --- | --- |
# | 타일 배정이 하드웨어 순서(행 우선)와 같아 L2 재사용이 없다 | 루프 안에서 **grouped 순서**로 타일 배정 | Tutorial 03의 `GROUP_SIZE_M`, Tutorial 09 |
# | 타일마다 offset·mask를 정수 연산으로 다시 계산 | **tensor descriptor(TMA)**: 주소 생성과 경계 처리를 하드웨어(TMA 유닛)에 맡긴다 | Hopper(sm_90)+, Tutorial 09 |
# | 한 타일의 저장(epilogue)이 끝나야 다음 타일의 load가 시작 | **epilogue subtiling**, 루프 평탄화(`tl.range(..., flatten=True)`)로 다음 타일의 load와 겹치기 | Tutorial 09 |
# | 작은 타일(128×64)은 tensor core에 비해 산술 강도가 낮다 | 더 큰 타일(예: 128×256×64) — TMA와 wgmma가 레지스터·shared memory 부담을 덜어 줌 | Hopper |
#
# 각 변형마다 **측정 전에 예측을 적고**, 그다음에 측정값을 봅니다. 예측이 틀리는 것도 결과입니다 —
# 왜 틀렸는지가 다음 질문이 됩니다.
#
# 측정 조건은 H200(결과 파일) 또는 지금 GPU, fp16 입력·fp32 누산, `torch.matmul`과 **같은 실행에서** 잰
# 비율입니다. `results/README.md`에 따르면 torch.matmul 자신도 몇 초 사이에 수 % 흔들리므로, 5% 안쪽의
# 차이는 잡음으로 봅니다(`NOISE`).

# %%
if ON_GPU:
    LIVE["persistent_variants"] = bench.bench_persistent_variants(sizes=(4096, 8192), warmup=25, rep=100)
VAR = current("persistent_variants")
SIZES = [] if VAR is None else sorted(set(VAR["M"]))


def verdict(text, ok):
    """One line per prediction: ✅ held, ❌ did not, ⚪ not measured."""
    mark = "⚪ 측정 없음 —" if ok is None else ("✅ 예측대로:" if ok else "❌ 예측과 다름:")
    print(mark, text)


if VAR is None:
    print("결과 없음: results/persistent_variants.csv가 없고 GPU도 없습니다. 2부의 측정 셀은 예측만 남깁니다.")
else:
    print(f"{VAR['gpu'].iloc[0]}에서 잰 변형들 (크기 {', '.join(f'{s}³' for s in SIZES)}):")
    display(VAR[VAR["M"] == SIZES[0]][["kernel", "config", "ms", "tflops", "ratio_to_torch"]].round(3))

# %% [markdown]
# ## 2.1 변형 1: persistent 루프 안의 grouped 순서
#
# naive persistent는 `tile_id`를 행 우선으로 `(tile_m, tile_n)`에 대응시킵니다. 같은 순간 GPU 위에서
# 돌고 있는 타일들은 `tile_id`가 연속한 타일들 — 즉 C의 한두 행 전체 — 이고, 이 타일들은 A의 행 블록 한두
# 개를 공유하지만 B는 **열 블록 전부**를 필요로 합니다. Tutorial 03의 grouped 순서(`GROUP_M`행씩 묶어 열
# 방향으로 진행)를 루프 안의 `tile_id`에 적용하면, 동시에 도는 타일들이 A와 B 양쪽을 나눠 쓰는 정사각형에
# 가까운 영역이 되어 L2 적중률(hit rate)이 올라갑니다(7주차 ②의 9×9 예: 아래 첫 줄).
#
# > **예측 (측정 전에 적음).**
# > 1. grouped persistent는 naive persistent(같은 `programs_per_sm`)보다 빠르다. L2에 다 들어가지 않는
# >    큰 행렬(8192³: A와 B가 각각 128 MiB, H200의 L2는 60 MiB)에서 차이가 더 크다.
# > 2. 그러나 타일 인덱스 계산은 오히려 늘어나므로(grouped 순서에는 나눗셈이 더 있다) 1부의 명령어 오버헤드는
# >    그대로다. pointer 기반 load를 쓰는 한 `torch.matmul`의 0.8배에는 못 미친다.

# %%
seed_cmp = ordering.compare_orders(9, 9, 9, 3, 9)
print(f"7주차 ②: 9×9 타일, GROUP_M=3, 처음 9개 프로그램이 읽는 입력 타일 {seed_cmp.row_major} (행 우선) → "
      f"{seed_cmp.grouped} (grouped)")
gain = {}
if VAR is not None:
    for size in SIZES:
        naive_x2 = None
        if PROG is not None:
            sel = PROG[(PROG["kernel"] == "persistent_naive") & (PROG["M"] == size) & (PROG["programs_per_sm"] == 2)]
            naive_x2 = None if sel.empty else float(sel["ratio_to_torch"].iloc[0])
        grouped_x2 = rows_of(VAR, "persistent_grouped", size, "128x64x32")
        grouped_x2 = None if grouped_x2 is None else float(grouped_x2["ratio_to_torch"].iloc[0])
        if naive_x2 is not None and grouped_x2 is not None:
            print(f"{size}³, 128×64×32, grid = 2 × SMs: naive 순서 {naive_x2:.2f}×, grouped 순서 {grouped_x2:.2f}× "
                  f"(torch.matmul 대비) → grouped/naive = {grouped_x2 / naive_x2:.2f}")
            verdict(f"{size}³에서 grouped 순서가 naive 순서보다 빠르다", grouped_x2 > naive_x2)
            gain[size] = grouped_x2 / naive_x2
        else:
            verdict(f"{size}³에서 grouped 순서가 naive 순서보다 빠르다", None)
    if len(gain) >= 2:
        small, large = min(gain), max(gain)
        verdict(f"큰 행렬({large}³)에서 grouped의 이득이 더 크다 ({gain[large]:.2f} 대 {small}³의 {gain[small]:.2f})",
                gain[large] > gain[small])
    pointer = VAR[VAR["kernel"].isin(["persistent_naive", "persistent_grouped"])]
    for size in SIZES:
        at = pointer[pointer["M"] == size]["ratio_to_torch"].dropna()
        best = None if at.empty else float(at.max())
        verdict(f"{size}³에서 pointer 기반 persistent의 최고가 torch.matmul의 0.8배 미만이다"
                + ("" if best is None else f" (최고 {best:.2f}×)"), None if best is None else best < 0.8)

# %% [markdown]
# **읽는 법.** grouped 순서는 같은 순간 돌고 있는 타일들이 A·B 블록을 더 많이 나눠 쓰게 해서 HBM → L2 읽기를
# 줄입니다. 타일 크기(128×64×32)와 프로그램 수(2 × SM)가 naive persistent와 같은 변형끼리 비교한 위의
# grouped/naive 비율이 **순서만의 효과**입니다. 그리고 이것이 블로그 결론의 뒷면입니다: persistent 커널에
# 하드웨어 스케줄러에 없던 **정책**(타일 순서)을 하나 더하면, 그때부터 persistence가 값을 하기 시작합니다
# (아래 줄: 같은 타일의 naive tiled와 비교).
# 그래도 타일마다 인덱스·offset·mask를 계산하는 명령어 오버헤드는 그대로(grouped 순서는 나눗셈이 더 많습니다)
# 이므로, 더 크게 뛰려면 타일을 키워야 합니다: 128×128×64 변형은 타일 하나가 HBM에서 읽은 데이터로 더 많은
# 연산을 하고(산술 강도), 타일당 정수 명령어의 비중도 줄어듭니다. 반대로 128×256×64 + flatten 변형이 느리다면
# (추측) pointer 기반 load로 큰 타일을 다루느라 레지스터가 모자라기 때문일 수 있습니다 —
# `gcompile.compile_artifacts("grouped_persistent", config, target=None)`의 `n_regs`·`n_spills`로 확인해 보세요.

# %%
if VAR is not None:
    for size in SIZES:
        tiled = rows_of(VAR, "blog_tiled", size)
        grouped_x2 = rows_of(VAR, "persistent_grouped", size, "128x64x32")
        if tiled is None or grouped_x2 is None:
            continue
        g, t = float(grouped_x2["ratio_to_torch"].iloc[0]), float(tiled["ratio_to_torch"].iloc[0])
        where = ("넘는다" if g > t * (1 + NOISE) else f"비슷하다(잡음 {NOISE:.0%} 안쪽)" if g >= t * (1 - NOISE)
                 else "못 미친다")
        print(f"{size}³: grouped persistent(128×64×32, 2 × SM) {g:.2f}× 대 naive tiled(같은 타일, 행 우선) "
              f"{t:.2f}× → 정책을 더한 persistent가 하드웨어 스케줄러를 {where}")
#
# ## 2.2 변형 2: tensor descriptor(TMA) — Hopper의 답
#
# Hopper(sm_90)에는 TMA(Tensor Memory Accelerator)가 있습니다. 커널이 행렬의 모양과 stride를 담은
# **tensor descriptor**를 한 번 만들어 두면(`TensorDescriptor.from_tensor` 또는 `tl.make_tensor_descriptor`),
# 타일을 읽을 때는 `desc.load([m, k])`처럼 **좌표만** 넘깁니다. 주소 계산, 경계 밖 원소의 0 채우기(mask),
# global → shared 복사를 TMA 유닛이 합니다. 1.10에서 늘어났던 alu/uniform 명령어 — offset과 mask 계산 —
# 가 바로 이 일이었습니다. 또 wgmma와 함께 큰 타일(128×256×64)을 레지스터 spill 없이 쓸 수 있습니다.
#
# > **예측 (측정 전에 적음).**
# > 1. TMA persistent는 지금까지의 모든 pointer 기반 변형보다 확실히(10% 이상) 빠르다.
# > 2. `torch.matmul`의 0.9배 이상에 도달하고, 큰 행렬(8192³)에서는 `torch.matmul`과 비슷하다(0.95배 이상).
# > 3. 같은 TMA·타일 설정의 **non-persistent**(tiled) 커널과 비교하면 persistent의 이득은 작다(5% 미만) —
# >    빨라진 이유는 persistence가 아니라 TMA와 큰 타일이다.

# %%
if VAR is not None:
    for size in SIZES:
        tma = rows_of(VAR, "persistent_tma", size)
        pointer = [rows_of(VAR, k, size) for k in ("persistent_naive", "persistent_grouped")]
        pointer = pd.concat([p for p in pointer if p is not None]) if any(p is not None for p in pointer) else None
        auto = rows_of(VAR, "autotuned", size)
        if tma is None or tma["tflops"].isna().all():
            verdict(f"{size}³: TMA persistent", None)
            continue
        best_tma = tma.loc[tma["tflops"].idxmax()]
        print(f"{size}³: TMA persistent 최고 {best_tma['tflops']:.1f} TFLOP/s = torch.matmul의 "
              f"{best_tma['ratio_to_torch']:.2f}배 ({best_tma['config']})")
        host_ms = best_tma.get("host_us", float("nan")) / 1000
        if host_ms == host_ms and host_ms > 0.5 * best_tma["ms"]:
            print(f"   주의: launch 한 번의 CPU 시간 {host_ms:.3f} ms가 커널 시간 {best_tma['ms']:.3f} ms에 가깝습니다 "
                  "(Python launcher의 입력 검사와 Triton의 launch: results/host_overhead.csv). "
                  "이 크기의 측정값에는 launch 비용이 섞였을 수 있습니다.")
        if pointer is not None:
            gain = best_tma["tflops"] / pointer["tflops"].max()
            verdict(f"{size}³: pointer 기반 persistent의 최고보다 10% 이상 빠르다 ({gain:.2f}배)", gain >= 1.10)
        target = 0.9 if size < 8192 else 0.95
        verdict(f"{size}³: torch.matmul의 {target}배 이상 ({best_tma['ratio_to_torch']:.2f}배)",
                best_tma["ratio_to_torch"] >= target)
        if auto is not None and not auto["tflops"].isna().all():
            a = auto["tflops"].max()
            verdict(f"{size}³: autotuned Tutorial-03 커널(persistent 아님)보다 빠르다 "
                    f"({best_tma['tflops'] / a:.2f}배)", best_tma["tflops"] > a)

# %% [markdown]
# **읽는 법.** TMA 변형은 1부에서 찾은 두 비용을 한꺼번에 없앱니다. 주소·mask 계산이 TMA 유닛으로 넘어가
# 정수 명령어가 줄고, wgmma와 큰 타일(128×256×64, 8 warps)로 SM 하나가 block 하나만으로도 tensor core를
# 채웁니다 — SM당 슬롯이 하나여도 되는 커널이 된 것입니다. "persistent여서" 빨라진 것인지는 맨 끝의 연습 문제 5로
# 확인해 보세요.
#
# ## 2.3 변형 3: Tutorial 09의 나머지 기법 (epilogue subtiling 등)
#
# TMA persistent 커널의 C 타일(128×256, fp16이면 64 KiB)을 한 번에 저장하려면 shared memory에 그만큼의
# 버퍼가 필요합니다. **epilogue subtiling**은 C 타일을 두 개의 128×128 반쪽으로 나눠 저장해 버퍼를 줄이고,
# 저장과 다음 타일의 load를 더 잘 겹치게 합니다. `tl.range(..., flatten=True)`는 타일 루프와 K 루프를 하나로
# 평탄화해 소프트웨어 파이프라인이 타일 경계를 넘어 이어지게 합니다.
#
# > **예측 (측정 전에 적음).** 이 기법들은 이미 빠른 커널의 마지막 몇 %를 다룬다. epilogue subtiling을 켜고
# > 끈 TMA persistent의 차이는 잡음 수준(±5%)이다.

# %%
if VAR is not None:
    for size in SIZES:
        tma = rows_of(VAR, "persistent_tma", size)
        if tma is None:
            verdict(f"{size}³: epilogue subtiling", None)
            continue
        pairs = []
        for _, r in tma[tma["config"].str.contains(" subtile")].iterrows():
            twin = tma[tma["config"] == r["config"].replace(" subtile", "")]
            if not twin.empty and r["tflops"] == r["tflops"] and twin["tflops"].iloc[0] == twin["tflops"].iloc[0]:
                pairs.append((r["config"], r["tflops"] / twin["tflops"].iloc[0]))
        if not pairs:
            errors = "; ".join(e for e in tma["error"].fillna("") if e)
            verdict(f"{size}³: epilogue subtiling (켜고 끈 두 설정이 모두 측정되지 않음{': ' + errors if errors else ''})",
                    None)
        for config, ratio in pairs:
            verdict(f"{size}³, {config}: epilogue subtiling의 효과가 ±{NOISE:.0%} 안쪽이다 "
                    f"(subtile / 없음 = {ratio:.3f})", abs(ratio - 1) <= NOISE)
    flat = rows_of(VAR, "persistent_grouped", None, "flatten")
    if flat is not None:
        for _, r in flat.iterrows():
            print(f"참고 — {r['M']}³ grouped persistent {r['config']}: {r['ratio_to_torch']:.2f}× torch.matmul")

# %% [markdown]
# 예측이 빗나간 크기가 있다면 먼저 잡음을 의심하세요: `torch.matmul` 자신도 같은 실행 안에서 몇 % 흔들리고
# (`results/README.md`), 커널이 짧을수록 launcher의 CPU 시간(`host_us` 열: 입력 검사와 Triton의 launch — host에서
# tensor descriptor 세 개를 만드는 것은 그중 작은 부분입니다, `results/host_overhead.csv`)이 측정에 섞이기 쉽습니다.
# 8192³처럼 커널이 긴 크기를 더 믿으세요. 그다음 이유를 추측해 보세요. 힌트: subtiling이 없으면 128×256 fp16 C 타일 전체(64 KiB)를
# shared memory에 한 번에 쌓아 저장하고, subtiling이 있으면 그 절반씩 두 번 저장합니다. 파이프라인 버퍼
# (`smem.textbook_smem`으로 128×256×64, 3 stages를 계산해 보세요)와 합치면 shared memory 한계(227 KiB)에 얼마나
# 가까운가요? 저장이 두 번으로 나뉘면 첫 절반의 저장과 둘째 절반의 변환(fp32 → fp16)이 겹칠 수 있습니다.
#
# ## 2.4 모두 모아서: 변형별 TFLOP/s 대 `torch.matmul`

# %%
if VAR is None:
    print("결과 없음: 그림을 그릴 측정값이 없습니다.")
else:
    fig, axes = plt.subplots(len(SIZES), 1, figsize=(9, 4.6 * len(SIZES)))
    axes = [axes] if len(SIZES) == 1 else list(axes)
    for ax, size in zip(axes, SIZES, strict=True):
        at = VAR[(VAR["M"] == size) & (VAR["kernel"] != "torch.matmul") & VAR["tflops"].notna()]
        labels = [f"{k}  {c}" for k, c in zip(at["kernel"], at["config"], strict=True)]
        torch_tflops = float(rows_of(VAR, "torch.matmul", size)["tflops"].iloc[0])
        bench_plots.variant_bars(dict(zip(labels, at["tflops"], strict=True)), torch_tflops=torch_tflops, ax=ax,
                                 title=f"{size}³ fp16, {VAR['gpu'].iloc[0]}: TFLOP/s (label: ratio to torch.matmul)")
    fig.tight_layout()

# %% [markdown]
# ## 2.5 임의의 모양에서: `best_matmul` 대 두 상대(cuBLAS, Inductor max-autotune)
#
# 지금까지는 정사각 크기만 보았습니다. 실제 모델의 행렬은 K나 N이 8의 배수가 아니거나(행이 16바이트 경계에서
# 시작하지 않음), 한 변이 128 이하로 가늘거나, K가 아주 짧습니다. `python -m gemm_lab.bench --only random`은
# 기록된 seed로 모양을 무작위로 뽑아(`gemm_lab.bench.random_shapes.draw_shapes`) 같은 실행 안에서 세 가지를 잽니다:
# `torch.matmul`(cuBLAS), `torch.compile(mode="max-autotune-no-cudagraphs")`(Inductor: 어색한 operand를
# padding하고 자기 Triton 템플릿과 cuBLAS를 autotune), 그리고 `best_matmul`. 비율은 상대의 시간 / `best_matmul`의
# 시간(CUDA graph, 여러 라운드의 중앙값: 라운드 수는 CSV의 `rounds` 열)이고, "best peer"는 그 모양에서 더 빠른 쪽입니다. 점 하나가 모양 하나입니다.
# 먼저 예측해 보세요: 어느 부류(shape class)에서 1 아래의 점이 가장 많을까요?

# %%
RANDOM = results.load_csv("best_matmul_random.csv")
if RANDOM is None:
    print("결과 없음: results/best_matmul_random.csv가 없습니다.")
else:
    from gemm_lab.bench import random_shapes

    random_shapes.plot_ratios(RANDOM)
    plt.show()
    by_class = RANDOM.groupby(["dtype", "shape_class"])[
        ["graph_ratio_to_best_peer", "graph_ratio_to_torch", "first_call_s"]].agg(["min", "median"]).round(2)
    display(by_class)
    r = RANDOM["graph_ratio_to_best_peer"]
    print(f"{RANDOM['gpu'].iloc[0]}, seed {RANDOM['seed'].iloc[0]}, {len(RANDOM)}개 모양, "
          f"{int(RANDOM['rounds'].max())}라운드: best peer 대비 중앙값 "
          f"{r.median():.2f}, 최소 {r.min():.2f}, 1 미만 {int((r < 1).sum())}개 — 이유는 results/README.md")

# %% [markdown]
# # 정리
#
# 1. **persistent 커널은 그 자체로 빠르지 않다.** naive persistent는 타일 배정을 커널로 가져왔지만 새로운
#    정책 없이 비용(빈 block 슬롯, 늘어난 정수 명령어)만 더했다. 정책(grouped 순서)을 하나 더하면 같은 타일의
#    naive tiled와 견줄 만해진다(2.1의 측정).
# 2. **점유율은 계산할 수 있다.** `n_regs`, shared memory, `num_warps`와 SM 한계로 block limit을 구하고,
#    `programs_per_sm`을 그 슬롯 수에 맞춘다. Waves Per SM은 SM당 *슬롯* 기준이다.
# 3. **persistence가 이기려면 그 구조로만 가능한 것을 써야 한다**: 루프 안의 타일 순서(L2), 타일 사이의
#    겹치기(epilogue, flatten), 그리고 Hopper에서는 TMA — 1부에서 찾은 바로 그 주소·mask 계산을
#    하드웨어로 넘기는 것.
#
# 마지막 표는 이 노트북이 읽은(또는 방금 잰) 측정값 전부입니다.

# %%
def closing_table(df):
    t = df.copy()
    t["size"] = t["M"].map(lambda m: f"{m}³")
    return t.pivot_table(index=["kernel", "config"], columns="size", values=["tflops", "ratio_to_torch"],
                         sort=False).round(3)


for label, name in [("H200에서 커밋된 결과", "persistent_variants"), ("H200에서 커밋된 결과", "persistent_programs")]:
    df = COMMITTED[name]
    print(f"{label} — results/{name}.csv:" if df is not None else f"결과 없음: results/{name}.csv")
    if df is not None:
        display(closing_table(df))
for name, df in LIVE.items():
    print(f"방금 {df['gpu'].iloc[0]}에서 잰 결과 — {name}:")
    display(closing_table(df))
if VAR is not None:
    persistent_rows = VAR[VAR["kernel"].str.startswith("persistent") & VAR["tflops"].notna()]
    for size in SIZES:
        at = persistent_rows[persistent_rows["M"] == size]
        if at.empty:
            continue
        best = at.loc[at["tflops"].idxmax()]
        print(f"{size}³, {VAR['gpu'].iloc[0]}: 가장 빠른 persistent 변형은 {best['kernel']} {best['config']}, "
              f"{best['tflops']:.0f} TFLOP/s = torch.matmul의 {best['ratio_to_torch']:.2f}배")

# %% [markdown]
# # 연습 문제 (채점하지 않음)
#
# 1. RTX 5090에서 persistent 커널이 `n_regs=174` 대신 128개만 썼다면(tiled와 같게), SM당 block 슬롯은
#    몇 개가 될까요? `occupancy.blocks_per_sm`으로 확인하고, 이때 어떤 자원이 한계가 되는지 말해 보세요.
# 2. H200에서 `programs_per_sm=2`일 때 4096³ · 128×64 타일이면 프로그램마다 타일을 몇 개씩 처리합니까?
#    (`occupancy.tiles_per_program`) 8192³이면?
# 3. 1.10의 명령어 표에서 fma 파이프 명령어는 오히려 **줄었습니다**. 어떤 계산이 fma에서 alu/uniform으로
#    옮겨 갔을지 추측해 보세요. (힌트: 주소 계산 `offsets_m[:, None] * stride_am`은 곱셈-덧셈입니다.)
# 4. GPU가 있다면 2.1의 grouped 변형을 `GROUP_M`을 바꿔 가며 8192³에서 재 보세요. 예측을 먼저 적으세요.
# 5. (GPU, Hopper) TMA 커널에서 persistence만 빼 봅시다: `kernels.tma_persistent_matmul(a, b, programs_per_sm=P)`에
#    프로그램마다 타일이 하나씩만 돌아가도록 큰 `P`를 주면(`occupancy.persistent_grid`로 확인) grid = 타일 수인
#    보통의 tiled 커널이 됩니다. `gemm_lab.bench.do_bench_ms`로 둘을 재어 비교하고, 차이가 잡음(5%) 안쪽인지
#    보세요. 먼저 예측을 적으세요.
