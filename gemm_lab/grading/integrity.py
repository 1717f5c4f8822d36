"""Tamper resistance: a fresh copy of the grader for test cells, and a static scan of hand-ins.

Threat model. nbgrader runs a hand-in's cells, then the (locked, hidden) test cells, in one Python
process. A test cell passes when it raises nothing, so a student who wants points without the work
tries to make the checks *not raise*. What this package does about it:

* Every module of the package is sealed on import (``_seal``): ``g.check_value = ...``,
  ``g.fresh = ...`` or ``setattr(g.answers, "_compare", ...)`` raise AttributeError in the student's own
  cell, and the public names are served from class properties, so a write into ``g.__dict__`` does not
  change what ``from gemm_lab.grading import fresh`` returns.
* ``fresh()`` drops every ``gemm_lab.grading*`` module from ``sys.modules`` and loads the package again
  straight from its files (``_loader``: every ``*.py`` of the package, discovered and ordered by their
  imports, executed by the loader itself, so neither ``sys.meta_path`` finders nor
  ``sys.modules`` entries decide what runs), so ``g.check_value = lambda *a, **k: None`` or a patched
  helper in a notebook is gone. It also gives ``g.calc``, a private copy of ``gemm_lab.calc`` loaded the
  same way and sealed: a test cell computes every expected value from it, so a notebook that patches
  ``gemm_lab.calc`` or rebinds ``calc``/``tiling``/``rf``/``CONFIGS``/``expected_table`` changes no
  check (the rule is in the package docstring; ``audit.cell_audit`` and ``tests/test_master_test_cells.py``
  enforce it on the masters). It fails (Korean message), before loading and again after, when
  built-ins the grader uses were rebound (``builtins.AssertionError``, ``abs``, ``isinstance``,
  ``exec``, ...), when a trace/profile function is installed (it could rewrite the checker's local
  variables), or when a ``sys.meta_path`` finder defined in the notebook is present.
* The checks never call numpy/torch/math comparison functions: values leave tensors through the
  C-level ``torch._C.TensorBase.tolist`` / ``numpy.ndarray.tolist`` (immutable types), and are compared
  with plain operators on Python floats. Kernel checks build their inputs with their own generator,
  read them back to verify them, compute the reference in pure Python, and re-check the built-ins after
  the student's launcher ran; an active torch function/dispatch mode (which could make ``tolist`` lie)
  is refused, and the grader's own module globals are snapshotted around the launcher's call. The
  failure is raised as the genuine ``AssertionError`` (captured from an
  ``assert`` statement, not looked up in builtins).

A test cell must call ``fresh()`` itself: a function imported at the top of a notebook
(``from gemm_lab.grading import check_value``) is the old object, and a patched helper of its module
stays patched for it.

What a hostile notebook can still do, in this same process (the sandbox and ``scan_source`` are the
answer to these, not this module):

* replace ``gemm_lab.grading`` in ``sys.modules`` before the test cell imports it (the test cell's
  ``from gemm_lab.grading import fresh`` then gets the fake), write into a submodule's ``__dict__`` (a test
  cell that skips ``fresh()`` is then fooled), or patch ``importlib``;
* install an import hook or monkeypatch ``importlib.util``/``builtins.__import__`` in a way that survives
  the checks above (``__import__`` is checked to be the genuine built-in, importlib is not);
* register a Python kernel for an aten operator through ``torch.library`` (on a GPU the checker's
  device-to-host copy is such an operator); modes are refused, library overrides are only flagged;
* use ``ctypes``/``gc.get_referents`` to write into immutable types or frames, ``os._exit(0)`` /
  ``sys.exit`` to end the kernel (nbgrader then records errors, not passes, but check it), read the
  expected values from ``gemm_lab.calc`` (they are computed, not secret: hidden tests protect the
  *shapes* and cases, not the formulas), or edit files of the installed package on disk;
* when ``gemm_lab.grading`` is first imported *after* a student cell rebound ``builtins.exec`` with a
  function that restores itself on first call, the loader keeps that function (the guard checks
  ``exec`` only while it is still rebound); importing ``gemm_lab.grading`` in the notebook's first
  (locked) cell closes this;
* read IPython's history (``In``, ``_ih``, ``%history``) in a later cell, where the source of hidden
  tests that already ran is kept: it cannot change a score, but it can copy hidden tests into the
  notebook's outputs (the feedback step strips them).

``scan_source(code, protected)`` (``.audit.scan``) flags all of these constructs statically, and also
rebinding of any name the locked cells define (``LOCKED_REBIND``) and history reads
(``INPUT_HISTORY``), so the autograder can mark the hand-in for a human to look at.
"""

from __future__ import annotations

import os
import sys

from . import _loader, _seal
from .feedback import REAL_ASSERTION_ERROR

__all__ = ["fresh", "environment_problems", "scan_source", "scan_notebook", "locked_names", "FLAG_TEXT"]

_PACKAGE = "gemm_lab.grading"


