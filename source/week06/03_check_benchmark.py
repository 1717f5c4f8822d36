# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 6주차 ⑤ 정확도 검증과 벤치마크 — 무엇을 확인하고 어느 시간을 재야 할까?
#
# > “커널 호출 직후 Python 함수가 끝나면 GPU 계산도 끝난 걸까?”
#
# ## 이번 노트북에서 배우는 것
# 1. 속도보다 정확도가 먼저: `1823 × 781`처럼 2의 거듭제곱이 아닌 입력으로 `torch.allclose`를 먼저 확인하는 이유
# 2. 커널 호출은 비동기(asynchronous)다: 무엇을 재면 안 되는지, 첫 실행의 JIT 컴파일 시간을 왜 빼야 하는지
# 3. `triton.testing.do_bench`가 워밍업(warmup)과 반복 측정(rep)을 처리하는 방식
# 4. 실효 대역폭(Effective Bandwidth, GB/s) = 필수 HBM 이동 Byte ÷ 실행시간, 분자에 `2MN × 4 Byte`를 쓰는 이유
# 5. (GPU) `M = 4096, N = 1024`에서 `naive_softmax`, `torch.softmax`, Triton `softmax`, `torch.compile(naive_softmax)`의
#    시간과 GB/s를 장치의 HBM 대역폭과 비교
#
# ## GPU가 필요한 부분
# 2절의 비동기 실행 시연과 5절의 측정입니다. GPU가 없으면 정확도 확인은 CPU 해석기에서 하고,
# 측정 절은 저장소에 커밋된 GPU 측정 결과(`results/`)를 보여 주거나 무엇을 잴지만 설명합니다. CPU 해석기의 실행시간은
# GPU 성능과 무관하므로 비교에 쓰지 않습니다.
# 커밋된 H200 측정은 모두 **triton 3.6.0**(torch 2.11.0+cu130)으로 잰 것으로, 이 과정이 고정한 triton 3.7.1(`pyproject.toml`)과 버전이 다릅니다: 표와 출력 줄의 `triton` 값이 잰 버전입니다.
#
# 점수: 연습 1 (3점), 연습 2 (2점, 서술), 연습 3 (2점) — 모두 7점.
#
# ## 읽을거리
# * Triton Tutorial 02 — Fused Softmax (Unit Test, Benchmark 절):
#   <https://triton-lang.org/main/getting-started/tutorials/02-fused-softmax.html>
# * Triton Tutorial 01 — Vector Addition (Benchmark 절: GB/s 계산):
#   <https://triton-lang.org/main/getting-started/tutorials/01-vector-add.html>
# * API: `triton.testing.do_bench` <https://triton-lang.org/main/python-api/generated/triton.testing.do_bench.html>,
#   `torch.allclose` <https://pytorch.org/docs/stable/generated/torch.allclose.html>
# * PyTorch: torch.compiler 개요 (5절의 `torch.compile(naive_softmax)`가 TorchInductor로 Triton 커널을 만드는 과정):
#   <https://docs.pytorch.org/docs/stable/torch.compiler.html>
# * CUDA C++ Programming Guide — Asynchronous Concurrent Execution:
#   <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#asynchronous-concurrent-execution>
# * Debugging Triton (해석기로 정확도 먼저 확인하기): <https://triton-lang.org/main/programming-guide/chapter-3/debugging.html>
# * NVIDIA Matrix Multiplication Background §2 (Math and Memory Bounds):
#   <https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html>

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false, "task": false}
from gemm_lab import runtime  # triton보다 먼저: GPU가 없으면 CPU 해석기를 켭니다

import inspect
import time
import warnings

import pandas as pd
import torch
import triton

from gemm_lab import results
from gemm_lab.calc.devices import DEVICES, VIRTUAL_DEVICE_FP32
from gemm_lab.calc.softmax import effective_gbps, softmax_traffic
from gemm_lab.calc.tiling import k_tail
from gemm_lab.kernels import naive_softmax, relative_error, softmax
from gemm_lab.runtime import grading_mode

DEVICE = runtime.device()
print("커널이 실행될 장치:", DEVICE, "(CPU 해석기)" if runtime.INTERPRET else "")

