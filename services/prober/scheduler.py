"""The scheduler's loop (SPEC HL-7): a tick every 30 s; each job due since the last tick is handled once,
on one replica.

`off` runs nothing. `log-only` records `would run <job>` at its due time. `run` runs the job's runner.
Settings are read every tick (a config event changes them on every replica). On start, the latest run
missed in the last 7 days is run once (marked as catching up when more than 5 minutes late). A due time is
claimed in `bench_jobs` first (`JobLease`), so two replicas never both run it, a job never overlaps its
previous run, and a replica that dies mid-run leaves the claim to lapse and be taken over.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Protocol

import structlog

from services.prober.job_lease import Claim, JobLease
from services.prober.lease_rules import abandoned, catching_up, missed
from services.prober.schedule import JOBS, Due, Job, due_between
from shared.events import JobRan
from shared.ids import event_id
from shared.scheduled_jobs import JobName, Mode

TICK_S = 30.0
MAX_RUN_S = 2 * 3600.0  # HL-7: each run at most 2 h

Clock = Callable[[], datetime]
Sleep = Callable[[float], Awaitable[None]]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Settings:
    mode: Mode
    off: frozenset[str] = field(default_factory=frozenset)
    since: datetime | None = None  # when the settings were saved (misses before it are not misses)


class Runner(Protocol):
    async def run(self, due: Due, late: bool) -> tuple[str, str]:
        """Run the job for `due`; its outcome (`done`, `failed`, …) and a one-line summary."""
        ...


Record = Callable[[JobRan], Awaitable[None]]


class Scheduler:
    def __init__(
        self,
        settings: Callable[[], Settings],
        lease: JobLease,
        runner: Runner,
        record: Record,
        jobs: tuple[Job, ...] = JOBS,
        *,
        tz: tzinfo | None = None,
        clock: Clock = utc_now,
        sleep: Sleep = asyncio.sleep,
        pause: Sleep = asyncio.sleep,
        tick_s: float = TICK_S,
        max_run_s: float = MAX_RUN_S,
    ) -> None:
        """`sleep` waits between ticks, `pause` between renewals of a running job's claim (tests drive the
        first to move a fake clock)."""
        self.settings, self.lease, self.runner, self.record = settings, lease, runner, record
        self.jobs, self.tz, self.clock, self.sleep, self.pause = jobs, tz, clock, sleep, pause
        self.tick_s, self.max_run_s = tick_s, max_run_s
        self.running: dict[str, asyncio.Task[None]] = {}
        self.log = structlog.get_logger("prober.scheduler")

    async def run(self) -> None:
        """Tick until cancelled; runs in flight are cancelled with it (their claims lapse)."""
        try:
            await self._loop()
        finally:
            for task in self.running.values():
                task.cancel()
            for task in list(self.running.values()):
                with contextlib.suppress(BaseException):
                    await task

    async def _loop(self) -> None:
        last, mode, caught_up = self.clock(), None, False
        while True:
            now, settings = self.clock(), self.settings()
            if settings.mode is not mode:
                mode = settings.mode
                self.log.info("scheduler_off" if mode is Mode.OFF else "scheduler_on", mode=mode.value,
                              jobs=[j.name for j in self.jobs if j.name not in settings.off])
            if mode is not Mode.OFF:
                if not caught_up:
                    await self._catch_up(settings, now)
                    caught_up = True
                await self._resume_abandoned(settings, now)
                for due in due_between(self.jobs, last, now, self.tz):
                    if due.job not in settings.off:
                        await self.handle(due, mode, now)
            # A clock stepped back must not make the same due time fire twice.
            last = max(last, now)
            await self.sleep(self.tick_s)

    async def _catch_up(self, settings: Settings, now: datetime) -> None:
        for job in self.jobs:
            if job.name in settings.off:
                continue
            due = missed(job, await self.lease.record(job.name), settings.since, now, self.tz)
            if due is not None:
                await self.handle(due, settings.mode, now)

    async def _resume_abandoned(self, settings: Settings, now: datetime) -> None:
        """A run whose holder stopped renewing its claim (it died) is taken over and finished here."""
        for job in self.jobs:
            if job.name in settings.off or job.name in self.running:
                continue
            record = await self.lease.record(job.name)
            if record is not None and abandoned(record, now):
                await self.handle(Due(job.name, record.due), settings.mode, now)

    async def handle(self, due: Due, mode: Mode, now: datetime) -> None:
        claim = await self.lease.claim(due, now)
        if isinstance(claim, str):
            self.log.info(f"skipped {due.job}: {claim}", job=due.job, due=due.at.isoformat())
            return
        late = catching_up(due.at, now)
        if mode is Mode.LOG_ONLY:
            self.log.info(f"would run {due.job}", job=due.job, due=due.at.isoformat(), catching_up=late)
            await self.lease.finish(claim, now)
            await self._record(claim, mode, now, late, "would run", "")
            return
        self.log.info(f"running {due.job}", job=due.job, due=due.at.isoformat(), catching_up=late,
                      took_over=claim.took_over)
        self.running[due.job] = asyncio.create_task(self._run(claim, late, now), name=f"job-{due.job}")

    async def _run(self, claim: Claim, late: bool, started: datetime) -> None:
        job = claim.due.job
        work = asyncio.create_task(self.runner.run(claim.due, late))
        keeper = asyncio.create_task(self._keep(claim, work))
        try:
            async with asyncio.timeout(self.max_run_s):
                outcome, summary = await work
        except TimeoutError:
            outcome, summary = "timed out", f"stopped after {self.max_run_s:g}s"
        except asyncio.CancelledError:
            if keeper.done() and not keeper.cancelled():  # the claim was lost: its new holder records it
                return
            raise
        except Exception as exc:  # a job that crashes is a failed run, never a crashed prober
            self.log.error("job_failed", job=job, exc_info=exc)
            outcome, summary = "failed", f"{type(exc).__name__}: {exc}"[:300]
        finally:
            keeper.cancel()
            self.running.pop(job, None)
        now = self.clock()
        await self.lease.finish(claim, now)
        await self._record(claim, Mode.RUN, started, late, outcome, summary)
        self.log.info(f"ran {job}", job=job, outcome=outcome, summary=summary)

    async def _keep(self, claim: Claim, work: asyncio.Task[tuple[str, str]]) -> None:
        """Renew the claim while the job runs; a claim lost (it lapsed and was taken over) stops the job."""
        while True:
            await self.pause(self.lease.lease_s / 4)
            if not await self.lease.renew(claim, self.clock()):
                self.log.warning("job_claim_lost", job=claim.due.job, due=claim.due.at.isoformat())
                work.cancel()
                return

    async def _record(self, claim: Claim, mode: Mode, started: datetime, late: bool, outcome: str,
                      summary: str) -> None:
        due = claim.due
        await self.record(JobRan(
            id=event_id("job", due.job, due.at.isoformat()), by="prober", job=JobName(due.job), due=due.at,
            mode="log-only" if mode is Mode.LOG_ONLY else "run", instance=self.lease.instance,
            started=started, catching_up=late, took_over=claim.took_over,
            outcome=outcome,
            summary=summary,
        ))
