# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown]
# # 컴파일 탐색기 (Compile Explorer) — 커널·설정·타깃을 골라 단계별 산출물 보기
#
# 7주차 ④⑤(04·05 노트북)에서 본 컴파일 파이프라인을 자유롭게 탐색하는 **채점 없는 실습**입니다. 커널(`gemm_lab.kernels`의
# 행렬곱·persistent·Softmax·덧셈), 타일 설정, 타깃 GPU(sm_75 T4 · sm_80 A100 · sm_90 H100/H200 · ...), 포인터 정렬을 고르면
# Triton이 그 조합을 **교차 컴파일**하고, 단계별(TTIR → TTGIR → LLIR → PTX → CUBIN/SASS)로 눈여겨볼 줄과 요약을 보여 줍니다.
#
# **이번 노트북에서 배우는 것**
#
# 1. 같은 커널이 타깃에 따라 `mma.sync` / `wgmma` / FMA로, `cp.async` / TMA / `ld.global`로 갈리는 모습
# 2. `num_stages`·`num_warps`·타일 크기가 `metadata["shared"]`와 TTGIR 레이아웃을 어떻게 바꾸는지
# 3. 정렬(`aligned`)이 파이프라이닝을 켜고 끄는 모습
#
# **GPU가 필요한 부분:** 없습니다. 모든 컴파일은 CPU에서 교차 컴파일로 합니다(조합마다 처음 한 번 1~5초, 이후 캐시).
# GPU가 있으면 "이 GPU" 타깃을 고를 수 있고, 그때는 커널을 GPU에 적재해 레지스터 수(`n_regs`)와 스필(`n_spills`)도 봅니다.
# 위젯(ipywidgets)이 없는 환경에서는 아래 `explore(...)` 호출의 인자를 바꿔 실행하면 같은 결과를 얻습니다.

# %%
from gemm_lab import runtime  # triton보다 먼저

import time

import matplotlib.pyplot as plt
import pandas as pd

from gemm_lab import compile as gcompile
from gemm_lab.calc import smem
from gemm_lab.calc.roofline import BLOG_CONFIG, SEED_CONFIGS, TileConfig
from gemm_lab.viz import live, pipeline

try:
    import ipywidgets as widgets
except ImportError:  # the lab still runs: call explore(...) yourself
    widgets = None

pd.set_option("display.max_colwidth", 120)

CONFIGS = {f"{c.name or 'config'}: {c.BLOCK_M}x{c.BLOCK_N}x{c.BLOCK_K} s{c.num_stages} w{c.num_warps}": c
           for c in (*SEED_CONFIGS, BLOG_CONFIG)}
CONFIGS["64x64x32 s3 w4 (gemm_lab.kernels.matmul 기본값)"] = TileConfig(64, 64, 32, 3, 4, name="default")
CONFIGS["128x256x64 s4 w8"] = TileConfig(128, 256, 64, 4, 8, name="big s4")
MATMUL_KERNELS = ("matmul", "blog_tiled", "persistent", "grouped_persistent")
ROW_KERNELS = ("softmax", "vector_add")
TARGETS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_120"]
if runtime.on_gpu():
    TARGETS = ["이 GPU"] + TARGETS
STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")
print("커널:", gcompile.KERNELS)
print("타깃:", TARGETS)


# %% [markdown]
# ## 1. 한 조합 보기
#
# `explore(kernel, config, target, aligned, stage)`는 한 조합을 컴파일해
#
# * 요약 한 줄(`Artifacts.summary()`: shared, 워프, 단계, 주요 PTX 명령의 줄 수, 행렬곱 명령의 종류),
# * 교과서 공식과 `gemm_lab`의 컴파일러 규칙(`smem.textbook_smem`, `smem.compiler_smem`)과의 비교(행렬곱 커널만),
# * 파이프라인 그림(각 단계의 실제 한 줄),
# * 고른 단계의 "눈여겨볼 줄"(`Artifacts.highlights(stage)`)
#
# 을 보여 줍니다. `stage="sass"`는 CUBIN을 역어셈블한 SASS입니다(`HMMA`=mma.sync, `HGMMA`=wgmma, `FFMA`=FMA,
# `LDGSTS`=cp.async, `UTMALDG`=TMA 로드).

