"""Print every worked example and exercise answer of the seeds, computed by gemm_lab.calc.

``python -m gemm_lab.calc`` (``make examples``). Labels are Korean, as in the course.
"""

from __future__ import annotations

from gemm_lab.calc import autotune, occupancy, ordering, smem, softmax, tiling
from gemm_lab.calc.devices import DEVICES, VIRTUAL_DEVICE, VIRTUAL_DEVICE_FP32
from gemm_lab.calc.roofline import BLOG_CONFIG, SEED_CONFIGS, roofline

KIB = 1024


def _h(title: str) -> None:
    print(f"\n=== {title} ===")


def week07_example1() -> None:
    _h("7주차 예제 1 — 9×9 그리드 L2 그룹핑 (GROUP_SIZE_M = 3, K 블록 9개)")
    for g, label in ((1, "행 우선(Row-major)"), (3, "그룹 순서(GROUP_SIZE_M=3)")):
        coords = [ordering.pid_to_tile(p, 9, 9, g) for p in range(9)]
        print(f"{label} pid 0~8: {coords}")
    print(ordering.format_order_grid(9, 9, 1, n_programs=9, rows=3))
    print(ordering.format_order_grid(9, 9, 3, n_programs=9, rows=3))
    c = ordering.compare_orders(9, 9, 9, 3, 9)
    for name, t in (("행 우선", c.row_major_tiles), ("그룹 순서", c.grouped_tiles)):
        print(f"{name}: A 블록 행 {t.a_rows}개 → A 타일 {t.a_tiles}개, B 블록 열 {t.b_cols}개 → B 타일 {t.b_tiles}개, "
              f"총 고유 입력 타일 {t.tiles}개")
    print(f"고유 입력 타일 {c.row_major}개 → {c.grouped}개 ({c.reduction_pct:.1f}% 감소)")


def week07_example2() -> None:
    _h("7주차 예제 2 — M=N=K=4096 FP16 입력·출력 / FP32 누산, 가상 장치 80 TFLOP/s · 1 TB/s")
    for cfg in SEED_CONFIGS:
        r = roofline(4096, 4096, 4096, cfg, VIRTUAL_DEVICE)
        print(f"{cfg.name} ({cfg.shape_label}): grid=({r.grid:,},), K 루프 {r.k_steps}회, "
              f"1단계 A+B {r.stage_bytes:,} B ({r.stage_bytes // KIB} KiB), "
              f"파이프라인 {r.pipeline_bytes:,} B ({r.pipeline_bytes // KIB} KiB), "
              f"누산기 {r.acc_bytes:,} B ({r.acc_bytes // KIB} KiB), 스레드 {r.threads}개 (스레드당 누산 {r.acc_per_thread}개)")
        print(f"    Q_read={r.q_read:,} B, Q_write={r.q_write:,} B, Q={r.q_total:,} B ({r.q_total / 1e9:.3f} GB), "
              f"I={r.intensity:.4f} FLOP/B, 성능 상한 {r.roof_tflops:.4f} TFLOP/s")
        print(f"    T_memory={r.t_memory_ms:.4f} ms, T_compute={r.t_compute_ms:.4f} ms, "
              f"T_ideal={r.t_ideal_ms:.4f} ms, 제한 자원: {'HBM 대역폭' if r.bound == 'memory' else '연산 처리율'}")


def week07_exercise1() -> None:
    _h("7주차 연습문제 1 — 500 × 600 × 300, BLOCK 128×128×64")
    g = tiling.tile_grid(500, 600, 300, 128, 128, 64)
    print(f"num_pid_m={g.num_pid_m}, num_pid_n={g.num_pid_n}, grid=({g.grid},), K 루프 {g.k_steps}회")
    t = tiling.edge_tile(500, 600, 128, 128, 3, 4)
    print(f"우하단 타일 (3, 4): offs_cm {t.row_start}~{t.row_end} (유효 {t.valid_rows}개), "
          f"offs_cn {t.col_start}~{t.col_end} (유효 {t.valid_cols}개)")
    print(f"전체 {t.total:,}개 중 유효 {t.valid_rows} × {t.valid_cols} = {t.valid:,}개, 마스크로 막힘 {t.masked:,}개")
    k = tiling.k_tail(300, 64)
    print(f"마지막 K 단계 k={k.last_k}: K - k*BLOCK_K = {k.remaining}, 읽는 칸 {k.read}, other로 채우는 칸 {k.padded}")
    print(f"other=1.0이면 유효 출력마다 +{tiling.padding_error(300, 64, 1.0):.1f}, other=0.0이면 "
          f"+{tiling.padding_error(300, 64, 0.0):.1f}")


def week07_exercise2() -> None:
    _h("7주차 연습문제 2 — 8×8 그룹핑과 Shared Memory 한계")
    for g in (1, 2):
        coords = [ordering.pid_to_tile(p, 8, 8, g) for p in range(8)]
        print(f"GROUP_SIZE_M={g} pid 0~7: {coords}")
    c = ordering.compare_orders(8, 8, 8, 2, 8)
    print(f"고유 입력 타일 {c.row_major}개 → {c.grouped}개 ({c.reduction_pct:.2f}% 감소)")
    for limit in (64 * KIB, 164 * KIB):
        df = smem.smem_verdicts(SEED_CONFIGS, limit)
        ok = ", ".join(f"{r.config}({r.shared // KIB} KiB)" for r in df.itertuples() if r.fits)
        print(f"교과서 규칙, 한계 {limit // KIB} KiB: 통과 {ok}")
    best = smem.best_fitting(4096, 4096, 4096, SEED_CONFIGS, 64 * KIB)
    print(f"64 KiB에서 최적 후보: {best.name}, I={best.intensity:.4f} FLOP/B, T_ideal={best.t_ideal_ms:.4f} ms")
    print("컴파일러 규칙 (metadata.shared, triton 3.7.1):")
    for arch in ("sm_75", "sm_80", "sm_90"):
        df = smem.smem_verdicts(SEED_CONFIGS, 64 * KIB, rule="compiler", arch=arch)
        cells = ", ".join(f"{r.config} {r.shared:,} B {'통과' if r.fits else '초과'}" for r in df.itertuples())
        print(f"    {arch}, 한계 64 KiB: {cells}")