# %% [markdown]
# ## 1. 정확도 먼저: `1823 × 781` FP32에서 `torch.allclose` (⑤)
#
# 빠른데 틀린 커널은 의미가 없으니 측정 전에 결과부터 확인합니다. 모양은 일부러 **2의 거듭제곱이 아닌** `1823 × 781`을
# 씁니다. `N = 1024`처럼 `BLOCK_SIZE`와 딱 맞는 모양에서는 마스크로 끄는 레인이 하나도 없어서, 마스크를 빼먹거나 `other`를
# 잘못 준 커널도 통과해 버립니다.

# %%
for n_cols in (1024, 781):
    tail = k_tail(n_cols, triton.next_power_of_2(n_cols))
    print(f"N = {n_cols:4d}: BLOCK_SIZE = {triton.next_power_of_2(n_cols)}, 행마다 마스크로 끄는 레인 {tail.padded}개")

# %%
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
else:
    torch.manual_seed(0)
    x = torch.randn(1823, 781, device=DEVICE, dtype=torch.float32)
    start = time.perf_counter()
    y_triton = softmax(x)  # gemm_lab.kernels.softmax: Tutorial 02의 결합 커널
    seconds = time.perf_counter() - start
    y_torch = torch.softmax(x, dim=-1)
    y_naive = naive_softmax(x)
    for name, y in (("naive_softmax", y_naive), ("Triton softmax", y_triton)):
        ok = torch.allclose(y, y_torch)
        print(("✅" if ok else "❌"), f"{name} vs torch.softmax: torch.allclose = {ok}, "
              f"최대 오차 {(y - y_torch).abs().max().item():.2e}")
    print(f"(Triton softmax 한 번에 {seconds:.1f} s — "
          + ("CPU 해석기가 1823개 프로그램을 하나씩 실행한 시간이라 성능과 무관합니다)" if runtime.INTERPRET
             else "첫 호출이라 JIT 컴파일이 들어 있을 수 있습니다)"))

# %% [markdown]
# ## 2. 커널 호출은 비동기다 (⑤)
#
# GPU 커널 호출은 **명령을 큐에 넣고 바로 돌아옵니다**. Python 함수가 끝났다고 GPU 계산이 끝난 것이 아니므로,
# `time.perf_counter()`로 앞뒤를 재면 대개 커널 실행이 아니라 호출(launch) 시간을 잽니다. 끝까지 기다리려면
# `torch.cuda.synchronize()`를 부르거나 CUDA 이벤트로 재야 합니다. 또 **첫 호출**에는 커널의 JIT 컴파일(또는 디스크 캐시에서
# 불러오기)이 들어가므로 그 시간도 빼야 합니다. GPU가 있으면 아래에서 세 가지를 직접 비교합니다.

# %%
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
elif runtime.on_gpu():
    xg = torch.randn(65536, 4096, device="cuda")  # 1 GiB: 커널 시간이 호출 시간보다 확실히 길도록
    triton_first = time.perf_counter()
    softmax(xg)  # 이 프로세스의 첫 호출: 컴파일(또는 캐시 로드) 포함
    torch.cuda.synchronize()
    triton_first = (time.perf_counter() - triton_first) * 1e3
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(10):
        softmax(xg)
    launch_only = (time.perf_counter() - t0) * 1e3 / 10  # 동기화 없음: 호출만 잰 것
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(10):
        softmax(xg)
    torch.cuda.synchronize()
    with_sync = (time.perf_counter() - t0) * 1e3 / 10
    info = runtime.describe()
    print(f"GPU: {info['device_name']}, compute capability {info['compute_capability']}")
    display(pd.DataFrame({"ms": [triton_first, launch_only, with_sync]},
                         index=["첫 호출 (컴파일/캐시 로드 포함)", "동기화 없이 잰 호출 1회",
                                "synchronize까지 잰 1회"]).round(4))
else:
    print("GPU가 없어 건너뜁니다: CPU 해석기는 커널을 동기적으로 실행하므로 비동기 효과가 없습니다.")

