# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false, "task": false}
# # 7주차 ⑤ 컴파일 산출물과 벤치마크: `.asm`·`.metadata`, 환경변수, TFLOP/s, 그리고 FP16 결과 검사
#
# > “작성한 커널이 실제로 어떤 IR과 명령으로 번역되었고 자원을 얼마나 쓰는지 어떻게 확인할까? 생성된 IR과 TFLOP/s는
# > 어떻게 읽어야 할까?”
#
# **이번 노트북에서 배우는 것**
#
# 1. 컴파일된 커널의 `.asm`(단계별 산출물)과 `.metadata`(`shared`, `num_warps`, `num_stages`, ...) 읽기 (참고자료 7.2절)
# 2. 환경변수 `TRITON_CACHE_DIR`, `TRITON_KERNEL_DUMP`(+`TRITON_DUMP_DIR`, `TRITON_ALWAYS_COMPILE`),
#    `TRITON_PRINT_AUTOTUNING`이 하는 일 — CPU에서도 캐시 폴더와 덤프 파일은 직접 볼 수 있습니다
# 3. 왜 6주차 Softmax는 GB/s로, 7주차 MatMul은 TFLOP/s로 재는지: 4주차 Roofline의 산술 강도로 설명하기 (참고자료 7.3절)
# 4. `gemm_lab.kernels.best_matmul`이 모양마다 고르는 커널과 그 이유(`best_matmul.explain(...).reason`: 작은 타일, split-K,
#    TMA persistent)를 읽고, `triton.testing.do_bench`로 `torch.matmul`과 비교하기 (GPU가 있을 때; 없으면 H200에서 측정해
#    커밋한 결과를 읽습니다). FP8 행렬곱에 무엇이 필요한지: FP8 Tensor Core(sm_89, Ada부터)와 TMA(sm_90, Hopper부터), 그래서
#    T4(sm_75)에서는 안 되고 Ada에서는 TMA 없이 돈다는 것
# 5. FP16 결과를 올바르게 검사하는 법: 참고자료의 `torch.allclose(..., atol=1e-2, rtol=0)`가 500 × 600 × 300에서 왜 실패하는지,
#    그리고 FP32 기준값에 대한 **상대** 오차로 검사하기 (채점: 직접 작성한 검사 함수를 숨겨진 사례로 시험합니다)
#
# **GPU가 필요한 부분:** 4절의 측정(do_bench; 4.2절의 FP8 측정은 Hopper GPU)과 1.2절의 `n_regs`/`n_spills`, 2.3절의
# `TRITON_PRINT_AUTOTUNING` 출력만 GPU에서 실행됩니다(`best_matmul.explain`은 아무것도 실행하지 않으므로 CPU에서도
# 됩니다). GPU가 없으면 산출물은 교차 컴파일로 얻고, 측정값은 `results/`에 커밋된 H200 결과를 읽어 보여 줍니다(숫자를 손으로
# 옮겨 적지 않습니다). 5절의 행렬곱은 CPU 해석기에서 실행됩니다.
# 커밋된 H200 측정은 모두 **triton 3.6.0**(torch 2.11.0+cu130)으로 잰 것으로, 이 과정이 고정한 triton 3.7.1(`pyproject.toml`)과 버전이 다릅니다: 표와 출력 줄의 `triton` 값이 잰 버전입니다.
#
# **점수:** 연습 1 (2점), 연습 2 (4점), 연습 3 (2점, 서술), 연습 4 (5점, 코딩), 연습 5 (2점, 서술) — 모두 15점.
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
# * API: `triton.testing.do_bench` <https://triton-lang.org/main/python-api/generated/triton.testing.do_bench.html>,
#   `tl.dot`(`input_precision`) <https://triton-lang.org/main/python-api/generated/triton.language.dot.html>,
#   `triton.autotune`(`cache_results`) <https://triton-lang.org/main/python-api/generated/triton.autotune.html>
# * NVIDIA Hopper Tuning Guide (TMA, FP8 Tensor Core): <https://docs.nvidia.com/cuda/hopper-tuning-guide/index.html>
# * Triton GitHub README — Tips for hacking (`MLIR_ENABLE_DUMP`, `TRITON_PRINT_AUTOTUNING`, `TRITON_ALWAYS_COMPILE` 등):
#   <https://github.com/triton-lang/triton#tips-for-hacking>
# * Debugging Triton (`TRITON_INTERPRET=1`, `tl.device_print`): <https://triton-lang.org/main/programming-guide/chapter-3/debugging.html>
# * Triton GitHub: `compiler.py`(`triton.compile`, `CompiledKernel.asm`)
#   <https://github.com/triton-lang/triton/blob/main/python/triton/compiler/compiler.py>
# * CUDA PTX ISA (`mma`, `cp.async`, `ld.global` 같은 PTX 명령의 정의): <https://docs.nvidia.com/cuda/parallel-thread-execution/index.html>

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false, "task": false}
from gemm_lab import runtime  # triton보다 먼저: GPU가 없으면 CPU 해석기를 켭니다

import os
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
import triton
import triton.language as tl

from gemm_lab import results
from gemm_lab.runtime import grading_mode
from gemm_lab.calc import roofline as rf
from gemm_lab.calc import smem
from gemm_lab.calc import softmax as sm
from gemm_lab.calc.devices import DEVICES, VIRTUAL_DEVICE
from gemm_lab.compile import compile_artifacts
from gemm_lab.kernels import matmul
from gemm_lab.viz import pipeline
from gemm_lab.viz.roofline import roofline_figure

pd.set_option("display.max_colwidth", 100)
DEVICE = runtime.device()
print("커널 실행:", "GPU" if runtime.on_gpu() else "CPU 해석기 (산출물은 교차 컴파일)")

# %% [markdown]
# ## 1. `.asm`과 `.metadata` (참고자료 7.2절)
#
# GPU에서 `kernel[grid](...)`을 호출하면 Triton은 컴파일된 커널 객체(`CompiledKernel`)를 돌려줍니다. 그 객체의
#
# * `.asm`: 단계별 산출물 사전 — 키는 `source`, `ttir`, `ttgir`, `llir`, `ptx`, `cubin` (04 노트북의 파이프라인)
# * `.metadata`: 컴파일 결과 요약 — `shared`(Shared Memory 바이트), `num_warps`, `num_stages`, `target`, `hash`, ...
# * `.n_regs`, `.n_spills`: 스레드당 레지스터 수와 스필(로컬 메모리로 밀려난 레지스터) — GPU에 **적재할 때** 알 수 있습니다
#
# GPU가 없으면 `gemm_lab.compile.compile_artifacts`로 같은 산출물을 교차 컴파일해 얻습니다. 여기서는 `gemm_lab.kernels`의
# Tutorial 03 `matmul_kernel`을 후보 2(128×128×32, `num_stages=4`, `num_warps=4`)로 sm_80과 sm_90용으로 컴파일합니다.

# %%
CONFIG = rf.SEED_CONFIGS[1]
arts = {t: compile_artifacts("matmul", CONFIG, target=t) for t in ("sm_80", "sm_90")}
art = arts["sm_80"]
meta = art.metadata
print("산출물:", [s for s in pipeline.STAGE_KEYS if s != "ast"])
for key in ("shared", "num_warps", "num_stages", "name", "hash"):
    print(f"metadata[{key!r}] = {meta[key]!r}")
print("PTX 앞부분:")
print("\n".join(art.ptx.splitlines()[:8]))

# %% [markdown]
# 7.2절의 스크립트처럼 각 단계에서 행렬곱(`dot`/`mma`) 관련 줄만 골라 보면:

# %%
for stage in ("ttir", "ttgir", "ptx"):
    lines = [ln.strip() for ln in pipeline.stage_text(art, stage).splitlines() if "dot" in ln or "mma" in ln]
    print(f"--- [{stage}] dot/mma 관련 줄 {len(lines)}개 중 상위 3개")
    for line in lines[:3]:
        print("   ", line[:130])

# %% [markdown]
# TTIR의 `tt.dot` 줄에 붙은 `inputPrecision = tf32`는 `tl.dot`의 `input_precision` 기본값이 적힌 것일 뿐, FP16 입력에는
# 쓰이지 않습니다(FP32 입력일 때만 TF32로 줄여 곱할지 정합니다). FP32 입력으로 교차 컴파일한 비교는 04 노트북 4.3절에 있습니다.

# %% [markdown]
# ### 1.1 연습 1. 메타데이터 읽기 (2점)
#
# `arts`에서 다음 두 값을 **코드로** 읽어 적으세요.
#
# * `shared_sm90`: sm_90용 커널이 쓰는 Shared Memory 바이트 수
# * `shared_ratio`: sm_90의 Shared Memory가 sm_80의 몇 배인지 (`shared_sm90 / shared_sm80`, 소수 둘째 자리까지 반올림해도 정답)

# %% nbgrader={"grade": false, "grade_id": "ex1_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
shared_sm90 = arts["sm_90"].metadata["shared"]
shared_ratio = arts["sm_90"].metadata["shared"] / arts["sm_80"].metadata["shared"]
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex1_metadata_shared", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""shared_sm90 and shared_ratio are read from the cross-compiled metadata of the 128x128x32 s4 w4 config."""
from gemm_lab.grading import fresh
g = fresh()
_config = g.calc.SEED_CONFIGS[1]  # 128x128x32 s4 w4
_s90 = g.compile_answers.shared_bytes("sm_90", _config)
_s80 = g.compile_answers.shared_bytes("sm_80", _config)
g.check_value("shared_sm90", shared_sm90, _s90)
### BEGIN HIDDEN TESTS
g.check_value("shared_ratio", shared_ratio, _s90 / _s80, digits=2)
### END HIDDEN TESTS

