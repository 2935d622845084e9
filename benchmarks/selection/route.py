"""Route mode simulated: new conversations ranked by the seater's own rule (RM-3), the first member that
answers (RM-6 failover) gets the offload, a judge sometimes gives it a verdict; the rotation folds the same
events the real services publish. Part way, one member's usefulness changes.

Measured: the chance a new conversation starts with the best available member after 50, 200 and 1,000
verdicts (the rule asked many times over on the state of that moment, with draws of its own), cumulative
regret (the best fresh member's usefulness minus the first member's, summed over conversations), first seats
per member per 100 conversations, and how many verdicts after the change the best member is first again in
at least half of new conversations.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from benchmarks.selection.world import COOLDOWN, Clock, Judge, SimModel, models
from services.seater.ranking import ROUTE_RANKINGS, RouteRanking
from services.seater.rotation import HALF_LIFE, Rotation
from shared.events import CooldownStarted, SeatCompleted, VerdictRecorded

SHAPE = "agent"  # the kind of task agents bring; the seater never learns it
FIRST_PIECE_S = 90.0  # RM-6: silent this long → the next member
FAILOVER = 3  # RM-6: members tried per turn
FOLLOWED = 0.5  # the ranking has followed a change when the new best is first this often
CHECK_EVERY = 5  # verdicts between follow checks
CURVE_EVERY = 25  # verdicts between points of the plotted curve
Change = Literal["worse", "better"]


@dataclass(frozen=True)
class Rule:
    """A route ranking as the seater would run it, with the rotation's evidence half-life."""

    name: str
    ranking: RouteRanking
    half_life: float = HALF_LIFE


RULES = {name: Rule(name, ranking) for name, ranking in ROUTE_RANKINGS.items()}


@dataclass(frozen=True)
class RouteSetup:
    members: int = 5
    judge: Judge = Judge()
    checkpoints: tuple[int, ...] = (50, 200, 1000)
    change_at: int = 1000  # verdicts before one member's usefulness changes
    change: Change = "worse"  # the best member turns bad, or the worst turns best
    horizon: int = 300  # verdicts watched after the change
    probes: int = 200  # rankings asked at each checkpoint


@dataclass
class RouteRun:
    best_first: dict[int, float] = field(default_factory=dict)  # checkpoint → share of best-first starts
    regret: float = 0.0  # summed over conversations until the change
    firsts: dict[str, int] = field(default_factory=dict)  # first seats between checkpoints[1] and the change
    window: int = 0  # conversations counted in `firsts`
    follow: int | None = None  # verdicts after the change until the ranking followed; None: not within horizon
    curve: list[tuple[int, float]] = field(default_factory=list)  # (verdicts, share of best-first starts)

    def least_firsts_per_100(self) -> float:
        """The least-played member's first seats per 100 conversations (the exploration floor)."""
        return 100.0 * min(self.firsts.values(), default=0) / self.window if self.window else 0.0


class RouteSim:
    """One seeded run of one rule."""

    def __init__(self, seed: int, rule: Rule, setup: RouteSetup) -> None:
        self.rng = random.Random(seed)
        self.probe_rng = random.Random(f"probe-{seed}")
        self.rule, self.setup = rule, setup
        self.models = {m.alias: m for m in models(self.rng, setup.members, (SHAPE,))}
        self.aliases = list(self.models)
        self.rotation = Rotation(half_life=rule.half_life)
        self.clock = Clock()
        self.verdicts = 0
        self.run = RouteRun(firsts=dict.fromkeys(self.aliases, 0))

    def worth(self, alias: str) -> float:
        return self.models[alias].useful[SHAPE]

    def best(self, now: datetime) -> str:
        """The most useful member not resting (all of them when all rest)."""
        fresh = [a for a in self.aliases if not self.rotation.cooling(a, now)] or self.aliases
        return max(fresh, key=self.worth)

    def best_first_share(self, now: datetime, probes: int) -> float:
        best = self.best(now)
        hits = sum(
            self.rule.ranking(list(self.aliases), self.rotation, now, self.probe_rng.random)[0] == best
            for _ in range(probes)
        )
        return hits / probes

    def simulate(self) -> RouteRun:
        end = self.setup.change_at + self.setup.horizon
        conversation = 0
        while self.verdicts < end:
            conversation += 1
            if self.converse(conversation):
                self.after_verdict()
        return self.run

    def converse(self, number: int) -> bool:
        """One new conversation's first turn; True when it got a verdict."""
        now = self.clock.tick()
        for model in self.models.values():
            model.drift(self.rng)
        order = self.rule.ranking(list(self.aliases), self.rotation, now, self.rng.random)
        if self.verdicts < self.setup.change_at:
            self.run.regret += self.worth(self.best(now)) - self.worth(order[0])
            if self.verdicts >= self.setup.checkpoints[1]:
                self.run.firsts[order[0]] += 1
                self.run.window += 1
        answered = self.failover(order, now)
        if answered is None:
            return False
        call = f"r{number:06d}.1"
        self.rotation.apply(SeatCompleted(
            id=f"seat:{call}", at=now, call=call, panel=call[:-2], seat="route", alias=answered,
            served=f"sim/{answered}", endpoint="sim", connection="sim", purpose="route", status="ok",
            seconds=1.0,
        ))
        said = self.setup.judge.verdict(self.rng, self.rng.random() < self.worth(answered))
        if said is None:
            return False
        self.rotation.apply(VerdictRecorded(id=f"verdict:{call}", call=call, alias=answered, useful=said))
        self.verdicts += 1
        return True

    def failover(self, order: list[str], now: datetime) -> str | None:
        """RM-6: the first of up to three members that answers; a 429 rests its model (L-3)."""
        for alias in order[:FAILOVER]:
            outcome = self.models[alias].attempt(self.rng, FIRST_PIECE_S)
            if outcome == "ok":
                return alias
            if outcome == "limited":
                self.rotation.apply(CooldownStarted(
                    id=f"cool:{alias}:{now.isoformat()}", alias=alias, connection="sim", until=now + COOLDOWN,
                ))
        return None

    def after_verdict(self) -> None:
        now, n, setup = self.clock.now, self.verdicts, self.setup
        if n in setup.checkpoints:
            self.run.best_first[n] = self.best_first_share(now, setup.probes)
        if n % CURVE_EVERY == 0:
            self.run.curve.append((n, self.best_first_share(now, 40)))
        if n == setup.change_at:
            change(self.models.values(), setup.change)
        elif n > setup.change_at and self.run.follow is None and (n - setup.change_at) % CHECK_EVERY == 0:
            if self.best_first_share(now, 50) >= FOLLOWED:
                self.run.follow = n - setup.change_at


def change(sims: Iterable[SimModel], how: Change) -> None:
    """`worse`: the most useful member becomes nearly useless; `better`: the least useful becomes the best."""
    pool = sorted(sims, key=lambda m: m.useful[SHAPE])
    target = pool[-1] if how == "worse" else pool[0]
    target.useful[SHAPE] = 0.1 if how == "worse" else 0.95


def run_route(seed: int, rule: Rule, setup: RouteSetup) -> RouteRun:
    return RouteSim(seed, rule, setup).simulate()