# %% [markdown]
# ## 3. `triton.testing.do_bench`: 워밍업과 반복 측정 (⑤)
#
# `do_bench(fn, warmup, rep)`는 다음 순서로 잽니다 (설치된 Triton의 소스를 직접 읽어 보세요: `inspect.getsource`).
#
# 1. `fn()`을 한 번 실행하고 동기화합니다 — **JIT 컴파일이 여기서 끝납니다**.
# 2. `fn()`을 5번 실행해 한 번의 시간을 어림합니다.
# 3. 어림값으로 `warmup`(ms) 동안 돌릴 횟수와 `rep`(ms) 동안 잴 횟수를 정하고, 워밍업 실행을 먼저 합니다.
# 4. 잴 때마다 **L2 캐시를 비우고**(큰 버퍼를 덮어씀) CUDA 이벤트로 한 번씩 시간을 기록한 뒤, 마지막에 한 번만 동기화합니다.
# 5. 기록들의 통계(`return_mode`: 평균·중앙값 등, `quantiles`로 백분위)를 ms로 돌려줍니다.
#
# 주의: 설치된 Triton의 `do_bench`는 `return_mode`를 주지 않으면 **평균**(mean)을 돌려줍니다(아래 시그니처의 기본값).
# 평균은 가끔 끼어드는 느린 측정 하나에 끌려가므로, 이 과정의 측정은 모두 `gemm_lab.bench.do_bench_ms`를 거쳐
# `return_mode="median"`, 즉 **중앙값**(median)을 씁니다. `results/`의 CSV도 중앙값입니다.

# %%
print("do_bench", inspect.signature(triton.testing.do_bench))
print("return_mode의 기본값:", inspect.signature(triton.testing.do_bench).parameters["return_mode"].default)

# %% [markdown]
# ## 4. 실효 대역폭(GB/s) (⑤)
#
# Softmax는 메모리 병목 연산이므로 FLOP/s가 아니라 **GB/s**로 평가합니다. 튜토리얼 벤치마크의 식은
#
# $$\text{GB/s} = \frac{2 \times M \times N \times 4\ \text{Byte}}{\text{실행시간}}$$
#
# 분자는 **이 연산에 꼭 필요한** HBM 이동량(입력을 한 번 읽고 출력을 한 번 쓰기)이고, 구현이 실제로 옮긴 양이 아닙니다.
# 그래서 같은 분자로 여러 구현을 나누면, 불필요한 왕복을 한 구현은 실효 대역폭이 낮게 나옵니다.
# 예로 ③(노트북 02)의 `1823 × 781` 행렬을 가상 하드웨어(HBM 1 TB/s)에서 처리한 시간을 넣어 봅시다
# (`gemm_lab.calc.softmax.effective_gbps`). 연습 1에서는 `4096 × 1024`로 직접 계산합니다.

# %%
M_DEMO, N_DEMO = 1823, 781
demo = softmax_traffic(M_DEMO, N_DEMO)
print(f"가상 HBM 대역폭: {VIRTUAL_DEVICE_FP32.bandwidth_gbs:,.0f} GB/s")
for name, ms, moved in (("결합 커널", demo.fused_ms, demo.fused_bytes), ("naive_softmax", demo.naive_ms, demo.naive_bytes)):
    print(f"{name:>13}: 실제 이동 {moved:,} Byte, {ms:.5f} ms → 실효 대역폭 {effective_gbps(M_DEMO, N_DEMO, ms):,.1f} GB/s")

# %% [markdown]
# ## 5. 측정: naive, torch, Triton, torch.compile (GPU)
#
# `M = 4096, N = 1024` FP32에서 네 구현을 `gemm_lab.bench`로 재고(시간은 **중앙값(median)**) 실효 대역폭을 장치의 HBM
# 대역폭(`gemm_lab.calc.devices`)과 비교합니다. 튜토리얼 문서의 그래프(다른 GPU에서 측정)와 섞어 비교하지 않도록 GPU 이름,
# 컴퓨트 능력(compute capability)과 버전을 함께 기록합니다.

