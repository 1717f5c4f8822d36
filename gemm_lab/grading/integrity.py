"""Where grading decisions are made, and the instructor's review scan of hand-ins.

Threat model. The kernel that runs a hand-in is the student's machine: anything it prints, returns or
writes is a claim. So, while the autograder runs a notebook, test cells do not judge there: each hands
the values it reads out as data (``handout``), and the grader, in its own process, runs the test cell's
source on them (``replay``); kernels and function answers are taken from the notebook's source
(``extract``: a kernel may use only Triton) and run in a fresh sandboxed worker (``worker``/``remote``)
on inputs the grader makes, with the reference computed and compared in the grader. Nothing a hand-in
runs can change a check, the expected values or a compile verdict; forging the hand-out only claims an
answer.

On a student's own machine (not grading) the same test cells run in the notebook and print their ✅/❌
lines at once; there, ``fresh()`` is simply this package.

``scan_source(code, protected)`` (``.audit.scan``) lists constructs that try to subvert a checker
(rebinding checks or built-ins, import hooks, frames, ``exec``, history reads, ...): a review aid that
tells the instructor which hand-ins tried, never a defence the grade depends on.
"""

from __future__ import annotations

import sys

__all__ = ["fresh", "scan_source", "scan_notebook", "locked_names", "FLAG_TEXT"]

_PACKAGE = "gemm_lab.grading"


def fresh():
    """The grading package (test cells call ``g = fresh()`` and use ``g.check_*`` and ``g.calc``)."""
    return sys.modules[_PACKAGE]


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
    "WRITES_MODULE": "파이썬 모듈 파일(.py 등)을 만들거나 가리킵니다: 그 안의 코드는 이 검사가 읽지 못합니다",
    "KERNEL_NOT_TRITON": "채점기가 커널을 거부했습니다: Triton이 아닌 것을 씁니다",
    "KERNEL_SHAPE_SPECIAL": "커널이 셀에 적힌 크기에서만 맞고 채점기가 고른 크기에서는 틀립니다",
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
