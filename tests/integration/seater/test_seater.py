"""The seater as a real process (`python -m services.seater`) on a real NATS: plans over the bus, its
`PanelSeated` events in `BENCH_EVENTS`, and the same rotation after a restart."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from nats.js.errors import NotFoundError

from cli.stack import Child
from services.seater.panel_ids import BLOCK, SLOTS
from services.seater.planning import Draft, plan_panel
from services.seater.rotation import Rotation
from shared import bus, rpc, subjects
from shared.commands import Plan, PlanRequest
from shared.config_state import ConfigState
from shared.events import (
    CollectionSaved,
    ConfigEvents,
    CooldownStarted,
    EndpointSaved,
    Event,
    EventBase,
    ModelRegistered,
    PanelSeated,
    decode_event,
)
from shared.ids import PANEL_RE, utcnow
from shared.natsserver import NatsServer
from shared.subjects import health_subject
from tests.integration.service_process import bus_env

ROOT = Path(__file__).resolve().parents[3]
EXPLORERS = ["x1", "x2", "x3", "x4", "x5"]


class Seaters:
    """Seater processes of this test, each started in its own session and stopped by PID."""

    def __init__(self, nats: NatsServer, home: Path) -> None:
        self.env = {**os.environ, **bus_env(nats), "BENCHWARMERS_HOME": str(home), "PYTHONPATH": str(ROOT),
                    "PYTHONUNBUFFERED": "1"}
        self.home = home
        self.children: list[Child] = []

    async def start(self, nc: bus.NATS) -> Child:
        index = len(self.children)
        child = Child("seater", index, self.env, self.home / "logs" / f"seater-{index}.log")
        child.start()
        self.children.append(child)
        await self._ready(nc, child)
        return child

    async def _ready(self, nc: bus.NATS, child: Child) -> None:
        """Ready when this very process (its PID ends its instance name) answers the health ping."""
        assert child.proc is not None
        end = time.monotonic() + 60.0
        while time.monotonic() < end:
            if not child.alive():
                raise RuntimeError(f"seater exited: {child.log_path.read_text(errors='replace')[-3000:]}")
            try:
                reply = await nc.request(health_subject("seater"), b"", timeout=0.5)
            except Exception:  # no responders yet: it is still starting
                await asyncio.sleep(0.05)
                continue
            if json.loads(reply.data)["instance"].endswith(f"-{child.proc.pid}"):
                return
        raise RuntimeError(f"seater not ready: {child.log_path.read_text(errors='replace')[-3000:]}")

    def stop_all(self) -> None:
        for child in self.children:
            child.stop()


@pytest.fixture
def seaters(nats_server: NatsServer, tmp_path: Path) -> Iterator[Seaters]:
    group = Seaters(nats_server, tmp_path)
    try:
        yield group
    finally:
        group.stop_all()


async def publish(nc: bus.NATS, *events: EventBase) -> int:
    seq = 0
    for event in events:
        seq = await bus.publish_event(nc.jetstream(), event)
    return seq


async def configure(nc: bus.NATS) -> None:
    await publish(
        nc,
        EndpointSaved(id="cfg:ep", name="ep", base="http://127.0.0.1:9/v1", default=True),
        ModelRegistered(id="cfg:m1", alias="m1", served="org/member-1", endpoint="ep"),
        *(ModelRegistered(id=f"cfg:{a}", alias=a, served=f"org/{a}", endpoint="ep") for a in EXPLORERS),
        CollectionSaved(id="cfg:core", name="core", members=["m1"], description="the core"),
    )


async def ask(nc: bus.NATS, **fields: object) -> Plan:
    request = PlanRequest.model_validate({"collection": "core", **fields})
    body = request.model_dump_json(by_alias=True).encode()
    reply = await nc.request(subjects.RPC_SEATER_PLAN, body, timeout=10)
    return Plan.model_validate_json(reply.data)


def explorer_aliases(plan: Plan) -> list[str]:
    assert plan.refusal is None, plan.refusal
    return [s.alias for s in plan.seats if s.seat.startswith("explorer")]


async def replay(nc: bus.NATS) -> tuple[ConfigState, Rotation]:
    """Everything in `BENCH_EVENTS`, folded as the seater folds it."""
    config, rotation = ConfigState(), Rotation()

    def fold(event: Event, seq: int) -> None:
        if isinstance(event, ConfigEvents):
            config.apply(event, seq)
        else:
            rotation.apply(event, seq)

    projection = bus.Projection(nc.jetstream(), subjects.EVENTS_ALL, fold, name="test-replay")
    await projection.start()
    await projection.stop()
    return config, rotation


async def stored_plan(nc: bus.NATS, panel: str) -> bytes:
    """The plan's `PanelSeated`: sent before the reply, it may still be on its way into the stream."""
    end = time.monotonic() + 10
    while True:
        try:
            stored = await nc.jetstream().get_last_msg(subjects.EVENTS_STREAM, subjects.panel_subject(panel))
            assert stored.data is not None
            return stored.data
        except NotFoundError:
            assert time.monotonic() < end, f"no panel_seated for {panel}"
            await asyncio.sleep(0.01)