def environment_problems() -> list[str]:
    """Korean descriptions of what in this process would let a notebook subvert the checks."""
    from . import _trusted

    out = [f"builtins.{n}이(가) 바뀌었습니다" for n in _trusted.problems()]
    if sys.gettrace() is not None:
        out.append("sys.settrace로 추적 함수가 설치되어 있습니다")
    if sys.getprofile() is not None:
        out.append("sys.setprofile로 프로파일 함수가 설치되어 있습니다")
    for finder in sys.meta_path:
        mod = finder.__module__ if isinstance(finder, type) else type(finder).__module__
        if mod in ("__main__", "builtins") or mod.startswith("<"):
            out.append(f"노트북에서 정의한 import 훅(sys.meta_path의 {mod})이 있습니다")
    return out


def fresh():
    """Load ``gemm_lab.grading`` again from disk and return it (the package module).

    Use in test cells: ``from gemm_lab.grading import fresh; g = fresh(); g.check_value(...)``, with
    every expected value computed from ``g.calc`` (a private, sealed copy of ``gemm_lab.calc``). Every
    ``*.py`` file of the package is loaded (``_loader``: discovered, dependencies first), so a new
    grading module needs no registration here.
    Raises the genuine AssertionError (Korean) when the environment was tampered with.
    """
    # refuse before loading anything with a tampered interpreter (exec, import hooks, trace functions)...
    _refuse_tampering(environment_problems(), REAL_ASSERTION_ERROR)
    here = os.path.dirname(os.path.abspath(sys._getframe().f_code.co_filename))
    pkg = _loader.load_package(_PACKAGE, here)
    parent = sys.modules.get("gemm_lab")
    if parent is not None:
        parent.grading = pkg
    # ...and ask the freshly loaded copy again
    _refuse_tampering(pkg.integrity.environment_problems(), pkg.feedback.REAL_ASSERTION_ERROR)
    return pkg


def _refuse_tampering(problems, error) -> None:
    if problems:
        raise error(
            "❌ 채점 환경이 바뀌었습니다: " + "; ".join(problems)
            + ". 채점기를 바꾸는 코드를 지우고 커널을 재시작한 뒤 처음부터 다시 실행하세요."
        )


# --------------------------------------------------------------------------- static scan

# Korean text of each finding code of the static scan (.audit.scan; the autograder's policy per code is in
# autograder/integrity.py).
FLAG_TEXT = {
    "MODULE_ATTR": "모듈(또는 모듈의 클래스) 속성을 바꿉니다",
    "IMPORT_BUILTINS": "builtins 모듈을 가져옵니다",
    "DUNDER_BUILTINS": "__builtins__에 접근합니다",
    "SYS_HOOK": "sys의 import/추적 장치를 건드립니다",
    "FRAME_ACCESS": "실행 프레임(frame)에 접근합니다",
    "REDEFINE_CHECK": "채점 함수(check_*/assert*) 이름을 새로 정의합니다",
    "ASSERTION_ERROR": "AssertionError를 바꿉니다",
    "EXIT": "프로세스/커널을 종료합니다",
    "CTYPES": "메모리를 직접 건드리는 모듈(ctypes 등)을 씁니다",
    "NETWORK": "네트워크나 외부 프로세스를 씁니다",
    "OPEN_OUTSIDE": "작업 폴더 밖의 파일을 엽니다",
    "DYNAMIC_CODE": "문자열로 코드를 실행하거나 동적으로 import합니다",
    "GLOBALS_WRITE": "globals()/vars()/__dict__를 직접 고칩니다",
    "SHELL": "셸 명령(!, %%)을 실행합니다",
    "SYNTAX": "코드를 해석할 수 없습니다",
    "TORCH_HOOK": "torch의 연산 가로채기 장치(mode, library, __torch_function__)를 씁니다",
    "LOCKED_REBIND": "주어진(잠긴) 셀이 정의한 이름이나 gemm_lab 모듈을 다시 정의하거나 고칩니다",
    "INPUT_HISTORY": "IPython 입력/출력 기록(In, Out, _ih, %history)을 읽습니다",
    "GRADER_CACHE": "채점기의 컴파일 검사 결과(캐시)를 건드립니다",
}


def scan_source(code: str, protected=None) -> list[str]:
    """Tampering constructs in a student's code (see ``gemm_lab.grading.audit.scan.scan_source``)."""
    from .audit.scan import scan_source as _scan_source

    return _scan_source(code, protected)


def scan_notebook(notebook) -> list[str]:
    """``scan_source`` over a notebook's student cells (see ``gemm_lab.grading.audit.scan.scan_notebook``)."""
    from .audit.scan import scan_notebook as _scan_notebook

    return _scan_notebook(notebook)


def locked_names(cells, before=None) -> dict:
    """Names the given (locked) cells define (see ``gemm_lab.grading.audit.scan.locked_names``)."""
    from .audit.scan import locked_names as _locked_names

    return _locked_names(cells, before)

_seal.seal(__name__)