def week07_exercise3(measured=None) -> None:
    """``measured``: {compile_cache: measured case or None, "csv": file name}, read from results/ by the
    caller (this package stays pure: no I/O, no import of the rest of gemm_lab); None: not printed."""
    _h("7주차 연습문제 3 — TFLOP/s, 오토튜닝 손익분기점")
    a = autotune.exercise3_answers()
    print(f"TFLOP/s: 고정 {a.tflops_fixed:.4f}, 오토튜닝 {a.tflops_tuned:.4f}, torch.matmul {a.tflops_cublas:.4f}")
    print(f"속도 배수: 고정 대비 {a.speedup_vs_fixed:.4f}배, torch.matmul 대비 {a.speedup_vs_cublas:.4f}배")
    print(f"1회 실행: 고정 {a.one_call_fixed_ms:.4f} ms, 오토튜닝 {a.one_call_tuned_ms:.4f} ms")
    print(f"{a.n_calls:,}회 실행: 고정 {a.many_calls_fixed_ms:,.1f} ms, 오토튜닝 {a.many_calls_tuned_ms:,.1f} ms")
    print(f"손익분기점: {a.break_even:,}회")
    for cache in ("cold", "warm") if measured else ():
        real = measured.get(cache)
        if real is None:
            print(f"실제 GPU (컴파일 캐시 {cache}): results/{measured['csv']}에 측정이 없어 계산하지 않습니다")
            continue
        f = autotune.exercise3_answers(real)
        print(f"실제 GPU (컴파일 캐시 {cache}, {real.source}): 튜닝 {real.tuned.tuning_ms:,.0f} ms, "
              f"{real.fixed.kernel_ms:.4f} vs {real.tuned.kernel_ms:.4f} ms: 손익분기점 {f.break_even:,}회")


def week06_section4() -> None:
    _h("6주차 §4 — 블록 인덱싱과 Softmax HBM 이동량 (FP32, 가상 장치 1 TB/s)")
    df = softmax.block_offsets(10, 4)
    print(f"N=10, BLOCK_SIZE=4: grid=({len(df)},)")
    for r in df.itertuples():
        print(f"    pid {r.pid}: offsets {r.offsets}, mask {r.mask}")
    M, N = 4096, 1024
    t = softmax.softmax_traffic(M, N, 4, VIRTUAL_DEVICE_FP32)
    for r in softmax.naive_softmax_passes(M, N).itertuples():
        print(f"    단계 {r.step} {r.op}: 읽기 {r.reads:,}, 쓰기 {r.writes:,} 원소")
    print(f"단계별 실행: {t.naive_elems:,} 원소 (8MN+4M) = {t.naive_bytes:,} B, 근사 8MN = {t.naive_elems_approx:,} 원소 "
          f"= {t.naive_bytes_approx:,} B")
    print(f"결합 커널: {t.fused_elems:,} 원소 (2MN) = {t.fused_bytes:,} B; 한 행 {t.row_bytes:,} B ({t.row_bytes // KIB} KiB)")
    print(f"메모리 시간: 단계별 {t.naive_ms:.4f} ms, 결합 {t.fused_ms:.4f} ms, 속도 향상 {t.speedup:.4f}배 "
          f"(근사 {t.speedup_approx:.1f}배)")
    print(f"결합 커널이 {t.fused_ms:.4f} ms 걸릴 때 실효 대역폭 {softmax.effective_gbps(M, N, t.fused_ms):,.1f} GB/s")


def blog_occupancy() -> None:
    _h("블로그 — RTX 5090 (sm_120) persistent 커널 점유율")
    occ = occupancy.blocks_per_sm(174, 4, 36864, "sm_120")
    print(f"SM당 블록 한계: 레지스터 {occ.by_regs}, Shared Memory {occ.by_smem}, 워프 {occ.by_warps}, "
          f"SM {occ.by_blocks} → {occ.blocks}개 (제한: {occ.limiter}); 이론 점유율 {occ.occupancy * 100:.2f}%")
    sms = DEVICES["rtx5090"].sms
    print(f"Waves Per SM: grid {sms} → {occupancy.waves_per_sm(sms, sms, occ.blocks):.2f}, "
          f"grid 2,048 → {occupancy.waves_per_sm(2048, sms, occ.blocks):.2f}")
    grid = occupancy.persistent_grid(sms, 2, 2048)
    s = occupancy.tiles_per_program(2048, grid)
    print(f"programs_per_sm=2: 프로그램 {grid}개, 타일 {s.min_tiles}~{s.max_tiles}개씩 "
          f"({s.max_tiles}개 처리 프로그램 {s.programs_with_max}개)")
    print(f"블로그 설정 {BLOG_CONFIG.shape_label}: sm_90 {smem.compiler_smem(BLOG_CONFIG, 'sm_90'):,} B, "
          f"sm_120 {smem.compiler_smem(BLOG_CONFIG, 'sm_120'):,} B")


def main(measured=None) -> None:
    week06_section4()
    week07_example1()
    week07_example2()
    week07_exercise1()
    week07_exercise2()
    week07_exercise3(measured)
    blog_occupancy()

