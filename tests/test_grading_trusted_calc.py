"""fresh().calc: a private, sealed copy of gemm_lab.calc that a notebook cannot reach; fresh() discovers
every module of the grading package (gemm_lab.grading._loader)."""

import ast
import builtins
import sys
from pathlib import Path

import pytest

import gemm_lab.calc as real_calc
from gemm_lab.grading import _loader, fresh
from gemm_lab.grading.feedback import REAL_ASSERTION_ERROR

CALC_DIR = Path(real_calc.__file__).parent
GRADING_DIR = Path(_loader.__file__).parent


@pytest.fixture(autouse=True)
def _fresh_after():
    yield
    fresh()


def test_calc_copy_gives_the_calculators_values():
    g = fresh()
    assert g.calc is not real_calc and g.calc.__name__ == "gemm_lab.grading.calc"
    # equal values (the classes differ: the copy has its own dataclasses)
    assert repr(g.calc.tile_grid(500, 600, 300, 128, 128, 64)) == repr(real_calc.tile_grid(500, 600, 300, 128, 128, 64))
    assert g.calc.tiling.cdiv(500, 128) == 4
    cfg = g.calc.SEED_CONFIGS[2]
    assert g.calc.roofline(4096, 4096, 4096, cfg).intensity == real_calc.roofline(
        4096, 4096, 4096, real_calc.SEED_CONFIGS[2]).intensity  # the callable roofline module survives sealing
    mine = g.calc.roofline_table(4096, 4096, 4096, g.calc.SEED_CONFIGS)
    assert mine.equals(real_calc.roofline_table(4096, 4096, 4096, real_calc.SEED_CONFIGS))
    # every calculator submodule is there, loaded from the calc folder
    for path in CALC_DIR.glob("*.py"):
        if path.stem != "__init__":
            mod = getattr(g.calc, path.stem)
            assert Path(mod.__file__) == path and mod is not sys.modules.get(f"gemm_lab.calc.{path.stem}")


def test_calc_copy_is_sealed():
    g = fresh()
    for target, name in [(g.calc, "tile_grid"), (g.calc, "SEED_CONFIGS"), (g.calc.tiling, "cdiv"),
                         (g.calc.roofline, "roofline_table"), (g, "calc")]:
        with pytest.raises(AttributeError, match="read-only"):
            setattr(target, name, lambda *a, **k: None)
        with pytest.raises(AttributeError):
            delattr(target, name)
    g.calc.__dict__["tile_grid"] = lambda *a: None  # a __dict__ write does not change the served name
    assert g.calc.tile_grid(500, 600, 300, 128, 128, 64).grid == 20


def test_patched_or_replaced_gemm_lab_calc_does_not_reach_the_copy(monkeypatch):
    import types

    monkeypatch.setattr(real_calc, "tile_grid", lambda *a, **k: types.SimpleNamespace(grid=1))
    monkeypatch.setattr(real_calc.tiling, "cdiv", lambda a, b: 0)
    fake = types.ModuleType("gemm_lab.calc.tiling")
    fake.cdiv = lambda a, b: 0
    monkeypatch.setitem(sys.modules, "gemm_lab.calc.tiling", fake)
    monkeypatch.setitem(sys.modules, "gemm_lab.calc", types.ModuleType("gemm_lab.calc"))
    g = fresh()
    assert g.calc.tile_grid(500, 600, 300, 128, 128, 64).grid == 20
    assert g.calc.tiling.cdiv(500, 128) == 4 and g.calc.k_tail(1000, 1024).padded == 24
    # a test cell checks a wrong answer against the copy, whatever the notebook did to its calc
    with pytest.raises(REAL_ASSERTION_ERROR, match="grid"):
        g.check_value("grid", 1, g.calc.tile_grid(500, 600, 300, 128, 128, 64).grid)


def test_calc_copy_does_not_use_import_hooks():
    seen = []

    class Spy:
        def find_spec(self, name, *a, **k):
            seen.append(name)
            return None

    spy = Spy()
    sys.meta_path.insert(0, spy)
    try:
        fresh()
    finally:
        sys.meta_path.remove(spy)
    assert not [n for n in seen if n.startswith(("gemm_lab.grading", "gemm_lab.calc"))], seen


def test_calculators_import_each_other_only_relatively():
    """The copy is self-contained only while calc never imports gemm_lab by absolute name."""
    for path in CALC_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert not (node.module or "").startswith("gemm_lab"), f"{path.name}: from {node.module} import"
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("gemm_lab") for a in node.names), f"{path.name}: import gemm_lab"


def test_fresh_loads_every_module_file_of_the_package_and_each_is_sealed():
    g = fresh()
    for path in GRADING_DIR.glob("*.py"):
        if path.stem != "__init__":
            name = f"gemm_lab.grading.{path.stem}"
            assert sys.modules[name] is getattr(g, path.stem), name
    unsealed = [k for k, m in sys.modules.items()
                if k.startswith("gemm_lab.grading") and not isinstance(m, g._seal.SealedModule)]
    assert unsealed == [], f"modules that do not end with _seal.seal(__name__): {unsealed}"


def test_load_package_orders_modules_by_their_imports(tmp_path):
    pkg = tmp_path / "toy_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .a_top import VALUE\n")
    (pkg / "a_top.py").write_text("from .m_mid import MID\nfrom . import z_base\nVALUE = MID + z_base.BASE\n")
    (pkg / "m_mid.py").write_text("from toy_pkg.z_base import BASE\nMID = BASE * 10\n")
    (pkg / "z_base.py").write_text("BASE = 1\ndef later():\n    from . import a_top  # runs later: no order\n")
    (pkg / "not-a-module.py").write_text("raise RuntimeError\n")
    assert _loader.dependency_order(str(pkg), "toy_pkg") == ["z_base", "m_mid", "a_top"]
    try:
        mod = _loader.load_package("toy_pkg", str(pkg), seal_all=True)
        assert mod.VALUE == 11 and mod.a_top.VALUE == 11
        with pytest.raises(AttributeError, match="read-only"):
            mod.m_mid.MID = 0
    finally:
        for k in [k for k in sys.modules if k.split(".")[0] == "toy_pkg"]:
            del sys.modules[k]
    with pytest.raises(ValueError, match="no __init__.py"):
        _loader.load_package("toy_pkg", str(tmp_path))


def test_fresh_still_refuses_rebound_builtins_with_the_calc_copy():
    real_abs, real_exec = builtins.abs, builtins.exec
    builtins.abs = lambda x: 0
    try:
        with pytest.raises(REAL_ASSERTION_ERROR, match="abs"):
            fresh()
    finally:
        builtins.abs = real_abs
    calls = []
    builtins.exec = lambda *a, **k: calls.append(a)  # the loader keeps the genuine exec it was loaded with
    try:
        with pytest.raises(REAL_ASSERTION_ERROR, match="exec"):
            fresh()
    finally:
        builtins.exec = real_exec
    assert calls == []
