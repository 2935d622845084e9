"""One suite pass (T-6): one model, a few tasks, asked one at a time through the callers.

One at a time, so a pass is paced rather than burst: the next task is queued only once the previous answer
is stored, and the callers' shared limits hold it back further when the connection is busy. Each call is
asked and awaited as a probe is (`shared.seat_wait.ask_and_wait`: its completion heard on its own subject,
else looked up in the stream before a silent task is called a timeout). `SuiteJob` runs it, asked or
scheduled; nothing here decides when.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog
from nats.aio.client import Client as NATS

from services.prober.suite_calls import RUN_PREFIX, Asked, answered, scored, suite_call
from shared import bus
from shared.config_state import ConfigState
from shared.events import SeatCompleted, SuiteAnswered
from shared.ids import candidate_id
from shared.seat_wait import ask_and_wait, stored_completion

log = structlog.get_logger("prober.suite")

DEADLINE_S = 420.0  # a task's answer, pacing included, like a panel seat's (BENCH_SEAT_DEADLINE_S)
GRACE_S = 5.0  # past the caller's deadline before the pass looks in the stream itself


class SuitePass:
    def __init__(self, nc: NATS, config: ConfigState, by: str, deadline_s: float = DEADLINE_S,
                 clock: Callable[[], float] = time.time) -> None:
        self.nc, self.config, self.by, self.deadline_s, self.clock = nc, config, by, deadline_s, clock
        self.js = nc.jetstream()

    async def run(self, alias: str, tasks: list[Asked]) -> list[SuiteAnswered]:
        """Ask `alias` every task in order; one `suite_answered` per task, published and returned."""
        run = await bus.reserve_id(self.js, lambda: candidate_id(RUN_PREFIX))
        results = [await self._ask(run, n, alias, asked) for n, asked in enumerate(tasks, 1)]
        log.info("suite_pass_done", run=run, alias=alias, tasks=len(tasks),
                 answered=sum(r.kind == "answered" for r in results))
        return results

    async def _ask(self, run: str, n: int, alias: str, asked: Asked) -> SuiteAnswered:
        start = self.clock()
        call = suite_call(run, n, asked, alias, self.config, start + self.deadline_s, self.deadline_s)
        seat = await ask_and_wait(self.nc, call, GRACE_S)
        event = answered(run, call, asked.task, scored(asked.task, seat, self.deadline_s),
                         self.clock() - start, self.by)
        await bus.publish_event(self.js, event)
        return event

    async def stored(self, call: str) -> SeatCompleted | None:
        """The seat's answer as the stream keeps it (`None` when nothing is stored under its call)."""
        return await stored_completion(self.nc, call)
