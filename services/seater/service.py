"""The seater's transport: fold `BENCH_EVENTS` into memory, answer `bench.rpc.seater.plan` from it.

No database on the request path: the configuration and the rotation state are projections of the stream,
caught up before the first answer. A plan is held for rotation the moment it is drafted, and its
`PanelSeated` leaves on this connection before the reply does, so the server has it before the gateway has
the plan and a restarted seater folds back the same state. With a slot of panel ids leased (`slot_lease.py`)
the id is this replica's alone and the reply does not wait for the stream's ack; without one, a drawn id is
reserved in the stream first.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import structlog
from nats.aio.client import Client as NATS
from nats.js.errors import APIError, NotFoundError

from services.seater.panel_ids import drawn_id
from services.seater.planning import Draft, plan_panel
from services.seater.rotation import NEVER, Rotation
from services.seater.shape_asking import ShapeAsker
from services.seater.slot_lease import SlotLease
from shared import bus, rpc, subjects
from shared.commands import Plan, PlanRefusal, PlanRequest
from shared.config_state import ConfigState
from shared.events import ConfigEvents, Event, LimitLearned, PanelSeated, SeatPlan, encode_event
from shared.ids import utcnow

log = structlog.get_logger("seater")

ID_DRAWS = 20
ACK_WAIT_S = 10.0
WRONG_LAST_SEQUENCE = 10071  # JetStream's error code for a failed expected-sequence check


# What `_fold` reads: configuration and the subjects of the rotation's four event types. Usage and route-turn
# events (one or more for every provider call) stay on the server: this seater never receives them.
FOLDED = (
    subjects.CONFIG,
    f"{subjects.PANEL_PREFIX}.>",
    f"{subjects.SEAT_PREFIX}.>",
    f"{subjects.VERDICT_PREFIX}.>",
    f"{subjects.SUITE_PREFIX}.>",
    subjects.LIMITS_ALL,
)


class Clock:
    """UTC now, strictly increasing in this process: two plans never share a seat time, so they rotate."""

    def __init__(self) -> None:
        self.last = NEVER

    def next(self) -> datetime:
        self.last = max(utcnow(), self.last + timedelta(microseconds=1))
        return self.last


class Seater:
    def __init__(self, nc: NATS, instance: str) -> None:
        self.nc = nc
        self.js = nc.jetstream()
        self.instance = instance
        self.config = ConfigState()
        self.rotation = Rotation()
        self.clock = Clock()
        self.shapes = ShapeAsker(nc)
        self.projection = bus.Projection(self.js, FOLDED, self._fold, name="seater")
        self.lease: SlotLease | None = None
        self._sub: Any = None
        self._confirming: set[asyncio.Task[None]] = set()  # kept: a task nobody holds may be collected

    def _fold(self, event: Event, seq: int) -> None:
        if isinstance(event, ConfigEvents):
            self.config.apply(event, seq)
        else:
            if isinstance(event, LimitLearned) and event.axis == "context":
                self.config.learn_window(event.alias, event.limit, event.at)
            self.rotation.apply(event, seq)

    async def start(self) -> None:
        await self.projection.start()
        self.lease = await SlotLease(await self.js.key_value(subjects.IDS_BUCKET), self.instance).start()
        self._sub = await rpc.serve(self.nc, subjects.RPC_SEATER_PLAN, subjects.SEATER_QUEUE, PlanRequest,
                                    self.answer)
        log.info("seater_caught_up", seq=self.projection.seq, models=len(self.config.models),
                 collections=len(self.config.collections))

    async def stop(self) -> None:
        if self._sub is not None:
            await self._sub.unsubscribe()
        if self.lease is not None:
            await self.lease.stop()
        await self.projection.stop()

    async def answer(self, request: PlanRequest) -> Plan:
        """The plan; the ack of a `PanelSeated` sent on a leased id is heard after the reply has gone."""
        plan, recording = await self.plan(request)
        if recording is not None:
            confirming = asyncio.create_task(self._confirm(plan.panel, recording))
            self._confirming.add(confirming)
            confirming.add_done_callback(self._confirming.discard)
        return plan

    async def plan(self, request: PlanRequest) -> tuple[Plan, asyncio.Future[Any] | None]:
        """The plan (or the planner's refusal of this request), and the ack still to come of its
        `PanelSeated` when its id is from the leased slot. A seater that cannot plan now raises a 503."""
        await self.ready(request.config_seq)
        picked = await self.shapes.pick(request, self.config)
        now = self.clock.next()
        draft = plan_panel(request, self.config, self.rotation, now, picked)
        if isinstance(draft, PlanRefusal):
            log.info("panel_refused", status=draft.status, collection=request.collection)
            return Plan(refusal=draft), None
        ids = self.lease.held() if self.lease is not None else None
        panel = ids.take(now) if ids is not None else None
        if panel is not None:
            return await self._leased(draft, request, now, panel)
        return await self._drawn(draft, request, now), None

    async def _leased(
        self, draft: Draft, request: PlanRequest, now: datetime, panel: str
    ) -> tuple[Plan, asyncio.Future[Any] | None]:
        """An id from this replica's slot: its `PanelSeated` is sent, its ack heard after the reply."""
        self.rotation.hold(panel, draft.aliases(), now)
        seats = draft.seats(panel, self.config)
        seated = draft.seated(panel, seats, request.key, now, self.instance)
        try:
            recording = await self.js.publish_async(seated.subject(), encode_event(seated),
                                                    headers=_reserving(seated))
        except Exception as exc:
            self.rotation.release(panel)
            log.exception("panel_not_recorded", panel=panel)
            raise rpc.RpcFailure(503, not_recorded(exc)) from None
        return self._seated(draft, request, panel, seats), recording

    async def _drawn(self, draft: Draft, request: PlanRequest, now: datetime) -> Plan:
        """Without a trusted slot: draw ids from the drawn block until the stream admits one."""
        for _ in range(ID_DRAWS):
            panel = drawn_id(now)
            # Held before any await: the next plan already sees these seats as taken now.
            self.rotation.hold(panel, draft.aliases(), now)
            seats = draft.seats(panel, self.config)
            try:
                taken = not await self._record(draft.seated(panel, seats, request.key, now, self.instance))
            except Exception as exc:
                self.rotation.release(panel)
                log.exception("panel_not_recorded", panel=panel)
                raise rpc.RpcFailure(503, not_recorded(exc)) from None
            if taken:
                self.rotation.release(panel)
                continue
            return self._seated(draft, request, panel, seats)
        raise rpc.RpcFailure(503, "the seater could not draw a free panel id; try again")

    def _seated(self, draft: Draft, request: PlanRequest, panel: str, seats: list[SeatPlan]) -> Plan:
        # The log line follows a beat after the answer (`bus.RECORDS_AFTER_S`): it is not on the panel's way.
        asyncio.get_running_loop().call_later(bus.RECORDS_AFTER_S, partial(
            log.info, "panel_seated", panel=panel, collection=request.collection, shape=draft.shape,
            aliases=draft.aliases(), skipped=[s.alias for s in draft.skipped]))
        return draft.plan(panel, seats, self.config)

    async def _confirm(self, panel: str, recording: asyncio.Future[Any]) -> None:
        """The ack of a plan already answered. A leased id is this replica's alone, so a refusal here means
        the stream is in trouble (or the lease was): said loudly, since the panel is already running."""
        try:
            await asyncio.wait_for(recording, ACK_WAIT_S)
        except Exception as exc:
            log.error("panel_seated_not_confirmed", panel=panel, error=f"{type(exc).__name__}: {exc}")

    async def _record(self, seated: PanelSeated) -> bool:
        """Publish the plan as the first event of its panel's subject; False when the id is already taken.

        The stream itself reserves a drawn id (random in its block, so it may collide with another
        replica's): `Nats-Expected-Last-Subject-Sequence: 0` only admits a subject with no message yet, and
        a duplicate `Nats-Msg-Id` means another plan already took this id.
        """
        try:
            ack = await self.js.publish(seated.subject(), encode_event(seated), headers=_reserving(seated))
        except APIError as exc:
            if exc.err_code == WRONG_LAST_SEQUENCE:
                return False
            raise
        return not ack.duplicate

    async def ready(self, config_seq: int) -> None:
        """Folded at least to `config_seq`, or a 503: the bus is slow or away, and a clear refusal is better
        than a half-made decision."""
        try:
            await self._config_caught_up(config_seq)
        except Exception as exc:
            log.warning("plan_unready", error=type(exc).__name__)
            why = f"the seater cannot plan right now ({type(exc).__name__}); try again"
            raise rpc.RpcFailure(503, why) from None

    async def _config_caught_up(self, seq: int) -> None:
        """Read-your-writes for configuration: a collection saved just before this request is known here.

        The asker says how far its own config view goes; without that, ask the stream.
        """
        if not seq:
            try:
                last = await self.js.get_last_msg(subjects.EVENTS_STREAM, subjects.CONFIG)
            except NotFoundError:
                return
            seq = last.seq or 0
        if seq > self.projection.seq:
            await self.projection.wait_for(seq)


def _reserving(seated: PanelSeated) -> dict[str, str]:
    return {"Nats-Msg-Id": seated.id, "Nats-Expected-Last-Subject-Sequence": "0"}



def not_recorded(exc: Exception) -> str:
    return f"the seater could not record the panel ({type(exc).__name__}); try again"
