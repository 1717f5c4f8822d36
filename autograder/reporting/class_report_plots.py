"""The class report's figures (matplotlib, no pyplot: nothing opens a window), as PNG bytes.

Labels are Korean (drawn with the Korean font :mod:`gemm_lab.viz.fonts` picks), code names English.
For the class copy (``anonymous=True``) a histogram's bins are merged with their neighbours until each
holds at least :data:`~autograder.reporting.class_report.MIN_SHARED` students, so no bar stands for one or two.
"""

from __future__ import annotations

import io
import math

import numpy as np

from autograder.reporting.class_report_model import KIND_LABELS, MIN_SHARED, MIN_STATS, ClassReport

DPI = 100
BLUE, RED = "#4C72B0", "#C44E52"


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def bins(values: list[float], top: float, k: int = 1) -> list[tuple[float, float, int]]:
    """Histogram bars (left, right, count) over [0, top]; with ``k`` > 1 neighbouring bins are merged until
    every bar holds at least ``k`` values (empty stretches stay empty bars); [] when all hold fewer than k."""
    step = max(1.0, top / 25)
    n = int(math.floor(top / step + 0.5)) + 1
    at = np.clip(np.floor(np.asarray(values, dtype=float) / step + 0.5).astype(int), 0, n - 1)
    raw = [((i - 0.5) * step, (i + 0.5) * step, c) for i, c in enumerate(np.bincount(at, minlength=n).tolist())]
    if k <= 1:
        return raw
    out, left, right, acc = [], None, None, 0
    for lo, hi, c in raw:
        if acc == 0 and c == 0:
            out.append((lo, hi, 0))
            continue
        left = lo if left is None else left
        if c:
            right = hi
        acc += c
        if acc >= k:
            out.append((left, hi, acc))
            left, right, acc = None, None, 0
    if acc:  # fewer than k at the top end: join the last bar that has students
        j = max((i for i, b in enumerate(out) if b[2]), default=None)
        if j is None:
            return []
        out = out[:j] + [(out[j][0], right, out[j][2] + acc)]
    return out