# %%
def device_entry(name):
    """The gemm_lab.calc.devices entry whose model (H200, A100, T4, ...) appears in a CUDA device name."""
    norm = "".join(ch for ch in name.lower() if ch.isalnum())
    for key, dev in DEVICES.items():
        model = "".join(ch for ch in key.split("-")[-1].lower() if ch.isalnum())
        if dev.arch is not None and model and model in norm:
            return dev
    return None


M, N = 4096, 1024
SIZES = ((M, N), (16 * M, N))  # 과제의 크기, 그리고 16배 큰 행렬 (커널이 짧을 때의 고정 비용을 보려고)


def share_of_bandwidth(table):
    """Add each row's share (%) of its GPU's HBM bandwidth (gemm_lab.calc.devices) to a softmax table."""
    peaks = {gpu: device_entry(gpu) for gpu in set(table["gpu"])}
    table = table.copy()
    table["HBM 대역폭 대비 %"] = [100 * r.gbps / peaks[r.gpu].bandwidth_gbs if peaks[r.gpu] else float("nan")
                              for r in table.itertuples()]
    return table


measured = None
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
elif runtime.on_gpu():
    from gemm_lab import bench

    # naive_softmax, torch.softmax, Triton softmax: do_bench 중앙값, GB/s = 2MN × 4 Byte / 시간
    measured = bench.bench_softmax(shapes=SIZES, warmup=25, rep=100)
    extra = []
    try:
        compiled = torch.compile(naive_softmax)
        for rows_, cols_ in SIZES:
            xg = torch.randn(rows_, cols_, device="cuda")
            with warnings.catch_warnings():  # Dynamo의 lru_cache 안내 문구는 숨김
                warnings.simplefilter("ignore", UserWarning)
                err = relative_error(compiled(xg), torch.softmax(xg.double(), dim=1))  # 컴파일은 측정 밖에서
            ms = bench.do_bench_ms(lambda: compiled(xg), warmup=25, rep=100)
            extra.append(dict(bench.env_info(), M=rows_, N=cols_, dtype="fp32", kernel="torch.compile(naive)",
                              ms=ms, gbps=effective_gbps(rows_, cols_, ms), rel_err=err))
    except Exception as exc:  # torch.compile이 안 되는 환경
        print("torch.compile을 건너뜁니다:", type(exc).__name__, str(exc)[:120])
    measured = pd.concat([measured, pd.DataFrame(extra)], ignore_index=True)
    print("지금 이 GPU에서 잰 값입니다.")
else:
    for csv_name in ("week06_softmax.csv", "softmax.csv"):  # 이 노트북이 H200에서 잰 값, 없으면 make bench의 값
        measured = results.load_csv(csv_name, download=runtime.where() != "local")
        if measured is not None:
            measured = measured[measured["dtype"] == "fp32"]
            print(f"GPU가 없어 저장소에 커밋된 측정 결과(results/{csv_name})를 보여 줍니다.")
            break
    else:
        print("GPU가 없어 측정을 건너뜁니다. GPU에서는 네 구현의 ms, 실효 GB/s, HBM 대역폭 대비 %를 이 자리에 잽니다.")
    print("torch.compile: CPU에서는 C++ 백엔드로 컴파일하므로 GPU 커널과 비교할 수 없어 재지 않습니다.")
if measured is not None:
    measured = share_of_bandwidth(measured)
    for gpu, grp in measured.groupby("gpu"):
        dev = device_entry(gpu)
        cc = ", ".join(sorted({str(v) for v in grp["compute_capability"]})) if "compute_capability" in grp else "?"
        print(f"GPU: {gpu} (compute capability {cc}), torch {', '.join(sorted(set(grp['torch'])))}, "
              f"triton {', '.join(sorted(set(grp['triton'])))}, "
              + (f"HBM 대역폭 {dev.bandwidth_gbs:,.0f} GB/s ({dev.name})" if dev else "HBM 대역폭: 표에 없는 GPU"))
    display(measured.set_index(["gpu", "M", "N", "kernel"])[["ms", "gbps", "HBM 대역폭 대비 %"]]
            .rename(columns={"ms": "ms (중앙값)", "gbps": "실효 GB/s"}).round(3))
    for (gpu, rows_, cols_), grp in measured.groupby(["gpu", "M", "N"]):
        t = grp.set_index("kernel")["ms"]
        if {"naive_5_pass", "triton_fused"} <= set(t.index):
            print(f"{rows_}×{cols_}: 측정한 naive ÷ Triton = {t['naive_5_pass'] / t['triton_fused']:.2f}배 "
                  f"(가상 하드웨어의 이론값 {softmax_traffic(rows_, cols_).speedup:.2f}배)")

