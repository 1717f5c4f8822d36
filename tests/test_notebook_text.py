"""The course text as a student sees it: markdown that renders, and the seeds' readings linked.

Markdown: every markdown cell of source/, release/ and notebooks/ is rendered with nbconvert's renderer
(mistune, what ``jupyter nbconvert --to html`` and the feedback HTML use) and with a CommonMark renderer
(markdown-it, the rule JupyterLab follows); neither may leave a literal ``**`` in the text. CommonMark's
flanking rule is what bites Korean prose: in ``**중앙값(median)**이고`` the closing ``**`` follows ``)`` and is
followed by a letter, so it cannot close and both runs print as asterisks.

Readings: the seeds are prose, not data, so the readings are a checked table (seed title -> notebooks that
teach it -> URL). The table is tied to the seeds both ways: every title must occur in its seed, every row of
the week-7 guide's reading table must be covered by as many titles as it names (names are separated by
" · "), and every "공통 자료인 ... 중심" pointer in the seeds must name a title of the table. Each URL must be a
link in the "읽을거리" list of every notebook the table gives, in the master and in the student release.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from markdown_it import MarkdownIt
from nbconvert.filters.markdown_mistune import markdown2html_mistune

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"
NOTEBOOKS = sorted([*ROOT.glob("source/*/*.ipynb"), *ROOT.glob("release/*/*.ipynb"), *ROOT.glob("notebooks/*.ipynb")])
RENDERERS = {"mistune (nbconvert)": markdown2html_mistune, "markdown-it (CommonMark)": MarkdownIt("commonmark").render}

W6 = "week06-python-to-triton-guide.ko.txt"
W7 = "week07-tiled-matmul-guide-and-reference.ko.txt"
TRITON_DOCS = "https://triton-lang.org/main/"
API = TRITON_DOCS + "python-api/generated/"
TUTORIALS = TRITON_DOCS + "getting-started/tutorials/"
MATMUL_BACKGROUND = "https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html"
ALL_W7 = ("01_pointer_blocks", "02_program_order_l2", "03_tile_configs_roofline", "04_compile_pipeline",
          "05_artifacts_benchmarks", "06_persistent_loop")

# (seed, title as the seed writes it, week folder, notebooks whose reading list links it, URL)
READINGS = [
    (W6, "Triton Programming Guide 1장: Introduction", "week06", ("01_block_model",),
     TRITON_DOCS + "programming-guide/chapter-1/introduction.html"),
    (W6, "Triton Tutorial 01: Vector Addition", "week06", ("01_block_model", "03_check_benchmark"),
     TUTORIALS + "01-vector-add.html"),
    (W6, "Triton Tutorial 02: Fused Softmax", "week06", ("02_fusion_softmax", "03_check_benchmark"),
     TUTORIALS + "02-fused-softmax.html"),
    (W6, "CUDA Programming Model의 Thread Blocks and Grids", "week06", ("01_block_model",),
     "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#programming-model"),
    (W6, "triton.jit", "week06", ("01_block_model",), API + "triton.jit.html"),
    (W6, "tl.arange", "week06", ("01_block_model",), API + "triton.language.arange.html"),
    (W6, "tl.load", "week06", ("01_block_model",), API + "triton.language.load.html"),
    (W6, "tl.store", "week06", ("01_block_model",), API + "triton.language.store.html"),
    (W6, "Triton Semantics", "week06", ("02_fusion_softmax",), TRITON_DOCS + "python-api/triton-semantics.html"),
    (W6, "triton.testing.do_bench", "week06", ("03_check_benchmark",), API + "triton.testing.do_bench.html"),
    (W6, "PyTorch: torch.compiler 개요", "week06", ("03_check_benchmark",),
     "https://docs.pytorch.org/docs/stable/torch.compiler.html"),
    (W6, "Triton 디버깅 가이드", "week06", ("01_block_model", "03_check_benchmark"),
     TRITON_DOCS + "programming-guide/chapter-3/debugging.html"),
    (W7, "Triton Tutorial 03: Matrix Multiplication", "week07", ALL_W7, TUTORIALS + "03-matrix-multiplication.html"),
    (W7, "Triton 논문 (MAPL 2019)", "week07",
     ("01_pointer_blocks", "04_compile_pipeline", "05_artifacts_benchmarks", "06_persistent_loop"),
     "https://doi.org/10.1145/3315508.3329973"),
    (W7, "Modern GPU Programming: What Makes a Kernel Fast", "week07", ("03_tile_configs_roofline", "06_persistent_loop"),
     "https://mlc.ai/modern-gpu-programming-for-mlsys/chapter_performance/index.html"),
    (W7, "tl.dot", "week07", ("01_pointer_blocks", "03_tile_configs_roofline", "04_compile_pipeline"),
     API + "triton.language.dot.html"),
    (W7, "triton.autotune", "week07", ("03_tile_configs_roofline", "04_compile_pipeline"), API + "triton.autotune.html"),
    (W7, "triton.Config", "week07", ("03_tile_configs_roofline",), API + "triton.Config.html"),
    (W7, "Triton MLIR Dialects and Ops", "week07", ("04_compile_pipeline",), TRITON_DOCS + "dialects/dialects.html"),
    (W7, "tt Dialect", "week07", ("04_compile_pipeline",), TRITON_DOCS + "dialects/TritonDialect.html"),
    (W7, "ttg Dialect", "week07", ("04_compile_pipeline",), TRITON_DOCS + "dialects/TritonGPUDialect.html"),
    (W7, "Triton GitHub: compiler.py", "week07", ("04_compile_pipeline", "05_artifacts_benchmarks"),
     "https://github.com/triton-lang/triton/blob/main/python/triton/compiler/compiler.py"),
    (W7, "NVIDIA 백엔드 compiler.py", "week07", ("04_compile_pipeline",),
     "https://github.com/triton-lang/triton/blob/main/third_party/nvidia/backend/compiler.py"),
    (W7, "autotuner.py", "week07", ("03_tile_configs_roofline",),
     "https://github.com/triton-lang/triton/blob/main/python/triton/runtime/autotuner.py"),
    (W7, "Triton GitHub README: Tips for hacking", "week07", ("04_compile_pipeline", "05_artifacts_benchmarks"),
     "https://github.com/triton-lang/triton#tips-for-hacking"),
    (W7, "Debugging Triton", "week07", ("05_artifacts_benchmarks",),
     TRITON_DOCS + "programming-guide/chapter-3/debugging.html"),
    (W7, "NVIDIA Matrix Multiplication Background", "week07", ALL_W7, MATMUL_BACKGROUND),
    (W7, "CUDA PTX ISA", "week07", ("04_compile_pipeline", "05_artifacts_benchmarks"),
     "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html"),
    (W7, "MLIR Overview", "week07", ("01_pointer_blocks", "03_tile_configs_roofline", "04_compile_pipeline"),
     "https://mlir.llvm.org/"),
]


def _seed(name: str) -> str:
    path = SEEDS / name
    if not path.is_file():
        pytest.skip(f"the seeds are not here ({path})")
    return path.read_text(encoding="utf-8")


def _markdown_cells(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            source = cell["source"]
            yield i, "".join(source) if isinstance(source, list) else source


def _visible_text(html: str) -> str:
    """The rendered text outside code spans and blocks (code may hold ``**`` legitimately, e.g. ``4096**3``)."""
    soup = BeautifulSoup(html, "html.parser")
    for code in soup.find_all(["code", "pre"]):
        code.decompose()
    return soup.get_text()


def literal_asterisks(markdown: str, render) -> list[str]:
    """Excerpts around every ``**`` that ``render`` leaves in the text instead of turning into emphasis."""
    text = _visible_text(render(markdown))
    return [text[max(0, m.start() - 30):m.end() + 10].replace("\n", " ") for m in re.finditer(r"\*\*", text)]


@pytest.mark.parametrize("name", list(RENDERERS))
def test_the_check_sees_a_particle_after_a_closing_parenthesis(name):
    render = RENDERERS[name]
    assert literal_asterisks("시간은 **중앙값(median)**이고, 평균이 아닙니다.", render)
    assert not literal_asterisks("시간은 **중앙값**(median)이고, 평균이 아닙니다.", render)
    assert not literal_asterisks("`2 * 4096**3` 은 코드입니다", render)


def test_no_notebook_renders_literal_asterisks():
    assert NOTEBOOKS, "no notebooks found"
    bad = []
    for path in NOTEBOOKS:
        for index, markdown in _markdown_cells(path):
            for name, render in RENDERERS.items():
                bad += [f"{path.relative_to(ROOT)} cell {index} ({name}): ...{excerpt}..."
                        for excerpt in literal_asterisks(markdown, render)]
    assert not bad, "`**` printed as text (move a particle or parenthesis out of the bold run):\n" + "\n".join(bad)


def test_every_reading_title_is_in_its_seed():
    missing = [(seed, title) for seed, title, *_ in READINGS if title not in _seed(seed)]
    assert not missing, missing


# a row of the week-7 table starts with its category ("공통", "컴파일러 구현", ...), at most this long
CATEGORY_CHARS = 12
# the shorter names the seeds' "공통 자료인 ... 중심" pointers use for a reading of the table
SHORT_NAMES = {"Triton Tutorial 01: Vector Addition": "Tutorial 01", "Triton Tutorial 02: Fused Softmax": "Tutorial 02",
               "Triton Tutorial 03: Matrix Multiplication": "Tutorial 03", "Triton 논문 (MAPL 2019)": "Triton 논문",
               "Triton Programming Guide 1장: Introduction": "Triton Programming Guide 1장",
               "Triton MLIR Dialects and Ops": "Triton MLIR Dialects", "MLIR Overview": "MLIR 개요",
               "Modern GPU Programming: What Makes a Kernel Fast": "Modern GPU Programming",
               "Triton GitHub README: Tips for hacking": "Tips for Hacking"}


def week7_table_rows(text: str) -> list[str]:
    """The rows of the week-7 reference's reading table (section 1), one line each."""
    start = text.index("구분자료읽을 범위와 질문")
    return text[start:].split("\n\n", 1)[0].splitlines()[1:]