# %% [markdown]
# 교과서 공식(`num_stages × 1단계 크기`)과 비교하면 sm_90은 같고 sm_80은 한 단계치가 적습니다(04 노트북 연습 4).
# 컴파일러의 답은 언제나 `.metadata["shared"]`에서 확인하세요.

# %%
print(f"교과서 공식 {smem.textbook_smem(CONFIG):,} B | sm_80 {arts['sm_80'].metadata['shared']:,} B | "
      f"sm_90 {arts['sm_90'].metadata['shared']:,} B")

# %% [markdown]
# ### 1.2 GPU에서: 실행한 커널의 `n_regs`와 `n_spills`
#
# 레지스터 수는 `ptxas`가 CUBIN을 만들 때 정해지고, Triton은 커널을 GPU에 적재할 때 그 값을 읽습니다. 그래서 GPU에서만 볼 수
# 있습니다. GPU가 있으면 아래 셀이 세 후보를 이 GPU용으로 컴파일해 **GPU에 적재한 뒤** 레지스터 수를 읽습니다
# (`compile_artifacts(..., target=None)`; 정렬된 경우와 500×600×300처럼 정렬되지 않은 경우). GPU가 없으면 H200에서 같은 표를
# 만들어 커밋한 `results/compiled_kernels.csv`를 읽습니다. 정렬되지 않은 큰 타일에서 레지스터가 스레드당 상한(255개)에 닿고
# 넘친 값이 로컬 메모리로 밀려나는(spill) 모습을 찾아보세요.

# %%
if grading_mode():
    print("(채점 중: 시연 셀은 건너뜁니다)")
elif runtime.on_gpu():
    rows = {}
    for cfg in rf.SEED_CONFIGS:
        for aligned, shape in ((True, "4096³ (정렬됨)"), (False, "500×600×300 (정렬 안 됨)")):
            live = compile_artifacts("matmul", cfg, target=None, aligned=aligned)  # this GPU: loaded, n_regs known
            rows[(cfg.name, shape)] = {k: live.metadata.get(k) for k in ("shared", "n_regs", "n_spills", "load_error")}
    print(runtime.describe()["device_name"], runtime.describe()["arch"])
    display(pd.DataFrame.from_dict(rows, orient="index"))
else:
    print("GPU가 없습니다: n_regs / n_spills는 GPU에 커널을 적재해야 알 수 있습니다(교차 컴파일한 metadata의 n_regs:",
          arts["sm_80"].metadata.get("n_regs"), ")")
    compiled_csv = results.load_csv("compiled_kernels.csv")
    if compiled_csv is None:
        print("results/compiled_kernels.csv도 찾지 못했습니다. GPU에서는 여기서 세 후보의 n_regs / n_spills를 보여 줍니다.")
    else:
        first = compiled_csv.iloc[0]
        print(f"results/compiled_kernels.csv — {first.get('gpu')}, triton {first.get('triton')}에서 측정:")
        cols = [c for c in ("kernel", "config", "aligned", "target", "shared", "n_regs", "n_spills", "mma")
                if c in compiled_csv.columns]
        display(compiled_csv[compiled_csv["kernel"] == "matmul"][cols].reset_index(drop=True))

# %% [markdown]
# ## 2. 환경변수: 캐시, 덤프, 오토튜닝 출력
#
# | 환경변수 | 하는 일 |
# | --- | --- |
# | `TRITON_CACHE_DIR` | 컴파일 캐시 폴더(기본 `~/.triton/cache`). 캐시 키의 해시마다 폴더 하나에 `.ttir`, `.ttgir`, `.llir`, `.ptx`, `.cubin`, `.json`(메타데이터)을 저장하고, 같은 키로 다시 부르면 컴파일하지 않고 읽습니다 |
# | `TRITON_KERNEL_DUMP=1` + `TRITON_DUMP_DIR` | 컴파일할 때마다 단계별 IR(및 SASS)을 덤프 폴더에 씁니다. 캐시에 있으면 컴파일이 일어나지 않으므로 `TRITON_ALWAYS_COMPILE=1`과 함께 씁니다 |
# | `TRITON_PRINT_AUTOTUNING=1` | `@triton.autotune`이 후보를 다 잰 뒤 걸린 시간과 고른 Config를 출력합니다 |
# | `TRITON_CACHE_AUTOTUNING=1` (= `@triton.autotune(..., cache_results=True)`) | 오토튜닝 **결과**(후보별 시간과 고른 Config)를 캐시 폴더에 저장해, 새 프로세스에서 같은 튜닝 키로 부르면 다시 벤치마크하지 않습니다. 기본은 꺼져 있어 프로세스마다 다시 잽니다. CPU 해석기에서는 쓰이지 않습니다 |
# | `MLIR_ENABLE_DUMP=1` | MLIR 패스 하나하나가 끝날 때마다 IR 전체를 출력합니다(매우 깁니다) |
# | `TRITON_INTERPRET=1` | 컴파일하지 않고 CPU에서 NumPy로 실행합니다(이 노트북의 5절). `.asm`이 없습니다 |
#
# ### 2.1 `TRITON_CACHE_DIR`: 캐시 폴더 들여다보기
#
# 빈 임시 폴더를 캐시로 지정하고 처음 보는 설정(128×64×32, 블로그의 설정)을 컴파일하면 그 폴더에 무엇이 생기는지 봅시다.

# %%
def list_tree(root):
    """Relative paths and sizes of every file under root (sorted)."""
    root = Path(root)
    return pd.DataFrame([{"file": str(p.relative_to(root)), "bytes": p.stat().st_size}
                         for p in sorted(root.rglob("*")) if p.is_file()])


cache_dir = tempfile.mkdtemp(prefix="triton_cache_")
_saved = {k: os.environ.get(k) for k in ("TRITON_CACHE_DIR", "TRITON_KERNEL_DUMP", "TRITON_DUMP_DIR",
                                         "TRITON_ALWAYS_COMPILE")}
os.environ["TRITON_CACHE_DIR"] = cache_dir
try:
    t0 = time.perf_counter()
    blog_art = compile_artifacts("matmul", rf.BLOG_CONFIG, target="sm_80")
    first = time.perf_counter() - t0
finally:
    for k, v in _saved.items():
        os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
print(f"컴파일 {first:.2f} s → 캐시 폴더 {cache_dir}")
cache_files = list_tree(cache_dir)
display(cache_files)

# %% [markdown]
# 해시 이름의 폴더 안에 단계별 파일이 하나씩 있습니다. `.json`이 `.metadata`의 내용입니다. 다음에 **다른 프로세스**가 같은
# 캐시 키로 이 커널을 부르면 Triton은 컴파일하지 않고 이 파일들을 읽습니다(04 노트북 5절의 캐시 키).

# %%
import json  # noqa: E402

json_files = [f for f in cache_files["file"] if f.endswith(".json") and not Path(f).name.startswith("__grp__")]
if json_files:
    cached_meta = json.loads((Path(cache_dir) / json_files[0]).read_text())
    print({k: cached_meta[k] for k in ("name", "shared", "num_warps", "num_stages", "hash") if k in cached_meta})
    print("방금 컴파일한 커널의 metadata['hash']와 같은가:", cached_meta.get("hash") == blog_art.metadata["hash"])
else:
    print("캐시 폴더에 메타데이터 .json이 없습니다: gemm_lab.compile이 다른 캐시를 쓰는 경우입니다.")

# %% [markdown]
# ### 2.2 `TRITON_KERNEL_DUMP`: 단계별 IR을 파일로
#
# 덤프는 컴파일이 **실제로 일어날 때** 쓰이므로 `TRITON_ALWAYS_COMPILE=1`로 Triton의 디스크 캐시를 건너뜁니다.
# (`gemm_lab.compile`도 한 번 컴파일한 결과를 메모리에 기억하므로, 같은 노트북에서 이 셀을 다시 실행하면 새 덤프가 생기지
# 않습니다: 커널을 다시 시작하고 실행하세요.)
# 덤프 폴더에는 캐시와 같은 단계별 파일에 더해, `nvdisasm`이 있으면 CUBIN을 역어셈블한 **SASS**(`.sass`)도 생깁니다.

# %%
if grading_mode():  # a forced recompile with dumps: a demonstration without points
    print("(채점 중: 시연 셀은 건너뜁니다)")
else:
    dump_dir = tempfile.mkdtemp(prefix="triton_dump_")
    os.environ.update(TRITON_KERNEL_DUMP="1", TRITON_DUMP_DIR=dump_dir, TRITON_ALWAYS_COMPILE="1",
                      TRITON_CACHE_DIR=tempfile.mkdtemp(prefix="triton_cache_"))
    try:
        compile_artifacts("matmul", rf.BLOG_CONFIG, target="sm_90")
    finally:
        for k, v in _saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    dump_files = list_tree(dump_dir)
    display(dump_files if len(dump_files) else "덤프 파일이 없습니다: gemm_lab.compile이 이 환경변수를 전달하지 않는 경우입니다.")
    sass = [f for f in dump_files.get("file", []) if f.endswith(".sass")]
    if sass:
        sass_lines = (Path(dump_dir) / sass[0]).read_text().splitlines()
        print("SASS에서 HGMMA(= wgmma) 줄:", sum("HGMMA" in ln for ln in sass_lines), "개; 첫 줄:")
        print(next((ln.strip() for ln in sass_lines if "HGMMA" in ln), "(없음)"))

