"""gemm_lab.grading answer checks: accept what a careful student writes, reject the rest in Korean."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from gemm_lab.grading import check_choice, check_pairs, check_table, check_value


def rejects(fn, *args, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        fn(*args, **kwargs)
    msg = str(info.value)
    assert msg.startswith("❌ "), msg
    return msg


# --------------------------------------------------------------------------- check_value


@pytest.mark.parametrize("got", [54, 54.0, np.int64(54), np.float32(54.0), np.array(54), np.array([54.0]),
                                 Fraction(54, 1)])
def test_value_accepts_numeric_forms(got, capsys):
    assert check_value("unique_tiles", got, 54) is None
    out = capsys.readouterr().out
    assert out.startswith("✅ unique_tiles: 54")


def test_value_accepts_torch_scalars():
    torch = pytest.importorskip("torch")
    check_value("grid", torch.tensor(20), 20)
    check_value("intensity", torch.tensor(63.0154, dtype=torch.float64), 63.015384615, digits=4)


@pytest.mark.parametrize("got", [63.0154, 63.01538, 63.015384615, 63.01543])
def test_value_within_printed_precision(got):
    check_value("intensity", got, 63.015384615, digits=4)


@pytest.mark.parametrize("got", [63.0155, 63.015, 63.1])
def test_value_outside_printed_precision(got):
    msg = rejects(check_value, "intensity", got, 63.015384615, digits=4)
    assert "intensity" in msg and "소수점 아래 4자리" in msg
    assert "63.0154" not in msg  # hidden by default


def test_value_rel_abs_sig():
    check_value("t", 2.19, 2.181, rel=0.01)
    rejects(check_value, "t", 2.25, 2.181, rel=0.01)
    check_value("t", 2.18, 2.181, abs=0.002)
    check_value("tflops", 85.9, 85.8993, sig=3)
    rejects(check_value, "tflops", 86.0, 85.8993, sig=3)


def test_value_float_default_is_tight_int_exact():
    check_value("x", 1 / 3, 0.3333333333)
    rejects(check_value, "x", 0.3333, 1 / 3)
    rejects(check_value, "n", 54.5, 54)


def test_value_reveal_shows_expected_and_percent():
    msg = rejects(check_value, "ms", 2.5, 2.0, rel=0.01, reveal=True)
    assert "기대값: 2.0" in msg and "25% 차이" in msg


def test_value_hidden_gives_direction_and_magnitude_only():
    msg = rejects(check_value, "grid", 4, 20)
    assert "작습니다" in msg and "20" not in msg.replace("❌ grid", "")
    msg = rejects(check_value, "bytes", 147456 * 1024, 147456)
    assert "1,000배 큽니다" in msg or "1,024배 큽니다" in msg or "1,000" in msg
    msg = rejects(check_value, "delta", -3.0, 3.0)
    assert "부호" in msg


def test_value_hint_and_known_mistake():
    msg = rejects(check_value, "grid", 4, 20, hint="num_pid_m × num_pid_n 전체 프로그램 수",
                  mistakes={4: "num_pid_m만 셌습니다."})
    assert msg.startswith("❌ grid: 4")
    assert "num_pid_m만 셌습니다." in msg and "(힌트: num_pid_m × num_pid_n 전체 프로그램 수)" in msg
    msg = rejects(check_value, "grid", 5, 20, mistakes={4: "num_pid_m만 셌습니다."})
    assert "num_pid_m만" not in msg


@pytest.mark.parametrize(
    "got, words",
    [
        ("54", "따옴표"),
        (None, "None"),
        (float("nan"), "NaN"),
        (float("inf"), "무한대"),
        (True, "참/거짓"),
        ([54], "숫자 하나"),
        ("about fifty", "문자열"),
        (print, "함수"),
        (object(), "숫자(int 또는 float)"),
    ],
)
def test_value_bad_types_get_korean_messages(got, words):
    msg = rejects(check_value, "unique_tiles", got, 54)
    assert words in msg and "unique_tiles" in msg


def test_value_hostile_repr_does_not_crash_checker():
    class Evil:
        def __repr__(self):
            raise RuntimeError("boom")

        def __float__(self):
            return 54.0

    msg = rejects(check_value, "x", Evil(), 54)
    assert "❌ x" in msg


def test_value_float_subclass_with_lying_eq_is_read_by_value():
    class Liar(float):
        def __eq__(self, other):
            return True

        def __sub__(self, other):
            return 0.0

    rejects(check_value, "x", Liar(1.0), 54)


def test_value_strings_and_aliases():
    check_value("bound", "Memory", "memory")
    check_value("bound", " memory-bound ", "memory", accept=["memory bound", "메모리", "HBM 대역폭"])
    check_value("bound", "HBM 대역폭", "memory", accept=["memory bound", "메모리", "HBM 대역폭"])
    check_value("bound", "ＭＥＭＯＲＹ", "memory")
    msg = rejects(check_value, "bound", "compute", "memory", accept=["메모리"])
    assert "'compute'" in msg and "memory" not in msg.split("받았습니다")[1]
    assert "문자열" in rejects(check_value, "bound", 1, "memory")


def test_value_booleans():
    check_value("fits", True, True)
    check_value("fits", np.bool_(False), False)
    assert "True 또는 False" in rejects(check_value, "fits", 1, True)
    assert "따옴표" in rejects(check_value, "fits", "True", True)
    rejects(check_value, "fits", False, True)


def test_value_sequences_elementwise():
    check_value("grid", (4, 5, 20), (4, 5, 20))
    check_value("grid", [4.0, 5, np.int32(20)], (4, 5, 20))
    msg = rejects(check_value, "grid", (4, 6, 20), (4, 5, 20))
    assert msg.startswith("❌ grid[1]: 6")
    assert "원소 2개" in rejects(check_value, "grid", (4, 5), (4, 5, 20))
    check_value("range", {"start": 384, "end": 511}, {"start": 384, "end": 511})
    assert "이 키가 없습니다" in rejects(check_value, "range", {"start": 384}, {"start": 384, "end": 511})


# --------------------------------------------------------------------------- check_table


@pytest.fixture
def expected():
    return pd.DataFrame(
        {"shared": [30720, 65536, 147456], "intensity": [21.3333333, 63.0153846, 102.4],
         "bound": ["memory", "memory", "compute"]},
        index=pd.Index(["후보 1", "후보 2", "후보 3"], name="config"),
    )


ROWS = [[30720, 21.3333, "memory"], [65536, 63.0154, "memory"], [147456, 102.4, "compute"]]


def test_table_accepts_many_shapes(expected, capsys):
    kw = {"digits": {"intensity": 4}}
    check_table("roofline", expected.copy(), expected, **kw)
    check_table("roofline", expected.reset_index(), expected, **kw)      # labels in a column
    check_table("roofline", expected.iloc[::-1], expected, **kw)         # rows in another order
    check_table("roofline", expected[["bound", "intensity", "shared"]], expected, **kw)  # column order
    check_table("roofline", expected.assign(extra=1), expected, **kw)    # extra column ignored
    check_table("roofline", {c: [r[i] for r in ROWS] for i, c in enumerate(expected.columns)}, expected, **kw)
    check_table("roofline", {lab: dict(zip(expected.columns, r, strict=False)) for lab, r in zip(expected.index, ROWS, strict=False)},
                expected, **kw)
    check_table("roofline", ROWS, expected, **kw)
    check_table("roofline", [tuple(r) for r in ROWS], expected, **kw)
    check_table("roofline", [["후보 1", *ROWS[0]], ["후보 2", *ROWS[1]], ["후보 3", *ROWS[2]]], expected, **kw)
    check_table("roofline", [dict(config=lab, **dict(zip(expected.columns, r, strict=False)))
                             for lab, r in reversed(list(zip(expected.index, ROWS, strict=False)))], expected, **kw)
    check_table("roofline", {"Shared": {"후보 1": 30720, "후보 2": 65536, "후보 3": 147456},
                             "INTENSITY": {"후보 3": 102.4, "후보 1": 21.3333, "후보 2": 63.0154},
                             "bound": {"후보 1": "Memory", "후보 2": "memory", "후보 3": "compute"}},
                expected, **kw)
    assert capsys.readouterr().out.count("✅ roofline: 표 3행 × 3열") == 12


def test_table_names_the_wrong_cell(expected):
    bad = [r[:] for r in ROWS]
    bad[1][1] = 63.1
    msg = rejects(check_table, "roofline", bad, expected, digits={"intensity": 4})
    assert "후보 2의 intensity: 63.1" in msg and "소수점 아래 4자리" in msg
    bad = expected.copy()
    bad.loc["후보 3", "bound"] = "memory"
    msg = rejects(check_table, "roofline", bad, expected)
    assert "후보 3의 bound" in msg


def test_table_row_name_and_integer_index():
    exp = pd.DataFrame({"pid": [0, 1, 2], "pid_m": [0, 1, 0], "pid_n": [0, 0, 1]})
    check_table("order", exp.set_index("pid"), exp)  # a column used as index is still found
    msg = rejects(check_table, "order", [[0, 0, 0], [1, 1, 0], [2, 1, 1]], exp, row_name="pid={}")
    assert "pid=2의 pid_m" in msg
    msg = rejects(check_table, "order", [[0, 0, 0], [1, 1, 0], [2, 1, 1]], exp)
    assert "2번 행의 pid_m" in msg


def test_table_structure_errors(expected):
    assert "열 'bound'" in rejects(check_table, "t", expected.drop(columns="bound"), expected)
    assert "행 2개" in rejects(check_table, "t", expected.iloc[:2], expected)
    assert "None" in rejects(check_table, "t", None, expected)
    assert "DataFrame" in rejects(check_table, "t", 5, expected)
    assert "값 2개" in rejects(check_table, "t", [r[:2] for r in ROWS], expected)


def test_table_per_column_rel(expected):
    rows = [r[:] for r in ROWS]
    rows[2][1] = 103.0
    check_table("t", rows, expected, rel={"intensity": 0.01})
    rejects(check_table, "t", rows, expected, rel={"intensity": 0.001})


# --------------------------------------------------------------------------- check_choice


@pytest.mark.parametrize("got", [{1, 2}, [2, 1], (1, 2, 2), ["후보 1", "후보 2"], "1, 2", np.array([1, 2]),
                                 frozenset({1, 2}), ["candidate 2", "Candidate 1"], [1.0, 2.0]])
def test_choice_accepts(got):
    check_choice("device_ga", got, {1, 2})


def test_choice_rejects_with_counts_not_answers():
    msg = rejects(check_choice, "device_ga", {1}, {1, 2})
    assert "빠진 정답이 1개" in msg
    msg = rejects(check_choice, "device_ga", {1, 2, 3}, {1, 2})
    assert "정답이 아닌 항목이 1개" in msg
    msg = rejects(check_choice, "device_ga", {3}, {1, 2}, reveal=True)
    assert "정답이 아닌 항목: [3]" in msg and "빠진 항목: [1, 2]" in msg
    assert "번호로 읽을 수 없습니다" in rejects(check_choice, "d", ["후보"], {1, 2})
    assert "None" in rejects(check_choice, "d", None, {1, 2})
    rejects(check_choice, "d", [True], {1})


def test_choice_strings_and_single_answer():
    check_choice("bound", "Memory", "memory")
    check_choice("bound", ["메모리"], {"memory"}, accept={"memory": ["메모리", "HBM 대역폭"]})
    rejects(check_choice, "bound", "compute", "memory")


# --------------------------------------------------------------------------- check_pairs

GROUPED = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3)]


def test_pairs_accepts_forms():
    check_pairs("grouped", GROUPED, GROUPED)
    check_pairs("grouped", [list(p) for p in GROUPED], GROUPED)
    check_pairs("grouped", np.array(GROUPED), GROUPED)
    check_pairs("grouped", pd.DataFrame(GROUPED, columns=["pid_m", "pid_n"]), GROUPED)
    df = pd.DataFrame({"pid": range(8), "pid_m": [p[0] for p in GROUPED], "pid_n": [p[1] for p in GROUPED]})
    check_pairs("grouped", df, GROUPED)
    check_pairs("grouped", [(np.int64(a), float(b)) for a, b in GROUPED], GROUPED)


def test_pairs_names_first_wrong_position():
    row_major = [(0, j) for j in range(8)]
    msg = rejects(check_pairs, "grouped", row_major, GROUPED)
    assert "pid=1의 좌표가 틀렸습니다: (0, 1)" in msg and "pid=0은 맞습니다" in msg
    assert "(1, 0)" not in msg
    msg = rejects(check_pairs, "grouped", row_major, GROUPED, reveal=True)
    assert "기대값: (1, 0)" in msg
    assert "좌표 7개" in rejects(check_pairs, "grouped", GROUPED[:7], GROUPED)
    assert "집합" in rejects(check_pairs, "grouped", set(GROUPED), GROUPED)
    assert "원소 2개짜리" in rejects(check_pairs, "grouped", [(0, 0, 0)] * 8, GROUPED)
    assert "None" in rejects(check_pairs, "grouped", None, GROUPED)
    assert "딕셔너리" in rejects(check_pairs, "grouped", dict(enumerate(GROUPED)), GROUPED)


# --------------------------------------------------------------------------- with the course's calculators


def test_with_calc_answer_keys():
    calc = pytest.importorskip("gemm_lab.calc.roofline")
    ordering = pytest.importorskip("gemm_lab.calc.ordering")
    tiling = pytest.importorskip("gemm_lab.calc.tiling")
    g = tiling.tile_grid(500, 600, 300, 128, 128, 64)
    check_value("grid", 20.0, g.grid)
    check_value("num_pid", (4, 5), (g.num_pid_m, g.num_pid_n))
    table = calc.roofline_table(4096, 4096, 4096, calc.SEED_CONFIGS)[["intensity", "t_ideal_ms", "bound"]]
    student = {"intensity": [21.2228, 63.0154, 83.5918], "t_ideal_ms": [6.4760, 2.1810, 1.7180],
               "bound": ["memory", "Memory", "compute"]}
    check_table("roofline", student, table, digits={"intensity": 4, "t_ideal_ms": 3})
    student["intensity"][1] = 63.1
    msg = rejects(check_table, "roofline", student, table, digits={"intensity": 4, "t_ideal_ms": 3})
    assert "후보 2의 intensity: 63.1" in msg
    order = ordering.order_table(8, 8, 2, n_programs=8)
    check_pairs("grouped", [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3)], order)
    msg = rejects(check_pairs, "grouped", [(0, j) for j in range(8)], order)
    assert "pid=1" in msg
    check_table("order", order.set_index("pid"), order)


def test_choice_with_labelled_expected():
    check_choice("fits", [1, 2], {"후보 1", "후보 2"})
    check_choice("fits", ["후보 2", "후보 1"], ["후보 1", "후보 2"])
    assert "빠진 정답이 1개" in rejects(check_choice, "fits", ["후보 1"], {"후보 1", "후보 2"})


def test_table_accept_per_column_or_for_all(expected):
    aliases = {"memory": ["메모리", "memory-bound"], "compute": ["연산"]}
    rows = [[30720, 21.3333, "메모리"], [65536, 63.0154, "Memory-Bound"], [147456, 102.4, "연산"]]
    check_table("t", rows, expected, digits=4, accept={"bound": aliases})
    check_table("t", rows, expected, digits=4, accept=aliases)
    rows[2][2] = "메모리"
    assert "후보 3의 bound" in rejects(check_table, "t", rows, expected, digits=4, accept=aliases)
