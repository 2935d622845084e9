"""Scoring one answer (T-2, T-3). Pure.

Non-answers come first and get no score: a timeout, an error or a provider notice in place of an answer, a
refusal, or an answer shorter than the task's `min_answer_chars`. An answer is then scored by its clauses:
`found` are the `must_find` clauses present, `invented` the `must_not_claim` clauses asserted (the negation
rule, `suite.clauses`). `score_in: first_line` scores only the first non-empty line; `must_not_claim_in:
table` looks for inventions only in `|` rows. The format is checked apart and never changes the score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from suite.clauses import Regex, asserted, label, present
from suite.task import Format, Task

Kind = Literal["answered", "error", "refused", "timeout"]

# Texts a client or provider sends in place of an answer. Looked for at the start of an answer (its first
# line) or anywhere in a short one, so a real review that discusses rate limits is not thrown away.
ERROR_MARKERS = (
    "error: error code:", "error code: 4", "error code: 5", "client failed", "rate limit", "rate-limited",
    "too many requests", "quota exceeded", "internal server error", "service unavailable",
)
PROVIDER_NOTICES = (
    "out of credits", "upgrade your plan", "insufficient credits", "insufficient balance",
    "no longer available", "has been deprecated", "is currently overloaded", "free tier",
)
REFUSALS = (
    "i can't help with", "i cannot help with", "i can't assist", "i cannot assist", "i'm unable to help",
    "i am unable to help", "i'm not able to help", "i won't be able to", "i'm sorry, but i can't",
    "i'm sorry, but i cannot", "i must decline",
)
TIMEOUT_MARKERS = ("no answer in", "timed out", "timeout")
SHORT_ANSWER = 400
OPENING = 200


@dataclass(frozen=True)
class Score:
    kind: Kind
    reason: str = ""
    found: tuple[str, ...] = ()
    missed: tuple[str, ...] = ()
    invented: tuple[str, ...] = ()
    format_problems: tuple[str, ...] = ()

    @property
    def of(self) -> int:
        return len(self.found) + len(self.missed)

    @property
    def answered(self) -> bool:
        return self.kind == "answered"

    @property
    def confidently_wrong(self) -> bool:
        """T-5: an answer that asserts what the task says is not so."""
        return self.answered and bool(self.invented)


def first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip().startswith("|")]


def non_answer(
    text: str, status: str = "ok", error: str = "", min_chars: int = 40
) -> tuple[Kind, str] | None:
    """Why this is no answer at all, or `None` when it is one."""
    if status == "error":
        said = error.lower()
        if any(marker in said for marker in TIMEOUT_MARKERS):
            return "timeout", error[:200]
        return "error", error[:200] or "the call failed"
    stripped = text.strip()
    lowered = stripped.lower()
    opening = lowered if len(lowered) <= SHORT_ANSWER else first_line(lowered)[:OPENING]
    for marker in ERROR_MARKERS + PROVIDER_NOTICES:
        if marker in opening:
            return "error", f"says {marker!r} instead of answering"
    for phrase in REFUSALS:
        if phrase in lowered[:OPENING]:
            return "refused", f"says {phrase!r}"
    if len(stripped) < min_chars:
        return "error", f"shorter than {min_chars} characters"
    return None


def format_problems(fmt: Format | None, text: str) -> tuple[str, ...]:
    if fmt is None:
        return ()
    problems = []
    rows = [r for r in table_rows(text) if not re.fullmatch(r"\s*\|[\s:|-]*\|?\s*", r)]
    if fmt.table and not rows:
        problems.append("no table")
    if len(rows) - (1 if rows else 0) < fmt.min_rows:
        problems.append(f"fewer than {fmt.min_rows} table rows")
    if len(text.strip()) < fmt.min_chars:
        problems.append(f"shorter than {fmt.min_chars} characters")
    problems += [f"contains {s!r}" for s in fmt.must_not_contain if s.lower() in text.lower()]
    return tuple(problems)


def score(task: Task, text: str, status: str = "ok", error: str = "") -> Score:
    refused = non_answer(text, status, error, task.min_answer_chars)
    if refused is not None:
        return Score(kind=refused[0], reason=refused[1])
    scoped = first_line(text) if task.score_in == "first_line" else text
    claims = "\n".join(table_rows(scoped)) if task.must_not_claim_in == "table" else scoped
    found = tuple(label(c) for c in task.must_find if present(c, scoped))
    missed = tuple(label(c) for c in task.must_find if not present(c, scoped))
    invented = tuple(label(c) for c in task.must_not_claim if asserted(c, claims))
    return Score("answered", "", found, missed, invented, format_problems(task.format, text))


def wrong_kind(task: Task) -> str:
    """What a confidently wrong answer to this task is called (T-5)."""
    if task.is_control:
        return "false alarm"
    if task.shape in ("seeded", "rebench"):
        return "wrong line"
    if task.shape == "claim":
        return "wrong verdict"
    return "trap"


# ---------------------------------------------------------------- T-3's clauses, built once

NO_FAULT = Regex(regex=r"^\W*no\s+fault\b", label="NO FAULT")
# A control's only wrong answer: any fault at all in code that has none.
FALSE_ALARM = Regex(regex=r"^\W*fault:\s*line", label="a fault in the control")


def fault_at(*lines: int) -> Regex:
    """The right answer to a bug task: its line (a deleted line's gap lies between two, either is right)."""
    alternatives, named = "|".join(map(str, lines)), " or ".join(map(str, lines))
    return Regex(regex=rf"^\W*fault:\s*line\s*(?:{alternatives})\b", label=f"FAULT: line {named}")


def fault_elsewhere(*lines: int) -> Regex:
    """A wrong line, named with confidence."""
    alternatives, named = "|".join(map(str, lines)), " or ".join(map(str, lines))
    return Regex(regex=rf"^\W*fault:\s*line\s*(?!(?:{alternatives})\b)\d+",
                 label=f"a line other than {named}")


def verdict(value: bool) -> Regex:
    word = "TRUE" if value else "FALSE"
    return Regex(regex=rf"^\W*verdict:\s*{word.lower()}\b", label=f"VERDICT: {word}")