# %% [markdown]
# ### 2.3 `TRITON_PRINT_AUTOTUNING`: 어떤 Config가 골라졌나 (GPU)
#
# `@triton.autotune`은 후보를 `do_bench`로 재야 하므로 GPU가 필요합니다(CPU 해석기에서는 `0 active drivers` 오류로 멈춥니다).
# GPU가 있으면 아래 셀이 `TRITON_PRINT_AUTOTUNING=1`로 `gemm_lab.kernels.matmul_autotuned`를 불러, Triton이 출력하는
# 줄(탐색 시간과 고른 Config)을 그대로 보여 줍니다.

# %%
if runtime.on_gpu():
    from gemm_lab.kernels import matmul_autotuned

    os.environ["TRITON_PRINT_AUTOTUNING"] = "1"
    try:
        x = torch.randn((2048, 2048), device="cuda", dtype=torch.float16)
        t0 = time.perf_counter()
        matmul_autotuned(x, x)
        torch.cuda.synchronize()
        print(f"첫 호출(탐색 포함): {time.perf_counter() - t0:.2f} s")
        t0 = time.perf_counter()
        matmul_autotuned(x, x)
        torch.cuda.synchronize()
        print(f"두 번째 호출(캐시된 Config): {time.perf_counter() - t0:.4f} s")
    finally:
        os.environ.pop("TRITON_PRINT_AUTOTUNING", None)
else:
    print("GPU가 없습니다: 오토튜닝은 GPU에서만 실행됩니다. GPU에서는 여기서 Triton의 출력 줄"
          "(\"Triton autotuning for function ... finished after ... s; best config selected: ...\")이 보입니다.")

# %% [markdown]
# ### 2.4 `TRITON_CACHE_AUTOTUNING` / `cache_results=True`
#
# 오토튜닝 결과의 디스크 캐시는 Triton의 설정값 `triton.knobs.autotuning.cache`가 환경변수 `TRITON_CACHE_AUTOTUNING`에서
# 읽고, `@triton.autotune(..., cache_results=True)`로 커널마다 켤 수도 있습니다. 아래 셀은 두 방법으로 만든 `Autotuner`의
# `cache_results` 속성을 보여 줍니다(해석기에서는 Triton이 항상 끕니다: `... and not knobs.runtime.interpret`).

# %%
@triton.jit
def _scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


_configs = [triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})]
_old = os.environ.get("TRITON_CACHE_AUTOTUNING")
try:
    for env in ("0", "1"):
        os.environ["TRITON_CACHE_AUTOTUNING"] = env
        tuned = triton.autotune(configs=_configs, key=["n"])(_scale_kernel)
        print(f"TRITON_CACHE_AUTOTUNING={env}: knobs.autotuning.cache = {triton.knobs.autotuning.cache}, "
              f"Autotuner.cache_results = {tuned.cache_results}")
    os.environ["TRITON_CACHE_AUTOTUNING"] = "0"
    tuned = triton.autotune(configs=_configs, key=["n"], cache_results=True)(_scale_kernel)
    print(f"cache_results=True 인자: Autotuner.cache_results = {tuned.cache_results}")
finally:
    os.environ.pop("TRITON_CACHE_AUTOTUNING", None) if _old is None else os.environ.__setitem__("TRITON_CACHE_AUTOTUNING", _old)
print("(해석기에서 실행 중이면 모두 False입니다)" if runtime.INTERPRET else "(GPU: 켜진 경우 결과가 TRITON_CACHE_DIR에 저장됩니다)")

# %% [markdown]
# ## 3. 왜 Softmax는 GB/s, MatMul은 TFLOP/s인가 (참고자료 7.3절)
#
# 4주차의 Roofline: 달성 가능한 처리율 = `min(P, I × BW)`이고, 산술 강도 `I = F / Q`(FLOP/Byte)가 분기점
# `I_ridge = P / BW`보다 작으면 **대역폭 병목**(memory-bound), 크면 **연산 병목**(compute-bound)입니다.
#
# * 대역폭 병목인 커널은 연산기가 놀고 있으므로 "필수 이동량을 얼마나 빨리 옮겼나", 즉 **유효 대역폭(GB/s)** 을
#   하드웨어 대역폭과 비교합니다. 6주차 Softmax 벤치마크가 `2 × M × N × 원소 크기 / 시간`을 잰 이유입니다.
# * 연산 병목인 커널은 메모리가 아니라 연산기가 한계이므로 **달성 연산 처리율(TFLOP/s)** = `2MNK / 시간`을
#   Tensor Core 상한·cuBLAS와 비교합니다. Tutorial 03 벤치마크의 `2 * M * N * K * 1e-12 / (ms * 1e-3)`입니다.
#
# Softmax의 연산량: 원소 하나마다 최댓값 비교, 빼기, `exp`, 합, 나누기의 **다섯 연산**(6주차 `naive_softmax`의 다섯 단계와
# 같습니다: `sm.naive_softmax_passes`). 결합(fused) 커널의 최소 이동량은 X를 한 번 읽고 Y를 한 번 쓰는 `2MN` 원소입니다
# (`sm.softmax_traffic(M, N).fused_bytes`). 6주차 예제(M = 4096, N = 1024, FP32)와 7주차 후보 3(4096³, FP16)을 비교합니다.

# %%
SM_M, SM_N = 4096, 1024
print(sm.naive_softmax_passes(SM_M, SM_N)[["step", "op"]].to_string(index=False))
MM = (4096, 4096, 4096)
mm_table = rf.roofline_table(*MM, rf.SEED_CONFIGS)
display(mm_table[["flops", "q_total", "intensity", "roof_tflops", "bound"]])

# %% [markdown]
# ## 연습 2. 산술 강도로 지표 고르기 (4점)
#
# 가상 하드웨어(참고자료 5.1절: P = 80 TFLOP/s, BW = 1 TB/s → `VIRTUAL_DEVICE`)에서,
#
# * `softmax_intensity`: 결합 Softmax(M = 4096, N = 1024, FP32)의 산술 강도 (FLOP/Byte) — 원소당 다섯 연산, 이동량은 `2MN` 원소
# * `matmul_intensity`: 4096³ FP16 행렬곱, 후보 3(`rf.SEED_CONFIGS[2]`)의 산술 강도 (FLOP/Byte) — 참고자료 5.2절의 공식(03 노트북)
# * `ridge`: 가상 하드웨어의 분기점 `P / BW` (FLOP/Byte)
# * `metric`: `{"softmax": ..., "matmul": ...}` — 각각 `"GB/s"`와 `"TFLOP/s"` 중 어느 지표로 재야 하는지
#
# 를 구하세요. 계산은 `gemm_lab.calc`를 써도 되고 손으로 해도 됩니다.
#
# 채점 허용 오차: `softmax_intensity`는 상대 1%, `matmul_intensity`와 `ridge`는 상대 0.1% 안이면 정답입니다(반올림한 값도 됩니다).

