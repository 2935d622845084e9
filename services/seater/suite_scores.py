"""What the suite says about each model (T-5), folded from `suite_answered`. Pure.

Per model and task only the latest answer counts (a task asked again replaces the older score); a
non-answer never replaces an answer. Routing recall is found/of summed over those answers whose task counts
(`recall`: non-draft, not a claim, seeded or rebench task); "findings" is that sum's numerator, what RM-3
weighs after useful verdicts. "Confidently wrong" counts the answers that asserted what the task says is not
so (false alarms on controls, wrong lines, wrong verdicts, traps).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shared.events import SuiteAnswered


@dataclass(frozen=True)
class Recall:
    found: int = 0
    of: int = 0
    answers: int = 0

    @property
    def ratio(self) -> float:
        return self.found / self.of if self.of else 0.0


@dataclass
class SuiteScores:
    latest: dict[tuple[str, str], SuiteAnswered] = field(default_factory=dict)  # (alias, task) → answer
    seqs: dict[tuple[str, str], int] = field(default_factory=dict)  # (alias, task) → its answer's sequence

    def apply(self, event: SuiteAnswered, seq: int = 0) -> None:
        """The later answer wins; a re-scoring keeps its answer's time and comes later in the stream."""
        if event.kind != "answered":
            return
        key = (event.alias, event.task)
        known = self.latest.get(key)
        if known is None or (event.at, seq) >= (known.at, self.seqs.get(key, 0)):
            self.latest[key], self.seqs[key] = event, seq

    def recall(self, alias: str, shape: str | None = None) -> Recall:
        if not self.latest:  # asked for every member of every route ranking: most benches have no suite yet
            return Recall()
        counted = [e for (a, _), e in self.latest.items()
                   if a == alias and e.recall and (shape is None or e.shape == shape)]
        found = sum(len(e.found) for e in counted)
        return Recall(found, found + sum(len(e.missed) for e in counted), len(counted))

    def findings(self, alias: str) -> int:
        return self.recall(alias).found

    def confidently_wrong(self, alias: str) -> int:
        return sum(1 for (a, _), e in self.latest.items() if a == alias and e.wrong)

    def primary(self, aliases: list[str], shape: str) -> str | None:
        """The router's primary for a shape: best recall on that shape's tasks, else over all counted tasks
        (ties: more findings, then the order given); `None` when no candidate has a counted answer."""
        for scope in (shape, None):
            scored = [(self.recall(a, scope), -i, a) for i, a in enumerate(aliases)]
            scored = [s for s in scored if s[0].answers]
            if scored:
                return max(scored, key=lambda s: (s[0].ratio, s[0].found, s[1]))[2]
        return None