# %%
def compile_one(kernel, config_name, target, aligned):
    """Artifacts of one combination (target '이 GPU' = the live device, which also reports n_regs)."""
    target = None if target == "이 GPU" else target
    if kernel in ROW_KERNELS:
        return gcompile.compile_artifacts(kernel, {"BLOCK_SIZE": 1024}, target=target, aligned=aligned)
    return gcompile.compile_artifacts(kernel, CONFIGS[config_name], target=target, aligned=aligned)


def explore(kernel="matmul", config_name=next(iter(CONFIGS)), target="sm_80", aligned=True, stage="ttgir",
            limit=12):
    t0 = time.perf_counter()
    try:
        art = compile_one(kernel, config_name, target, aligned)
    except Exception as exc:  # e.g. a config this kernel cannot take: say so and stop
        print(f"컴파일 실패 ({kernel}, {config_name}, {target}): {exc.__class__.__name__}: {str(exc)[:300]}")
        return None
    print(f"{kernel} · {config_name if kernel not in ROW_KERNELS else 'BLOCK_SIZE=1024'} · {art.target} · "
          f"{'정렬됨' if aligned else '정렬 안 됨'} — {time.perf_counter() - t0:.2f} s")
    summary = pd.DataFrame([art.summary()])
    display(summary)
    if kernel in MATMUL_KERNELS:
        cfg = CONFIGS[config_name]
        try:
            rule = smem.compiler_smem(cfg, art.target, aligned=aligned)
        except ValueError:
            rule = None
        print(f"Shared Memory: 컴파일러 {art.shared:,} B | 교과서 공식 {smem.textbook_smem(cfg):,} B | "
              f"gemm_lab 규칙(Tutorial 03 커널) {rule if rule is None else f'{rule:,} B'}")
    fig = pipeline.draw_pipeline(art, title=f"{kernel} on {art.target}")
    plt.show()
    lines = art.highlights(stage)
    print(f"--- {stage}: 눈여겨볼 줄 {len(lines)}개 중 {min(limit, len(lines))}개")
    for line in lines[:limit]:
        print("   ", line[:160])
    return art


art = explore()

# %% [markdown]
# ## 2. 위젯으로 탐색하기
#
# 아래 위젯에서 조합을 바꾸면 그 자리에서 다시 컴파일해 보여 줍니다(처음 보는 조합은 몇 초 걸립니다).
# 해 볼 만한 것:
#
# * 같은 설정에서 타깃만 sm_80 → sm_90: PTX의 `mma.sync`가 `wgmma`로, TTGIR의 `#mma` `versionMajor`가 2 → 3으로
# * sm_75: `fma`만 남고 `cp.async`가 사라짐(T4 경로: `make compat`로 확인한 Triton 3.6–3.9 모두 같음)
# * `aligned` 끄기: `cp.async`가 `ld.global`로, `shared`가 줄어듦
# * 64×32×32 s5 w2를 sm_90에서: 워프 2개라 wgmma를 못 쓰고 `mma.sync` 경로(버퍼 S−1개)
# * `grouped_persistent`를 sm_90에서: persistent 루프가 TTGIR에서 어떻게 보이는지

# %%
if widgets is None:
    print("ipywidgets가 없습니다: 위 explore(...)의 인자를 바꿔 실행하세요 (pip install ipywidgets).")