# %% [markdown]
# 측정값을 읽을 때: `4096 × 1024` FP32 행렬은 16 MiB라, HBM 대역폭대로라면 커널이 수 마이크로초 만에 끝납니다. 그러면
# 2절에서 잰 **호출(launch) 한 번의 호스트 시간**(Python 래퍼의 검사 + 실행 요청)이 커널보다 길어지고, `do_bench`의 시작
# 이벤트와 커널 사이에 GPU가 노는 시간까지 측정에 들어갑니다. 그래서 작은 크기에서는 실효 대역폭이 낮고 실행할 때마다
# 흔들리며, 16배 큰 행렬에서 비로소 장치 대역폭에 가까워집니다. 결합의 효과(naive ÷ Triton)도 큰 행렬에서 또렷합니다.
# 튜토리얼 문서의 그래프(다른 GPU)와 내 숫자를 섞어 비교하지 않습니다.

# %% [markdown]
# ## 6. 정리
#
# * 먼저 정확도: 2의 거듭제곱이 아닌 모양(`1823 × 781`)에서 `torch.allclose`로 마스크와 `other`까지 확인합니다.
# * 커널 호출은 비동기이고 첫 호출에는 JIT 컴파일이 들어 있습니다. `do_bench`는 첫 실행·워밍업을 측정에서 빼고,
#   L2 캐시를 비운 뒤 CUDA 이벤트로 여러 번 잰 통계를 돌려줍니다.
# * 실효 대역폭은 **필수** 이동량(`2MN × 4 Byte`)을 시간으로 나눈 값이고, 장치의 HBM 대역폭에 얼마나 가까운지가
#   메모리 병목 커널의 성적표입니다.
#
# **핵심 용어 3개:** 비동기 실행(Asynchronous Launch), 워밍업·반복 측정(Warmup / Repetitions), 실효 대역폭(Effective Bandwidth)

# %% [markdown]
# ## 연습 1. 가상 하드웨어의 실효 대역폭 (3점)
#
# `M = 4096`, `N = 1024` FP32에서 ③(노트북 02)에서 계산한 가상 하드웨어의 메모리 시간(`naive_ms`, `fused_ms`)을 실행시간으로
# 보고, 튜토리얼 식(분자 `2 × M × N × 4 Byte`)으로 실효 대역폭을 구하세요.
#
# * `gbps_fused`: 결합 커널의 실효 대역폭 (GB/s, 10⁹ Byte/s)
# * `gbps_naive`: `naive_softmax`의 실효 대역폭 (GB/s)
# * `naive_percent`: `gbps_naive`가 가상 HBM 대역폭(1 × 10¹² Byte/s)의 몇 %인지
#
# 답은 **유효숫자 4자리 이상**으로 적으세요 (상대 오차 0.1% 안이면 정답; 계산 결과를 그대로 두어도 됩니다).

# %% nbgrader={"grade": false, "grade_id": "ex1_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
# gbps_fused = ...
# gbps_naive = ...
# naive_percent = ...
### BEGIN SOLUTION
_t = softmax_traffic(4096, 1024)
gbps_fused = 2 * 4096 * 1024 * 4 / (_t.fused_ms * 1e-3) / 1e9
gbps_naive = 2 * 4096 * 1024 * 4 / (_t.naive_ms * 1e-3) / 1e9
naive_percent = gbps_naive / 1000 * 100
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex1_gbps_fused", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
"""gbps_fused = 2MN x 4 B / fused_ms (the whole bandwidth of the virtual device)."""
from gemm_lab.grading import fresh
g = fresh()
_key = g.calc.softmax_traffic(4096, 1024)
g.check_value("gbps_fused", gbps_fused, g.calc.effective_gbps(4096, 1024, _key.fused_ms), rel=1e-3)