# %% nbgrader={"grade": false, "grade_id": "ex2_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
softmax_flops = 5 * SM_M * SM_N
softmax_intensity = softmax_flops / sm.softmax_traffic(SM_M, SM_N).fused_bytes
matmul_intensity = rf.roofline(*MM, rf.SEED_CONFIGS[2]).intensity
ridge = VIRTUAL_DEVICE.fp16_tflops * 1e12 / (VIRTUAL_DEVICE.bandwidth_gbs * 1e9)
metric = {"softmax": "GB/s" if softmax_intensity < ridge else "TFLOP/s",
          "matmul": "GB/s" if matmul_intensity < ridge else "TFLOP/s"}
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "ex2_intensities", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""softmax_intensity = 5 ops per element / fused bytes; matmul_intensity = candidate 3's F/Q at 4096^3."""
from gemm_lab.grading import fresh
g = fresh()
_sm = g.calc.softmax
_ops_per_element = len(_sm.naive_softmax_passes(4096, 1024))  # max, subtract, exp, sum, divide
_sm_I = _ops_per_element * 4096 * 1024 / _sm.softmax_traffic(4096, 1024).fused_bytes
g.check_value("softmax_intensity", softmax_intensity, _sm_I, rel=0.01)
### BEGIN HIDDEN TESTS
g.check_value("matmul_intensity", matmul_intensity,
              g.calc.roofline.roofline(4096, 4096, 4096, g.calc.SEED_CONFIGS[2]).intensity, rel=1e-3)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "ex2_ridge_and_metric", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""ridge = P / BW of the virtual device; metric picks GB/s below the ridge and TFLOP/s above it."""
from gemm_lab.grading import fresh
g = fresh()
_dev = g.calc.devices.VIRTUAL_DEVICE
_ridge = _dev.fp16_tflops * 1e12 / (_dev.bandwidth_gbs * 1e9)
g.check_value("ridge", ridge, _ridge, rel=1e-3)
### BEGIN HIDDEN TESTS
_sm = g.calc.softmax
_ops_per_element = len(_sm.naive_softmax_passes(4096, 1024))
_sm_I = _ops_per_element * 4096 * 1024 / _sm.softmax_traffic(4096, 1024).fused_bytes
_mm_I = g.calc.roofline.roofline(4096, 4096, 4096, g.calc.SEED_CONFIGS[2]).intensity
_metric = {"softmax": "GB/s" if _sm_I < _ridge else "TFLOP/s", "matmul": "GB/s" if _mm_I < _ridge else "TFLOP/s"}
g.check_value("metric", {k: metric.get(k) for k in _metric}, _metric,
              accept={"GB/s": ["GBps", "GB per s", "대역폭"], "TFLOP/s": ["TFLOPs/s", "TFLOPS", "TFLOP"]})
### END HIDDEN TESTS

# %% [markdown]
# 두 커널을 같은 Roofline 위에 놓으면 차이가 한눈에 보입니다(가상 하드웨어와 H200). Softmax 점은 분기점보다 두 자릿수
# 왼쪽에, 행렬곱 후보들은 분기점 근처에 있습니다. H200은 분기점이 훨씬 오른쪽이라(대역폭에 비해 연산이 매우 빠름), 출력
# 타일 사이의 L2 재사용이 없다고 보는 교과서 모델로는 세 후보 모두 분기점 왼쪽에 놓입니다. 실제 GPU에서는 L2 캐시가 같은 입력
# 타일을 여러 프로그램에 나눠 주므로(02 노트북의 grouped ordering) HBM 이동량이 모델보다 훨씬 작아, 큰 타일의 행렬곱은
# 연산 병목 쪽에서 동작합니다 — 그래서 여전히 TFLOP/s로 잽니다.

# %%
_sm_row = pd.DataFrame(
    {"intensity": [5 * SM_M * SM_N / sm.softmax_traffic(SM_M, SM_N).fused_bytes]}, index=["softmax 4096x1024 fp32"])
for dev in (VIRTUAL_DEVICE, DEVICES["h200"]):
    table = pd.concat([rf.roofline_table(*MM, rf.SEED_CONFIGS, device=dev)[["intensity", "roof_tflops"]], _sm_row])
    ridge_dev = dev.fp16_tflops * 1e12 / (dev.bandwidth_gbs * 1e9)
    table.loc["softmax 4096x1024 fp32", "roof_tflops"] = min(dev.fp16_tflops, table.loc["softmax 4096x1024 fp32",
                                                                                        "intensity"] * dev.bandwidth_gbs / 1e3)
    table["bound"] = ["memory" if i < ridge_dev else "compute" for i in table["intensity"]]
    print(f"{dev.name}: ridge = {ridge_dev:.1f} FLOP/B")
    display(table)
    fig = roofline_figure(table, dev, title=f"softmax vs matmul on {dev.name}")

# %% [markdown]
# (Softmax 점의 상한은 FP16 Tensor Core 상한이 아니라 대역폭 `I × BW`로 정해집니다: 어차피 대역폭 병목이므로 어느 연산
# 상한을 쓰든 결론은 같습니다.)

# %% [markdown]
# ## 연습 3. 지표를 바꿔 쓰면? (2점, 서술)
#
# 누군가 Softmax 커널의 성능을 TFLOP/s로 보고하고, 행렬곱 커널의 성능을 GB/s로 보고했습니다. 각각 왜 오해를 부르는지,
# 위 표의 산술 강도와 분기점을 근거로 설명하세요.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex3_metric_explanation", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# Softmax의 산술 강도(약 0.6 FLOP/Byte)는 분기점(가상 80, H200 약 200 FLOP/Byte)보다 훨씬 작아 대역폭 병목입니다. 달성 가능한
# TFLOP/s는 `I × BW`로 P의 1% 미만이므로, TFLOP/s로 보고하면 아무리 잘 짠 커널도 "연산기의 1%만 쓴다"는 무의미한 숫자가
# 되고, 실제로 중요한 "HBM 대역폭을 얼마나 썼나"는 드러나지 않습니다. 행렬곱(4096³, 후보 3은 I ≈ 84)은 연산 병목(또는 그
# 근처)이라 한계는 Tensor Core 처리율입니다. 타일을 키워 이동량 Q를 줄이면 같은 시간에도 GB/s는 오히려 **낮아지므로**,
# GB/s는 더 좋은 커널을 더 나쁘게 보이게 합니다. 그래서 병목이 되는 자원에 맞춰 Softmax는 GB/s, 행렬곱은 TFLOP/s로 잽니다.
# ### END SOLUTION

# %% [markdown]
# ## 4. 벤치마크: `best_matmul`을 `torch.matmul`과 비교 (GPU)
#
# 이번 주의 커널들(Tutorial 03 타일 커널, 작은 타일 오토튜닝, split-K, TMA persistent 커널)은 잘하는 모양이 서로 다릅니다.
# `gemm_lab.kernels.best_matmul`은 (M, N, K, dtype, GPU)를 보고 그중 하나를 고르는 진입점(entry point)입니다. 무엇을 왜
# 골랐는지는 `best_matmul.explain(M, N, K, dtype)`이 **아무것도 실행하지 않고** 알려 줍니다: 돌려주는 `Choice`의
# `.kernel`(고른 커널), `.params`(설정), `.reason`(한 줄 이유). 규칙(`gemm_lab/kernels/best.py`)은 위에서부터 차례로 봅니다:
#
# | 조건 | `.kernel` | 이유 |
# | --- | --- | --- |
# | 64×64 출력 타일 수가 SM 수의 절반 이하이고 K가 길다 | `splitk` | 타일만으로는 SM을 채울 수 없으니 K를 여러 조각(split)으로 나눠 조각마다 프로그램을 띄우고, FP32 부분합을 더합니다 |
# | sm_90 이상, FP16/BF16, 큰 출력(M×N) | `tma_persistent` | TMA(Tensor Memory Accelerator) 텐서 디스크립터로 타일을 옮기고, SM마다 프로그램 하나가 여러 타일을 도는 persistent 커널(128×256×64 타일) |
# | 작은 출력(M×N) | `autotuned_small` | 큰 타일로는 타일(= 프로그램) 수가 SM 수보다 적으므로, 작은 타일 후보들을 처음 호출 때 하나씩 재서(CUDA graph) 가장 빠른 것을 고정 |
# | 그 밖 | `autotuned` | 아키텍처별 후보 목록을 같은 방법으로 재서 고름 |
# | GPU 없음(CPU 해석기) | `tiled` | 오토튜닝·TMA 없이 모양에 맞춘 작은 타일 하나 |
#
# `explain`에 `arch`와 `num_sms`를 주면 **다른 GPU에서의 선택**도 볼 수 있습니다. 아래 표는 H200, A100, T4(Colab)에서 모양마다
# 무엇을 고르는지, 그리고 H200용 큰 타일(128×256)로 나누면 프로그램이 몇 개 생기는지 보여 줍니다.

# %%
from gemm_lab.kernels import best as best_rules  # noqa: E402
from gemm_lab.kernels import best_matmul  # noqa: E402

print(f"문턱값(best.py): 작은 출력 M×N ≤ {best_rules.SMALL_MN:,}, TMA persistent M×N ≥ {best_rules.TMA_MIN_MN:,}, "
      f"split-K는 K ≥ {best_rules.SPLITK_MIN_K:,} 이고 K ≥ 4·max(M, N) 이고 (64×64 타일 수) × 2 ≤ SM 수")
EXPLAIN_SHAPES = [(500, 600, 300), (512, 512, 512), (1024, 1024, 1024), (1536, 1536, 1536), (2048, 2048, 2048),
                  (4096, 4096, 4096), (8192, 8192, 8192), (128, 128, 8192)]
EXPLAIN_GPUS = {"H200": DEVICES["h200"], "A100": DEVICES["a100"], "T4": DEVICES["colab-t4"]}
_tma_tile = best_rules.TMA_CONFIG


def explain_table(shapes=EXPLAIN_SHAPES, dtype=torch.float16, devices=EXPLAIN_GPUS):
    """best_matmul's choice per shape (rows) and GPU (columns), with the program count of a TMA-sized tile."""
    rows = {}
    for M, N, K in shapes:
        row = {f"{_tma_tile['BLOCK_M']}×{_tma_tile['BLOCK_N']} 타일 수": triton.cdiv(M, _tma_tile["BLOCK_M"])
               * triton.cdiv(N, _tma_tile["BLOCK_N"])}
        for label, dev in devices.items():
            row[f"{label} ({dev.arch}, {dev.sms} SM)"] = best_matmul.explain(M, N, K, dtype, arch=dev.arch,
                                                                             num_sms=dev.sms).kernel
        rows[f"{M}×{N}×{K}"] = row
    return pd.DataFrame.from_dict(rows, orient="index")


display(explain_table())
_h200 = DEVICES["h200"]
print(f"{_h200.name}에서 best_matmul.explain(M, N, K, torch.float16)의 .reason:")
for M, N, K in EXPLAIN_SHAPES:
    choice = best_matmul.explain(M, N, K, torch.float16, arch=_h200.arch, num_sms=_h200.sms)
    print(f"  {M:>4}×{N:>4}×{K:<5} {choice.kernel:16s} {choice.reason}")
here = best_matmul.explain(4096, 4096, 4096, torch.float16)  # arch=None: this machine
print("이 기계(arch=None)에서 4096³:", here.kernel, "—", here.reason)

