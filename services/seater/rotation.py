"""Rotation state: when each model last sat, who is resting, how its verdicts and suite answers went.
Pure: no I/O.

Folded from `PanelSeated`, `SeatCompleted`, `VerdictRecorded`, `SuiteAnswered` and `CooldownStarted`, so a
restarted seater rebuilds exactly what the old one knew. A plan counts as a seat the moment it is made: the
seater *holds* its seats under the panel id until its own `PanelSeated` comes back through the projection,
so consecutive panels rotate even before the stream has echoed the first one, and a hold never outlives its
event.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from services.seater.suite_scores import SuiteScores
from shared.events import (
    CooldownStarted,
    EventBase,
    PanelSeated,
    SeatCompleted,
    SuiteAnswered,
    VerdictRecorded,
)

# Recent verdicts weigh more: a verdict's weight halves with every this many verdicts recorded on the bench
# after it, so a model that changed is seen to have changed (the study in docs/selection.md chose it).
HALF_LIFE = 50

# Sorts before every real seat time: a model never seated is the stalest of all.
NEVER = datetime.min.replace(tzinfo=UTC)

# Seats that are offloads (SPEC C-13) but are not planned in a `PanelSeated`; panel seats count at the plan.
UNPLANNED_SEATS = ("merger", "route")


def as_utc(when: datetime) -> datetime:
    """Times on the bus are UTC; a naive one is read as UTC so comparisons never mix kinds."""
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


@dataclass
class Tally:
    judged: int = 0
    useful: int = 0

    @property
    def ratio(self) -> float:
        return self.useful / self.judged if self.judged else 0.0

    def add(self, useful: bool, sign: int) -> None:
        self.judged += sign
        self.useful += sign if useful else 0


@dataclass
class Recent:
    """Verdicts weighed by age: both sums are as of verdict number `at`, and halve every `half_life` after."""

    half_life: float
    judged: float = 0.0
    useful: float = 0.0
    at: int = 0

    def faded(self, now: int) -> tuple[float, float]:
        """(useful, judged) as of verdict number `now`."""
        weight = 0.5 ** ((now - self.at) / self.half_life)
        return self.useful * weight, self.judged * weight

    def add(self, useful: bool, sign: int, made: int, now: int) -> None:
        """Count (sign +1) or take back (-1) a verdict made as number `made`, at verdict number `now`."""
        self.useful, self.judged = self.faded(now)
        self.at = now
        weight = sign * 0.5 ** ((now - made) / self.half_life)
        self.judged = max(0.0, self.judged + weight)
        self.useful = max(0.0, self.useful + (weight if useful else 0.0))


@dataclass(frozen=True)
class Verdict:
    alias: str
    shape: str
    useful: bool
    number: int = 0  # the verdict's place among all the verdicts folded (its first one, when superseded)


@dataclass
class Rotation:
    seated: dict[str, datetime] = field(default_factory=dict)  # alias → latest seat time
    cooling_until: dict[str, datetime] = field(default_factory=dict)
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # call → its latest verdict (C-13)
    overall: dict[str, Tally] = field(default_factory=dict)
    by_shape: dict[tuple[str, str], Tally] = field(default_factory=dict)
    recent: dict[str, Recent] = field(default_factory=dict)
    judgements: int = 0  # verdicts folded, superseding ones too: the clock `Recent` fades by
    half_life: float = HALF_LIFE
    holds: dict[str, tuple[datetime, frozenset[str]]] = field(default_factory=dict)  # panel → planned seats
    suite: SuiteScores = field(default_factory=SuiteScores)  # T-5
    seq: int = 0

    # ------------------------------------------------------------ fold

    def apply(self, event: EventBase, seq: int = 0) -> None:
        if seq and seq <= self.seq:
            return
        if isinstance(event, PanelSeated):
            self._seat((s.alias for s in event.seats), as_utc(event.at))
            self.holds.pop(event.panel, None)
        elif isinstance(event, SeatCompleted) and event.purpose in UNPLANNED_SEATS:
            self._seat([event.alias], as_utc(event.at))
        elif isinstance(event, VerdictRecorded):
            self._judge(event)
        elif isinstance(event, SuiteAnswered):
            self.suite.apply(event, seq)
        elif isinstance(event, CooldownStarted):
            until = as_utc(event.until)
            if until > self.cooling_until.get(event.alias, NEVER):
                self.cooling_until[event.alias] = until
        if seq:
            self.seq = seq

    def _seat(self, aliases: Iterable[str], at: datetime) -> None:
        # The latest time wins, so folding the same panel twice (our hold, then its echo) changes nothing.
        for alias in aliases:
            if at > self.seated.get(alias, NEVER):
                self.seated[alias] = at

    def _judge(self, event: VerdictRecorded) -> None:
        """A later verdict on a call supersedes the earlier one (readers keep the last line per call)."""
        self.judgements += 1
        before = self.verdicts.get(event.call)
        if before is not None:
            self._count(before, -1)
        number = before.number if before is not None else self.judgements
        now = Verdict(event.alias, event.shape, event.useful, number)
        self.verdicts[event.call] = now
        self._count(now, +1)

    def _count(self, verdict: Verdict, sign: int) -> None:
        self.overall.setdefault(verdict.alias, Tally()).add(verdict.useful, sign)
        self.by_shape.setdefault((verdict.alias, verdict.shape), Tally()).add(verdict.useful, sign)
        recent = self.recent.setdefault(verdict.alias, Recent(self.half_life))
        recent.add(verdict.useful, sign, verdict.number, self.judgements)

    # ------------------------------------------------------------ holds (plans not yet echoed)

    def hold(self, panel: str, aliases: Iterable[str], at: datetime) -> None:
        self.holds[panel] = (as_utc(at), frozenset(aliases))

    def release(self, panel: str) -> None:
        """Forget a plan that never reached the stream (its `PanelSeated` could not be published)."""
        self.holds.pop(panel, None)

    # ------------------------------------------------------------ reads

    def last_seat(self, alias: str) -> datetime:
        """When the model last sat, counting held plans; `NEVER` when it never did."""
        last = self.seated.get(alias, NEVER)
        for at, aliases in self.holds.values():
            if alias in aliases and at > last:
                last = at
        return last

    def cooling(self, alias: str, now: datetime) -> bool:
        return self.cooling_until.get(alias, NEVER) > as_utc(now)

    def useful(self, alias: str, shape: str | None = None) -> Tally:
        """Verdict counts for a model, overall or on one shape."""
        tally = self.overall.get(alias) if shape is None else self.by_shape.get((alias, shape))
        return tally or Tally()

    def recently_useful(self, alias: str) -> tuple[float, float]:
        """(useful, judged) over all shapes, each verdict weighed by how recent it is (`HALF_LIFE`)."""
        recent = self.recent.get(alias)
        return recent.faded(self.judgements) if recent is not None else (0.0, 0.0)
