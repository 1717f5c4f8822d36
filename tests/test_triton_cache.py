"""The shared read-only Triton cache: the layered cache manager, the sandbox binding, the warm-up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grade import triton_cache
from autograder.sandbox import bwrap as sandbox
from gemm_lab import triton_cache as layered

needs_bwrap = pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap not installed")
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def layers(tmp_path, monkeypatch):
    own, shared = tmp_path / "own", tmp_path / "shared"
    (shared / "KEY").mkdir(parents=True)
    (shared / "KEY" / "k.cubin").write_bytes(b"shared-bytes")
    (shared / "KEY" / "__grp__k.json").write_text(json.dumps({"child_paths": {
        "k.cubin": str(shared / "KEY" / "k.cubin"), "gone.ptx": str(shared / "KEY" / "gone.ptx")}}))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(own))
    monkeypatch.setenv(layered.ENV_SHARED, str(shared))
    return own, shared


def test_reads_the_shared_layer_and_writes_only_its_own(layers):
    own, shared = layers
    m = layered.LayeredCacheManager("KEY")
    assert m.get_file("k.cubin") == str(shared / "KEY" / "k.cubin")
    assert m.get_group("k.json") == {"k.cubin": str(shared / "KEY" / "k.cubin")}  # missing children dropped
    assert m.get_file("absent") is None and m.get_group("absent.json") is None
    written = m.put(b"own-bytes", "k.cubin")
    assert Path(written).parent == own / "KEY"
    assert m.get_file("k.cubin") == written  # the private layer wins
    assert (shared / "KEY" / "k.cubin").read_bytes() == b"shared-bytes"


def test_no_shared_layer_is_plain_triton(layers, monkeypatch):
    monkeypatch.delenv(layered.ENV_SHARED)
    m = layered.LayeredCacheManager("KEY")
    assert m.shared_dir is None and m.get_file("k.cubin") is None


def test_a_corrupt_shared_group_is_a_miss(layers):
    _, shared = layers
    (shared / "KEY" / "__grp__bad.json").write_text("{not json")
    (shared / "KEY" / "__grp__odd.json").write_text(json.dumps({"child_paths": ["x"]}))
    m = layered.LayeredCacheManager("KEY")
    assert m.get_group("bad.json") is None and m.get_group("odd.json") is None


def test_env_for_needs_an_absolute_path():
    assert layered.env_for("/x")["TRITON_CACHE_MANAGER"] == layered.MANAGER
    with pytest.raises(ValueError, match="absolute"):
        layered.env_for("relative/dir")
    with pytest.raises(ValueError, match="absolute"):
        layered.env_for(None)


def test_triton_uses_the_layered_manager_for_a_real_compile(tmp_path):
    """A cross-compile in a fresh process: first run fills the shared folder, a second process with an
    empty private cache compiles nothing (its own cache stays empty) and gets the same artifacts."""
    code = ("from gemm_lab import compile as c; "
            "a = c.compile_artifacts('vector_add', target='sm_80'); print(len(a.ptx))")
    shared, own = tmp_path / "shared", tmp_path / "own"
    base = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GEMM_LAB_COMPILE_CACHE": "off",
            "PYTHONPATH": str(REPO)}
    first = subprocess.run([sys.executable, "-c", code], env=dict(base, TRITON_CACHE_DIR=str(shared)),
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                            env=dict(base, TRITON_CACHE_DIR=str(own), **layered.env_for(str(shared))))
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert not any(p.is_file() for p in own.rglob("*")), "the second compile wrote its own cache"


def test_sandbox_spec_binds_the_folder_read_only(tmp_path):
    assert triton_cache.sandbox_spec(None) == {}
    spec = triton_cache.sandbox_spec(tmp_path)
    assert spec["extra_ro_paths"] == [str(tmp_path)]
    assert spec["env"][layered.ENV_SHARED] == str(tmp_path)
    rt = tmp_path / "rt"
    rt.mkdir()
    opts = sandbox.bwrap_options(str(rt), extra_ro_paths=[str(tmp_path)])
    i = opts.index(str(tmp_path))
    assert opts[i - 1:i + 2] == ["--ro-bind", str(tmp_path), str(tmp_path)]
    assert opts.count(str(tmp_path)) == 2  # bound once, read-only
    with pytest.raises(ValueError, match="extra_ro_paths"):
        sandbox.bwrap_options(str(rt), extra_ro_paths=["relative"])


@needs_bwrap
def test_a_hand_in_cannot_write_the_shared_cache(tmp_path):
    shared = tmp_path / "shared"
    (shared / "KEY").mkdir(parents=True)
    (shared / "KEY" / "k.cubin").write_bytes(b"trusted")
    handin, rt = tmp_path / "handin", tmp_path / "rt"
    handin.mkdir()
    rt.mkdir()
    code = ("import os, sys; p = os.environ['GEMM_LAB_TRITON_SHARED_CACHE'] + '/KEY/k.cubin'; "
            "print(open(p, 'rb').read()); "
            "exec('try:\\n open(p, \"wb\").write(b\"forged\")\\nexcept OSError as e:\\n print(\"refused\", e.errno)')")
    proc, _ = sandbox.run_sandboxed([sys.executable, "-c", code], str(handin), str(rt),
                                    triton_cache.sandbox_spec(shared),
                                    use_cgroup=False, timeout=60)
    assert "b'trusted'" in proc.stdout and "refused" in proc.stdout, proc.stdout + proc.stderr
    assert (shared / "KEY" / "k.cubin").read_bytes() == b"trusted"


def test_switch_turns_it_off(monkeypatch, tmp_path):
    from autograder.course import Course

    monkeypatch.setenv(triton_cache.ENV_SWITCH, "0")
    assert triton_cache.warm(Course.at(tmp_path), "a1", tmp_path) is None
    monkeypatch.setenv(triton_cache.ENV_SWITCH, "1")
    assert triton_cache.warm(Course.at(tmp_path), "a1", tmp_path) is None  # no notebook: nothing to warm
