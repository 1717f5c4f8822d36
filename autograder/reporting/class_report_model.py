"""The class report's data (what `class_report.analyze` fills in and the HTML and plots read) and the few
helpers all three share; apart so that the page and the plots import it without importing the analysis."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field

MIN_SHARED = 3  # the class copy shows no value given by fewer students than this, and no count below it
MIN_STATS = 5  # the class copy shows no statistic (mean, median, rate, share) over fewer students than this
TOP_WRONG = 5  # wrong answers listed per check (the rest: one row)
STATUSES = ("pass", "fail", "grader_error", "not_run")
KIND_LABELS = {
    "k_tail": "K 꼬리 (k_tail)", "edge_tile": "가장자리 타일 (edge_tile)",
    "noncontiguous": "비연속 입력 (noncontiguous)", "poisoned_margin": "오염된 여백 (poisoned_margin)",
    "tiny": "아주 작은 크기 (tiny)", "packed": "빈틈없는 배치 (packed)", "time_limit": "시간 제한 (time_limit)",
    "compile_refused": "실행 전에 거부됨 (compile_refused)", "compile_error": "컴파일 오류 (compile_error)",
}


def _key(v) -> str:
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


def _blank(v) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


@dataclass
class CellInfo:
    notebook: str
    grade_id: str
    max_points: float
    order: int = -1
    title: str = ""  # the nearest heading above the cell in release/ (Korean)
    description: str = ""  # the test cell's docstring, first line


@dataclass
class WrongAnswer:
    value: object
    students: list = field(default_factory=list)
    messages: Counter = field(default_factory=Counter)

    @property
    def message(self) -> str:
        return self.messages.most_common(1)[0][0] if self.messages else ""


@dataclass
class CheckStats:
    name: str
    checked: int = 0
    correct: int = 0
    blank: list = field(default_factory=list)  # students
    wrong: dict = field(default_factory=dict)  # canonical key -> WrongAnswer
    expected: Counter = field(default_factory=Counter)

    def top_wrong(self, min_students: int = 1) -> tuple[list[WrongAnswer], list[WrongAnswer]]:
        """(the most frequent wrong answers given by >= min_students, the others)."""
        ranked = sorted(self.wrong.values(), key=lambda w: (-len(w.students), _key(w.value)))
        shown = [w for w in ranked if len(w.students) >= min_students][:TOP_WRONG]
        return shown, [w for w in ranked if w not in shown]

    @property
    def expected_value(self):
        return json.loads(self.expected.most_common(1)[0][0]) if self.expected else None


@dataclass
class KernelStats:
    students: int = 0  # verdicts with a kernel record
    failed: dict = field(default_factory=lambda: defaultdict(list))  # kind -> [(student, where, reason)]
    maps: list = field(default_factory=list)  # [(student, where, error map record)] of failed visible cases

    def students_by_kind(self) -> list[tuple[str, list[str]]]:
        out = [(kind, sorted({s for s, _, _ in rows})) for kind, rows in self.failed.items()]
        return sorted(out, key=lambda kv: (-len(kv[1]), kv[0]))


@dataclass
class CellStats:
    info: CellInfo
    handed_in: int = 0
    points: list = field(default_factory=list)  # scores of the handed-in, graded (not pending) submissions
    full: int = 0
    pending: list = field(default_factory=list)  # students whose manual grade is missing
    status: Counter = field(default_factory=Counter)
    checks: dict = field(default_factory=dict)  # name -> CheckStats (first-seen order)
    kernel: KernelStats | None = None
    grader_errors: list = field(default_factory=list)  # (student, message)
    blank: list = field(default_factory=list)  # students who failed without giving a value to check
    unchecked: dict = field(default_factory=dict)  # message -> [student]: failed before any check ran

    @property
    def verdicts(self) -> int:
        return sum(self.status.values())

    @property
    def graded(self) -> int:
        return len(self.points)

    @property
    def pass_rate(self) -> float | None:
        return self.full / self.graded if self.graded else None

    @property
    def mean_points(self) -> float | None:
        return sum(self.points) / self.graded if self.graded else None

    @property
    def blank_share(self) -> float | None:
        """Share of the students with a verdict who failed without a value to check: every failing check
        blank, or no check recorded (the answer's name undefined, the cell raised first)."""
        return len(self.blank) / self.verdicts if self.verdicts else None


@dataclass
class ClassReport:
    assignment: str
    students: list  # in the gradebook, sorted
    notebooks: list  # names, sorted
    notebook_max: dict
    totals: dict  # student -> total points (every notebook, 0 where not handed in: as grades.csv)
    notebook_scores: dict  # notebook -> {student: points} (handed-in only)
    cells: list  # CellStats, hardest first
    review: dict  # student -> [note] of this assignment
    unreadable: list  # (student, what)
    ignored_verdicts: list  # (student, notebook, why)

    @property
    def max_total(self) -> float:
        return sum(self.notebook_max.values())

    @property
    def pending_total(self) -> int:
        return sum(len(c.pending) for c in self.cells)


def show(v, limit: int = 120) -> str:
    """A value as the report prints it (JSON; a blank answer as its Korean label)."""
    if _blank(v):
        return "(빈 답)"
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 1] + "…"

