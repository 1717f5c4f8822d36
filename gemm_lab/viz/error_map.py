"""The error map: where a student's kernel went wrong, on the output grid with the kernel's own tiles.

Two halves, so tests can check the picture on the array it is drawn from:

* **computation** (numpy only): :func:`arrays_for` (expected, got, written mask, margin writes) or
  :func:`arrays_from_buffer` (the flat output buffer and the view's geometry) give an :class:`ErrorMap`:
  one category per element of the output grid, extended to the last tile (``ceil(M/BLOCK_M)·BLOCK_M`` rows,
  likewise columns), so writes an edge tile made past the tensor have a place to be drawn; and, for the
  persistent loop, the program that computed each tile against the program the exercise asks for.
* **drawing** (matplotlib, no pyplot): :func:`figure_for`, :func:`png_for`, :func:`text_for` (the fallback
  when matplotlib cannot draw), :func:`show` (under the ❌ in a notebook) and :func:`notebook_outputs`
  (the grader's cell outputs).

Categories: :data:`OK`, :data:`WRONG` (value outside the tolerance, NaN or inf), :data:`UNWRITTEN` (the
sentinel still stands), :data:`MARGIN` (a write outside the tensor: the poisoned margin between or after
rows) and :data:`OUTSIDE` (the part of an edge tile past the tensor that nothing wrote: correct).
Colours are Okabe-Ito (safe for the common colour-vision deficiencies), labels Korean.

The map holds positions and categories only, never values: :meth:`ErrorMap.to_record` is what the grader
keeps in a verdict for the class report (:mod:`autograder.reporting.class_report_maps`).
"""

from __future__ import annotations

import base64
import io
import re
import textwrap
from dataclasses import dataclass

import numpy as np

__all__ = ["OK", "WRONG", "UNWRITTEN", "MARGIN", "OUTSIDE", "LABELS", "COLORS", "ErrorMap", "arrays_for",
           "arrays_from_buffer", "block_from", "figure_for", "png_of", "png_for", "text_for", "show", "notebook_outputs",
           "mistake", "hidden_text"]

OK, WRONG, UNWRITTEN, MARGIN, OUTSIDE = 0, 1, 2, 3, 4
LABELS = {OK: "맞음", WRONG: "틀린 값", UNWRITTEN: "쓰이지 않음", MARGIN: "여백(텐서 밖)에 씀", OUTSIDE: "텐서 밖"}
# Okabe-Ito: vermillion, blue, reddish purple on a light grey; white outside the tensor
COLORS = {OK: "#E4E4E4", WRONG: "#D55E00", UNWRITTEN: "#0072B2", MARGIN: "#CC79A7", OUTSIDE: "#FFFFFF"}
OWNER_OK, OWNER_BAD = "#E4E4E4", "#E69F00"  # Okabe-Ito orange: a tile computed by another program
TEXT_MARKS = {OK: ".", WRONG: "X", UNWRITTEN: "_", MARGIN: "M", OUTSIDE: " "}
KINDS = ("tiles", "rows", "strip")
DPI = 100
MAX_RECORD_CELLS = 1 << 18  # a verdict never carries a bigger map (the course's outputs are far smaller)


