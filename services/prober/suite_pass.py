"""One suite pass (T-6): one model, a few tasks, asked one at a time through the callers.

One at a time, so a pass is paced rather than burst: the next task is queued only once the previous answer
is stored, and the callers' shared limits hold it back further when the connection is busy. The pass hears
answers on a core subscription made before the first call is queued, and looks in the stream once before
calling a silent task a timeout. The scheduler runs it as a job (`run_pass`); nothing here decides when.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import structlog
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg as NatsMsg

from services.prober.suite_calls import RUN_PREFIX, Asked, answered, scored, suite_call
from shared import bus, subjects
from shared.config_state import ConfigState
from shared.events import SeatCompleted, SuiteAnswered, decode_event
from shared.ids import candidate_id

log = structlog.get_logger("prober.suite")

DEADLINE_S = 420.0  # a task's answer, pacing included, like a panel seat's (BENCH_SEAT_DEADLINE_S)
GRACE_S = 5.0  # past the caller's deadline before the pass looks in the stream itself


class SuitePass:
    def __init__(self, nc: NATS, config: ConfigState, by: str, deadline_s: float = DEADLINE_S,
                 clock: Callable[[], float] = time.time) -> None:
        self.nc, self.config, self.by, self.deadline_s, self.clock = nc, config, by, deadline_s, clock
        self.js = nc.jetstream()
        self._waiting: dict[str, asyncio.Future[SeatCompleted]] = {}

    async def run(self, alias: str, tasks: list[Asked]) -> list[SuiteAnswered]:
        """Ask `alias` every task in order; one `suite_answered` per task, published and returned."""
        run = await bus.reserve_id(self.js, lambda: candidate_id(RUN_PREFIX))
        sub = await self.nc.subscribe(subjects.seats_of_panel(run), cb=self._heard)
        results = []
        try:
            for n, asked in enumerate(tasks, 1):
                results.append(await self._ask(run, n, alias, asked))
        finally:
            await sub.unsubscribe()
        log.info("suite_pass_done", run=run, alias=alias, tasks=len(tasks),
                 answered=sum(r.kind == "answered" for r in results))
        return results

    async def _ask(self, run: str, n: int, alias: str, asked: Asked) -> SuiteAnswered:
        start = self.clock()
        call = suite_call(run, n, asked, alias, self.config, start + self.deadline_s, self.deadline_s)
        heard: asyncio.Future[SeatCompleted] = asyncio.get_running_loop().create_future()
        self._waiting[call.call] = heard
        try:
            await self.js.publish(subjects.call_subject(call.call), call.model_dump_json().encode(),
                                  headers={"Nats-Msg-Id": f"call:{call.call}"})
            try:
                seat: SeatCompleted | None = await asyncio.wait_for(heard, self.deadline_s + GRACE_S)
            except TimeoutError:
                seat = await self.stored(call.call)
        finally:
            self._waiting.pop(call.call, None)
        event = answered(run, call, asked.task, scored(asked.task, seat, self.deadline_s),
                         self.clock() - start, self.by)
        await bus.publish_event(self.js, event)
        return event

    async def _heard(self, msg: NatsMsg) -> None:
        event = decode_event(msg.data)
        if isinstance(event, SeatCompleted):
            waiting = self._waiting.get(event.call)
            if waiting is not None and not waiting.done():
                waiting.set_result(event)

    async def stored(self, call: str) -> SeatCompleted | None:
        """The seat's answer as the stream keeps it (`None` when nothing is stored under its call)."""
        try:
            msg = await self.js.get_last_msg(subjects.EVENTS_STREAM, subjects.seat_subject(call))
        except Exception:  # nothing stored under that subject (or the stream is away): no answer
            return None
        event = decode_event(msg.data or b"")
        return event if isinstance(event, SeatCompleted) else None