def block_of(panel: str) -> int:
    return int(panel.rsplit("-", 1)[1], 16) // BLOCK


async def slots_settled(nc: bus.NATS, replicas: int) -> None:
    """Until plans have come from `replicas` leased slots (blocks 0-e): each replica's slot settles for a
    moment after its claim, and plans meanwhile reserve drawn ids (block f). Returns once every one of
    these plans is in the stream (a leased plan's reply may come before its event is stored)."""
    seen: set[int] = set()
    panels: list[str] = []
    end = time.monotonic() + 15
    while len(seen) < replicas:
        assert time.monotonic() < end, f"plans came from leased slots {seen} only"
        panels.append((await ask(nc)).panel)
        seen |= {block_of(panels[-1])} - {SLOTS}
    for panel in panels:
        await stored_plan(nc, panel)


async def test_a_plan_is_answered_over_nats_and_recorded(nc: bus.NATS, seaters: Seaters) -> None:
    await configure(nc)  # before the seater starts: it must catch up on them
    await seaters.start(nc)
    plan = await ask(nc, key="team")
    assert plan.refusal is None
    assert PANEL_RE.match(plan.panel)
    assert [(s.call, s.seat, s.alias) for s in plan.seats] == [
        (f"{plan.panel}.member1", "member", "m1"),
        (f"{plan.panel}.explorer", "explorer", "x1"),
        (f"{plan.panel}.explorer2", "explorer 2", "x2"),
    ]
    assert (plan.members, plan.explorers, plan.shape, plan.shape_by) == (1, 2, "general",
                                                                         "no decision model onboarded")
    event = decode_event(await stored_plan(nc, plan.panel))
    assert isinstance(event, PanelSeated)
    assert event.id == f"seated:{plan.panel}"
    assert (event.seats, event.key, event.collection) == (plan.seats, "team", "core")
    assert all(s.connection == "ep" and s.endpoint == "ep" for s in event.seats)


async def test_config_published_just_before_a_plan_is_seen_and_refusals_come_back(
    nc: bus.NATS, seaters: Seaters
) -> None:
    await seaters.start(nc)
    empty = await ask(nc)
    assert empty.refusal is not None and empty.refusal.status == 404
    assert "There are no collections yet" in empty.refusal.message
    await configure(nc)
    plan = await ask(nc, **{"with": ["x4"]})  # no wait: the seater catches up on config before planning
    assert explorer_aliases(plan) == ["x4", "x1"]
    unknown = await ask(nc, collection="bench/nope")
    assert unknown.refusal is not None and unknown.refusal.status == 404
    assert "- bench/core: the core" in unknown.refusal.message
    # Every model rests, then a collection of a ghost: the config event, last, is read-your-writes.
    until = utcnow() + timedelta(hours=1)
    resting = ["m1", *EXPLORERS]
    await publish(
        nc,
        *(CooldownStarted(id=f"cool:{a}", alias=a, connection="ep", until=until) for a in resting),
        CollectionSaved(id="cfg:solo", name="solo", members=["ghost"]),
    )
    nobody = await ask(nc, collection="solo")
    assert nobody.refusal is not None and nobody.refusal.status == 503
    assert "ghost (not registered on the bench" in nobody.refusal.message
    bad = await nc.request(subjects.RPC_SEATER_PLAN, b'{"collection": 3}', timeout=10)
    refused = rpc.failure_of(bad.data)  # a malformed request is the bus's 400, not a planner's refusal
    assert refused is not None and refused.status == 400 and refused.message.startswith("collection:")