# %% [markdown]
# 표를 읽는 법:
#
# * **작은 타일:** 500×600×300 ~ 1024³은 출력이 작아 128×256 타일로는 프로그램이 SM 수보다 훨씬 적습니다(표의 타일 수와 열
#   이름의 SM 수). 대부분의 SM이 놀게 되므로 작은 타일 후보로 타일 수를 늘립니다(03 노트북의 웨이브(wave) 계산).
#   그 사이(1536³)는 작지도 크지도 않아 아키텍처의 후보 목록 전체에서 고릅니다(`autotuned`).
# * **후보를 재는 방법:** `@triton.autotune`은 후보마다 `do_bench`로 잽니다. 그런데 512³ 커널은 GPU에서 몇 µs면 끝나고,
#   Python에서 한 번 띄우는(launch) CPU 시간이 그보다 깁니다. 그러면 `do_bench`는 커널이 아니라 런처 시간과 잡음으로 순위를
#   매깁니다. 그래서 `best_matmul`은 후보마다 **CUDA graph로 재생한 GPU 시간**(`gemm_lab.kernels.best_tune`)으로 고릅니다.
#   후보에는 Tutorial 03 커널 말고 아래 4.0절의 **나눗셈 힌트 커널**(`hinted_matmul_kernel`)과, Hopper에서 모든 피연산자가
#   TMA 디스크립터가 될 수 있으면 작은 타일의 TMA persistent 커널도 들어갑니다. 매번 Python에서 부르는 경우에 맞추려면
#   `best_matmul(a, b, tune_for="eager")`: 후보마다 max(GPU 시간, 커널의 launch CPU 시간)으로 고릅니다.
# * **split-K:** 128×128×8192는 64×64 타일이 4개뿐인데 K가 깁니다. 타일을 더 작게 해도 SM을 채울 수 없으니, **K축을 나눠**
#   (타일 수 × 조각 수)개의 프로그램을 띄우고 각 조각의 FP32 부분합을 마지막에 더합니다. 조각 수는 SM 수에 맞추므로 GPU마다
#   다릅니다(`.reason`의 slices).
# * **TMA persistent:** 2048² 이상의 출력은 타일이 충분하므로 큰 타일(128×256×64)로 이동량을 줄이고, 하드웨어 복사 엔진 TMA와
#   persistent 스케줄(SM마다 프로그램 하나)을 씁니다. TMA와 `wgmma`는 sm_90(Hopper)부터 있으므로, 같은 모양이라도 A100(sm_80)과
#   T4(sm_75)에서는 `autotuned`(Tutorial 03 커널 + 그 아키텍처의 후보 목록)를 고릅니다.
#
# ### 4.0 정렬되지 않은 모양과 나눗셈 힌트(divisibility hint)
#
# Triton은 정수 인자를 두 가지 사실로만 특수화(specialization)합니다: 값이 1인가, 16의 배수인가. 500×600×300(FP16)에서는
# 크기도 행 stride(300, 600)도 16의 배수가 아니므로, Tutorial 03 커널은 모든 정수의 약수를 1로 알고 컴파일됩니다. 그러면 주소가
# 몇 바이트 경계에 맞는지 모르니 전역 메모리 load가 원소 하나(2바이트)씩이 되고, 4·8·16바이트만 옮기는 비동기 복사
# `cp.async`를 쓸 수 없어 K 루프의 파이프라이닝(04 노트북 4.2절)도 사라집니다. 그런데 300 = 4 × 75, 600 = 8 × 75이므로 실제로는
# 행의 시작이 8·16바이트 경계에 맞습니다.
#
# `hinted_matmul_kernel`(`gemm_lab/kernels/hinted.py`)은 크기와 stride `x`마다 `x // d`와 constexpr `d`(x를 나누는 8 이하의 가장
# 큰 2의 거듭제곱)를 받아 커널 안에서 다시 곱합니다. 곱 `q * d`의 약수가 `d`라는 것을 컴파일러의 축 분석(axis analysis)이 알게
# 되어, load·mask·store를 `d` 원소 단위로 묶고 load를 `cp.async`로 파이프라이닝합니다. 행·열 밖은 `% M` 대신 mask로 막습니다
# (나머지 연산은 연속성(contiguity)을 숨깁니다). 아래 셀은 두 커널을 sm_90용으로 교차 컴파일해(GPU 불필요) PTX의 전역 메모리
# 명령을 세고, H200에서 잰 `results/small_configs.csv`에서 커널마다 가장 빠른 후보의 CUDA graph 비율을 보여 줍니다.

# %%
from gemm_lab.compile.hints import best_small_configs, hint_ptx_table  # noqa: E402

display(pd.DataFrame(hint_ptx_table(500, 600, 300) + hint_ptx_table(512, 512, 512)).set_index(["shape", "kernel"]))
small_best = best_small_configs()
if small_best is None:
    print("results/small_configs.csv가 없습니다 (GPU에서 `python -m gemm_lab.bench --only small_configs`로 만듭니다).")
else:
    _small = small_best[small_best.kernel.isin(["tutorial03", "hinted"]) & (small_best.dtype == "fp16")]
    print("results/small_configs.csv (FP16, CUDA graph, torch.matmul 시간 / 커널 시간; 커널마다 가장 빠른 후보):")
    display(_small.pivot_table(index=["M", "N", "K"], columns="kernel", values="graph_ratio_to_torch"))

# %% [markdown]
# 읽는 법: 500×600×300에서 Tutorial 03 커널은 2바이트 load와 원소 하나씩의 store뿐이고 `cp.async`가 없습니다. 힌트 커널은
# A를 8바이트, B를 16바이트 `cp.async`로 옮기고 C를 16바이트씩 저장합니다. 모두 16의 배수인 512³에서는 두 커널의 PTX가
# 같은 종류의 명령을 씁니다: 힌트가 새로 알려 줄 것이 없기 때문입니다. 측정한 비율에서도 차이는 정렬되지 않은 모양에서만 크고,
# 정렬된 1024³에서는 오히려 Tutorial 03 커널이 조금 빠릅니다. 그래서 `best_matmul`은 정렬된 모양에서
# 두 커널을 모두 후보로 재서 고릅니다.
#
# ### 4.1 측정: `best_matmul` vs `torch.matmul`
#
# `triton.testing.do_bench(fn)`는 워밍업 뒤 여러 번 실행해 시간(ms)을 돌려주는데, 기본값은 **평균**(mean)입니다. 이 과정의 측정은
# 모두 `gemm_lab.bench.do_bench_ms`(= `do_bench(..., return_mode="median")`)로 **중앙값**(median)을 씁니다: 가끔 끼어드는 느린
# 실행에 덜 흔들리기 때문입니다. TFLOP/s = `2MNK × 1e-12 / (ms × 1e-3)`.
# `gemm_lab.bench.best.best_rounds`는 `gemm_lab.bench.bench_shape`로 같은 입력에서 `torch.matmul`과 `best_matmul`을 같은 실행에서
# 재고(`ratio_to_torch` = torch 시간 / `best_matmul` 시간, `graph_ratio_to_torch`는 CUDA graph로 잰 같은 비율), 결과를 FP32 기준값과
# 비교한 상대 오차(`rel_err`)도 적습니다. `config` 열에는 그 모양에서 고른 커널과 `.reason`이 들어갑니다. GPU가 있으면 이 GPU에서
# 직접 재고(3절의 Softmax는 GB/s로), 없으면 H200에서 재어 `results/best_matmul.csv`(세 번 반복)와
# `results/best_matmul_summary.csv`(반복의 중앙값과 이슈 14의 목표 비율)에 커밋한 결과를 읽어 보여 줍니다.

# %%
BENCH_SHAPES = [(500, 600, 300), (1024, 1024, 1024), (4096, 4096, 4096), (128, 128, 8192)]
TIMING = ["ms", "tflops", "ratio_to_torch", "graph_ms", "graph_ratio_to_torch", "rel_err", "host_us"]


def per_shape(df):
    """fp16 rows of a best_matmul run: the median over rounds of each timing column, per (shape, kernel)."""
    fp16 = df[df["dtype"] == "fp16"]
    cols = [c for c in TIMING if c in fp16.columns]
    table = fp16.groupby(["M", "N", "K", "kernel"], sort=False)[cols].median().reset_index()
    first = fp16.groupby(["M", "N", "K", "kernel"], sort=False)["config"].first().reset_index(drop=True)
    table.insert(4, "choice", [c.split(":")[0] for c in first])
    return table.sort_values(["M", "N", "K"], kind="stable").reset_index(drop=True)


def print_reasons(df):
    """One line per shape: the choice and reason recorded in the run's config column."""
    mine = df[(df["kernel"] == "best_matmul") & (df["dtype"] == "fp16")].drop_duplicates(["M", "N", "K"])
    for r in mine.sort_values(["M", "N", "K"]).itertuples():
        print(f"  {r.M:>4}×{r.N:>4}×{r.K:<5} {r.config}")


if grading_mode():  # benchmarks: a demonstration without points
    print("(채점 중: 시연 셀은 건너뜁니다)")
    measured = committed = None
