"""Panels simulated: the seater's own `plan_panel` seats a collection's members and fills its explorer chairs
(P-7) from a pool of models; each seat answers or fails as its drifting provider does, a judge sometimes
gives a verdict, and the rotation folds the same `PanelSeated`, `VerdictRecorded` and `CooldownStarted`
events the real services publish. Part way, one pool model's usefulness changes.

Two explorer rules: P-7 as built, and an experiment (one chair by the sampling rule, one by staleness).
Measured: useful seats per panel (by the hidden truth, judged or not), explorer seats per pool model per
100 panels (the least-seated healthy model is the floor that matters), and how many panels pass after the
change before the changed model has a judged seat (the first evidence anything could act on).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from benchmarks.selection.world import COOLDOWN, T0, Clock, Judge, SimModel, models
from services.seater.planning import _can_explore, plan_panel
from services.seater.ranking import sampled_order
from services.seater.rotation import Rotation
from shared.commands import PlanRefusal, PlanRequest
from shared.config_state import ConfigState
from shared.events import (
    CollectionSaved,
    CooldownStarted,
    EndpointSaved,
    GatewaySettingsSaved,
    ModelRegistered,
    VerdictRecorded,
)

SHAPE = "code"  # the collection's shape: explorers must be `general` or `code` models (C-7)
SEAT_DEADLINE_S = 420.0  # the gateway's seat deadline
HEALTHY_FAIL = 0.3  # a model failing more often than this is not held to the playing-time floor
Change = Literal["worse", "better"]
# How the explorer chairs are filled: P-7 as built (both by staleness), or the experiment of one chair by the
# shipped route rule's sampling over the explorer pool (named as the request's `with`, P-8) and the other
# by staleness.
Explorers = Literal["staleness", "one sampled"]
EXPLORER_RULES: tuple[Explorers, ...] = ("staleness", "one sampled")


@dataclass(frozen=True)
class PanelSetup:
    members: int = 3
    pool: int = 8  # models that may explore (general or code)
    light: int = 2  # `light` models: never admitted to a code panel
    judge: Judge = field(default_factory=Judge)
    panels: int = 600
    change_at: int = 300  # panel number at which one pool model changes
    change: Change = "better"
    explorers: Explorers = "staleness"


@dataclass
class PanelRun:
    panels: int = 0
    refused: int = 0
    useful_seats: int = 0
    useful_explorer_seats: int = 0
    explorer_worth: float = 0.0  # the seated explorers' chance of a useful answer, summed over panels
    best_explorer_worth: float = 0.0  # the same for the most useful pool models not resting: the most any
    # explorer rule could have seated
    explorer_seats: dict[str, int] = field(default_factory=dict)  # healthy pool model → seats (before change)
    counted: int = 0  # panels counted in `explorer_seats`
    notice: int | None = None  # panels after the change to the changed model's first judged seat

    def useful_per_panel(self) -> float:
        return self.useful_seats / self.panels if self.panels else 0.0

    def least_seats_per_100(self) -> float:
        return 100.0 * min(self.explorer_seats.values(), default=0) / self.counted if self.counted else 0.0


def bench(members: list[SimModel], pool: list[SimModel], light: list[SimModel]) -> ConfigState:
    """The configuration fold every service reads, from real config events."""
    config = ConfigState()
    config.apply(EndpointSaved(id="cfg:ep", at=T0, name="sim", base="http://sim.test/v1", api="chat"))
    config.apply(GatewaySettingsSaved(id="cfg:gw", at=T0, max_calls=5, max_explorers=2))
    roles = [(m, "general") for m in members] + [(m, ("general", "code")[i % 2]) for i, m in enumerate(pool)]
    for model, role in roles + [(m, "light") for m in light]:
        config.apply(ModelRegistered(id=f"cfg:model:{model.alias}", at=T0, alias=model.alias,
                                     served=f"sim/{model.alias}", endpoint="sim", role=role))
    config.apply(CollectionSaved(id="cfg:col", at=T0, name="core", members=[m.alias for m in members],
                                 shape=SHAPE))
    return config


class PanelSim:
    def __init__(self, seed: int, setup: PanelSetup) -> None:
        self.rng = random.Random(seed)
        self.setup = setup
        everyone = models(self.rng, setup.members + setup.pool + setup.light, (SHAPE,))
        self.members = everyone[: setup.members]
        self.pool = everyone[setup.members: setup.members + setup.pool]
        self.models = {m.alias: m for m in everyone}
        self.config = bench(self.members, self.pool, everyone[setup.members + setup.pool:])
        self.rotation = Rotation()
        self.clock = Clock()
        self.run = PanelRun(explorer_seats={m.alias: 0 for m in self.pool})
        self.changed: SimModel | None = None

    def simulate(self) -> PanelRun:
        for number in range(1, self.setup.panels + 1):
            if number == self.setup.change_at:
                self.changed = change(self.pool, self.setup.change)
            self.panel(number)
        return self.run

    def panel(self, number: int) -> None:
        now = self.clock.tick()
        for model in self.models.values():
            model.drift(self.rng)
        nominee = self.sampled(now) if self.setup.explorers == "one sampled" else []
        draft = plan_panel(PlanRequest(collection="core", with_=nominee), self.config, self.rotation, now)
        if isinstance(draft, PlanRefusal):
            self.run.refused += 1
            return
        self.run.panels += 1
        panel = f"p{number:06d}"
        seats = draft.seats(panel, self.config)
        self.rotation.apply(draft.seated(panel, seats, "local", now, "sim"))
        self.weigh_explorers([m.alias for m in draft.explorers], now)
        before_change = number < self.setup.change_at
        if before_change:
            self.run.counted += 1
        for seat in seats:
            model = self.models[seat.alias]
            explorer = seat.seat.startswith("explorer")
            if explorer and before_change and seat.alias in self.run.explorer_seats:
                self.run.explorer_seats[seat.alias] += 1
            outcome = model.attempt(self.rng, SEAT_DEADLINE_S)
            if outcome == "limited":
                rest = CooldownStarted(id=f"cool:{seat.call}", alias=seat.alias, connection="sim",
                                       until=now + COOLDOWN)
                self.rotation.apply(rest)
            if outcome != "ok":
                continue
            useful = self.rng.random() < model.useful[SHAPE]
            self.run.useful_seats += useful
            self.run.useful_explorer_seats += useful and explorer
            said = self.setup.judge.verdict(self.rng, useful)
            if said is None:
                continue
            self.rotation.apply(VerdictRecorded(id=f"verdict:{seat.call}", call=seat.call, alias=seat.alias,
                                                useful=said, shape=draft.shape))
            if model is self.changed and self.run.notice is None:
                self.run.notice = number - self.setup.change_at + 1

    def sampled(self, now: datetime) -> list[str]:
        """The explorer pool as P-7 sees it, ordered by the sampling rule; its first, if any."""
        asked = PlanRequest(collection="core")
        members = self.config.collections["core"].members
        pool = [m.alias for m in self.config.models.values()
                if m.alias not in members and _can_explore(m, SHAPE, asked, self.config, self.rotation, now)]
        return sampled_order(pool, self.rotation, now, self.rng.random, explore=0.0)[:1]

    def weigh_explorers(self, seated: list[str], now: datetime) -> None:
        fresh = [m.useful[SHAPE] for m in self.pool if not self.rotation.cooling(m.alias, now)]
        self.run.explorer_worth += sum(self.models[a].useful[SHAPE] for a in seated)
        self.run.best_explorer_worth += sum(sorted(fresh)[-len(seated):]) if seated else 0.0

    def unhealthy(self) -> set[str]:
        return {m.alias for m in self.pool if m.fail > HEALTHY_FAIL}


def change(pool: list[SimModel], how: Change) -> SimModel:
    ranked = sorted(pool, key=lambda m: m.useful[SHAPE])
    target = ranked[-1] if how == "worse" else ranked[0]
    target.useful[SHAPE] = 0.1 if how == "worse" else 0.95
    return target


def run_panels(seed: int, setup: PanelSetup) -> PanelRun:
    sim = PanelSim(seed, setup)
    run = sim.simulate()
    for alias in sim.unhealthy():
        run.explorer_seats.pop(alias, None)
    return run
