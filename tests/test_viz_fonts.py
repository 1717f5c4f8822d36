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


class _Done:
    def __init__(self, rc):
        self.returncode = rc


def _fresh_state(monkeypatch, found_after_install="NanumGothic"):
    monkeypatch.setattr(fonts, "_tried", False)
    monkeypatch.setattr(fonts, "_chosen", None)
    state = {"installed": False}
    monkeypatch.setattr(fonts, "korean_font", lambda: found_after_install if state["installed"] else None)
    monkeypatch.setattr(fonts.shutil, "which", lambda name: "/usr/bin/" + name)
    return state


def test_colab_without_a_korean_font_installs_fonts_nanum(monkeypatch, capsys):
    state = _fresh_state(monkeypatch)
    calls = []

    def run(cmd, **kw):
        calls.append(cmd)
        state["installed"] = "install" in cmd and len(calls) == 3  # the first install fails: update, again
        return _Done(0 if state["installed"] or "update" in cmd else 100)

    monkeypatch.setattr(fonts.subprocess, "run", run)
    monkeypatch.setattr(fonts, "hosted_notebook", lambda: "colab")
    monkeypatch.setattr(fonts.os, "geteuid", lambda: 0)
    monkeypatch.setattr(matplotlib, "rcParams", dict(matplotlib.rcParams))
    monkeypatch.setattr(fonts, "missing_glyphs", lambda family, text=fonts.SAMPLE: [])
    assert fonts.use_korean_font() == "NanumGothic"
    assert calls == [["apt-get", "install", "-y", "-qq", "fonts-nanum"], ["apt-get", "update", "-qq"],
                     ["apt-get", "install", "-y", "-qq", "fonts-nanum"]]
    assert "fonts-nanum" in capsys.readouterr().out


def test_not_root_uses_sudo_and_a_failed_install_only_warns(monkeypatch):
    _fresh_state(monkeypatch)
    calls = []
    monkeypatch.setattr(fonts.subprocess, "run", lambda cmd, **kw: calls.append(cmd) or _Done(1))
    monkeypatch.setattr(fonts, "hosted_notebook", lambda: "kaggle")
    monkeypatch.setattr(fonts.os, "geteuid", lambda: 1000)
    with pytest.warns(RuntimeWarning, match="한글 글꼴"):
        assert fonts.use_korean_font() is None
    assert calls and all(c[:2] == ["sudo", "-n"] for c in calls)


def test_nothing_is_installed_off_colab_or_when_turned_off(monkeypatch):
    _fresh_state(monkeypatch)
    monkeypatch.setattr(fonts.subprocess, "run", lambda *a, **k: pytest.fail("must not install"))
    monkeypatch.setattr(fonts, "hosted_notebook", lambda: None)
    with pytest.warns(RuntimeWarning):
        assert fonts.use_korean_font() is None
    _fresh_state(monkeypatch)
    monkeypatch.setattr(fonts, "hosted_notebook", lambda: "colab")
    monkeypatch.setenv("GEMM_LAB_FONT_INSTALL", "0")
    with pytest.warns(RuntimeWarning):
        assert fonts.use_korean_font() is None


def test_hosted_notebook_detection(monkeypatch):
    monkeypatch.delenv("KAGGLE_KERNEL_RUN_TYPE", raising=False)
    assert fonts.hosted_notebook() is None  # this machine: neither
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    assert fonts.hosted_notebook() == "kaggle"