elif runtime.on_gpu():
    from gemm_lab.bench.best import best_rounds

    measured = best_rounds(shapes=BENCH_SHAPES, dtypes=("fp16",), rounds=1)
    _desc = runtime.describe()
    print(f"{measured['gpu'].iloc[0]} (compute capability {_desc['compute_capability']}, {_desc['arch']})에서 지금 측정 "
          f"(torch {measured['torch'].iloc[0]}, triton {measured['triton'].iloc[0]}; ms는 do_bench의 중앙값(median)):")
    display(per_shape(measured))
    print("모양마다 best_matmul이 고른 커널과 이유:")
    print_reasons(measured)
    from gemm_lab import bench

    softmax_now = bench.bench_softmax(shapes=((SM_M, SM_N),))
    print("Softmax (3절의 크기, FP32, GB/s = 2MN × 4 B / 시간):")
    display(softmax_now[["M", "N", "kernel", "ms", "gbps", "rel_err"]])
else:
    committed = results.load_csv("best_matmul.csv")
    if committed is None:
        print("GPU가 없고 results/best_matmul.csv(H200에서 측정해 커밋한 결과)도 찾지 못했습니다.")
        print("GPU에서는 여기서 best_matmul과 torch.matmul의 ms와 TFLOP/s를 잽니다. 선택과 이유는 위의 explain 표에 있습니다.")
    else:
        env = committed.iloc[0]
        print(f"results/best_matmul.csv — {env.get('gpu')} (compute capability {env.get('compute_capability')}), "
              f"torch {env.get('torch')}, triton {env.get('triton')}, {env.get('date')}에 측정해 커밋한 결과 "
              f"(FP16, {committed['round'].nunique()}번 반복의 중앙값; ms는 do_bench의 중앙값(median)):")
        display(per_shape(committed))
        print("측정할 때 best_matmul이 고른 커널과 이유(config 열):")
        print_reasons(committed)
        _arch = tuple(int(x) for x in str(env.get("compute_capability")).split("."))
        _mine = committed[(committed["kernel"] == "best_matmul") & (committed["dtype"] == "fp16")]
        _same = all(best_matmul.explain(r.M, r.N, r.K, torch.float16, arch=_arch).kernel == r.config.split(":")[0]
                    for r in _mine.itertuples())
        print("지금의 best_matmul.explain(arch=sm_%d%d)도 같은 커널을 고르는가:" % _arch, "예" if _same else "아니오 (규칙이 바뀜)")
    summary = results.load_csv("best_matmul_summary.csv")
    if summary is not None:
        print("results/best_matmul_summary.csv (같은 측정, 모양·dtype마다 비율의 중앙값과 이슈 14의 목표; met은 CUDA graph 비율로 판정):")
        display(summary[["M", "N", "K", "dtype", "choice", "graph_ratio_median", "do_bench_ratio_median", "target",
                         "met"]].sort_values(["M", "dtype"]).reset_index(drop=True))
    committed_softmax = results.load_csv("softmax.csv")
    if committed_softmax is not None:
        _env = committed_softmax.iloc[0]
        print(f"results/softmax.csv — {_env.get('gpu')}, torch {_env.get('torch')}, triton {_env.get('triton')}, "
              f"{_env.get('date')} (FP32, GB/s = 2MN × 4 B / 시간):")
        display(committed_softmax[["M", "N", "kernel", "ms", "gbps", "rel_err"]])

# %% [markdown]
# `host_us`는 커널 한 번을 띄우는 데 드는 **CPU 시간**(Python 런처의 입력 검사 + Triton의 launch)이고, `graph_ms`는 같은 커널을
# CUDA graph로 묶어 재생한 **GPU 시간**입니다(런처 비용 없음, L2 캐시를 비우지 않음). `do_bench`는 매 호출 전에 L2를 비우는
# 커널을 먼저 띄우므로 짧은 런처 시간은 그 뒤에 가려지지만, 런처가 그보다 오래 걸리면 `ms`에 **CPU 시간이 섞입니다**.
# 아래 셀은 위 표에서 런처가 커널보다 오래 걸리는 행을 표시합니다: 그런 크기에서는 `graph_ms`가 커널 자체의 시간입니다.

# %%
table = measured if runtime.on_gpu() else committed
if table is not None and {"host_us", "graph_ms"} <= set(table.columns):
    for r in per_shape(table).itertuples():
        launch_bound = r.host_us * 1e-3 > r.graph_ms
        print(f"{r.M}×{r.N}×{r.K} {r.kernel:13s} {r.choice:16s} do_bench {r.ms * 1e3:7.1f} µs | "
              f"GPU(graph) {r.graph_ms * 1e3:7.1f} µs | 런처 CPU {r.host_us:6.1f} µs"
              + ("  ← 런처(CPU)가 커널(GPU)보다 오래 걸림: ms는 커널만의 시간이 아님" if launch_bound else ""))
else:
    print("host_us·graph_ms 열이 있는 측정값이 없습니다 (GPU에서 `python -m gemm_lab.bench --only best`로 만듭니다).")

# %% [markdown]
# 읽는 법: 비교는 같은 실행에서 잰 **비율**로 합니다(1이면 cuBLAS와 같은 속도). H200의 결과에서 큰 출력(2048² 이상)은 TMA
# persistent 커널이 CUDA graph 비율로 cuBLAS와 거의 같거나 빠르고, 2048³의 do_bench 비율이 훨씬 낮은 것은 커널이 아니라
# 런처(CPU) 시간 때문입니다(위 셀). 작은 출력에서는 작은 타일로 SM을 채우고 후보를 GPU 시간으로 고른 것이 차이를 만듭니다:
# 500 × 600 × 300은 나눗셈 힌트로 load가 벡터화·파이프라이닝되어(4.0절) cuBLAS보다 빠를 수도 있습니다. 작은 모양의
# `do_bench` 비율은 런처 시간이 섞여 흔들립니다(위 셀).
# **측정값은 GPU·드라이버·버전마다 다르므로 그 조건과 함께 기록합니다**(안내문 5절 4번: GPU
# 이름, compute capability, 버전, Config — `best_matmul`에서는 `.kernel`과 `.reason`).
#
# **세대 주의:** 위 TFLOP/s는 표 위에 적힌 GPU와 compute capability에서 잰 값입니다. sm_90(H100/H200)의 Tensor Core 명령은
# `wgmma`이고, T4(sm_75)는 FMA로 대체되며(확인한 triton 3.6–3.9 모두, 04 노트북 4절), A100(sm_80)은 `mma.sync`입니다. `best_matmul`의 선택도
# GPU마다 다릅니다(4절의 explain 표: TMA persistent는 sm_90 이상에서만).
# 그래서 다른 세대의 GPU에서는 절대값도, 순위도 달라질 수 있습니다: 비교는 같은 GPU에서 잰 `ratio_to_torch`로 하세요.
#
# ### 4.2 FP8(e4m3) 행렬곱: FP8 Tensor Core는 Ada(sm_89)부터, TMA는 Hopper(sm_90)부터
#
# `gemm_lab.kernels.fp8_matmul`은 위의 TMA persistent 커널에 FP8(`torch.float8_e4m3fn`, 부호 1 + 지수 4 + 가수 3비트) 타일을
# 넣습니다. `tl.dot`은 FP32로 누산하고(Hopper에서는 FP8 입력의 `wgmma`), 결과를 FP16으로 저장합니다. 비교 대상은 PyTorch의
# `torch._scaled_mm`(cuBLASLt의 FP8 행렬곱)이고, 정확도는 FP8 값을 그대로 올려 FP32로 곱한 기준값
# (`reference_fp8_matmul`)에 대한 상대 오차로 봅니다. 이 커널에는 하드웨어 기능 두 가지가 필요합니다:
#
# * **FP8 Tensor Core:** FP8 입력을 받는 `mma` 명령은 sm_89(Ada) 이상에만 있습니다.
# * **TMA:** 텐서 디스크립터로 타일을 옮기는 복사 엔진(Tensor Memory Accelerator)은 sm_90(Hopper)부터 있습니다.
#
# T4(sm_75, Turing)에는 **둘 다 없습니다.** T4의 Tensor Core는 FP16(과 INT8/INT4) 입력만 받으므로 FP8 값을 곱하는 명령이 없고,
# TMA도 없습니다. 그래서 `fp8_matmul`은 sm_89보다 오래된 GPU에서 `RuntimeError`로 멈춥니다. FP8을 FP16으로 바꿔 FP16 Tensor
# Core로 곱할 수는 있지만, 그러면 FP8의 이점(같은 Tensor Core에서 FP16의 두 배 처리율, 절반의 메모리와 이동량)이 사라집니다.
#
# **Ada(sm_89: L4, RTX 4090 등)는 그 사이입니다.** `fp8_matmul`의 검사는 sm_89 미만만 막으므로 Ada에서는 **실행됩니다**: FP8
# Tensor Core는 있으니 `tl.dot`은 FP8 입력의 `mma.sync`(Ampere식 워프 단위 행렬곱)가 되고, TMA가 없으니 이 커널에서는 Triton이
# 텐서 디스크립터의 load를 보통의 전역 메모리 load(`ld.global`)로 내립니다. (모든 커널이 그렇지는 않습니다: FP16 `tl.dot`에
# 디스크립터 load를 넘기는 작은 K 루프 커널을 sm_89용으로 컴파일하면 `cp.async` 파이프라인이 됩니다.)
# triton 3.7.1로 이 커널을 sm_89용으로 교차 컴파일한 PTX에는 `mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32`와 `ld.global`만 있고 TMA 복사(`cp.async.bulk.tensor`)도
# `wgmma`도 없습니다(sm_90용에는 둘 다 있습니다). 그러니 Ada에서는 FP8 Tensor Core의 이점은 얻지만 TMA의 비동기 복사와
# 파이프라이닝은 없어, Hopper용으로 고른 타일 설정이 Ada에서도 빠르다는 보장은 없습니다. 이 과정은 Ada GPU에서 재 보지
# 않았으므로 아래 셀도 Ada에서는 재지 않습니다.
#
# Hopper GPU가 있으면 아래 셀이 `fp8_matmul`과 `torch._scaled_mm`을 같은 입력으로 재고, 없으면 그 이유와 커밋된 결과
# (`results/fp8_matmul.csv`, 있을 때)를 보여 줍니다. CPU 해석기에서는 작은 크기로 **정확도만** 확인합니다(해석기가 FP8 값과
# 텐서 디스크립터를 NumPy로 흉내 냅니다).

