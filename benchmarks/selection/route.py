"""Route mode simulated: new conversations ranked by the seater's own rule (RM-3), the first member that
answers (RM-6 failover) gets the offload, a judge sometimes gives it a verdict; the rotation folds the same
events the real services publish. Part way, one member's usefulness changes: the member the rule favoured
turns bad, or the one it played least turns best.

Measured: the chance a new conversation starts with the best available member after 50, 200 and 1,000
verdicts (over the conversations of the last 25 verdicts before each, the rule asked many times over on each
conversation's state with draws of its own), cumulative
regret (the best fresh member's usefulness minus the first member's, summed over conversations), first seats
per member per 100 conversations, and how many verdicts after the change the ranking followed it: the member
that turned bad starts at most a quarter of new conversations, the one that turned best at least half.
"""

from __future__ import annotations

import copy
import math
import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from benchmarks.selection.world import COOLDOWN, Clock, Judge, models
from services.seater.ranking import ROUTE_RANKINGS, RouteRanking, led_order, never_first
from services.seater.rotation import HALF_LIFE, Rotation
from shared.events import CooldownStarted, SeatCompleted, VerdictRecorded

SHAPE = "agent"  # the kind of task agents bring; the seater never learns it
FIRST_PIECE_S = 90.0  # RM-6: silent this long → the next member
FAILOVER = 3  # RM-6: members tried per turn
# The ranking has followed a change when the changed member starts at most this share of new conversations
# (it turned bad), or at least this share (it turned best).
LEFT_BEHIND, TAKEN_UP = 0.25, 0.5
CHECK_EVERY = 5  # verdicts between follow checks
CURVE_EVERY = 25  # verdicts between points of the plotted curve
WINDOW = 25  # a checkpoint's share is measured over the conversations of the last this many verdicts
PROBES = 20  # rankings asked per conversation where the share is measured
Change = Literal["worse", "better"]
CHANGES: tuple[Change, ...] = ("worse", "better")


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
    judge: Judge = field(default_factory=Judge)
    checkpoints: tuple[int, ...] = (50, 200, 1000)
    change_at: int = 1000  # verdicts before one member's usefulness changes (each run forks here)
    horizon: int = 300  # verdicts watched after the change


@dataclass
class Share:
    """How often a new conversation started with the best member, over some conversations."""

    hits: float = 0.0
    count: int = 0

    def add(self, hit: float) -> None:
        self.hits += hit
        self.count += 1

    def value(self) -> float:
        return self.hits / self.count if self.count else math.nan


@dataclass
class RouteRun:
    best_first: dict[int, float] = field(default_factory=dict)  # checkpoint → share of best-first starts
    # checkpoint → share of the window's conversations where the evidence's leader (the highest mean belief,
    # whatever the rule) was the best member: how far the evidence the rule gathered points the right way
    evidence_right: dict[int, float] = field(default_factory=dict)
    gap: dict[int, float] = field(default_factory=dict)  # checkpoint → best minus second-best usefulness
    top_two: dict[int, tuple[float, float]] = field(default_factory=dict)  # checkpoint → the two best's worth
    regret: float = 0.0  # summed over conversations until the change
    firsts: dict[str, int] = field(default_factory=dict)  # first seats between checkpoints[1] and the change
    window: int = 0  # conversations counted in `firsts`
    follow: int | None = None  # verdicts after the change until the ranking followed (None: not in horizon)
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
        self.conversation = 0
        self.run = RouteRun(firsts=dict.fromkeys(self.aliases, 0))
        self.windows = {n: Share() for n in setup.checkpoints}
        self.right = {n: Share() for n in setup.checkpoints}
        self.block = Share()  # realized starts since the last curve point
        self.since_check = Share()  # probed starts by the changed member since the last follow check
        self.changed: tuple[str, Change] | None = None

    def worth(self, alias: str) -> float:
        return self.models[alias].useful[SHAPE]

    def best(self, now: datetime) -> str:
        """The most useful member not resting (all of them when all rest)."""
        fresh = [a for a in self.aliases if not self.rotation.cooling(a, now)] or self.aliases
        return max(fresh, key=self.worth)

    def probed(self, now: datetime, alias: str, probes: int) -> float:
        """The rule asked `probes` times on this moment's state, with draws of its own: how often it put
        `alias` first. Steadier than the one start the conversation really makes."""
        hits = sum(
            self.rule.ranking(list(self.aliases), self.rotation, now, self.probe_rng.random)[0] == alias
            for _ in range(probes)
        )
        return hits / probes

    def change(self, how: Change) -> None:
        """`worse`: the member the rule started most conversations with becomes nearly useless; `better`:
        the one it started fewest with becomes the best of all."""
        firsts = self.run.firsts
        pick = max if how == "worse" else min
        target = pick(firsts, key=firsts.__getitem__)
        self.models[target].useful[SHAPE] = 0.1 if how == "worse" else 0.95
        self.changed = (target, how)

    def simulate(self, until: int) -> RouteRun:
        while self.verdicts < until:
            self.conversation += 1
            if self.converse(self.conversation):
                self.after_verdict()
        return self.run

    def converse(self, number: int) -> bool:
        """One new conversation's first turn; True when it got a verdict."""
        now = self.clock.tick()
        for model in self.models.values():
            model.drift(self.rng)
        best = self.best(now)
        self.measure(now, best)
        order = self.rule.ranking(list(self.aliases), self.rotation, now, self.rng.random)
        self.block.add(order[0] == best)
        if self.verdicts < self.setup.change_at:
            self.run.regret += self.worth(best) - self.worth(order[0])
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

    def measure(self, now: datetime, best: str) -> None:
        """Probe the rule in a checkpoint's window (the last `WINDOW` verdicts before it) and after the
        change until the ranking has followed."""
        for n, share in self.windows.items():
            if n - WINDOW <= self.verdicts < n:
                share.add(self.probed(now, best, PROBES))
                self.right[n].add(led_order(list(self.aliases), self.rotation, now, never_first)[0] == best)
        if self.changed is not None and self.run.follow is None:
            self.since_check.add(self.probed(now, self.changed[0], PROBES // 2))

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
        n, setup, run = self.verdicts, self.setup, self.run
        if n in self.windows:
            run.best_first[n] = self.windows[n].value()
            run.evidence_right[n] = self.right[n].value()
            worths = sorted(map(self.worth, self.aliases))
            run.gap[n] = worths[-1] - worths[-2]
            run.top_two[n] = (worths[-1], worths[-2])
        if n % CURVE_EVERY == 0:
            run.curve.append((n, self.block.value()))
            self.block = Share()
        if self.changed is not None and run.follow is None and (n - setup.change_at) % CHECK_EVERY == 0:
            share, how = self.since_check.value(), self.changed[1]
            if (share <= LEFT_BEHIND) if how == "worse" else (share >= TAKEN_UP):
                run.follow = n - setup.change_at
            self.since_check = Share()


def run_route(seed: int, rule: Rule, setup: RouteSetup) -> dict[Change, RouteRun]:
    """One seed's run to the change, then forked: once where the best member turns bad, once where the
    worst turns best (the same history before it)."""
    sim = RouteSim(seed, rule, setup)
    sim.simulate(setup.change_at)
    runs: dict[Change, RouteRun] = {}
    for how in CHANGES:
        fork = copy.deepcopy(sim)
        fork.change(how)
        runs[how] = fork.simulate(setup.change_at + setup.horizon)
    return runs
