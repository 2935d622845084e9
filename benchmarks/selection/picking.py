"""The shape picker simulated (P-4): panels of a shapeless collection get requests of several shapes, and the
seater's own `plan_panel` seats them with the shape a simulated decision model named (or `general`, as
without a picker). The shape decides the roles that may explore (C-7), so a picker lets `code` models
explore code requests and `light` models quick ones.

The world's one assumption beyond the route and panel studies: a role means something. A model is 0.15 more
likely to be useful on the shape its role is for (`code` on code, `light` on quick) than elsewhere.
Measured: useful explorer seats per panel (by the hidden truth), how many explorer seats per panel went to a
specialist on its own shape, and the explorer seats per 100 panels of the least-seated pool model.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

from benchmarks.selection.world import COOLDOWN, T0, Clock, Judge, SimModel, models
from services.seater.planning import plan_panel
from services.seater.rotation import Rotation
from services.seater.shapes import Picked
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

SHAPES = ("general", "code", "quick")  # the requests' true shapes, equally often
SPECIALTY = {"code": "code", "light": "quick"}  # role → the shape it is for
BONUS = 0.15
SEAT_DEADLINE_S = 420.0
# How the shape is named: no picker (P-4 falls back to `general`), a picker right 70% of the time (wrong but
# sure 10%, unsure 20%: `general`), or one always right (the most a picker could do).
Picker = Literal["none", "right 70%", "always right"]
PICKERS: tuple[Picker, ...] = ("none", "right 70%", "always right")


@dataclass(frozen=True)
class PickSetup:
    members: int = 3
    roles: tuple[tuple[str, int], ...] = (("general", 4), ("code", 3), ("light", 3))  # the explorer pool
    judge: Judge = field(default_factory=Judge)
    panels: int = 400
    picker: Picker = "none"


@dataclass
class PickRun:
    panels: int = 0
    useful_explorer_seats: int = 0
    specialist_seats: int = 0  # explorer seats taken by a model on the shape its role is for
    explorer_seats: dict[str, int] = field(default_factory=dict)  # pool model → its explorer seats

    def per_panel(self, count: int) -> float:
        return count / self.panels if self.panels else 0.0

    def least_seats_per_100(self) -> float:
        return 100.0 * min(self.explorer_seats.values(), default=0) / self.panels if self.panels else 0.0


def bench(everyone: list[tuple[SimModel, str]], members: list[str]) -> ConfigState:
    config = ConfigState()
    config.apply(EndpointSaved(id="cfg:ep", at=T0, name="sim", base="http://sim.test/v1", api="chat"))
    config.apply(GatewaySettingsSaved(id="cfg:gw", at=T0, max_calls=5, max_explorers=2))
    for model, role in everyone:
        config.apply(ModelRegistered(id=f"cfg:model:{model.alias}", at=T0, alias=model.alias,
                                     served=f"sim/{model.alias}", endpoint="sim", role=role))
    config.apply(CollectionSaved(id="cfg:col", at=T0, name="auto", members=members))
    return config


def named(rng: random.Random, picker: Picker, shape: str) -> Picked | None:
    """What the simulated decision model says of a request of shape `shape`."""
    if picker == "none":
        return None
    if picker == "always right":
        return Picked(shape, "sim, 0.9")
    roll = rng.random()
    if roll < 0.7:
        return Picked(shape, "sim, 0.9")
    if roll < 0.8:
        return Picked(rng.choice([s for s in SHAPES if s != shape]), "sim, 0.8")
    return Picked("general", f"sim unsure ({shape} at 0.4)")


def run_picking(seed: int, setup: PickSetup) -> PickRun:
    rng = random.Random(seed)
    roles = ["general"] * setup.members + [role for role, count in setup.roles for _ in range(count)]
    sims = models(rng, len(roles), SHAPES)
    for model, role in zip(sims, roles, strict=True):
        if role in SPECIALTY:
            shape = SPECIALTY[role]
            model.useful[shape] = min(0.95, model.useful[shape] + BONUS)
    config = bench(list(zip(sims, roles, strict=True)), [m.alias for m in sims[: setup.members]])
    by_alias = {m.alias: (m, role) for m, role in zip(sims, roles, strict=True)}
    rotation, clock = Rotation(), Clock()
    run = PickRun(explorer_seats={m.alias: 0 for m in sims[setup.members:]})
    for number in range(1, setup.panels + 1):
        now = clock.tick()
        shape = rng.choice(SHAPES)
        picked = named(rng, setup.picker, shape)
        draft = plan_panel(PlanRequest(collection="auto"), config, rotation, now, picked)
        if isinstance(draft, PlanRefusal):
            continue
        run.panels += 1
        panel = f"p{number:06d}"
        seats = draft.seats(panel, config)
        rotation.apply(draft.seated(panel, seats, "local", now, "sim"))
        for seat in seats:
            model, role = by_alias[seat.alias]
            explorer = seat.seat.startswith("explorer")
            run.specialist_seats += explorer and SPECIALTY.get(role) == shape
            if explorer:
                run.explorer_seats[seat.alias] += 1
            outcome = model.attempt(rng, SEAT_DEADLINE_S)
            if outcome == "limited":
                rotation.apply(CooldownStarted(id=f"cool:{seat.call}", alias=seat.alias, connection="sim",
                                               until=now + COOLDOWN))
            if outcome != "ok":
                continue
            useful = rng.random() < model.useful[shape]
            run.useful_explorer_seats += useful and explorer
            said = setup.judge.verdict(rng, useful)
            if said is not None:
                rotation.apply(VerdictRecorded(id=f"verdict:{seat.call}", call=seat.call, alias=seat.alias,
                                               useful=said, shape=draft.shape))
    return run