# %%
from gemm_lab.kernels import fp8_matmul, reference_fp8_matmul, relative_error  # noqa: E402

FP8_COLUMNS = ["M", "N", "K", "dtype", "kernel", "ms", "tflops", "ratio_to_scaled_mm", "graph_ratio_to_scaled_mm",
               "rel_err"]
cap = runtime.capability()  # None in the CPU interpreter
if grading_mode():  # a demonstration without points
    print("(채점 중: 시연 셀은 건너뜁니다)")
elif cap is not None and cap >= (9, 0):
    from gemm_lab.bench.best import fp8_rows

    fp8_now = pd.DataFrame(fp8_rows(sizes=(4096, 8192), rounds=1))
    _env = fp8_now.iloc[0]
    print(f"{_env['gpu']} (compute capability {_env['compute_capability']})에서 지금 측정 (torch {_env['torch']}, "
          f"triton {_env['triton']}; ratio_to_scaled_mm = torch._scaled_mm 시간 / 커널 시간):")
    display(fp8_now[[c for c in FP8_COLUMNS if c in fp8_now.columns]])
else:
    where = "" if cap is None else f"{runtime.describe()['device_name']} (sm_{cap[0]}{cap[1]})"
    if cap is None:
        print("GPU가 없어 FP8 커널을 잴 수 없습니다 (FP8 Tensor Core(sm_89 이상)와 TMA(sm_90 이상)가 있는 GPU가 필요합니다).")
    elif cap < (8, 9):
        print(f"{where}: FP8 Tensor Core(sm_89 이상)도 TMA(sm_90 이상)도 없어 FP8 커널을 잴 수 없습니다.")
    else:
        print(f"{where}: FP8 Tensor Core는 있고 TMA(sm_90 이상)는 없습니다. fp8_matmul은 TMA 대신 보통의 load로 돌지만, "
              "이 과정이 이런 GPU에서 재 보지 않아 여기서는 재지 않습니다.")
    fp8_csv = results.load_csv("fp8_matmul.csv")
    if fp8_csv is None:
        print("커밋된 FP8 결과(results/fp8_matmul.csv)가 아직 없습니다: Hopper GPU에서 "
              "`python -m gemm_lab.bench --out results/ --only fp8`로 만듭니다.")
    else:
        _env = fp8_csv.iloc[0]
        print(f"results/fp8_matmul.csv — {_env.get('gpu')} (compute capability {_env.get('compute_capability')}), "
              f"torch {_env.get('torch')}, triton {_env.get('triton')}, {_env.get('date')}에 측정해 커밋한 결과 "
              "(반복의 중앙값):")
        _cols = [c for c in FP8_COLUMNS[5:] if c in fp8_csv.columns]
        display(fp8_csv.groupby(["M", "N", "K", "dtype", "kernel"], sort=False)[_cols].median().reset_index())
    if cap is None:  # the interpreter emulates fp8 and the descriptors: a small correctness check only
        _g = torch.Generator().manual_seed(0)
        a8 = torch.randn((128, 256), generator=_g).to(torch.float8_e4m3fn)
        bt8 = torch.randn((256, 256), generator=_g).to(torch.float8_e4m3fn)  # [N, K]: b = bt8.t() is K-major
        c8 = fp8_matmul(a8, bt8.t(), BLOCK_M=64, BLOCK_N=64, BLOCK_K=64)
        print(f"해석기에서 fp8_matmul 128×256×256 (e4m3 → fp16): 상대 오차 "
              f"{relative_error(c8, reference_fp8_matmul(a8, bt8.t())):.2e} (시간은 의미가 없어 재지 않습니다)")

# %% [markdown]
# ## 5. FP16 결과를 올바르게 검사하기
#
# 안내문 5절 1번은 `torch.allclose(triton_out, torch_out, atol=1e-2, rtol=0)`로 정확도를 확인하라고 합니다. 500 × 600 × 300에서
# 직접 해 봅시다(GPU가 없으면 CPU 해석기에서 실행: 몇 초 걸립니다).

# %%
torch.manual_seed(0)
M5, N5, K5 = 500, 600, 300
a5 = torch.randn((M5, K5), device=DEVICE, dtype=torch.float16)
b5 = torch.randn((K5, N5), device=DEVICE, dtype=torch.float16)
t0 = time.perf_counter()
c5 = matmul(a5, b5)
print(f"Triton matmul {M5}×{N5}×{K5}: {time.perf_counter() - t0:.2f} s ({'GPU' if runtime.on_gpu() else 'CPU 해석기'})")
torch_out = torch.matmul(a5, b5)                  # torch의 FP16 행렬곱
ref32 = a5.float() @ b5.float()                    # FP32 기준값
seed_check = torch.allclose(c5, torch_out, atol=1e-2, rtol=0)
print("참고자료의 검사 torch.allclose(c, torch_out, atol=1e-2, rtol=0):", "✅ 통과" if seed_check else "❌ 실패")
print(f"  최대 |c - torch_out| = {(c5.float() - torch_out.float()).abs().max().item():.5f}")
print(f"  최대 |c - FP32 기준값| = {(c5.float() - ref32).abs().max().item():.5f}, 최대 |기준값| = {ref32.abs().max().item():.1f}")

# %% [markdown]
# 참고자료의 검사가 **틀린 결과가 아닌데도** 실패합니다. 이유는 FP16의 간격(ulp)입니다. FP16은 가수부가 10비트라 크기가
# `[2^e, 2^(e+1))`인 수의 간격이 `2^(e−10)`입니다:

# %%
spacing = pd.DataFrame({"크기 구간": [f"[{2**e}, {2**(e + 1)})" for e in range(2, 7)],
                        "FP16 간격 (ulp)": [2.0 ** (e - 10) for e in range(2, 7)]})
display(spacing)
print("이 결과의 |값|이 16 이상인 원소 비율:", f"{(ref32.abs() >= 16).float().mean().item():.1%}")

# %% [markdown]
# K = 300인 무작위 정규분포 입력의 출력은 크기가 수십까지 올라가고(위에 출력한 최대 |기준값|), 크기 32~64에서 FP16 간격은 위 표의
# `2^(5−10)`입니다. 결과를 FP16으로 **반올림하는 것만으로** 최대 반 ulp의 오차가 생기고, 누산 순서가 다른 두 올바른 구현(Triton과 torch)은 1~2 ulp
# 어긋날 수 있습니다. 그래서 고정된 `atol=1e-2`는 값이 큰 원소에서 **올바른 결과를 거부**합니다(GPU에서 실행해도 같습니다). 검사의 허용 오차는 값의 **크기에 비례**해야 합니다:

# %%
rel_fro = ((c5.float() - ref32).norm() / ref32.norm()).item()
print(f"상대 오차 ||c - ref32|| / ||ref32|| = {rel_fro:.2e}  (FP16의 단위 반올림 2^-11 = {2**-11:.2e})")
elementwise = torch.allclose(c5.float(), ref32, rtol=1e-2, atol=1e-2)
print("원소별 상대 검사 torch.allclose(c.float(), ref32, rtol=1e-2, atol=1e-2):", "✅ 통과" if elementwise else "❌ 실패")

# %% [markdown]
# 그리고 이 검사는 진짜 버그를 놓치지 않습니다. 예를 들어 K 꼬리를 `other=1.0`으로 채운 버그(연습문제 1.4)는 모든 원소에
# 빈칸 수만큼을 더하고, 원소 하나만 틀려도 그 원소의 오차는 간격의 수십 배입니다:

# %%
padded = pd.Series({"K 꼬리 빈칸 (BLOCK_K=32)": (-K5) % 32})
bug_other_1 = (ref32 + float(padded.iloc[0])).half()
one_bad = c5.clone()
one_bad[123, 456] += 1.0
for name, out in {"올바른 결과 c": c5, "other=1.0 버그": bug_other_1, "원소 하나가 +1": one_bad}.items():
    ok = torch.allclose(out.float(), ref32, rtol=1e-2, atol=1e-2)
    print(f"{name:16s} → 상대 검사 {'✅ 통과' if ok else '❌ 실패'}")