@dataclass(frozen=True, eq=False)
class ErrorMap:
    """Categories of one output (``cats``: 2-D, the tile extent; a 1-D output is one row) and, for the
    persistent loop, ``owner``/``asked``: the program per tile observed and asked (-1: nobody)."""

    kind: str
    shape: tuple
    block: tuple
    cats: np.ndarray
    elsewhere: int = 0
    owner: np.ndarray | None = None
    asked: np.ndarray | None = None

    @property
    def rows(self) -> int:
        return 1 if len(self.shape) == 1 else self.shape[0]

    @property
    def cols(self) -> int:
        return self.shape[-1]

    def counts(self) -> dict[int, int]:
        """Elements per category (OUTSIDE left out); margin writes beyond the drawn grid count as MARGIN."""
        out = {c: int((self.cats == c).sum()) for c in (OK, WRONG, UNWRITTEN, MARGIN)}
        out[MARGIN] += self.elsewhere
        return out

    def owner_mismatch(self) -> np.ndarray | None:
        """Boolean tile grid: the observed program is not the asked one (None without ownership)."""
        if self.owner is None or self.asked is None:
            return None
        return self.owner != self.asked

    def failed(self) -> bool:
        """Anything to show: a category other than OK, or a tile computed by the wrong program."""
        c = self.counts()
        mism = self.owner_mismatch()
        return bool(c[WRONG] or c[UNWRITTEN] or c[MARGIN] or (mism is not None and mism.any()))

    def to_record(self, message: str = "") -> dict:
        """JSON-able form (run-length categories, no values), for a verdict and the class report."""
        flat = self.cats.ravel()
        if flat.size > MAX_RECORD_CELLS:
            raise ValueError(f"error map too large to record ({flat.size} cells)")
        edges = np.flatnonzero(np.diff(flat)) + 1
        starts = np.concatenate(([0], edges))
        lengths = np.diff(np.concatenate((starts, [flat.size])))
        rec = {"kind": self.kind, "shape": list(self.shape), "block": list(self.block),
               "grid": list(self.cats.shape),
               "runs": [[int(flat[s]), int(n)] for s, n in zip(starts, lengths, strict=True)],
               "elsewhere": int(self.elsewhere), "mistake": mistake(message)}
        if self.owner is not None:
            rec["owner"] = self.owner.astype(int).tolist()
            rec["asked"] = self.asked.astype(int).tolist()
        return rec

    @classmethod
    def from_record(cls, rec) -> ErrorMap:
        """The map of :meth:`to_record` (ValueError for anything that is not one)."""
        try:
            kind, shape, block, grid = rec["kind"], tuple(rec["shape"]), tuple(rec["block"]), tuple(rec["grid"])
            runs = rec["runs"]
            if kind not in KINDS or len(grid) != 2 or not all(type(v) is int and v >= 0 for v in shape + grid):
                raise ValueError("bad geometry")
            if not all(type(v) is int and v > 0 for v in block) or len(block) != len(shape):
                raise ValueError("bad block")
            if grid[0] * grid[1] > MAX_RECORD_CELLS:
                raise ValueError("too large")
            cats = np.repeat(np.array([int(c) for c, _ in runs], dtype=np.uint8),
                             np.array([int(n) for _, n in runs], dtype=np.int64))
            if cats.size != grid[0] * grid[1] or (cats.size and cats.max() > OUTSIDE):
                raise ValueError("runs do not fill the grid")
            owner = asked = None
            if "owner" in rec:
                owner = np.array(rec["owner"], dtype=np.int64)
                asked = np.array(rec["asked"], dtype=np.int64)
                if owner.shape != asked.shape or owner.ndim != 2:
                    raise ValueError("bad owner grid")
            return cls(kind, shape, block, cats.reshape(grid), int(rec.get("elsewhere", 0)), owner, asked)
        except (KeyError, TypeError, IndexError, OverflowError) as exc:
            raise ValueError(f"not an error-map record ({type(exc).__name__})") from None


# --------------------------------------------------------------------------------------- computation


def _ints(name, value, n=None) -> tuple:
    try:
        out = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of ints, got {type(value).__name__}") from None
    if n is not None and len(out) != n:
        raise ValueError(f"{name} must have {n} entries, got {len(out)}")
    return out


def block_from(constexprs: dict, ndim: int) -> tuple:
    """The block of a launch's constexprs: ``BLOCK_SIZE`` (1-D, or one row per program for a 2-D output)
    or ``BLOCK_SIZE_M/N`` / ``BLOCK_M/N`` (tiles)."""
    if ndim == 1:
        return (int(constexprs["BLOCK_SIZE"]),)
    if "BLOCK_SIZE" in constexprs:
        return (1, int(constexprs["BLOCK_SIZE"]))
    return (int(constexprs.get("BLOCK_SIZE_M", constexprs.get("BLOCK_M"))),
            int(constexprs.get("BLOCK_SIZE_N", constexprs.get("BLOCK_N"))))