else:
    w_kernel = widgets.Dropdown(options=gcompile.KERNELS, value="matmul", description="kernel")
    w_config = widgets.Dropdown(options=list(CONFIGS), value=next(iter(CONFIGS)), description="config",
                                layout=widgets.Layout(width="460px"))
    w_target = widgets.Dropdown(options=TARGETS, value="sm_80", description="target")
    w_aligned = widgets.Checkbox(value=True, description="aligned (16B)")
    w_stage = widgets.ToggleButtons(options=STAGES, value="ttgir", description="stage")
    ui = widgets.VBox([widgets.HBox([w_kernel, w_target, w_aligned]), w_config, w_stage])
    # an HTML widget, not widgets.Output: the classic notebook with ipywidgets 7.7 cannot render Output
    out = live.output_area()

    def on_change(change=None):
        # runs only when a control changes: the cell itself compiles nothing and returns at once
        # (interactive_output compiled and drew inside the Output widget while the cell ran; under a
        # Jupyter kernel on the H200 that cell then did not finish until the client's time limit)
        with out:
            out.clear_output(wait=True)
            explore(w_kernel.value, w_config.value, w_target.value, w_aligned.value, w_stage.value)

    for w in (w_kernel, w_config, w_target, w_aligned, w_stage):
        w.observe(on_change, names="value")
    with out:
        print("조합을 바꾸면 여기에 결과가 나타납니다 (처음 값의 결과는 위 1절의 explore() 출력).")
    display(ui, out)

# %% [markdown]
# ## 3. 한 설정을 여러 타깃에서 한꺼번에
#
# 하나의 설정을 여러 타깃으로 컴파일해 요약을 한 표로 봅니다. (세 후보 × 세 타깃의 Shared Memory 표는
# week07 03 노트북이 `gemm_lab.compile.compile_artifacts(...).shared`로 만듭니다.)

# %%
def across_targets(kernel="matmul", config_name=next(iter(CONFIGS)), targets=("sm_75", "sm_80", "sm_90"),
                   aligned=True):
    rows = []
    for t in targets:
        try:
            rows.append(compile_one(kernel, config_name, t, aligned).summary())
        except Exception as exc:
            rows.append({"kernel": kernel, "target": t, "error": f"{exc.__class__.__name__}: {str(exc)[:80]}"})
    return pd.DataFrame(rows).set_index("target")


display(across_targets("matmul", list(CONFIGS)[0]))

# %% [markdown]
# ## 4. 두 조합의 차이
#
# 두 조합의 같은 단계를 놓고, 한쪽에만 있는 "눈여겨볼 줄"의 종류를 셉니다(변수 번호 `%12` 같은 것은 지우고 비교합니다).

# %%
import re  # noqa: E402


def op_kinds(lines):
    """Instruction / op names of highlight lines, with SSA numbers and operands stripped."""
    kinds = []
    for line in lines:
        line = re.sub(r"%[\w.]+", "", line)
        m = re.search(r"(#\w+ = #[\w.]+|[a-z_]+\.[\w.]+)", line)
        if m:
            kinds.append(m.group(1))
    return pd.Series(kinds, dtype=object).value_counts()


def compare(a, b, stage="ptx"):
    """Counts of highlighted op kinds of one stage for two (kernel, config_name, target, aligned) tuples."""
    ka, kb = op_kinds(compile_one(*a).highlights(stage)), op_kinds(compile_one(*b).highlights(stage))
    table = pd.DataFrame({" · ".join(map(str, a)): ka, " · ".join(map(str, b)): kb}).fillna(0).astype(int)
    return table[table.iloc[:, 0] != table.iloc[:, 1]]


display(compare(("matmul", list(CONFIGS)[1], "sm_80", True), ("matmul", list(CONFIGS)[1], "sm_90", True)).head(15))

# %% [markdown]
# 더 보고 싶으면 `art.ttgir`, `art.ptx`, `art.sass`를 `print`로 통째로 열어 보세요. 파일로 저장하려면 05 노트북의
# `TRITON_KERNEL_DUMP`를 쓰면 됩니다.
