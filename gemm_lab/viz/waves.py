"""Picture of wave quantization: the output tiles of a non-persistent matmul laid out wave by wave.

Every number comes from :func:`gemm_lab.calc.waves.wave_quantization`; this module only draws. One
column per wave, one cell per slot (SM × program per SM): filled slots run a tile in that wave, empty
ones idle while the last wave finishes. Labels are English (notebook fonts may lack Hangul).
"""

from __future__ import annotations

from gemm_lab.calc.waves import WaveQuantization, wave_quantization

__all__ = ["waves_figure"]

_BUSY = "tab:blue"
_IDLE = "#e6e6e6"


def waves_figure(M: int, N: int, BLOCK_M: int, BLOCK_N: int, num_sms: int, programs_per_sm: int = 1,
                 ax=None, title: str | None = None):
    """Slots (rows) × waves (columns) of one launch; returns the matplotlib Figure.

    Arguments are those of :func:`gemm_lab.calc.waves.wave_quantization` (validated there).
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    wq: WaveQuantization = wave_quantization(M, N, BLOCK_M, BLOCK_N, num_sms, programs_per_sm)
    busy = [[1 if w * wq.slots + s < wq.tiles else 0 for w in range(wq.num_waves)] for s in range(wq.slots)]
    if ax is None:
        fig, ax = plt.subplots(figsize=(min(2.0 + 0.45 * wq.num_waves, 12.0), 4.0))
    else:
        fig = ax.figure
    ax.imshow(busy, aspect="auto", interpolation="nearest", cmap=ListedColormap([_IDLE, _BUSY]), vmin=0, vmax=1,
              origin="lower")
    ax.set_xticks(range(wq.num_waves))
    ax.set_xticklabels([str(w + 1) for w in range(wq.num_waves)])
    ax.set_xlabel("wave")
    ax.set_ylabel(f"slot (SM x {wq.programs_per_sm} program/SM)")
    idle = wq.num_waves * wq.slots - wq.tiles
    ax.set_title(title or (f"{M}x{N}, {BLOCK_M}x{BLOCK_N} tiles: {wq.tiles} tiles on {wq.slots} slots = "
                           f"{wq.waves:.2f} waves -> {wq.num_waves}; {idle} idle slot-waves, "
                           f"wave efficiency {wq.wave_efficiency:.1%}"), fontsize=9)
    fig.tight_layout()
    return fig
