"""Clauses (T-1) and the negation rule (T-2): what counts as a mention, and when a mention is a claim.

A clause is a case-insensitive substring, `{"any_of": [...], "label"?}` (any one of them), or
`{"regex": ..., "label"?}` (searched case-insensitively, `^`/`$` at line ends). A mention of a
`must_not_claim` clause is an assertion unless a negation word precedes it in the same sentence, within
`NEGATION_WINDOW` characters.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

NEGATION_WINDOW = 60
NEGATIONS = ("no", "not", "never", "none", "nothing", "without", "cannot", "false", "neither", "nor")
NEGATION_RE = re.compile(r"\b(?:" + "|".join(NEGATIONS) + r")\b|n't\b", re.IGNORECASE)
# A sentence ends at . ! ? or a line break; a dot between word characters (`a.b`, `3.14`) ends nothing.
SENTENCE_END_RE = re.compile(r"[!?\n]|\.(?!\w)")
FLAGS = re.IGNORECASE | re.MULTILINE


class AnyOf(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    any_of: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    label: str = ""


class Regex(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    regex: Annotated[str, Field(min_length=1)]
    label: str = ""

    @field_validator("regex")
    @classmethod
    def compiles(cls, value: str) -> str:
        try:
            re.compile(value, FLAGS)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


def clause_kind(value: Any) -> str | None:
    """Which of the three a clause is, so a bad one is refused for what it tried to be."""
    if isinstance(value, str):
        return "text"
    if isinstance(value, AnyOf) or (isinstance(value, dict) and "any_of" in value):
        return "any_of"
    if isinstance(value, Regex) or (isinstance(value, dict) and "regex" in value):
        return "regex"
    return None


Text = Annotated[str, Tag("text"), Field(min_length=1)]
Clause = Annotated[
    Text | Annotated[AnyOf, Tag("any_of")] | Annotated[Regex, Tag("regex")],
    Discriminator(clause_kind, custom_error_type="clause",
                  custom_error_message='a clause is a string, {"any_of": [...]} or {"regex": ..., "label"?}'),
]


def label(clause: Clause) -> str:
    if isinstance(clause, str):
        return clause
    if isinstance(clause, AnyOf):
        return clause.label or " | ".join(clause.any_of)
    return clause.label or clause.regex


def pattern(clause: Clause) -> re.Pattern[str]:
    if isinstance(clause, str):
        return re.compile(re.escape(clause), FLAGS)
    if isinstance(clause, AnyOf):
        return re.compile("|".join(re.escape(s) for s in clause.any_of), FLAGS)
    return re.compile(clause.regex, FLAGS)


def mentions(clause: Clause, text: str) -> list[int]:
    """Where the clause is mentioned in the text (start offsets)."""
    return [m.start() for m in pattern(clause).finditer(text)]


def present(clause: Clause, text: str) -> bool:
    return pattern(clause).search(text) is not None


def negated(text: str, at: int) -> bool:
    """Is the mention starting at `at` preceded by a negation in its own sentence, within the window? Words
    are read whole (the `not` of `cannot` starts before it, the `no` of `know` is not a word)."""
    start = max(0, at - NEGATION_WINDOW)
    for end in SENTENCE_END_RE.finditer(text, start, at):
        start = end.end()
    return NEGATION_RE.search(text, start, at) is not None


def asserted(clause: Clause, text: str) -> bool:
    """A claim: at least one mention that no negation in its sentence takes back."""
    return any(not negated(text, at) for at in mentions(clause, text))