# %% [markdown]
# ## 연습 4. 올바른 FP16 검사 함수 작성하기 (5점, 코딩)
#
# `is_correct_fp16(out, a, b)`를 완성하세요. `a`는 `[M, K]`, `b`는 `[K, N]` FP16 텐서, `out`은 어떤 커널이 계산한
# `[M, N]` FP16 결과입니다. `out`이 `a @ b`의 **올바른** FP16 결과이면 `True`, 아니면 `False`를 돌려주세요.
#
# * 올바른 결과: FP32로 누산한 뒤 FP16으로 반올림한 값. 누산 순서가 달라 1~2 ulp 어긋난 결과도 올바른 결과입니다.
# * 틀린 결과: 원소 하나라도 ulp 수준을 훨씬 넘게 틀린 것, NaN이 섞인 것, 모양이 다른 것, 행이 뒤바뀐 것, 값이 몇 %씩 틀린 것 등.
#
# 채점기는 공개 사례(이 절의 `c5`, `torch_out`, 버그 결과)와 **숨겨진 사례**(다른 모양, 더 큰 K와 더 큰 값, 여러 종류의 틀린
# 결과)로 함수를 호출합니다. 참고자료의 `atol=1e-2, rtol=0` 검사로는 통과할 수 없습니다.

# %% nbgrader={"grade": false, "grade_id": "ex4_answer", "locked": false, "schema_version": 3, "solution": true, "task": false}
def is_correct_fp16(out, a, b):
    """True when out is a correct fp16 result of a @ b (judged against an fp32 reference)."""
    ### BEGIN SOLUTION
    if out.shape != (a.shape[0], b.shape[1]):
        return False
    ref = a.float() @ b.float()
    o = out.float()
    if not torch.isfinite(o).all():
        return False
    return bool(torch.allclose(o, ref, rtol=1e-2, atol=1e-2))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "ex4_fp16_check_visible", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
"""is_correct_fp16 accepts the Triton and torch results at 500x600x300 and rejects the other=1.0 bug."""
from gemm_lab.grading import fresh
import torch
g = fresh()


def _case(name, out, a, b, expected):
    got = is_correct_fp16(out, a, b)
    g.check_value(f"is_correct_fp16({name})", bool(got) if isinstance(got, (bool, torch.Tensor)) else got, expected)


# the 5절 inputs again, made here (500x600x300, seed 0, CPU): the cell reads no notebook tensor
_gen = torch.Generator().manual_seed(0)
_a = torch.randn((500, 300), generator=_gen).half()
_b = torch.randn((300, 600), generator=_gen).half()
_ref = _a.float() @ _b.float()
_case("FP32 누산 후 FP16 반올림 (올바른 결과)", _ref.half(), _a, _b, True)
_case("torch.matmul 결과", torch.matmul(_a, _b), _a, _b, True)
_pad = g.calc.cdiv(300, 32) * 32 - 300  # K-tail slots a BLOCK_K = 32 kernel fills with other=1.0
_case("other=1.0 버그", (_ref + _pad).half(), _a, _b, False)

# %% nbgrader={"grade": true, "grade_id": "ex4_fp16_check_hidden", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
"""is_correct_fp16 accepts correct results (1-2 ulp off, large magnitudes) and rejects wrong ones on hidden cases."""
from gemm_lab.grading import fresh
import torch
g = fresh()


def _case(name, out, a, b, expected):
    got = is_correct_fp16(out, a, b)
    g.check_value(f"is_correct_fp16({name})", bool(got) if isinstance(got, (bool, torch.Tensor)) else got, expected)


### BEGIN HIDDEN TESTS
_g = torch.Generator().manual_seed(20261202)


def _inputs(M, N, K, scale=1.0):
    a = (torch.randn((M, K), generator=_g) * scale).half()
    b = torch.randn((K, N), generator=_g).half()
    return a, b


def _nudged(ref, ulps, frac=0.2):
    """ref rounded to fp16, then a random fraction of elements moved by `ulps` fp16 steps (a correct result)."""
    out = ref.half()
    pick = torch.rand(out.shape, generator=_g) < frac
    direction = torch.where(torch.rand(out.shape, generator=_g) < 0.5, -torch.inf, torch.inf).half()
    for _ in range(ulps):
        out = torch.where(pick, torch.nextafter(out, direction), out)
    return out


for (M, N, K, scale) in ((64, 96, 2048, 1.0), (33, 17, 300, 4.0), (128, 64, 4096, 2.0)):
    a, b = _inputs(M, N, K, scale)
    ref = a.float() @ b.float()
    _case(f"{M}x{N}x{K} 반올림만 한 결과", ref.half(), a, b, True)
    _case(f"{M}x{N}x{K} 2 ulp 어긋난 결과", _nudged(ref, 2), a, b, True)
    wrong = ref.half().clone()
    i, j = divmod(int(ref.abs().argmax()), N)
    wrong[i, j] = -wrong[i, j]
    _case(f"{M}x{N}x{K} 원소 하나 부호 반대", wrong, a, b, False)
    with_nan = ref.half().clone()
    with_nan[M // 2, N // 3] = float("nan")
    _case(f"{M}x{N}x{K} NaN 하나", with_nan, a, b, False)
    _case(f"{M}x{N}x{K} 5% 큰 값", (ref * 1.05).half(), a, b, False)
    swapped = ref.half().clone()
    swapped[[0, M - 1]] = swapped[[M - 1, 0]]
    _case(f"{M}x{N}x{K} 두 행이 뒤바뀜", swapped, a, b, False)
    _case(f"{M}x{N}x{K} 모두 0", torch.zeros((M, N), dtype=torch.float16), a, b, False)
    _case(f"{M}x{N}x{K} 모든 원소에 1을 더한 결과", (ref + 1.0).half(), a, b, False)
    _case(f"{M}x{N}x{K} 열 하나가 빠진 모양", ref.half()[:, :-1].contiguous(), a, b, False)
### END HIDDEN TESTS

# %% [markdown]
# ## 연습 5. 검사 기준을 어떻게 정했나 (2점, 서술)
#
# 여러분의 `is_correct_fp16`이 쓰는 허용 오차를 어떻게 정했는지, 그리고 왜 `atol=1e-2, rtol=0`은 500 × 600 × 300에서 실패하는지,
# 어떤 모양에서 그 검사가 우연히 통과하더라도 왜 일반적인 기준으로 쓰면 안 되는지 설명하세요.

# %% [markdown] nbgrader={"grade": true, "grade_id": "ex5_tolerance_explanation", "locked": false, "points": 2, "schema_version": 3, "solution": true, "task": false}
# ### BEGIN SOLUTION
# FP16의 간격은 값의 크기에 비례하므로(크기 32~64에서 0.03125), 올바른 결과도 반올림만으로 반 ulp, 누산 순서 차이로 1~2 ulp
# 어긋납니다. 그래서 허용 오차를 FP32 기준값에 대한 상대 오차(rtol = 1e-2, FP16 단위 반올림 약 5e-4의 20배 정도)로 두고, 0 근처
# 원소를 위해 작은 atol을 더했습니다. 진짜 버그(K 꼬리 패딩, 틀린 원소, NaN)는 이보다 수십 배 큰 오차를 내므로 구분됩니다.
# `atol=1e-2, rtol=0`은 값이 16을 넘는 원소에서 허용 오차가 1 ulp보다 작아 올바른 결과를 거부합니다. 어떤 모양에서 통과하더라도
# 그것은 두 구현의 누산 순서가 우연히 같았거나 값이 작았기 때문일 뿐, 모양·GPU·설정이 바뀌면 보장되지 않습니다.
# ### END SOLUTION

# %% [markdown]
# ## 정리
#
# * `.asm`은 단계별 산출물, `.metadata["shared"]`는 컴파일러가 실제로 잡은 Shared Memory, `n_regs`/`n_spills`는 GPU에 적재해야
#   보입니다. CPU에서는 교차 컴파일로 `.asm`과 `.metadata`를 얻습니다.
# * `TRITON_CACHE_DIR`에는 해시별 폴더에 단계별 파일과 `.json` 메타데이터가, `TRITON_KERNEL_DUMP=1`(+`TRITON_ALWAYS_COMPILE=1`)은
#   덤프 폴더에 IR과 SASS를 씁니다. `TRITON_PRINT_AUTOTUNING=1`은 GPU에서 고른 Config를 출력합니다.
# * 산술 강도가 분기점보다 작은 Softmax는 GB/s로, 큰 행렬곱은 TFLOP/s로 잽니다.
# * `best_matmul.explain(M, N, K, dtype)`은 선택과 한 줄 이유를 알려 줍니다: 작은 출력은 작은 타일, 타일이 적고 K가 길면 split-K,
#   Hopper의 큰 출력은 TMA persistent 커널. 측정값은 GPU·버전·날짜와 함께, 같은 실행에서 잰 `torch.matmul` 대비 비율로 읽습니다.
# * FP8 행렬곱에는 FP8 Tensor Core(sm_89+)가 필요하고, 이 커널은 TMA(sm_90+)로 타일을 옮깁니다: T4(sm_75)에는 둘 다 없고,
#   Ada(sm_89)에서는 TMA 대신 보통의 load로 돕니다.
# * FP16 결과는 FP32 기준값에 대한 **상대** 오차로 검사합니다. 고정 `atol`은 값이 큰 원소에서 올바른 결과를 거부합니다.
#
# **핵심 용어 3개:** 컴파일 산출물(`.asm`, `.metadata`), 달성 연산 처리율(Achieved TFLOP/s, `2MNK / 시간`),
# 상대 오차(Relative Error, FP32 기준값 대비)
