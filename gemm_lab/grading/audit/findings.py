"""The review-finding codes: what each one detects and its Korean text.

A finding reads ``"CODE (줄 N): 한국어 설명 — detail"`` (static scan) or ``"CODE: 한국어 설명 — detail"``
(grader's verdict). Every code is a review aid: it lists the hand-in for the instructor and changes no
score, because grades are computed outside the student's process.
"""

from __future__ import annotations

__all__ = ["FLAG_TEXT", "SCAN_TEXT", "VERDICT_TEXT"]

# the static scan of a cell's source (gemm_lab.grading.audit.scan): code -> Korean text
SCAN_TEXT = {
    "MODULE_ATTR": "모듈(또는 모듈의 클래스) 속성을 바꿉니다",
    "EXIT": "프로세스/커널을 종료합니다",
    "CTYPES": "메모리를 직접 건드리는 모듈(ctypes 등)을 씁니다",
    "NETWORK": "네트워크나 외부 프로세스를 씁니다",
    "OPEN_OUTSIDE": "작업 폴더 밖의 파일을 엽니다",
    "DYNAMIC_CODE": "문자열로 코드를 실행하거나 동적으로 import합니다",
    "WRITES_MODULE": "파이썬 모듈 파일(.py 등)을 만들거나 가리킵니다: 그 안의 코드는 이 검사가 읽지 못합니다",
}
# the grader's verdict on a test cell (autograder/grade/review.py): code -> Korean text
VERDICT_TEXT = {
    "KERNEL_NOT_TRITON": "채점기가 커널을 거부했습니다: Triton이 아닌 것을 씁니다",
    "KERNEL_SHAPE_SPECIAL": "커널이 셀에 적힌 크기에서만 맞고 채점기가 고른 크기에서는 틀립니다",
}
# every code -> its Korean text (what the scan and the autograder format findings with)
FLAG_TEXT: dict[str, str] = {**SCAN_TEXT, **VERDICT_TEXT}