def test_every_row_of_the_week7_reading_table_is_in_the_table():
    rows = week7_table_rows(_seed(W7))
    assert len(rows) >= 8, rows
    titles = [title for seed, title, *_ in READINGS if seed == W7]
    for row in rows:
        # "category + name1 · name2 · ... · nameN + what to read": the names are the parts around " · "
        parts = row.split(" · ")
        first = [t for t in titles if parts[0].find(t) in range(CATEGORY_CHARS + 1)]
        assert first, f"{row[:80]}...: its first reading is not in the table"
        if len(parts) > 1:
            assert any(parts[0].endswith(t) for t in first), f"{parts[0]!r}: not a reading of the table"
            assert all(p in titles for p in parts[1:-1]), f"{row[:80]}...: {parts[1:-1]}"
            assert any(parts[-1].startswith(t) for t in titles), f"{parts[-1][:60]!r}: not a reading of the table"


def test_every_common_reading_pointer_of_the_seeds_names_a_reading():
    for seed in (W6, W7):
        names = [n for s, title, *_ in READINGS if s == seed for n in (title, SHORT_NAMES.get(title)) if n]
        pointers = re.findall(r"공통 자료인 (.+?) 중심", _seed(seed))
        assert len(pointers) >= 4, seed
        for pointer in pointers:
            assert any(n in pointer for n in names), f"{seed}: no reading of the table in {pointer!r}"


def _reading_list_links(path: Path) -> set[str]:
    """The link targets under the notebook's "## 읽을거리" heading (up to the next heading)."""
    links: set[str] = set()
    for _, markdown in _markdown_cells(path):
        if "## 읽을거리" not in markdown:
            continue
        section = re.split(r"^#+ ", markdown.split("## 읽을거리", 1)[1], flags=re.M)[0]
        soup = BeautifulSoup(MarkdownIt("commonmark").render(section), "html.parser")
        links |= {a["href"] for a in soup.find_all("a")}
    return links


@pytest.mark.parametrize("kind", ["source", "release"])
def test_every_seed_reading_is_linked_where_it_is_taught(kind):
    missing = []
    for _, title, week, stems, url in READINGS:
        for stem in stems:
            path = ROOT / kind / week / f"{stem}.ipynb"
            assert path.is_file(), path
            if url not in _reading_list_links(path):
                missing.append(f"{kind}/{week}/{stem}: {title} <{url}>")
    assert not missing, "readings missing from a notebook's 읽을거리 list:\n" + "\n".join(missing)
