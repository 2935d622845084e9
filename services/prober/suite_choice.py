"""Which model a scheduled suite pass tests, and which tasks it asks (T-6). Pure.

`SuiteHistory` folds `suite_answered`: each model's latest answer per task and when it was last scored.
`--next-free` takes the `:free` model never scored, else the least recently scored; `--next` a non-free
model never scored, else one with tasks it has not answered yet (incomplete), else the least recently
scored. Ad hoc models are never picked (C-8). A pass asks at most `PASS_TASKS`: tasks never answered or
whose answer was a capacity failure first, then those answered longest ago.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from shared.config_state import ConfigState
from shared.events import EventBase, SuiteAnswered
from suite.task import Task

PASS_TASKS = 6
CAPACITY = ("rate limit", "rate-limit", "quota", "too many requests", "429", "overloaded", "capacity",
            "no answer in", "timed out", "paced by the bench", "not sent")
Next = Literal["paid", "free"]


@dataclass
class SuiteHistory:
    latest: dict[tuple[str, str], SuiteAnswered] = field(default_factory=dict)  # (alias, task) → answer
    scored_at: dict[str, datetime] = field(default_factory=dict)  # alias → its latest answer's time

    def apply(self, event: EventBase, seq: int = 0) -> None:
        if not isinstance(event, SuiteAnswered):
            return
        key = (event.alias, event.task)
        known = self.latest.get(key)
        if known is None or event.at >= known.at:
            self.latest[key] = event
        last = self.scored_at.get(event.alias)
        if last is None or event.at > last:
            self.scored_at[event.alias] = event.at

    def answer(self, alias: str, task: str) -> SuiteAnswered | None:
        return self.latest.get((alias, task))


def is_free(served: str) -> bool:
    return served.endswith(":free")


def capacity_failure(answer: SuiteAnswered) -> bool:
    """An answer that says nothing about the model: it was not let through, or ran out of time."""
    return answer.kind in ("error", "timeout") and any(w in answer.reason.lower() for w in CAPACITY)


def pick_model(config: ConfigState, history: SuiteHistory, which: Next, tasks: list[Task]) -> str | None:
    candidates = [a for a, m in config.models.items()
                  if not m.ad_hoc and is_free(m.served) == (which == "free")]
    never = [a for a in candidates if a not in history.scored_at]
    if never:
        return never[0]
    if which == "paid":
        incomplete = [a for a in candidates
                      if any(history.answer(a, t.id) is None for t in tasks if not t.draft)]
        if incomplete:
            return min(incomplete, key=lambda a: history.scored_at[a])
    return min(candidates, key=lambda a: history.scored_at[a], default=None)


def pick_tasks(tasks: list[Task], history: SuiteHistory, alias: str, limit: int = PASS_TASKS) -> list[Task]:
    """Non-draft tasks: unanswered or capacity failures first (in task order), then the oldest answers."""
    runnable = [t for t in tasks if not t.draft]
    fresh = [t for t in runnable if (a := history.answer(alias, t.id)) is None or capacity_failure(a)]
    answered = [t for t in runnable if t not in fresh]
    answered.sort(key=lambda t: history.latest[(alias, t.id)].at)
    return (fresh + answered)[:limit]
