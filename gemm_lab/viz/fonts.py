"""A Korean font for matplotlib, so Hangul in titles and labels is not drawn as empty boxes (tofu).

``use_korean_font()`` (called when ``gemm_lab.viz`` is imported) puts the first installed font of
:data:`KOREAN_FONTS` in front of matplotlib's sans-serif list. It finds fonts installed after
matplotlib built its font cache too (``apt-get install fonts-noto-cjk`` in a running session).
Noto Sans CJK's collection covers every Hangul syllable whichever face (KR, JP, SC) matplotlib lists.

On a hosted notebook (Colab, Kaggle: their images have no Korean font) with none installed, it first
installs Debian/Ubuntu's ``fonts-nanum`` with apt-get (root there; once per session, a few seconds) and
says so in one line; ``GEMM_LAB_FONT_INSTALL=0`` turns that off. Anywhere else it only warns how to
install one.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import warnings

KOREAN_FONTS = (
    "Noto Sans CJK KR", "Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC",
    "Noto Sans KR", "NanumGothic", "Malgun Gothic", "AppleGothic", "Apple SD Gothic Neo",
)
# file-name fragments of those fonts, for fonts that matplotlib's cache does not list yet
_FILE_HINTS = ("NotoSansCJK", "NotoSansKR", "NanumGothic", "malgun", "AppleGothic", "AppleSDGothicNeo")
SAMPLE = "한글 글꼴 점검: 행 우선 순서와 그룹 순서"

HOSTED_FONT_PACKAGE = "fonts-nanum"  # NanumGothic (OFL); ~10 MB from the distribution's own mirror

_chosen: str | None = None
_tried = False


def hosted_notebook() -> str | None:
    """``"colab"`` or ``"kaggle"`` when running in that hosted notebook service, else None."""
    try:
        if importlib.util.find_spec("google.colab") is not None:
            return "colab"
    except (ImportError, ValueError):
        pass
    if os.environ.get("KAGGLE_KERNEL_RUN_TYPE"):
        return "kaggle"
    return None


def install_korean_font(run=None) -> bool:
    """``apt-get install fonts-nanum`` (as root, else through ``sudo -n``), with one ``apt-get update``
    retry; True when a Korean font is found afterwards. ``run`` is :func:`subprocess.run`'s stand-in."""
    run = run or subprocess.run
    if shutil.which("apt-get") is None:
        return False
    prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
    install = [*prefix, "apt-get", "install", "-y", "-qq", HOSTED_FONT_PACKAGE]
    print(f"[gemm_lab] 한글 글꼴이 없어 {HOSTED_FONT_PACKAGE}을 설치합니다 (apt-get, 세션마다 한 번).")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for step in (install, [*prefix, "apt-get", "update", "-qq"], install):
        try:
            done = run(step, capture_output=True, timeout=300, env=env)
        except (OSError, subprocess.SubprocessError):
            return False
        if step is install and done.returncode == 0:
            break
    else:
        return False
    return korean_font() is not None


def _listed() -> set[str]:
    from matplotlib import font_manager

    return {f.name for f in font_manager.fontManager.ttflist}


def korean_font() -> str | None:
    """The family name of the first installed Korean-capable font, or None."""
    from matplotlib import font_manager

    names = _listed()
    if not any(name in names for name in KOREAN_FONTS):
        for path in font_manager.findSystemFonts():
            if any(hint.lower() in path.lower() for hint in _FILE_HINTS):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue
        names = _listed()
    return next((name for name in KOREAN_FONTS if name in names), None)


def font_file(family: str) -> str:
    """Path of the font file matplotlib uses for ``family`` (ValueError when it is not installed)."""
    from matplotlib import font_manager

    if not isinstance(family, str) or not family:
        raise TypeError(f"family must be a font family name, got {family!r}")
    try:
        return font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
    except ValueError as exc:
        raise ValueError(f"family: font {family!r} is not installed") from exc


def missing_glyphs(family: str, text: str = SAMPLE) -> list[str]:
    """Characters of ``text`` (spaces aside) that the font of ``family`` has no glyph for."""
    from matplotlib.ft2font import FT2Font

    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    charmap = FT2Font(font_file(family)).get_charmap()
    return sorted({ch for ch in text if not ch.isspace() and ord(ch) not in charmap})


def use_korean_font(warn: bool = True, install: bool | None = None) -> str | None:
    """Make matplotlib draw Hangul with an installed Korean font; return its family (None: none found).

    With no Korean font installed: ``install`` (None: on Colab/Kaggle unless ``GEMM_LAB_FONT_INSTALL=0``)
    installs one first (:func:`install_korean_font`); failing that, warns once (in Korean: what the
    student sees) how to install one.
    """
    global _chosen, _tried
    if _tried:
        return _chosen
    _tried = True
    import matplotlib

    family = korean_font()
    if family is None:
        if install is None:
            install = hosted_notebook() is not None and os.environ.get("GEMM_LAB_FONT_INSTALL", "1") != "0"
        if install and install_korean_font():
            family = korean_font()
    if family is None:
        if warn:
            warnings.warn("한글 글꼴이 없어 그림의 한글이 네모로 보일 수 있습니다 "
                          "(Colab/Debian: !apt-get install -y fonts-noto-cjk 후 커널 다시 시작).",
                          RuntimeWarning, stacklevel=2)
        return None
    sans = [f for f in matplotlib.rcParams["font.sans-serif"] if f != family]
    matplotlib.rcParams["font.sans-serif"] = [family, *sans]
    matplotlib.rcParams["font.family"] = ["sans-serif"]
    if missing_glyphs(family, "\u2212"):
        matplotlib.rcParams["axes.unicode_minus"] = False
    _chosen = family
    return family
