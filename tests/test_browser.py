"""A student's notebook in JupyterLab in a real browser (headless Chromium driven by selenium).

JupyterLab is started from the course venv on 127.0.0.1 (random free port, a token), in a folder that
holds only release/week07/02_program_order_l2.ipynb. The test runs every cell the way a student who
reads on past an unfinished TODO does (Run All; after each stop, Run Selected Cell and All Below from
the next cell) and checks what the student sees: no traceback outside the TODO and graded-test cells,
the GROUP_M slider is a live widget whose move redraws the figure, the plots are images, and no
matplotlib "Glyph ... missing from font" warning (Hangul drawn with the Korean font, not tofu).
Screenshots go to screenshots/ (gitignored). `make setup` installs chromium, chromium-driver and
fonts-noto-cjk (apt) and selenium (pinned in pyproject.toml).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "release" / "week07" / "02_program_order_l2.ipynb"
SHOTS = ROOT / "screenshots"
CHROME_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1400,1000")
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^-{20,}\n\w+(Error|Exception)", re.M)

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is pinned in pyproject: make setup")
from selenium.webdriver.common.keys import Keys  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(predicate, timeout: float, what: str, step: float = 0.5):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    chromium, driver_bin = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_bin):
        pytest.fail("chromium / chromedriver missing: run `make setup` (apt-get install chromium chromium-driver)")
    work = tmp_path_factory.mktemp("lab")
    folder, settings, runtime = work / "student", work / "settings", work / "runtime"
    folder.mkdir()
    shutil.copy(NOTEBOOK, folder / NOTEBOOK.name)
    # render every cell (JupyterLab 4 windows long notebooks: off-screen cells are not in the DOM)
    tracker = settings / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    port, token = _free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if k not in ("GEMM_LAB_GRADING", "PYTHONPATH")}
    env |= {"JUPYTERLAB_SETTINGS_DIR": str(settings), "JUPYTER_RUNTIME_DIR": str(runtime)}
    log = open(work / "jupyterlab.log", "w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={folder}", "--LabApp.news_url=", "--LabApp.check_for_updates_class="
         "jupyterlab.NeverCheckForUpdate", *(["--allow-root"] if os.geteuid() == 0 else [])],
        cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def up():
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                return r.status == 200
        except OSError:
            return server.poll() is not None  # stop waiting when it died

    try:
        _wait(up, 90, "JupyterLab to start")
        assert server.poll() is None, (work / "jupyterlab.log").read_text()[-3000:]
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in CHROME_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={work / 'chrome-profile'}")
        service = webdriver.ChromeService(executable_path=driver_bin)
        browser = webdriver.Chrome(options=options, service=service)
        try:
            browser.get(f"{base}/lab/tree/{NOTEBOOK.name}?token={token}")
            yield browser
        finally:
            browser.quit()
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _cells(browser):
    return browser.find_elements("css selector", ".jp-Notebook .jp-Cell")


def _prompts(browser) -> list[str]:
    """The execution prompt of every code cell ('[ ]:', '[*]:', '[3]:'), in notebook order."""
    return browser.execute_script("""
        return Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell.jp-CodeCell'))
          .map(c => (c.querySelector('.jp-InputArea-prompt') || {}).textContent || '');""")


def _menu(browser, menu: str, label: str) -> None:
    """Click ``menu`` in the menu bar, then its entry ``label``."""
    for item in browser.find_elements("css selector", ".lm-MenuBar-itemLabel"):
        if item.text.strip() == menu:
            item.click()
            break
    else:
        raise AssertionError(f"no {menu!r} menu")

    def entry():
        return [e for e in browser.find_elements("css selector", ".lm-Menu-itemLabel") if e.text.strip() == label]

    _wait(entry, 10, f"menu entry {label!r}")[0].click()


def _idle(browser, timeout: float) -> None:
    _wait(lambda: browser.execute_script(
        "const s = document.querySelector('.jp-Notebook-ExecutionIndicator');"
        "return !document.body.innerText.includes('[*]') && (!s || s.getAttribute('data-status') !== 'busy');"),
        timeout, "the kernel to finish", step=1.0)


def _roles() -> list[str]:
    """nbgrader role of each code cell of the notebook: 'todo' (solution or graded test) or 'other'."""
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    return ["todo" if (c.get("metadata", {}).get("nbgrader", {}).get("solution")
                       or c.get("metadata", {}).get("nbgrader", {}).get("grade")) else "other"
            for c in cells if c["cell_type"] == "code"]


def _outputs_text(browser) -> list[str]:
    return browser.execute_script("""
        return Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell.jp-CodeCell'))
          .map(c => Array.from(c.querySelectorAll('.jp-OutputArea-output')).map(o => o.innerText).join('\\n'));""")


@pytest.mark.slow
def test_release_notebook_in_jupyterlab_runs_renders_and_the_slider_redraws(lab):
    SHOTS.mkdir(exist_ok=True)
    for old in SHOTS.glob("02_failure.*"):
        old.unlink()
    try:
        _drive(lab)
    except BaseException:
        lab.save_screenshot(str(SHOTS / "02_failure.png"))
        (SHOTS / "02_failure.txt").write_text(lab.execute_script("return document.body.innerText")[-20000:])
        raise


def _drive(browser) -> None:
    _wait(lambda: len(_cells(browser)) > 5, 40, "the notebook to open")
    _wait(lambda: browser.find_elements("css selector", ".jp-Notebook-ExecutionIndicator[data-status='idle']")
          or "Idle" in browser.execute_script("return document.body.innerText"), 120, "an idle kernel")
    roles = _roles()
    assert len(_prompts(browser)) == len(roles), "the browser shows a different number of code cells"
    _menu(browser, "Run", "Run All Cells")
    for _ in range(len(roles)):  # Run All stops at an error: go on below it, as a student does
        _idle(browser, 400)
        prompts = _prompts(browser)
        pending = [i for i, p in enumerate(prompts) if not re.search(r"\[\d+\]", p)]
        if not pending:
            break
        code_cells = browser.find_elements("css selector", ".jp-Notebook .jp-Cell.jp-CodeCell")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", code_cells[pending[0]])
        code_cells[pending[0]].find_element("css selector", ".jp-InputArea-prompt").click()
        _menu(browser, "Run", "Run Selected Cell and All Below")
    browser.save_screenshot(str(SHOTS / "02_program_order_l2_after_run_all.png"))
    prompts = _prompts(browser)
    assert all(re.search(r"\[\d+\]", p) for p in prompts), f"cells not executed: {prompts}"

    texts = _outputs_text(browser)
    bad = [i for i, (role, text) in enumerate(zip(roles, texts, strict=True))
           if role == "other" and TRACEBACK.search(text)]
    assert not bad, "tracebacks outside the TODO/test cells: " + "; ".join(texts[i][:300] for i in bad)
    assert any(TRACEBACK.search(t) for r, t in zip(roles, texts, strict=True) if r == "todo"), \
        "the unfinished TODOs raised nothing"
    assert not [t for t in texts if "missing from font" in t], "Hangul glyphs missing from the plot font"

    images = browser.execute_script("""
        return Array.from(document.querySelectorAll('.jp-OutputArea-output img'))
          .filter(i => i.complete && i.naturalWidth > 100).length;""")
    assert images >= 2, f"only {images} rendered plot image(s)"

    sliders = browser.find_elements("css selector", ".widget-slider, .jupyter-widgets.widget-hslider")
    assert sliders, "the GROUP_M slider did not render as a widget (is the widget manager loaded?)"
    box = sliders[0].find_element("xpath", "./ancestor::div[contains(@class,'widget-vbox')][1]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
    readout = box.find_element("css selector", ".widget-readout")
    before_value = readout.text

    def figure():
        imgs = box.find_elements("css selector", "img")
        return imgs[0].get_attribute("src") if imgs else None

    before = _wait(figure, 30, "the slider's first figure")
    browser.save_screenshot(str(SHOTS / "02_group_m_slider_before.png"))
    handle = box.find_element("css selector", ".noUi-handle, .ui-slider-handle")
    handle.click()
    handle.send_keys(Keys.ARROW_RIGHT)
    _wait(lambda: readout.text != before_value, 20, "the slider value to change")
    after = _wait(lambda: (f := figure()) and f != before and f, 60, "the figure to be redrawn")
    assert after != before
    browser.save_screenshot(str(SHOTS / "02_group_m_slider_after.png"))


CLASSIC_VENV = ROOT / "build" / "classic-venv"  # notebook 6.5.7 + ipywidgets 7.7.1: `make classic-venv`


@pytest.mark.slow
def test_group_m_slider_redraws_in_classic_notebook_with_ipywidgets_7(tmp_path):
    """Colab-era front end: the GROUP_M widget renders and a slider move redraws its picture."""
    jupyter = CLASSIC_VENV / "bin" / "jupyter"
    if not jupyter.exists():
        pytest.skip(f"no classic front end venv at {CLASSIC_VENV}: run `make classic-venv`")
    chromium, driver_bin = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_bin):
        pytest.fail("chromium / chromedriver missing: run `make setup` (apt-get install chromium chromium-driver)")
    folder = tmp_path / "nb"
    folder.mkdir()
    source = (f"import sys; sys.path.insert(0, {str(ROOT)!r})\nfrom gemm_lab.viz import ordering\n"
              "display(ordering.group_m_widget(6, 6, window=6))")
    (folder / "t.ipynb").write_text(json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 4}))
    port, token = _free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if k not in ("GEMM_LAB_GRADING", "PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"PATH": f"{CLASSIC_VENV / 'bin'}:{env['PATH']}", "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    log = open(tmp_path / "notebook.log", "w")
    server = subprocess.Popen(
        [str(jupyter), "notebook", "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
         f"--NotebookApp.token={token}", f"--notebook-dir={folder}",
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def up():
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                return r.status == 200
        except OSError:
            return server.poll() is not None

    browser = None
    try:
        _wait(up, 90, "the classic notebook server to start")
        assert server.poll() is None, (tmp_path / "notebook.log").read_text()[-3000:]
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in CHROME_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={tmp_path / 'chrome-profile'}")
        browser = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_bin))
        browser.get(f"{base}/notebooks/t.ipynb?token={token}")
        _wait(lambda: browser.execute_script(
            "return !!(window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel"
            " && Jupyter.notebook.kernel.is_connected());"), 120, "the classic notebook's kernel")
        browser.execute_script("Jupyter.notebook.execute_all_cells()")
        handle = _wait(lambda: browser.find_elements("css selector", ".ui-slider-handle"), 120,
                       "the GROUP_M slider (ipywidgets 7 jQuery-UI slider)")[0]
        box = handle.find_element("xpath", "./ancestor::div[contains(@class,'widget-vbox')][1]")

        def figure():
            imgs = box.find_elements("css selector", "img")
            return imgs[0].get_attribute("src") if imgs else None

        readout = box.find_element("css selector", ".widget-readout")
        before_value = readout.text
        before = _wait(figure, 60, "the slider's first figure")
        handle.click()
        handle.send_keys(Keys.ARROW_RIGHT)
        _wait(lambda: readout.text != before_value, 20, "the slider value to change")
        after = _wait(lambda: (f := figure()) and f != before and f, 60, "the figure to be redrawn")
        assert after != before
        SHOTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(SHOTS / "02_group_m_slider_classic.png"))
    finally:
        if browser is not None:
            browser.quit()
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _only_sample(assignment: str, student: str, folder: Path) -> Path:
    """A samples folder holding one committed sample hand-in, with its expected rows and review case."""
    import csv

    src = ROOT / "autograder" / "samples" / assignment
    shutil.copytree(src / student, folder / student)
    for name in ("expected.csv", "cases.csv"):
        with (src / name).open(encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f))
        with (folder / name).open("w", encoding="utf-8", newline="") as f:
            csv.writer(f).writerows([rows[0]] + [r for r in rows[1:] if r and r[0] == student])
    shutil.copy(src / "options.json", folder / "options.json")
    return folder


@pytest.mark.slow
def test_failed_sample_feedback_page_shows_the_error_map(tmp_path):
    """The sample whose softmax reads padding as 0.0 is graded for real (sandboxed autograde, then the
    sanitized feedback build); its feedback page, opened in Chromium, draws the error map under the ❌ of the
    visible kernel check, and nothing under the ❌ of the hidden one."""
    from autograder.course import Course
    from autograder.demo import run_all
    from autograder.grade.autograde import GradeSettings

    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap missing: run `make sandbox-deps`")
    chromium, driver_bin = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_bin):
        pytest.fail("chromium / chromedriver missing: run `make setup` (apt-get install chromium chromium-driver)")
    samples = _only_sample("week06", "kernel_other_zero", tmp_path / "samples")
    page = tmp_path / "02_fusion_softmax.html"

    def keep_feedback(course):
        from autograder.reporting.feedback_build import build_feedback

        build_feedback(course, "week06")
        shutil.copy(course.feedback / "kernel_other_zero" / "week06" / page.name, page)

    assert run_all(["week06"], repo=Course(ROOT), samples={"week06": samples}, hooks={"after_grading": keep_feedback},
                   settings=GradeSettings(cell_timeout=120, notebook_timeout=600)) == {"week06": []}
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chrome-profile'}")
    browser = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_bin))
    try:
        browser.get(page.as_uri())
        found = browser.execute_script("""
            const cells = Array.from(document.querySelectorAll('.jp-Cell, div.cell'))
              .filter(c => c.querySelector('.gl-fail') && c.innerText.includes('matches torch.softmax'));
            return cells.map(c => {
              const mark = c.querySelector('.gl-fail');
              const imgs = Array.from(c.querySelectorAll('img[src^="data:image/png"]'));
              return {hidden: c.innerText.includes('hidden shapes'), markTop: mark.getBoundingClientRect().top,
                      imgs: imgs.map(i => ({w: i.naturalWidth, shown: i.getBoundingClientRect().width,
                                            top: i.getBoundingClientRect().top}))};
            });""")
        browser.execute_script("""
            const img = Array.from(document.querySelectorAll('img[src^="data:image/png"]'))
              .find(i => i.closest('.jp-Cell, div.cell').innerText.includes('matches torch.softmax'));
            if (img) img.scrollIntoView({block: 'center'});""")
        SHOTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(SHOTS / "error_map_feedback.png"))
    finally:
        browser.quit()
    assert len(found) == 2, found
    vis = next(c for c in found if not c["hidden"])
    hid = next(c for c in found if c["hidden"])
    assert len(vis["imgs"]) == 1 and vis["imgs"][0]["w"] > 300 and vis["imgs"][0]["shown"] > 200, vis
    assert vis["imgs"][0]["top"] > vis["markTop"], "the map is drawn under the ❌"
    assert hid["imgs"] == [], "a hidden case shows no map"