def arrays_for(expected, got, written=None, *, block, margin=(), tolerance=(0.0, 0.0), kind=None,
               owner=None, asked_owner=None) -> ErrorMap:
    """Categories of one output.

    ``expected``, ``got``: the reference and the kernel's values (same 1-D or 2-D shape); ``written``: True
    where the kernel wrote (None: everywhere); ``margin``: logical coordinates ``(i, j)`` (``(i,)`` for 1-D) of
    writes that landed outside the tensor, as the output's strides place them; ``block``: ``(BLOCK,)``,
    ``(1, BLOCK_SIZE)`` (one row per program) or ``(BLOCK_M, BLOCK_N)``; ``tolerance``: ``(rel, abs)`` as in
    ``|got - expected| <= rel·|expected| + abs``; ``owner``/``asked_owner``: program per tile (row-major tile
    order or a tile grid), observed and asked.
    """
    exp = np.asarray(expected, dtype=np.float64)
    val = np.asarray(got, dtype=np.float64)
    if exp.ndim not in (1, 2) or exp.shape != val.shape:
        raise ValueError(f"expected and got must have one 1-D or 2-D shape, got {exp.shape} and {val.shape}")
    wrote = np.ones(exp.shape, dtype=bool) if written is None else np.asarray(written, dtype=bool)
    if wrote.shape != exp.shape:
        raise ValueError(f"written must have shape {exp.shape}, got {wrote.shape}")
    block = _ints("block", block, exp.ndim)
    if min(block) <= 0:
        raise ValueError(f"block sizes must be positive, got {block}")
    rel, abs_tol = (float(t) for t in tolerance)
    if kind is None:
        kind = "strip" if exp.ndim == 1 else ("rows" if block[0] == 1 else "tiles")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isfinite(val) & (np.abs(val - exp) <= rel * np.abs(exp) + abs_tol)
    shape = exp.shape
    rows, cols = (1, shape[0]) if exp.ndim == 1 else shape
    brow, bcol = (1, block[0]) if exp.ndim == 1 else block
    ext = (max(rows, -(-rows // brow) * brow), max(cols, -(-cols // bcol) * bcol))
    cats = np.full(ext, OUTSIDE, dtype=np.uint8)
    inner = np.where(~wrote, UNWRITTEN, np.where(close, OK, WRONG)).astype(np.uint8)
    cats[:rows, :cols] = inner.reshape(rows, cols)
    elsewhere = 0
    for coord in margin:
        c = _ints("margin coordinate", coord, exp.ndim)
        i, j = (0, c[0]) if exp.ndim == 1 else c
        inside_tensor = 0 <= i < rows and 0 <= j < cols
        if inside_tensor:
            raise ValueError(f"margin coordinate {c} lies inside the tensor {shape}")
        if 0 <= i < ext[0] and 0 <= j < ext[1]:
            cats[i, j] = MARGIN
        else:
            elsewhere += 1
    own = ask = None
    if owner is not None or asked_owner is not None:
        if owner is None or asked_owner is None:
            raise ValueError("owner and asked_owner go together")
        tiles = (ext[0] // brow, ext[1] // bcol)
        own = np.asarray(owner, dtype=np.int64).reshape(tiles) if np.size(owner) == tiles[0] * tiles[1] else None
        ask = np.asarray(asked_owner, dtype=np.int64)
        if own is None or ask.size != own.size:
            raise ValueError(f"owner and asked_owner must hold one program per tile ({tiles[0]}x{tiles[1]})")
        ask = ask.reshape(tiles)
    return ErrorMap(kind, tuple(int(s) for s in shape), block, cats, elsewhere, own, ask)


def arrays_from_buffer(expected, buffer, *, shape, strides, offset, sentinel, block, tolerance=(0.0, 0.0),
                       kind=None, owner=None, asked_owner=None) -> ErrorMap:
    """:func:`arrays_for` from the flat output buffer the kernel wrote into: the view's elements are read
    at ``offset + Σ index·stride`` (``expected`` in that shape, or flat in row-major order); an element still equal to ``sentinel`` was never written; every other
    position that no longer holds ``sentinel`` is a margin write, placed at the logical index the view's
    strides give it (row-major or transposed views; an address between strides of a 1-D view, or
    before the first element, counts as a margin write outside the drawing)."""
    buf = np.asarray(buffer, dtype=np.float64).ravel()
    shape = _ints("shape", shape)
    strides = _ints("strides", strides, len(shape))
    if len(shape) not in (1, 2):
        raise ValueError(f"shape must be 1-D or 2-D, got {shape}")
    idx = np.indices(shape).reshape(len(shape), -1)
    pos = int(offset) + sum(idx[d] * strides[d] for d in range(len(shape)))
    if pos.size and (pos.min() < 0 or pos.max() >= buf.size):
        raise ValueError(f"the view {shape} with strides {strides} at {offset} does not fit a buffer of {buf.size}")
    got = buf[pos].reshape(shape)
    expected = np.asarray(expected, dtype=np.float64)
    if expected.size == got.size:  # a reference listed in row-major order
        expected = expected.reshape(shape)
    written = ~(got == sentinel)
    outside = np.ones(buf.size, dtype=bool)
    outside[pos] = False
    hits = np.flatnonzero(outside & ~(buf == sentinel)) - int(offset)
    margin = []
    if len(shape) == 1:
        s = strides[0]
        for h in hits.tolist():
            margin.append((h // s,) if h >= 0 and h % s == 0 else (-1,))
    else:
        major, minor = (0, 1) if strides[1] <= strides[0] else (1, 0)
        s = strides[major]
        for h in hits.tolist():
            if h < 0:
                margin.append((-1, -1))
                continue
            a, b = divmod(h, s)
            if strides[minor] != 1:
                b, rest = divmod(b, strides[minor])
                if rest:
                    margin.append((-1, -1))
                    continue
            margin.append((a, b) if major == 0 else (b, a))
    return arrays_for(expected, got, written, block=block, margin=margin, tolerance=tolerance, kind=kind,
                      owner=owner, asked_owner=asked_owner)


def mistake(message: str) -> str:
    """The diagnosis of a check's message as the maps of one mistake share it: the name and the case left
    out, then :func:`hidden_text` (no facts, element, count or tile number) and program numbers as '#'."""
    text = str(message or "")
    start, end = text.find(" (경우 "), -1
    if start >= 0:
        end = text.find("): ", start)
    text = text[end + 3:] if end > start >= 0 else re.sub(r"^❌ [^:]*: ", "", text)
    text = hidden_text("", text)[1]
    return re.sub(r"program \d+", "program #", text)[:300]


_FACTS = re.compile(r" — 처음 틀린 원소 .*?, 최대 오차 \S+?\.(?= |$)")
_WHERE_PARENS = re.compile(r"\s*\((?:처음|기대|마지막 원소|첫 원소|tile)[^()]*\)|\s*\([^()]*\[[^()]*\)")


def hidden_text(where: str, reason: str) -> tuple[str, str]:
    """What a failed hidden case may tell the student: its layout words and the diagnosis, never a shape or a
    value (``a[45, 37] 전치(transposed) 뷰`` -> ``a 전치(transposed) 뷰``; the facts of a '값이 다릅니다 — …'
    line, the first element, counts and tile numbers left out)."""
    where = re.sub(r"\[[^\]]*\]", "", str(where))
    text = _FACTS.sub(".", str(reason))
    text = _WHERE_PARENS.sub("", text)
    text = re.sub(r"출력 \d+개가", "출력 일부가", text)
    text = re.sub(r"약 \S+만큼", "일정하게", text)
    text = re.sub(r"tile (?:번호 )?\d+(?=[을이의까])", "어떤 tile", text)
    text = re.sub(r"\w+\[\d+(?:, \d+)*\]", "", text)
    return where, re.sub(r"\s{2,}", " ", text).strip()


# --------------------------------------------------------------------------------------- drawing


def _headline(message: str) -> str:
    """The check's message for a title: the case named by its number (the axes show its shape), then the
    diagnosis, then the facts of a '값이 다릅니다 — …' line (what a short title can drop)."""
    text = re.sub(r"\s+", " ", str(message or "")).strip()
    text = re.sub(r"^[\u274c\u2705\u26a0\ufe0f]+\s*", "", text)  # the ❌ stands above the picture already
    start = text.find(" (경우 ")
    end = text.find("): ", start)
    if start >= 0 and end > start:
        number = text[start + 5:].split(":", 1)[0]
        text = f"{text[:start]} 경우 {number}: {text[end + 3:]}"
    head, dash, rest = text.partition(" — ")
    if dash and ". " in rest:
        facts, _, diagnosis = rest.partition(". ")
        text = f"{head}: {diagnosis} ({facts})"
    return text


def _title(message: str, width: int = 58, lines: int = 3) -> str:
    wrapped = textwrap.wrap(_headline(message), width) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: width - 1] + "…"
    return "\n".join(wrapped)


def _legend(ax, m: ErrorMap) -> None:
    from matplotlib.patches import Patch

    counts = m.counts()
    handles = [Patch(facecolor=COLORS[c], edgecolor="#555555", lw=0.5, label=f"{LABELS[c]} {counts[c]}")
               for c in (OK, WRONG, UNWRITTEN, MARGIN) if counts[c]]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False,
              handlelength=1.0, borderaxespad=0.0)


def _ticks(extent: int, step: int, most: int = 6) -> list[int]:
    """Tick positions on block boundaries, at most ``most`` of them (ticks are the slow part of a small figure)."""
    every = step * max(1, -(-(extent // step) // (most - 1)))
    return list(range(0, extent + 1, every))


def _draw_cats(ax, m: ErrorMap, show_legend: bool = True, alpha=None) -> None:
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    cmap = ListedColormap([COLORS[c] for c in (OK, WRONG, UNWRITTEN, MARGIN, OUTSIDE)])
    rows, cols = m.cats.shape
    ax.imshow(m.cats, cmap=cmap, vmin=-0.5, vmax=4.5, interpolation="nearest",
              aspect="equal" if m.kind == "tiles" else "auto", alpha=alpha, extent=(0, cols, rows, 0))
    brow, bcol = (1, m.block[0]) if m.kind == "strip" else m.block
    if m.kind != "rows":
        for x in range(bcol, cols, bcol):
            ax.axvline(x, color="#333333", lw=0.6)
    if m.kind == "tiles":
        for y in range(brow, rows, brow):
            ax.axhline(y, color="#333333", lw=0.6)
    elif m.kind == "rows" and rows <= 64:
        for y in range(1, rows):
            ax.axhline(y, color="#FFFFFF", lw=0.4)
    ax.add_patch(Rectangle((0, 0), m.cols, m.rows, fill=False, edgecolor="#000000", lw=1.4))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.tick_params(labelsize=6, length=2)
    if m.kind == "strip":
        ax.set_yticks([])
        ax.set_xlabel(f"원소 (0–{m.cols - 1}), 세로줄 = BLOCK_SIZE {m.block[0]} 경계", fontsize=7)
        ax.set_xticks(_ticks(cols, m.block[0]))
    elif m.kind == "rows":
        ax.set_xlabel(f"열 (n_cols {m.cols}, BLOCK_SIZE {m.block[1]})", fontsize=7)
        ax.set_ylabel("행 (program 하나가 한 행)", fontsize=7)
    else:
        ax.set_xlabel(f"열 N={m.cols} (BLOCK_N {m.block[1]})", fontsize=7)
        ax.set_ylabel(f"행 M={m.rows} (BLOCK_M {m.block[0]})", fontsize=7)
        ax.set_xticks(_ticks(cols, m.block[1]))
        ax.set_yticks(_ticks(rows, m.block[0]))
    if show_legend:
        _legend(ax, m)


def _draw_owner(ax, m: ErrorMap) -> None:
    from matplotlib.colors import ListedColormap

    bad = m.owner_mismatch()
    ax.imshow(bad.astype(np.uint8), cmap=ListedColormap([OWNER_OK, OWNER_BAD]), vmin=0, vmax=1,
              interpolation="nearest", aspect="equal")
    tr, tc = bad.shape
    if tr * tc <= 48:  # one number per tile: the program that computed it, and the asked one where they differ
        for (i, j), b in np.ndenumerate(bad):
            got = _who(m.owner[i, j])
            ax.text(j, i, f"{got}≠{int(m.asked[i, j])}" if b else got, ha="center", va="center", fontsize=6.5,
                    color="#000000")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title("tile마다 계산한 program\n(a≠b: a가 계산, 요구는 b; —: 없음)", fontsize=7)
    ax.set_xlabel(f"tile {tr}×{tc}개 (BLOCK {m.block[0]}×{m.block[1]})", fontsize=7)


def figure_for(m: ErrorMap, message: str = ""):
    """The error map as a matplotlib Figure (no pyplot): the categories over the tile grid, the
    diagnosis as its title, and for the persistent loop the owner panel beside it."""
    if not isinstance(m, ErrorMap):
        raise TypeError(f"figure_for needs an ErrorMap (arrays_for), got {type(m).__name__}")
    from matplotlib.figure import Figure

    from gemm_lab.viz.fonts import use_korean_font

    use_korean_font(install=False)
    rows, cols = m.cats.shape
    if m.kind == "strip":
        fig = Figure(figsize=(6.4, 1.9), dpi=DPI)
        ax = fig.add_axes((0.04, 0.34, 0.7, 0.22))
    elif m.owner is not None:
        fig = Figure(figsize=(6.4, 3.4), dpi=DPI)
        ax = fig.add_axes((0.1, 0.14, 0.42, 0.56))
        _draw_owner(fig.add_axes((0.6, 0.14, 0.36, 0.5)), m)
    else:
        fig = Figure(figsize=(5.6, 3.2), dpi=DPI)
        ax = fig.add_axes((0.12, 0.14, 0.5, 0.6))
    _draw_cats(ax, m, show_legend=m.owner is None)
    if m.owner is not None:
        c = m.counts()
        parts = [f"{LABELS[k]} {c[k]}" for k in (WRONG, UNWRITTEN, MARGIN) if c[k]]
        ax.set_title(" · ".join(parts) if parts else "값은 모두 맞음", fontsize=7)
    fig.text(0.02, 0.97, _title(message, 80 if m.kind == "strip" else 70, 4), fontsize=7.5, ha="left", va="top",
             parse_math=False)
    return fig


def _palette_image():
    """A fixed palette holding every drawing colour exactly, greys and each colour's blends towards black
    and white (the antialiased edges of text and lines)."""
    from PIL import Image

    base = [COLORS[c] for c in (OK, WRONG, UNWRITTEN, MARGIN)] + [OWNER_BAD, "#333333", "#555555"]
    rgb = [tuple(int(h[i:i + 2], 16) for i in (1, 3, 5)) for h in base]
    colours = list(rgb)
    for r, g, b in rgb:
        for k in range(1, 9):
            t = k / 9
            colours.append((round(r * (1 - t)), round(g * (1 - t)), round(b * (1 - t))))
            colours.append((round(r + (255 - r) * t), round(g + (255 - g) * t), round(b + (255 - b) * t)))
    colours += [(v, v, v) for v in range(0, 256, 8)] + [(255, 255, 255)]
    colours = list(dict.fromkeys(colours))[:256]
    pal = Image.new("P", (1, 1))
    pal.putpalette([v for c in colours for v in c] + [0, 0, 0] * (256 - len(colours)))
    return pal


def png_of(fig) -> bytes:
    """A figure of this module as PNG bytes: drawn at :data:`DPI`, then stored with an 8-bit palette that
    holds the category colours exactly (a few KB)."""
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, facecolor="white")
    img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    out = io.BytesIO()
    img.quantize(palette=_palette_image(), dither=Image.Dither.NONE).save(out, format="PNG", optimize=True)
    return out.getvalue()


def png_for(m: ErrorMap, message: str = "") -> bytes:
    """:func:`figure_for` as PNG bytes (:func:`png_of`)."""
    return png_of(figure_for(m, message))


def text_for(m: ErrorMap, message: str = "") -> str:
    """The map in characters, one per block (a tile, a row's block, a strip's block): the worst category
    in it (X wrong, _ unwritten, M margin, . right); the owner grid below for the persistent loop."""
    brow, bcol = (1, m.block[0]) if m.kind == "strip" else m.block
    rows, cols = m.cats.shape
    order = (WRONG, UNWRITTEN, MARGIN, OK, OUTSIDE)
    lines = [_title(message, 76, 4), ""]
    for i in range(0, rows, brow):
        line = ""
        for j in range(0, cols, bcol):
            present = set(np.unique(m.cats[i:i + brow, j:j + bcol]).tolist())
            line += TEXT_MARKS[next(c for c in order if c in present)]
        lines.append(line.rstrip() or " ")
        if len(lines) > 40:
            lines.append("…")
            break
    c = m.counts()
    lines.append("칸 하나 = 블록 하나 · " + ", ".join(f"{TEXT_MARKS[k]} {LABELS[k]} {c[k]}"
                                             for k in (WRONG, UNWRITTEN, MARGIN, OK) if c[k]))
    if m.owner is not None:
        lines.append("tile마다 계산한 program (괄호: 요구한 program):")
        for i in range(m.owner.shape[0]):
            lines.append(" ".join(f"{_who(o)}" if o == a else f"{_who(o)}({int(a)})"
                                  for o, a in zip(m.owner[i], m.asked[i], strict=True)))
    return "\n".join(lines)


def _who(program) -> str:
    return {-1: "—", -2: "여럿"}.get(int(program), str(int(program)))


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def show(m: ErrorMap, message: str) -> None:
    """Under the ❌ in a notebook: the message, then the picture (the text map when matplotlib cannot
    draw). Outside a notebook kernel it does nothing (scripts and tests print nothing extra)."""
    if not _in_notebook() or not m.failed():
        return
    from IPython.display import Image, display

    print(message)
    try:
        display(Image(data=png_for(m, message), format="png"))
    except Exception:  # noqa: BLE001 - any drawing failure leaves the student the text map
        print(text_for(m, message))


def notebook_outputs(entries) -> list[dict]:
    """The grader's outputs for a failed test cell's recorded checks: one display_data (PNG and its text
    form) per kernel case that carries a map (only failed visible cases do)."""
    outs = []
    for entry in entries or ():
        kernel = entry.get("kernel") if isinstance(entry, dict) else None
        for case in (kernel or {}).get("cases") or ():
            rec = case.get("map") if isinstance(case, dict) else None
            if not rec:
                continue
            m = ErrorMap.from_record(rec)
            message = entry.get("message") or case.get("reason") or ""
            data = {"text/plain": text_for(m, message)}
            try:
                data["image/png"] = base64.b64encode(png_for(m, message)).decode("ascii")
            except Exception:  # noqa: BLE001 - the text form stands alone when matplotlib cannot draw
                pass
            outs.append({"output_type": "display_data", "data": data, "metadata": {}})
    return outs
