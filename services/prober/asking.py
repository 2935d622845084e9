"""Probe calls go through the callers like any seat: queued on `BENCH_CALLS`, answered by a
`seat_completed` on `bench.ev.seat.<call>` (keys, pacing and the free-tier guard stay in the callers).

Each connection's calls are asked one at a time, so a probe of many models never crowds a limited
connection (the callers' pacing holds each call until its window has room); connections go side by side.
A call whose completion the stream already holds (a run resumed after a replica died) is not asked again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable

import structlog
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js.errors import NotFoundError

from services.prober.probes import by_connection
from shared import subjects
from shared.commands import SeatCall
from shared.events import SeatCompleted, decode_event

GRACE_S = 15.0  # past a call's deadline, how long to wait for a caller's word before giving up on it

log = structlog.get_logger("prober.asking")


class ProbeAsker:
    def __init__(self, nc: NATS, gap_s: float = 0.0) -> None:
        self.nc, self.js = nc, nc.jetstream()
        self.gap_s = gap_s  # HL-3: a pause between one connection's calls
        self.waiting: dict[str, asyncio.Future[SeatCompleted]] = {}

    async def ask_all(self, calls: Iterable[SeatCall]) -> list[SeatCompleted]:
        """Every call's completion (a call nobody answered in time is left out)."""
        groups = by_connection(calls)
        results = await asyncio.gather(*(self._ask_in_turn(group) for group in groups.values()))
        return [done for group in results for done in group]

    async def _ask_in_turn(self, calls: list[SeatCall]) -> list[SeatCompleted]:
        done: list[SeatCompleted] = []
        for i, call in enumerate(calls):
            if i and self.gap_s:
                await asyncio.sleep(self.gap_s)
            answer = await self.ask(call)
            if answer is not None:
                done.append(answer)
        return done

    async def ask(self, call: SeatCall) -> SeatCompleted | None:
        known = await self.stored(call.call)
        if known is not None:
            return known
        call = call.model_copy(update={"deadline": time.time() + call.timeout_s})
        future: asyncio.Future[SeatCompleted] = asyncio.get_running_loop().create_future()
        self.waiting[call.call] = future
        sub = await self.nc.subscribe(subjects.seat_subject(call.call), cb=self._heard)
        try:
            await self.js.publish(subjects.call_subject(call.call), call.model_dump_json().encode(),
                                  headers={"Nats-Msg-Id": f"call:{call.call}"})
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(asyncio.shield(future), call.timeout_s + GRACE_S)
        finally:
            self.waiting.pop(call.call, None)
            await sub.unsubscribe()
        found = await self.stored(call.call)  # the subscription may have missed it
        if found is None:
            log.warning("probe_unanswered", call=call.call, alias=call.alias)
        return found

    async def _heard(self, msg: Msg) -> None:
        event = decode_event(msg.data)
        if isinstance(event, SeatCompleted):
            future = self.waiting.get(event.call)
            if future is not None and not future.done():
                future.set_result(event)

    async def stored(self, call: str) -> SeatCompleted | None:
        try:
            raw = await self.js.get_last_msg(subjects.EVENTS_STREAM, subjects.seat_subject(call))
        except NotFoundError:
            return None
        event = decode_event(raw.data or b"")
        return event if isinstance(event, SeatCompleted) else None
