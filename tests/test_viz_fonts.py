"""gemm_lab.viz selects a Korean font, so Hangul in figures is drawn, not tofu."""

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import gemm_lab.viz  # noqa: E402, F401  (selects the font)
from gemm_lab.viz import fonts  # noqa: E402


def test_a_korean_font_is_installed_and_selected():
    family = fonts.korean_font()
    assert family is not None, "no Korean font: `make setup` installs fonts-noto-cjk"
    assert fonts.use_korean_font() == family
    assert matplotlib.rcParams["font.sans-serif"][0] == family
    assert fonts.font_file(family).endswith((".ttc", ".otf", ".ttf"))


def test_the_selected_font_has_every_hangul_glyph_of_the_sample():
    family = fonts.use_korean_font()
    assert fonts.missing_glyphs(family) == []
    # the default Latin font lacks them: the check is not vacuous
    assert fonts.missing_glyphs("DejaVu Sans", "한글") == ["글", "한"]


def test_a_figure_with_hangul_renders_without_missing_glyph_warnings(tmp_path):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_title("행 우선 순서 대 그룹 순서")
    ax.set_xlabel("열 블록 −1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(tmp_path / "hangul.png")
    plt.close(fig)
    assert not [w for w in caught if "missing from font" in str(w.message)]
    assert (tmp_path / "hangul.png").stat().st_size > 1000


def test_font_helpers_reject_bad_arguments():
    with pytest.raises(TypeError, match="family"):
        fonts.font_file("")
    with pytest.raises(ValueError, match="family"):
        fonts.font_file("No Such Font 12345")
    with pytest.raises(TypeError, match="text"):
        fonts.missing_glyphs(fonts.use_korean_font(), 42)
