"""The scheduler's loop (SPEC HL-7): a tick every 30 s; each job due since the last tick is handled once.

`off` runs nothing. `log-only` logs `would run <job>` at its due time. `run` would run the job's probe;
no probe is built yet, so it says so at the due time instead of pretending.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, tzinfo

import structlog

from services.prober.schedule import JOBS, Due, Job, Mode, due_between

TICK_S = 30.0

Clock = Callable[[], datetime]
Sleep = Callable[[float], Awaitable[None]]


def utc_now() -> datetime:
    return datetime.now(UTC)


class Scheduler:
    def __init__(
        self,
        mode: Mode,
        jobs: tuple[Job, ...] = JOBS,
        *,
        tz: tzinfo | None = None,
        clock: Clock = utc_now,
        sleep: Sleep = asyncio.sleep,
        tick_s: float = TICK_S,
    ) -> None:
        self.mode = mode
        self.jobs = jobs
        self.tz = tz
        self.clock = clock
        self.sleep = sleep
        self.tick_s = tick_s
        self.log = structlog.get_logger("prober.scheduler")

    async def run(self) -> None:
        """Tick until cancelled. Only what falls due after the start is handled (no catch-up yet)."""
        if self.mode is Mode.OFF:
            self.log.info("scheduler_off")
            return
        zone = str(self.tz) if self.tz is not None else datetime.now().astimezone().tzname()
        self.log.info("scheduler_started", mode=self.mode.value, zone=zone, jobs=[j.name for j in self.jobs])
        last = self.clock()
        while True:
            await self.sleep(self.tick_s)
            now = self.clock()
            for due in due_between(self.jobs, last, now, self.tz):
                self.handle(due)
            # A clock stepped back must not make the same due time fire twice.
            last = max(last, now)

    def handle(self, due: Due) -> None:
        if self.mode is Mode.LOG_ONLY:
            self.log.info(f"would run {due.job}", job=due.job, due=due.at.isoformat())
        else:
            self.log.warning(
                f"cannot run {due.job}: its probe is not built yet", job=due.job, due=due.at.isoformat()
            )