async def test_consecutive_plans_rotate_through_the_pool(nc: bus.NATS, seaters: Seaters) -> None:
    await configure(nc)
    await seaters.start(nc)
    picks = [explorer_aliases(await ask(nc)) for _ in range(3)]
    assert picks == [["x1", "x2"], ["x3", "x4"], ["x5", "x1"]]


async def test_a_restarted_seater_picks_the_explorers_the_old_one_would_have(
    nc: bus.NATS, seaters: Seaters
) -> None:
    await configure(nc)
    until = utcnow() + timedelta(hours=1)
    await publish(nc, CooldownStarted(id="cool:x2", alias="x2", connection="ep", until=until))
    first = await seaters.start(nc)
    picks = [explorer_aliases(await ask(nc)) for _ in range(3)]
    assert picks == [["x1", "x3"], ["x4", "x5"], ["x1", "x3"]]

    # What the old seater would pick next: a pure planner over the same events. Its state must matter:
    # a seater that forgot the rotation would seat x1 and x3 again.
    config, rotation = await replay(nc)
    request = PlanRequest(collection="core")
    expected = plan_panel(request, config, rotation, utcnow())
    forgetful = plan_panel(request, config, Rotation(cooling_until=rotation.cooling_until), utcnow())
    assert isinstance(expected, Draft) and isinstance(forgetful, Draft)
    assert [m.alias for m in expected.explorers] == ["x4", "x5"]
    assert [m.alias for m in forgetful.explorers] == ["x1", "x3"]

    first.stop()
    assert first.proc is not None and first.proc.returncode is not None
    await seaters.start(nc)
    assert explorer_aliases(await ask(nc)) == ["x4", "x5"]


async def test_a_merged_plan_carries_its_mergers_and_a_413_seats_nobody(
    nc: bus.NATS, seaters: Seaters
) -> None:
    """P-15: merger candidates ride on the plan; P-5: a refusal for size records no `PanelSeated`."""
    await configure(nc)
    await publish(
        nc,
        ModelRegistered(id="cfg:boss", alias="boss", served="org/boss", endpoint="ep", context_window=64_000),
        ModelRegistered(id="cfg:small", alias="small", served="org/small", endpoint="ep", context_window=100),
        CollectionSaved(id="cfg:duo", name="duo", members=["m1", "small"], merger="boss"),
    )
    await seaters.start(nc)
    plan = await ask(nc, collection="duo", reply="merged")
    assert plan.refusal is None
    assert [(c.alias, c.served, c.endpoint, c.connection, c.context_window) for c in plan.mergers] == [
        ("boss", "org/boss", "ep", "ep", 64_000)
    ]
    assert (await ask(nc, collection="duo")).mergers == []
    info = await nc.jetstream().stream_info(subjects.EVENTS_STREAM)
    too_big = await ask(nc, collection="duo", estimate=500)
    assert too_big.refusal is not None and too_big.refusal.status == 413
    assert "small (100 tokens)" in too_big.refusal.message and "m1" not in too_big.refusal.message
    after = await nc.jetstream().stream_info(subjects.EVENTS_STREAM)
    assert after.state.messages == info.state.messages


async def test_two_replicas_number_panels_in_their_own_slots_and_every_plan_is_recorded_once(
    nc: bus.NATS, seaters: Seaters
) -> None:
    await configure(nc)
    for _ in range(2):
        await seaters.start(nc)
    await slots_settled(nc, 2)
    before = (await nc.jetstream().stream_info(subjects.EVENTS_STREAM)).state.messages
    plans = await asyncio.gather(*(ask(nc) for _ in range(200)))
    panels = [plan.panel for plan in plans]
    assert len(set(panels)) == 200 and all(PANEL_RE.match(p) for p in panels)
    assert len({block_of(p) for p in panels} - {SLOTS}) == 2  # both replicas, each from its own slot
    for panel in panels:
        event = decode_event(await stored_plan(nc, panel))
        assert isinstance(event, PanelSeated) and event.panel == panel
    assert (await nc.jetstream().stream_info(subjects.EVENTS_STREAM)).state.messages == before + 200
