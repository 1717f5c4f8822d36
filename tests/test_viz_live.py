"""The widgets' output area: an HTML widget that every front end renders (no ipywidgets.Output)."""

from __future__ import annotations

import base64
import re
import subprocess
import sys
from pathlib import Path

import ipywidgets as widgets
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from gemm_lab.viz import live, ordering

ROOT = Path(__file__).resolve().parents[1]
PNG = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


def _pngs(value: str) -> list[bytes]:
    return [base64.b64decode(m) for m in PNG.findall(value)]


def _tree(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _tree(child)


def test_show_renders_a_figure_as_a_png_and_closes_it():
    area = live.output_area()
    assert isinstance(area, widgets.HTML) and not isinstance(area, widgets.Output)
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    area.show(fig, "GROUP_M = <3>")
    pngs = _pngs(area.value)
    assert len(pngs) == 1 and pngs[0].startswith(b"\x89PNG")
    assert fig.number not in plt.get_fignums()
    assert "GROUP_M = &lt;3&gt;" in area.value  # text is escaped, not injected as markup
    area.show()
    assert area.value == ""


def test_group_m_widget_has_no_output_widget_and_the_slider_redraws_the_png():
    widget = ordering.group_m_widget(6, 6, window=6)
    parts = list(_tree(widget))
    assert not any(isinstance(w, widgets.Output) for w in parts)
    slider, area = widget.children
    first = _pngs(area.value)
    assert len(first) == 1
    open_figures = len(plt.get_fignums())
    slider.value = 1
    second = _pngs(area.value)
    assert len(second) == 1 and second != first  # a new picture replaced the old one
    assert len(plt.get_fignums()) == open_figures  # the redraw leaves no figure open


def test_with_block_keeps_prints_tables_and_figures_in_order():
    area = live.output_area()
    with area:
        print("before")
        plt.figure().gca().plot([1, 2])  # drawn, never shown: appears after the block's other output
        print("after", file=sys.stderr)
    value = area.value
    assert value.index("before") < value.index("after") < value.index("data:image/png")
    assert "color:#b00" in value  # stderr in red, as a notebook shows it
    with area:
        area.clear_output(wait=True)
        print("only this")
    assert "before" not in area.value and "only this" in area.value
    area.clear_output()
    assert area.value == ""
    table = pd.DataFrame({"kernel": ["matmul"], "shared": [36864]})
    area.show(table)
    assert "<table" in area.value and "36864" in area.value


def test_an_error_outside_a_kernel_propagates_and_is_shown():
    area = live.output_area()
    with pytest.raises(ZeroDivisionError):
        with area:
            print("start")
            print(1 / 0)
    assert "start" in area.value and "ZeroDivisionError" in area.value
    assert not isinstance(sys.stdout, live._Writer) and not isinstance(sys.stderr, live._Writer)


# a Jupyter kernel routes display() and plt.show() through the shell's display publisher; the area must
# catch them there (an InteractiveShell in a child process: it would change get_ipython() for other tests)
SHELL_SCRIPT = r"""
import matplotlib
matplotlib.use("module://matplotlib_inline.backend_inline")
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
import matplotlib.pyplot as plt, pandas as pd
from IPython.display import display
from gemm_lab.viz import live
area = live.output_area()
original = shell.display_pub
with area:
    print("header")
    display(pd.DataFrame({"target": ["sm_90"], "mma": ["wgmma"]}))
    plt.figure().gca().plot([0, 1])
    plt.show()
    raise KeyError("shown, not raised")
assert shell.display_pub is original
v = area.value
print("ORDER", v.index("header") < v.index("<table") < v.index("data:image/png") < v.index("KeyError"))
print("WGMMA", "wgmma" in v)
"""


def test_in_an_ipython_shell_display_and_show_land_in_the_area():
    out = subprocess.run([sys.executable, "-c", SHELL_SCRIPT], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ORDER True" in out.stdout and "WGMMA True" in out.stdout, out.stdout + out.stderr[-2000:]


def test_the_compile_explorer_builds_its_output_area_from_the_library():
    source = (ROOT / "notebooks" / "compile_explorer.py").read_text(encoding="utf-8")
    assert "widgets.Output(" not in source
    assert "live.output_area()" in source
