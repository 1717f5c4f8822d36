"""The class view of the error maps (``gemm_lab.viz.error_map``): for each kernel cell, its most frequent
mistakes side by side, each the overlay of the students who failed the same visible case with it.

The grader keeps a map only for a failed case the notebook names (never a hidden one), as positions and
categories (no value). Maps are grouped by cell, case and mistake (the diagnosis without its numbers); a
group's picture colours each element by the category most of its students got there, paler where fewer
of them did, and outlines the tiles a program computed that the exercise gives to another program. The
class copy (``anonymous=True``) shows only groups of at least ``MIN_SHARED`` students.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import numpy as np

from autograder.reporting.class_report_model import MIN_SHARED, ClassReport

TOP = 3  # groups drawn per cell
DPI = 100


@dataclass
class MapGroup:
    where: str
    mistake: str
    students: list = field(default_factory=list)
    maps: list = field(default_factory=list)  # gemm_lab.viz.error_map.ErrorMap, one per student

    def shares(self) -> np.ndarray:
        """[category, row, col]: the share of the group's students with that category at each element."""
        from gemm_lab.viz.error_map import OUTSIDE

        stack = np.stack([m.cats for m in self.maps])
        return np.stack([(stack == c).mean(axis=0) for c in range(OUTSIDE + 1)])

    def owner_shares(self) -> np.ndarray | None:
        grids = [m.owner_mismatch() for m in self.maps if m.owner is not None]
        return np.mean(grids, axis=0) if grids else None


def groups(cell_maps, min_students: int = 1) -> list[MapGroup]:
    """The most frequent (case, mistake) groups of one cell's ``[(student, where, map record)]``, at most
    :data:`TOP`, each of at least ``min_students`` students (records that are not maps are skipped)."""
    from gemm_lab.viz.error_map import ErrorMap

    found: dict = {}
    for student, where, rec in cell_maps:
        try:
            m = ErrorMap.from_record(rec)
        except ValueError:
            continue
        key = (where, str(rec.get("mistake", "")), m.kind, m.cats.shape, m.block)
        g = found.setdefault(key, MapGroup(where, key[1]))
        if student not in g.students:
            g.students.append(student)
            g.maps.append(m)
    ordered = sorted(found.values(), key=lambda g: (-len(g.students), g.where, g.mistake))
    return [g for g in ordered if len(g.students) >= min_students][:TOP]


def _overlay(ax, g: MapGroup) -> None:
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Rectangle

    from gemm_lab.viz.error_map import COLORS, MARGIN, OK, OUTSIDE, OWNER_BAD, UNWRITTEN, WRONG

    m0 = g.maps[0]
    shares = g.shares()
    bad = shares[[WRONG, UNWRITTEN, MARGIN]]
    top = np.array([WRONG, UNWRITTEN, MARGIN])[bad.argmax(axis=0)]
    strength = bad.max(axis=0)
    rgb = np.empty(m0.cats.shape + (3,))
    for c in (WRONG, UNWRITTEN, MARGIN):
        rgb[top == c] = to_rgb(COLORS[c])
    base = np.where((shares[OUTSIDE] > 0.5)[..., None], to_rgb(COLORS[OUTSIDE]), to_rgb(COLORS[OK]))
    rgb = base + (rgb - base) * strength[..., None]
    rows, cols = m0.cats.shape
    ax.imshow(rgb, interpolation="nearest", aspect="equal" if m0.kind == "tiles" else "auto",
              extent=(0, cols, rows, 0))
    brow, bcol = (1, m0.block[0]) if m0.kind == "strip" else m0.block
    if m0.kind != "rows":
        for x in range(bcol, cols, bcol):
            ax.axvline(x, color="#333333", lw=0.5)
    if m0.kind == "tiles":
        for y in range(brow, rows, brow):
            ax.axhline(y, color="#333333", lw=0.5)
    ax.add_patch(Rectangle((0, 0), m0.cols, m0.rows, fill=False, edgecolor="#000000", lw=1.2))
    owners = g.owner_shares()
    if owners is not None:
        for (i, j), s in np.ndenumerate(owners):
            if s > 0:
                ax.add_patch(Rectangle((j * bcol + 1, i * brow + 1), bcol - 2, brow - 2, fill=False,
                                       edgecolor=OWNER_BAD, lw=2.5, alpha=float(s)))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_xticks([])
    ax.set_yticks([] if m0.kind == "strip" else [0, m0.rows])
    ax.tick_params(labelsize=6, length=2)


def figure(cell_groups: list[MapGroup], title: str = "") -> bytes:
    """The cell's groups side by side as PNG (each: the overlay, its student count and mistake)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    from gemm_lab.viz import error_map as em

    n = len(cell_groups)
    fig = Figure(figsize=(2.6 * n + 1.4, 3.2), dpi=DPI)
    width = 0.8 / n
    for k, g in enumerate(cell_groups):
        ax = fig.add_axes((0.03 + k * width + 0.02, 0.14, width - 0.05, 0.52))
        _overlay(ax, g)
        text = "\n".join(textwrap.wrap(g.mistake or "(진단 없음)", 30)[:3])
        ax.set_title(f"{len(g.students)}명 · {g.where[:40]}\n{text}", fontsize=6.5, loc="left", parse_math=False)
    handles = [Patch(facecolor=em.COLORS[c], edgecolor="#555555", lw=0.5, label=em.LABELS[c])
               for c in (em.WRONG, em.UNWRITTEN, em.MARGIN)]
    if any(g.owner_shares() is not None for g in cell_groups):
        handles.append(Patch(facecolor="none", edgecolor=em.OWNER_BAD, lw=2, label="다른 program이 계산한 tile"))
    fig.legend(handles=handles, loc="lower right", fontsize=6.5, frameon=False, bbox_to_anchor=(0.995, 0.1))
    fig.text(0.01, 0.97, title + " — 진할수록 그 칸을 그렇게 틀린 학생이 많습니다", fontsize=8, va="top",
             parse_math=False)
    return em.png_of(fig)


def figures(report: ClassReport, anonymous: bool) -> dict[str, bytes]:
    """{``maps-GRADE_ID``: PNG} for each kernel cell with maps (class copy: groups of MIN_SHARED or more);
    the caller (class_report_plots.figures) has chosen the Korean font."""
    out = {}
    for c in report.cells:
        chosen = groups(c.kernel.maps if c.kernel else [], MIN_SHARED if anonymous else 1)
        if chosen:
            out[f"maps-{c.info.grade_id}"] = figure(chosen, f"{c.info.notebook} · {c.info.grade_id}")
    return out

