"""python -m gemm_lab.calc prints the seeds' answers (the `make examples` target)."""

import runpy

from gemm_lab.calc import examples


def test_demo_prints_every_section(capsys):
    runpy.run_module("gemm_lab.calc", run_name="__main__")  # what `python -m gemm_lab.calc` runs
    out = capsys.readouterr().out
    for needle in [
        "grid=(3,)", "pid 2: offsets [8, 9, 10, 11], mask [True, True, False, False]",
        "33,570,816 원소", "속도 향상 4.0020배",
        "90개 → 54개 (40.0% 감소)", "m=0 [0 3 6 . . . . . .]",
        "Q=6,476,005,376 B (6.476 GB), I=21.2228", "T_ideal=1.7180 ms, 제한 자원: 연산 처리율",
        "grid=(20,), K 루프 5회", "유효 116 × 88 = 10,208개, 마스크로 막힘 6,176개", "+20.0",
        "72개 → 48개 (33.33% 감소)", "64 KiB에서 최적 후보: 후보 2, I=63.0154 FLOP/B, T_ideal=2.1810 ms",
        "sm_75, 한계 64 KiB: 후보 1 8,192 B 통과, 후보 2 16,384 B 통과, 후보 3 65,536 B 통과",
        "TFLOP/s: 고정 85.8993, 오토튜닝 199.9985, torch.matmul 196.3414", "2.3283배", "1.0186배",
        "오토튜닝 900.6872 ms", "고정 1,600.0 ms, 오토튜닝 1,587.2 ms", "손익분기점: 986회", "실제 GPU (컴파일 캐시 cold",
        "레지스터 2, Shared Memory 2, 워프 12, SM 24 → 2개", "grid 170 → 0.50, grid 2,048 → 6.02",
        "프로그램 340개, 타일 6~7개씩",
    ]:
        assert needle in out, needle


def test_without_measurements_the_calculated_answers_still_print(capsys):
    examples.main()  # nothing measured passed in: exercise 3 prints the seed's numbers only
    out = capsys.readouterr().out
    assert "손익분기점: 986회" in out and "실제 GPU" not in out