# %% nbgrader={"grade": true, "grade_id": "ex1_gbps_naive", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""gbps_naive = 2MN x 4 B / naive_ms, and its share of the 1 TB/s peak."""
from gemm_lab.grading import fresh
g = fresh()
_key = g.calc.softmax_traffic(4096, 1024)
_naive = g.calc.effective_gbps(4096, 1024, _key.naive_ms)
g.check_value("gbps_naive", gbps_naive, _naive, rel=1e-3,
                    mistakes={_naive * _key.speedup:
                              "분자에 8MN(실제 이동량)을 넣었습니다. 분자는 필수 이동량 2MN × 4 Byte입니다."})
### BEGIN HIDDEN TESTS
_bw = g.calc.VIRTUAL_DEVICE_FP32.bandwidth_gbs
g.check_value("naive_percent", naive_percent, 100 * _naive / _bw, rel=1e-3,
                    mistakes={_naive / _bw: "비율(0~1)로 답했습니다. %로 바꾸세요 (× 100)."})
### END HIDDEN TESTS

# %% [markdown]
# ## 연습 2. 왜 분자가 `8MN`이 아니라 `2MN`인가 (2점, 서술)
#
# `naive_softmax`는 실제로 약 `8MN` 원소를 옮기는데, 튜토리얼은 어느 구현이든 분자에 `2 × M × N × 4 Byte`를 씁니다. 그 이유와,
# 연습 1의 두 숫자가 무엇을 말해 주는지 두세 문장으로 설명하세요.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex2_why_2mn", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# 실효 대역폭은 구현이 실제로 옮긴 양이 아니라 Softmax라는 연산에 **꼭 필요한** 이동량(X를 한 번 읽고 Y를 한 번 쓰기,
# `2MN` 원소)을 기준으로 삼습니다. 그래야 서로 다른 구현을 같은 잣대로 비교할 수 있고, 중간 텐서를 HBM에 왕복시키는
# 낭비가 낮은 GB/s로 드러납니다. 연습 1에서 naive 구현은 HBM을 최대 속도로 쓰고도 실효 대역폭이 피크의 약 1/4에
# 그치고, 결합 커널은 피크에 닿습니다 — 이동량 비율(약 4배)이 그대로 보입니다.
# ### END SOLUTION

# %% [markdown]
# ## 연습 3. 측정에 대한 참·거짓 (2점)
#
# 아래 문장 중 **맞는 것의 번호만** 집합으로 적으세요 (예: `{1, 4}`).
#
# 1. 커널을 호출한 Python 함수가 돌아오면 GPU 계산도 끝나 있다.
# 2. 첫 호출에는 JIT 컴파일(또는 캐시 로드) 시간이 들어 있으므로 측정에서 빼야 한다.
# 3. `do_bench`는 워밍업 실행 뒤 `rep`(ms) 동안 여러 번 잰 시간들의 통계를 돌려주며, 잴 때마다 L2 캐시를 비운다.
# 4. CPU 해석기(`TRITON_INTERPRET=1`)에서 잰 시간으로 Triton 커널과 `torch.softmax`의 속도를 비교할 수 있다.
# 5. `4096 × 1024`에서 `torch.allclose`가 통과하면 마스크와 `other`도 맞게 짠 것이다.
# 6. `torch.cuda.synchronize()` 없이 `time.perf_counter()`로 앞뒤를 재면 커널 실행이 아니라 호출 시간만 잴 수 있다.

# %% nbgrader={"grade": false, "grade_id": "ex3_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
# true_statements = {...}
### BEGIN SOLUTION
true_statements = {2, 3, 6}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex3_measurement_statements", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""true_statements picks exactly the true statements about measuring kernels."""
from gemm_lab.grading import fresh
g = fresh()
### BEGIN HIDDEN TESTS
g.check_choice("true_statements", true_statements, {2, 3, 6})
### END HIDDEN TESTS