def hist_figure(panels: list[tuple[list, float, str]], anonymous: bool, title: str | None) -> bytes:
    """Score histograms, three to a row: ``panels`` [(scores, maximum, label)]; ``title`` over a grid of them
    (None: one panel, the totals, on a wider figure)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    if title is None:
        fig = Figure(figsize=(7.5, 3.4))
        fig.subplots_adjust(left=0.09, right=0.98, bottom=0.15, top=0.9)
    else:  # margins set by hand: constrained layout costs a draw
        fig = Figure(figsize=(4.2 * cols, 2.9 * rows))
        fig.subplots_adjust(left=0.42 / cols, right=0.98, bottom=0.5 / (2.9 * rows), top=1 - 0.85 / (2.9 * rows),
                            wspace=0.35, hspace=0.95)
        fig.suptitle(title, fontsize=11)
    for i, (values, top, label) in enumerate(panels):
        ax = fig.add_subplot(rows, cols, i + 1)
        bars = bins(values, top, MIN_SHARED if anonymous else 1)
        if not bars:
            ax.text(0.5, 0.5, f"{MIN_SHARED}명 미만: 싣지 않음", ha="center", va="center", transform=ax.transAxes)
        for lo, hi, c in bars:
            if c:
                ax.bar(lo, c, width=hi - lo, align="edge", color=BLUE, edgecolor="white")
                ax.text((lo + hi) / 2, c, str(c), ha="center", va="bottom", fontsize=8)
        ax.set_xlim(-0.5 * max(1.0, top / 25), top + 0.5 * max(1.0, top / 25))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("점수")
        ax.set_ylabel("학생 수")
    return _png(fig)


def cells_figure(report: ClassReport, anonymous: bool = False) -> bytes | None:
    """Full-marks rate per cell over its graded answers (pending ones are not counted); the class copy shows
    only cells graded for MIN_STATS or more students, without the counts."""
    from matplotlib.figure import Figure

    cells = [c for c in report.cells if c.graded >= (MIN_STATS if anonymous else 1)]
    if not cells:
        return None
    labels = [f"{c.info.notebook[:2]} · {c.info.grade_id}"[:52] for c in cells]
    height = 0.9 + 0.32 * len(cells)
    fig = Figure(figsize=(8.5, height))
    fig.subplots_adjust(left=min(0.55, (0.25 + 0.062 * max(map(len, labels))) / 8.5), right=0.97,
                        bottom=0.5 / height, top=1 - 0.35 / height)
    ax = fig.add_subplot()
    rates = [100 * c.pass_rate for c in cells]
    y = list(range(len(cells)))[::-1]  # hardest on top
    ax.barh(y, rates, color=[RED if r < 50 else BLUE for r in rates])
    for yi, r, c in zip(y, rates, cells, strict=True):
        label = f"{r:.0f}%" if anonymous else f"{r:.0f}% ({c.full}/{c.graded})"
        if c.pending and not anonymous:
            label += f" · 채점 대기 {len(c.pending)}"
        ax.text(min(r, 100) + 1, yi, label, va="center", fontsize=8)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlim(0, 118)
    ax.set_xlabel("만점 받은 학생 비율 (%)")
    ax.set_title("문항별 만점 비율 (어려운 문항이 위)", fontsize=11)
    return _png(fig)


def kernels_figure(report: ClassReport, anonymous: bool = False) -> bytes | None:
    """Students per failure kind of each kernel cell; the class copy leaves out kinds of fewer than MIN_SHARED."""
    from matplotlib.figure import Figure

    least = MIN_SHARED if anonymous else 1
    cells = [c for c in report.cells if c.kernel and c.kernel.students]
    if not cells:
        return None
    heights = [max(1, len(c.kernel.failed)) for c in cells]
    height = 0.9 * len(cells) + 0.3 * sum(heights)
    fig = Figure(figsize=(8.5, height))
    grid = fig.add_gridspec(len(cells), 1, height_ratios=heights, left=0.3, right=0.97, bottom=0.45 / height,
                            top=1 - 0.3 / height, hspace=0.9 * len(cells) / sum(heights))
    for i, c in enumerate(cells):
        ax = fig.add_subplot(grid[i])
        every = c.kernel.students_by_kind()
        kinds = [(k, ss) for k, ss in every if len(ss) >= least]
        if not kinds:
            ax.text(0.5, 0.5, "모든 숨은 테스트 통과" if not every else f"실패 유형마다 {MIN_SHARED}명 미만",
                    ha="center", va="center", transform=ax.transAxes)
            ax.set_yticks([])
        else:
            y = list(range(len(kinds)))[::-1]
            counts = [len(ss) for _, ss in kinds]
            ax.barh(y, counts, color=RED)
            for yi, n in zip(y, counts, strict=True):
                ax.text(n, yi, f" {n}명", va="center", fontsize=8)
            ax.set_yticks(y, [KIND_LABELS.get(k, k) for k, _ in kinds], fontsize=8)
            ax.set_xlim(0, max(counts) * 1.2 + 1)
        n = c.kernel.students
        shown = f"{MIN_SHARED}명 미만" if anonymous and n < MIN_SHARED else f"{n}명"
        ax.set_title(f"{c.info.notebook} · {c.info.grade_id} (커널 {shown})", fontsize=10)
        ax.set_xlabel("실패한 학생 수")
    return _png(fig)


def figures(report: ClassReport, anonymous: bool, cache: dict) -> dict[str, bytes]:
    """{name: PNG}: totals, notebooks, and cells, kernels when there is data. ``cache`` keeps what both
    copies can share between the two calls (a histogram whose every bar already holds MIN_SHARED or more)."""
    from gemm_lab.viz.fonts import use_korean_font

    use_korean_font(install=False)
    hists = {"totals": ([(list(report.totals.values()), report.max_total,
                          f"합계 점수 분포 ({len(report.totals)}명, 만점 {report.max_total:g}점)")], None),
             "notebooks": ([(list(report.notebook_scores[nb].values()), report.notebook_max[nb],
                             f"{nb}\n제출 {len(report.notebook_scores[nb])}명, 만점 {report.notebook_max[nb]:g}점")
                            for nb in report.notebooks], "노트북별 점수 분포")}
    out = {}
    for name, (panels, title) in hists.items():
        key = (name, anonymous and any(bins(v, top, MIN_SHARED) != bins(v, top) for v, top, _ in panels))
        if key not in cache:
            cache[key] = hist_figure(panels, key[1], title)
        out[name] = cache[key]
    for name, make in (("cells", cells_figure), ("kernels", kernels_figure)):  # each copy draws its own
        png = make(report, anonymous)
        if png is not None:
            out[name] = png
    from autograder.reporting.class_report_maps import figures as map_figures

    out.update(map_figures(report, anonymous))
    return out
