"""gemm_lab.viz.error_map: the classic kernel mistakes, planted in the masters' kernels and run for real
(Triton's interpreter on a CPU), are marked exactly where they are wrong, on the array the figure is drawn
from; hidden cases get no map; the figure is small, Korean and passes the feedback sanitizer.

Each mistake's wrong region is worked out here from what the mistake does (which tiles a swapped
pid_m/pid_n never reaches, what a never-reset accumulator carries into a program's later tiles, ...), not
from the checker. The kernels write into outputs placed in NaN-poisoned, sentinel-filled buffers as the
grader's are; output row strides are wide enough that an edge tile's unmasked store lands in the margin
beside its row.
"""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest

from gemm_lab import runtime  # noqa: F401  (before triton: picks the interpreter on a CPU)

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

from test_grading_kernels import CHECKS, edited, kernel  # noqa: E402

from gemm_lab.grading import record  # noqa: E402
from gemm_lab.viz import error_map as em  # noqa: E402
from gemm_lab.viz.error_map import MARGIN, OK, OUTSIDE, UNWRITTEN, WRONG  # noqa: E402

SENT = -7776.0
FRONT = 8


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GEMM_LAB_COMPILE_CACHE", str(tmp_path_factory.getbasetemp() / "compile_cache"))


def cdiv(a, b):
    return -(-a // b)


def values(n, rng, scale=16):
    """fp16-exact inputs (multiples of 1/scale in [-2, 2]): fp32 accumulation is exact."""
    return rng.integers(-2 * scale, 2 * scale + 1, size=n) / scale


def placed(arr, row_stride, fill, dtype):
    """``arr`` (2-D) as a view with ``row_stride`` inside a flat buffer filled with ``fill`` (front, row gaps
    and 200 rows' worth after it)."""
    rows, cols = arr.shape
    buf = torch.full((FRONT + (rows + 200) * row_stride,), fill, dtype=dtype)
    view = torch.as_strided(buf, (rows, cols), (row_stride, 1), FRONT)
    view.copy_(torch.as_tensor(arr, dtype=dtype))
    return buf, view


def run_matmul(k, M, N, K, out_stride=None, seed=0):
    """One launch as the locked launcher makes it (16x16x16 tiles, one program per C tile)."""
    rng = np.random.default_rng(seed)
    a, b = values(M * K, rng).reshape(M, K), values(K * N, rng).reshape(K, N)
    _, av = placed(a, K + 3, float("nan"), torch.float16)
    _, bv = placed(b, N + 3, float("nan"), torch.float16)
    cbuf, cv = placed(np.full((M, N), SENT), out_stride or N + 3, SENT, torch.float16)
    grid = (cdiv(M, 16) * cdiv(N, 16),)
    k[grid](av, bv, cv, M, N, K, av.stride(0), av.stride(1), bv.stride(0), bv.stride(1), cv.stride(0), cv.stride(1),
            BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16)
    ref = a @ b
    m = em.arrays_from_buffer(ref, cbuf.float().numpy(), shape=(M, N), strides=cv.stride(), offset=FRONT,
                              sentinel=SENT, block=(16, 16), tolerance=(2.0 ** -8, 2.0 ** -10))
    return m, ref


def run_persistent(k, M, N, K, P, seed=0, ownership=False):
    rng = np.random.default_rng(seed)
    a, b = values(M * K, rng).reshape(M, K), values(K * N, rng).reshape(K, N)
    _, av = placed(a, K + 3, float("nan"), torch.float16)
    _, bv = placed(b, N + 3, float("nan"), torch.float16)
    cbuf, cv = placed(np.full((M, N), SENT), N + 40, SENT, torch.float16)
    tiles = cdiv(M, 32) * cdiv(N, 32)
    visits, owner = torch.zeros(tiles + P + 64, dtype=torch.int32), torch.full((tiles + P + 64,), -1, dtype=torch.int32)
    k[(P,)](av, bv, cv, visits, owner, M, N, K, av.stride(0), av.stride(1), bv.stride(0), bv.stride(1),
            cv.stride(0), cv.stride(1), NUM_PROGRAMS=P, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    ref = a @ b
    own = dict(owner=owner[:tiles].tolist(), asked_owner=[t % P for t in range(tiles)]) if ownership else {}
    m = em.arrays_from_buffer(ref, cbuf.float().numpy(), shape=(M, N), strides=cv.stride(), offset=FRONT,
                              sentinel=SENT, block=(32, 32), tolerance=(2.0 ** -8, 2.0 ** -10), **own)
    return m, ref


def run_vector_add(k, n, seed=0):
    rng = np.random.default_rng(seed)
    x, y = values(n, rng, 1024), values(n, rng, 1024)
    xs = torch.full((FRONT + n + 400,), float("nan"))
    ys = xs.clone()
    obuf = torch.full((FRONT + n + 400,), SENT)
    xs[FRONT:FRONT + n], ys[FRONT:FRONT + n] = torch.as_tensor(x), torch.as_tensor(y)
    xv, yv, ov = xs[FRONT:FRONT + n], ys[FRONT:FRONT + n], obuf[FRONT:FRONT + n]
    k[(cdiv(n, 128),)](xv, yv, ov, n, BLOCK_SIZE=128)
    return em.arrays_from_buffer(x + y, obuf.numpy(), shape=(n,), strides=(1,), offset=FRONT, sentinel=SENT,
                                 block=(128,), tolerance=(1e-4, 1e-6))


def run_softmax(k, R, C, seed=0):
    rng = np.random.default_rng(seed)
    x = values(R * C, rng, 1024).reshape(R, C)
    _, xv = placed(x, C + 5, float("nan"), torch.float32)
    obuf, ov = placed(np.full((R, C), SENT), C + 5, SENT, torch.float32)
    block = triton.next_power_of_2(C)
    k[(R,)](ov, xv, xv.stride(0), ov.stride(0), xv.stride(1), ov.stride(1), R, C, BLOCK_SIZE=block)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    return em.arrays_from_buffer(ref, obuf.numpy(), shape=(R, C), strides=ov.stride(), offset=FRONT, sentinel=SENT,
                                 block=(1, block), tolerance=(1e-4, 1e-6))


def region(m, cat):
    return m.cats == cat


def inside(m):
    out = np.zeros(m.cats.shape, dtype=bool)
    out[:m.rows, :m.cols] = True
    return out


# --------------------------------------------------------------------------- the masters: nothing marked


@pytest.mark.parametrize("exercise", ["matmul", "persistent", "vector_add", "softmax"])
def test_masters_map_is_all_right(tmp_path, exercise):
    k = kernel(tmp_path, exercise)
    m = {"matmul": lambda: run_matmul(k, 37, 45, 50)[0],
         "persistent": lambda: run_persistent(k, 70, 40, 45, 4, ownership=True)[0],
         "vector_add": lambda: run_vector_add(k, 300), "softmax": lambda: run_softmax(k, 6, 20)}[exercise]()
    assert not m.failed()
    assert (m.cats[inside(m)] == OK).all() and (m.cats[~inside(m)] == OUTSIDE).all()


# --------------------------------------------------------------------------- the classic mistakes


def test_no_k_mask_marks_every_element_wrong(tmp_path):
    # the K mask dropped (rows masked instead): the last K block reads the NaN margin into every sum
    src = edited("matmul", ("mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0", "mask=offs_am[:, None] < M"),
                 ("mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0", "mask=offs_bn[None, :] < N"))
    m, _ = run_matmul(kernel(tmp_path, "matmul", src), 20, 24, 40)
    assert (region(m, WRONG) == inside(m)).all()
    # K a multiple of BLOCK_K: the same kernel is right, nothing marked
    m, _ = run_matmul(kernel(tmp_path, "matmul", src), 20, 24, 48)
    assert not m.failed()


def test_no_store_mask_marks_the_overhang_of_the_edge_tiles(tmp_path):
    src = edited("matmul", ("tl.store(c_ptrs, c, mask=c_mask)", "tl.store(c_ptrs, c)"))
    M, N = 20, 40
    m, _ = run_matmul(kernel(tmp_path, "matmul", src), M, N, 32, out_stride=N + 16)
    overhang = np.zeros((cdiv(M, 16) * 16, cdiv(N, 16) * 16), dtype=bool)
    overhang[M:, :] = overhang[:, N:] = True
    assert m.cats.shape == overhang.shape
    assert (region(m, MARGIN) == overhang).all()
    assert (region(m, OK) == ~overhang).all() and m.elsewhere == 0


def test_store_mask_missing_in_vector_add_marks_the_last_block_strip(tmp_path):
    k = kernel(tmp_path, "vector_add", edited("vector_add", ("x + y, mask=mask)", "x + y)")))
    m = run_vector_add(k, 300)
    assert m.kind == "strip" and m.cats.shape == (1, 384)
    expect = np.zeros((1, 384), dtype=bool)
    expect[0, 300:] = True
    assert (region(m, MARGIN) == expect).all() and (region(m, OK) == ~expect).all()


def test_other_not_zero_marks_every_element_and_only_with_a_k_tail(tmp_path):
    src = edited("matmul", ("other=0.0", "other=1.0"))
    m, _ = run_matmul(kernel(tmp_path, "matmul", src), 29, 40, 50)
    assert (region(m, WRONG) == inside(m)).all()
    m, _ = run_matmul(kernel(tmp_path, "matmul", src), 29, 40, 64)
    assert not m.failed()


def test_softmax_rows_other_zero_and_a_skipped_last_row(tmp_path):
    # other=0.0: every row of a width that is not a power of two sums one exp(0 - max) too many
    k = kernel(tmp_path, "softmax", edited("softmax", ('other=-float("inf")', "other=0.0")))
    m = run_softmax(k, 6, 20)
    assert m.kind == "rows" and m.block == (1, 32)
    assert (region(m, WRONG) == inside(m)).all()
    # the row guard off by one: exactly the last row is never written
    k = kernel(tmp_path, "softmax", edited("softmax", ("    row_idx = tl.program_id(0)\n",
                                                       "    row_idx = tl.program_id(0)\n    if row_idx < n_rows - 1:\n"),
                                           *[(f"\n    {line}", f"\n        {line}") for line in (
                                               "row_start_ptr", "col_offsets", "mask", "row =", "row_minus_max",
                                               "numerator", "denominator", "softmax_output", "output_row_start_ptr",
                                               "tl.store")]))
    m = run_softmax(k, 6, 20)
    last = np.zeros(m.cats.shape, dtype=bool)
    last[5, :20] = True
    assert (region(m, UNWRITTEN) == last).all() and (region(m, OK) == inside(m) & ~last).all()


def test_swapped_pid_m_pid_n_marks_the_tiles_no_program_reaches(tmp_path):
    src = edited("matmul", ("pid_m = pid // num_pid_n\n    pid_n = pid % num_pid_n",
                            "pid_m = pid % num_pid_n\n    pid_n = pid // num_pid_n"))
    M, N = 40, 24  # 3 x 2 tiles: the swapped formula visits tile rows 0-1 only
    m, _ = run_matmul(kernel(tmp_path, "matmul", src), M, N, 32)
    ntm, ntn = cdiv(M, 16), cdiv(N, 16)
    reached = {(pid % ntn, pid // ntn) for pid in range(ntm * ntn)}
    never = np.zeros(m.cats.shape, dtype=bool)
    for i in range(ntm):
        for j in range(ntn):
            if (i, j) not in reached:
                never[i * 16:(i + 1) * 16, j * 16:(j + 1) * 16] = True
    never &= inside(m)
    assert never.any()
    assert (region(m, UNWRITTEN) == never).all() and (region(m, OK) == inside(m) & ~never).all()


def test_accumulator_not_reset_marks_each_programs_later_tiles(tmp_path):
    src = edited("persistent", ("    for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS):\n",
                                "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
                                "    for tile_id in tl.range(pid, num_tiles, NUM_PROGRAMS):\n"),
                 ("        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n", ""))
    M, N, P = 70, 40, 4
    m, ref = run_persistent(kernel(tmp_path, "persistent", src), M, N, 45, P)
    # each tile of a program carries the sums of the program's earlier tiles at the same place in the tile
    ntn, T = cdiv(N, 32), 32
    carry = np.zeros((cdiv(M, T) * T, ntn * T))
    padded = np.zeros_like(carry)
    padded[:M, :N] = ref
    for first in range(P):
        acc = np.zeros((T, T))
        for t in range(first, cdiv(M, T) * ntn, P):
            i, j = (t // ntn) * T, (t % ntn) * T
            carry[i:i + T, j:j + T] = acc
            acc = acc + padded[i:i + T, j:j + T]
    want = inside(m) & (np.abs(carry) > 2.0 ** -8 * np.abs(padded) + 2.0 ** -10)
    assert want.any() and not want[:64].any()  # tile row 2 only: tiles 4 and 5 are programs 0 and 1's second
    assert (region(m, WRONG) == want).all()


def test_one_program_doing_every_tile_shows_in_the_owner_grid(tmp_path):
    src = edited("persistent", ("tl.range(pid, num_tiles, NUM_PROGRAMS)", "tl.range(pid * num_tiles, num_tiles)"))
    M, N, P = 70, 40, 4
    m, _ = run_persistent(kernel(tmp_path, "persistent", src), M, N, 45, P, ownership=True)
    assert (m.cats[inside(m)] == OK).all()  # the values are right: only the owner grid shows the mistake
    tiles = np.arange(cdiv(M, 32) * cdiv(N, 32)).reshape(cdiv(M, 32), cdiv(N, 32))
    assert (m.owner == 0).all()
    assert (m.owner_mismatch() == (tiles % P != 0)).all() and m.failed()


# --------------------------------------------------------------------------- the grader's hook


def _recorded(check, k, **kw):
    with record.recording() as entries:
        with pytest.raises(AssertionError):
            check(k, **kw)
    return entries


def test_visible_case_records_a_map_and_hidden_cases_none(tmp_path):
    k = kernel(tmp_path, "matmul", edited("matmul", ("tl.store(c_ptrs, c, mask=c_mask)", "tl.store(c_ptrs, c)")))
    entries = _recorded(CHECKS["matmul"], k)
    case = entries[-1]["kernel"]["cases"][-1]
    assert not case["ok"] and "map" in case
    m = em.ErrorMap.from_record(case["map"])
    assert m.shape == (37, 45) and m.block == (16, 16) and m.counts()[MARGIN] > 0
    assert "여백" in case["map"]["mistake"] and "#" not in case["map"]["mistake"][:2]
    outs = em.notebook_outputs(entries)
    assert len(outs) == 1 and outs[0]["output_type"] == "display_data"
    png = base64.b64decode(outs[0]["data"]["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) < 30_000
    # a failed hidden case: the diagnosis in the message, no map, no figure
    entries = _recorded(CHECKS["matmul"], k, hidden=True, seed=1)
    assert all("map" not in c for e in entries for c in e["kernel"]["cases"])
    assert em.notebook_outputs(entries) == []
    # the persistent ownership check draws the owner grid beside the map
    src = edited("persistent", ("tl.range(pid, num_tiles, NUM_PROGRAMS)", "tl.range(pid * num_tiles, num_tiles)"))
    entries = _recorded(CHECKS["persistent"], kernel(tmp_path, "persistent", src), num_programs=[3], ownership=True)
    rec = entries[-1]["kernel"]["cases"][-1]["map"]
    assert np.array(rec["owner"]).max() == 0 and np.array(rec["asked"]).max() == 2


def test_student_notebook_shows_the_map_under_the_message_or_the_text_map(tmp_path, monkeypatch, capsys):
    import IPython.display

    shown = []
    monkeypatch.setattr(em, "_in_notebook", lambda: True)
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    k = kernel(tmp_path, "vector_add", edited("vector_add", ("x + y, mask=mask)", "x + y)")))
    with pytest.raises(AssertionError) as info:
        CHECKS["vector_add"](k)  # not recording: the student's own notebook
    out = capsys.readouterr().out
    assert out.startswith(str(info.value)) and len(shown) == 1
    assert isinstance(shown[0], IPython.display.Image) and shown[0].data[:8] == b"\x89PNG\r\n\x1a\n"
    # matplotlib cannot draw: the same message, then the map in characters
    monkeypatch.setattr(em, "png_for", lambda *a: (_ for _ in ()).throw(RuntimeError("no backend")))
    with pytest.raises(AssertionError):
        CHECKS["vector_add"](k)
    out = capsys.readouterr().out
    assert len(shown) == 1 and "M" in out.splitlines()[-2] and "여백" in out.splitlines()[-1]
    # a hidden case: nothing printed, nothing shown
    with pytest.raises(AssertionError):
        CHECKS["vector_add"](k, hidden=True)
    assert capsys.readouterr().out == "" and len(shown) == 1


def test_record_round_trip_and_bad_records():
    rng = np.random.default_rng(3)
    exp = rng.normal(size=(9, 13))
    got = exp.copy()
    got[2:4, 5:] += 1
    written = np.ones_like(exp, dtype=bool)
    written[8] = False
    m = em.arrays_for(exp, got, written, block=(4, 4), margin=[(9, 0), (11, 15), (40, 40)])
    back = em.ErrorMap.from_record(m.to_record("❌ x: 값이 다릅니다"))
    assert (back.cats == m.cats).all() and back.elsewhere == 1 and back.counts() == m.counts()
    assert m.counts() == {OK: 9 * 13 - 16 - 13, WRONG: 16, UNWRITTEN: 13, MARGIN: 3}
    for bad in ({}, {"kind": "tiles"}, dict(m.to_record(), runs=[[0, 5]]), dict(m.to_record(), kind="pie"),
                dict(m.to_record(), block=[0, 4]), "x"):
        with pytest.raises(ValueError):
            em.ErrorMap.from_record(bad)
    with pytest.raises(ValueError):
        em.arrays_for(exp, got[:3], block=(4, 4))
    with pytest.raises(ValueError):
        em.arrays_for(exp, got, block=(4, 4), margin=[(1, 1)])  # inside the tensor is not a margin
    with pytest.raises(TypeError):
        em.figure_for("not a map")


def test_mistake_key_drops_numbers_and_shapes():
    a = ("❌ matmul (경우 2/3: a[37, 50] 연속, c[37, 45] 연속): 값이 다릅니다 — 처음 틀린 원소 c[3, 4]: 1.5 (기대 2), "
         "틀린 원소 12/1665개, 최대 오차 0.5. 일부 행/열만 틀렸습니다: 가장자리 타일")
    b = a.replace("c[3, 4]", "c[9, 1]").replace("12/1665", "40/1665").replace("37", "29")
    assert em.mistake(a) == em.mistake(b) == "값이 다릅니다. 일부 행/열만 틀렸습니다: 가장자리 타일"


# --------------------------------------------------------------------------- the picture


def _maps(tmp_path):
    no_store = edited("matmul", ("tl.store(c_ptrs, c, mask=c_mask)", "tl.store(c_ptrs, c)"))
    one = edited("persistent", ("tl.range(pid, num_tiles, NUM_PROGRAMS)", "tl.range(pid * num_tiles, num_tiles)"))
    return [run_matmul(kernel(tmp_path, "matmul", no_store), 37, 45, 50)[0],
            run_persistent(kernel(tmp_path, "persistent", one), 130, 70, 50, 3, ownership=True)[0],
            run_vector_add(kernel(tmp_path, "vector_add", edited("vector_add", ("x + y, mask=mask)", "x + y)"))), 1000),
            run_softmax(kernel(tmp_path, "softmax", edited("softmax", ('other=-float("inf")', "other=0.0"))), 17, 33)]


def _rgb(hex_colour):
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def test_figures_are_small_korean_and_colour_blind_safe(tmp_path):
    import warnings

    from PIL import Image

    from gemm_lab.viz.fonts import korean_font

    msg = "❌ 마스크가 빠진 것 같습니다: 출력 바깥 여백(margin)에 값이 써졌습니다. tl.store의 mask를 확인하세요."
    maps = _maps(tmp_path)
    assert [m.kind for m in maps] == ["tiles", "tiles", "strip", "rows"] and maps[1].owner is not None
    for m in maps:
        fig = em.figure_for(m, msg)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a missing glyph (Hangul drawn as boxes) is a warning: fail on it
            png = em.png_of(fig)
        assert len(png) < 30_000, (m.kind, len(png))
        img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
        height = img.shape[0]
        ax = fig.axes[0]
        # pixel level: the centre of every element drawn at least 4 px wide shows its category's colour
        (x0, y0), (x1, y1) = ax.transData.transform([(0, 0), (1, 1)])
        checked = 0
        if abs(x1 - x0) >= 4 and abs(y1 - y0) >= 4:
            for (i, j), cat in np.ndenumerate(m.cats):
                x, y = ax.transData.transform((j + 0.5, i + 0.5))
                px = img[int(height - y), int(x)]
                near_line = any(v % b in (0, b - 1) for v, b in ((i, m.block[0]), (j, m.block[1]))) or \
                    i in (m.rows - 1, m.rows) or j in (m.cols - 1, m.cols)
                if not near_line:
                    assert tuple(px) == _rgb(em.COLORS[cat]), (m.kind, i, j, cat, px)
                    checked += 1
        elif m.kind != "tiles" or m.owner is not None:
            for cat in (WRONG, UNWRITTEN, MARGIN):  # small elements: the category's colour fills its share
                share = (img.reshape(-1, 3) == _rgb(em.COLORS[cat])).all(axis=1).sum()
                assert (share > 150) == bool((m.cats == cat).any()), (m.kind, cat, share)
        assert checked or m is not maps[0]
        labels = [ax.xaxis.label.get_text()] + [t.get_text() for a in fig.axes if a.get_legend()
                                                for t in a.get_legend().get_texts()]
        assert any("열" in t or "원소" in t for t in labels)
        if korean_font():
            assert fig.texts[0].get_fontname() == korean_font()
    # the owner panel: the tiles of the wrong program in Okabe-Ito orange
    owner_img = np.asarray(Image.open(io.BytesIO(em.png_for(maps[1], msg))).convert("RGB")).reshape(-1, 3)
    assert (owner_img == _rgb(em.OWNER_BAD)).all(axis=1).sum() > 500
    # the text fallback says the same, one mark per block
    text = em.text_for(maps[0], msg)
    assert "M" in text and "여백" in text


def test_feedback_sanitizer_keeps_the_embedded_png(tmp_path):
    from autograder.grade.safe_feedback import clean_html, sanitize_notebook

    m = _maps(tmp_path)[0]
    b64 = base64.b64encode(em.png_for(m, "x")).decode()
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": "", "outputs": em.notebook_outputs(
        [{"message": "x", "kernel": {"cases": [{"map": m.to_record("x")}]}}])}], "metadata": {}}
    sanitize_notebook(nb)
    assert nb["cells"][0]["outputs"][0]["data"]["image/png"] == b64
    page = clean_html(f'<img src="data:image/png;base64,{b64}" alt="오류 지도">')
    assert page.startswith(f'<img src="data:image/png;base64,{b64}"')


# --------------------------------------------------------------------------- the class view (make report)


def _planted(shape=(20, 24), block=(16, 16), wrong_cols=slice(None), margin=()):
    exp = np.arange(shape[0] * shape[1], dtype=float).reshape(shape)
    got = exp.copy()
    got[:, wrong_cols] += 1
    return em.arrays_for(exp, got, block=block, margin=margin, tolerance=(0, 0))


def test_class_groups_overlay_students_of_one_case_and_mistake():
    from autograder.reporting import class_report_maps as crm

    left, right = _planted(wrong_cols=slice(0, 8)), _planted(wrong_cols=slice(8, 16))
    msg = "❌ matmul (경우 2/3: c[20, 24] 연속): 값이 다릅니다 — 처음 틀린 원소 c[0, 0]: 1 (기대 0), 틀린 원소 9/480개, " \
          "최대 오차 1. 일부 행/열만 틀렸습니다"
    margin = _planted(wrong_cols=slice(0, 0), margin=[(20, 0), (21, 3)]).to_record("❌ m: 마스크가 빠진 것 같습니다")
    maps = [("s1", "c[20, 24]", left.to_record(msg)), ("s2", "c[20, 24]", right.to_record(msg.replace("9/", "7/"))),
            ("s3", "c[20, 24]", margin), ("s4", "c[20, 24]", {"kind": "forged"})]
    groups = crm.groups(maps)
    assert [len(g.students) for g in groups] == [2, 1] and groups[0].mistake == "값이 다릅니다. 일부 행/열만 틀렸습니다"
    share = groups[0].shares()[WRONG]
    assert (share[:20, :8] == 0.5).all() and (share[:20, 8:16] == 0.5).all() and (share[:, 16:] == 0).all()
    assert (share[20:] == 0).all()  # the overhang of the edge tiles: nobody wrong there
    assert [len(g.students) for g in crm.groups(maps, min_students=2)] == [2]
    png = crm.figure(groups, "01_pointer_blocks · matmul")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) < 60_000


def test_make_report_shows_the_class_maps(tmp_path):
    import json

    from autograder.reporting.class_report import analyze, build_report
    from autograder.samplekit.synthetic_class import make_class

    course = make_class(tmp_path / "class", 12)
    gid = "matmul_kernel_hidden_shapes"
    rec = _planted(margin=[(20, 0), (25, 30)]).to_record("❌ matmul (경우 2/3: c): 마스크가 빠진 것 같습니다: 여백")
    other = _planted(wrong_cols=slice(0, 4)).to_record("❌ matmul (경우 2/3: c): 포인터 계산을 확인하세요")
    planted = {}
    for path in sorted(course.autograded.glob("*/week07/01_pointer_blocks.ipynb")):
        if len(planted) == 6:
            break
        k = len(planted)
        try:
            nb = json.loads(path.read_text())
        except ValueError:  # the synthetic class holds an unreadable hand-in on purpose
            continue
        for cell in nb["cells"]:
            verdict = cell.get("metadata", {}).get("gemm_lab", {}).get("verdict")
            if verdict and verdict.get("grade_id") == gid:
                verdict["kernel"]["cases"].append({"kind": "packed", "where": "c[20, 24] 연속", "ok": False,
                                                   "reason": "여백", "map": rec if k < 4 else other})
                planted[path.parts[-3]] = k < 4
        path.write_text(json.dumps(nb))
    assert len(planted) == 6
    cell = next(c for c in analyze(course, "week07").cells if c.info.grade_id == gid)
    assert sorted(s for s, _, _ in cell.kernel.maps) == sorted(planted)
    files = build_report(course, "week07")
    for page, shown in ((files.instructor, True), (files.class_copy, True)):
        html = page.read_text(encoding="utf-8")
        assert (f'id="fig-maps-{gid}"' in html) == shown and 'src="data:image/png;base64,' in html
    pngs = {p.name for p in files.figures}
    assert f"week07_maps-{gid}.png" in pngs and f"week07_class_maps-{gid}.png" in pngs
    from autograder.reporting import class_report_maps as crm

    assert [len(g.students) for g in crm.groups(cell.kernel.maps)] == [4, 2]
    assert [len(g.students) for g in crm.groups(cell.kernel.maps, crm.MIN_SHARED)] == [4]  # 2 < MIN_SHARED


def test_report_reads_the_kernel_records_the_grader_keeps_in_check_entries(tmp_path):
    from autograder.reporting.class_report import _clean_verdict

    k = kernel(tmp_path, "softmax", edited("softmax", ('other=-float("inf")', "other=0.0")))
    entries = _recorded(CHECKS["softmax"], k)
    verdict, why = _clean_verdict({"grade_id": "g", "status": "fail", "message": entries[-1]["message"],
                                   "checks": entries}, "g")
    assert why is None and verdict["kernel"] is not None and verdict["kernel"]["compile_ok"]
    failed = [c for c in verdict["kernel"]["cases"] if not c["ok"]]
    assert len(failed) == 1 and em.ErrorMap.from_record(failed[0]["map"]).kind == "rows"


def test_hidden_case_message_names_no_shape_or_value(tmp_path):
    import re

    # strides of A and B ignored: right on every public (row-major) case, wrong on the hidden transposed one
    k = kernel(tmp_path, "matmul", edited("matmul", ("offs_k[None, :] * stride_ak", "offs_k[None, :]"),
                                          ("offs_bn[None, :] * stride_bn", "offs_bn[None, :]")))
    CHECKS["matmul"](k)
    entries = _recorded(CHECKS["matmul"], k, hidden=True)
    msg, case = entries[-1]["message"], entries[-1]["kernel"]["cases"][-1]
    assert "전치(transposed) 뷰" in msg and ("값이 다릅니다" in msg or "NaN" in msg), msg
    assert not re.search(r"\[\d|기대|처음 틀린|최대 오차|\d+/\d+개", msg), msg
    assert re.search(r"a\[\d+, \d+\] 전치", case["where"]) and "map" not in case  # the instructor's record keeps it
    assert em.notebook_outputs(entries) == []


def test_hidden_text_keeps_the_diagnosis_and_drops_facts():
    where, text = em.hidden_text(
        "a[1, 70] 행 사이 여백, c[1, 33] 행 사이 여백, num_programs=5",
        "값이 다릅니다 — 처음 틀린 원소 c[0, 1]: 15 (기대 1), 틀린 원소 33/33개, 최대 오차 14. K축 마스크의 other 값이 "
        "0.0이 아닌 것 같습니다: 모든 원소가 약 14만큼 큽니다. tl.load(..., mask=..., other=0.0)을 쓰세요.")
    assert where == "a 행 사이 여백, c 행 사이 여백, num_programs=5"
    assert text == ("값이 다릅니다. K축 마스크의 other 값이 0.0이 아닌 것 같습니다: 모든 원소가 일정하게 큽니다. "
                    "tl.load(..., mask=..., other=0.0)을 쓰세요.")
    for reason, kept in (
        ("출력 232개가 쓰이지 않았습니다 (처음: c[0, 32]). 그리드 크기를 확인하세요.", "출력 일부가 쓰이지 않았습니다. 그리드"),
        ("마스크가 빠진 것 같습니다: 출력 바깥 여백(margin)에 값이 써졌습니다 (마지막 원소 뒤 1칸). tl.store의 mask",
         "여백(margin)에 값이 써졌습니다. tl.store의 mask"),
        ("tile 3을(를) program 0이(가) 썼습니다 (기대: program 3, tile 15개, program 5개): program pid는",
         "어떤 tile을(를) program 0이(가) 썼습니다: program pid는"),
        ("결과에 NaN/inf가 있습니다 (처음: c[0, 3]): 범위 밖 입력(NaN으로 채운 여백)을", "NaN/inf가 있습니다: 범위 밖 입력(NaN"),
    ):
        assert kept in em.hidden_text("c[1, 1]", reason)[1], reason
