"""The seater's transport: fold `BENCH_EVENTS` into memory, answer `bench.rpc.seater.plan` from it.

No database on the request path: the configuration and the rotation state are projections of the stream,
caught up before the first answer. A plan is held for rotation the moment it is drafted and its
`PanelSeated` is in the stream before the reply leaves, so a restarted seater folds back the same state.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import structlog
from nats.aio.client import Client as NATS
from nats.js.errors import APIError, NotFoundError
from pydantic import ValidationError

from services.seater.planning import plan_panel
from services.seater.rotation import NEVER, Rotation
from shared import bus, subjects
from shared.commands import Plan, PlanRefusal, PlanRequest
from shared.config_state import ConfigState
from shared.events import ConfigEvents, Event, PanelSeated, encode_event
from shared.ids import candidate_id, utcnow

log = structlog.get_logger("seater")

ID_DRAWS = 20
WRONG_LAST_SEQUENCE = 10071  # JetStream's error code for a failed expected-sequence check


# What `_fold` reads: configuration and the subjects of the rotation's four event types. Usage and route-turn
# events (one or more for every provider call) stay on the server: this seater never receives them.
FOLDED = (
    subjects.CONFIG,
    f"{subjects.PANEL_PREFIX}.>",
    f"{subjects.SEAT_PREFIX}.>",
    f"{subjects.VERDICT_PREFIX}.>",
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
        self.projection = bus.Projection(self.js, FOLDED, self._fold, name="seater")
        self._sub: Any = None

    def _fold(self, event: Event, seq: int) -> None:
        if isinstance(event, ConfigEvents):
            self.config.apply(event, seq)
        else:
            self.rotation.apply(event, seq)

    async def start(self) -> None:
        await self.projection.start()
        self._sub = await bus.serve_rpc(self.nc, subjects.RPC_SEATER_PLAN, subjects.SEATER_QUEUE, self.handle)
        log.info("seater_caught_up", seq=self.projection.seq, models=len(self.config.models),
                 collections=len(self.config.collections))

    async def stop(self) -> None:
        if self._sub is not None:
            await self._sub.unsubscribe()
        await self.projection.stop()

    async def handle(self, data: bytes) -> bytes:
        plan = await self.plan(data)
        return plan.model_dump_json(by_alias=True).encode()

    async def plan(self, data: bytes) -> Plan:
        try:
            request = PlanRequest.model_validate_json(data)
        except ValidationError as exc:
            return _refused(400, f"bad plan request: {exc.errors()[0]['msg']}")
        try:
            await self._config_caught_up(request.config_seq)
        except Exception as exc:  # the bus is slow or away: a clear refusal, never a half-made panel
            log.warning("plan_unready", error=type(exc).__name__)
            return _refused(503, f"the seater cannot plan right now ({type(exc).__name__}); try again")
        now = self.clock.next()
        draft = plan_panel(request, self.config, self.rotation, now)
        if isinstance(draft, PlanRefusal):
            log.info("panel_refused", status=draft.status, collection=request.collection)
            return Plan(refusal=draft)
        for _ in range(ID_DRAWS):
            panel = candidate_id("p", now)
            # Held before any await: the next plan already sees these seats as taken now.
            self.rotation.hold(panel, draft.aliases(), now)
            seats = draft.seats(panel, self.config)
            try:
                taken = not await self._record(draft.seated(panel, seats, request.key, now, self.instance))
            except Exception as exc:
                self.rotation.release(panel)
                log.exception("panel_not_recorded", panel=panel)
                why = type(exc).__name__
                return _refused(503, f"the seater could not record the panel ({why}); try again")
            if taken:
                self.rotation.release(panel)
                continue
            log.info("panel_seated", panel=panel, collection=request.collection, shape=draft.shape,
                     aliases=draft.aliases(), skipped=[s.alias for s in draft.skipped])
            return draft.plan(panel, seats, self.config)
        return _refused(503, "the seater could not draw a free panel id; try again")

    async def _record(self, seated: PanelSeated) -> bool:
        """Publish the plan as the first event of its panel's subject; False when the id is already taken.

        The stream itself reserves the id (C-12 keeps 4 random hex digits a second, which collide across
        replicas at 100 panels/s): `Nats-Expected-Last-Subject-Sequence: 0` only admits a subject with no
        message yet, and a duplicate `Nats-Msg-Id` means another plan already took this id.
        """
        headers = {"Nats-Msg-Id": seated.id, "Nats-Expected-Last-Subject-Sequence": "0"}
        try:
            ack = await self.js.publish(seated.subject(), encode_event(seated), headers=headers)
        except APIError as exc:
            if exc.err_code == WRONG_LAST_SEQUENCE:
                return False
            raise
        return not ack.duplicate

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


def _refused(status: int, message: str) -> Plan:
    return Plan(refusal=PlanRefusal(status=status, message=message))
