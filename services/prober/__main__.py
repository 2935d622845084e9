# ruff: noqa: E402
"""`python -m services.prober`: the scheduler and its jobs, and suite passes and catalog refreshes on
request (`bench.rpc.prober.suite`, `bench.rpc.prober.catalog`). Run as many replicas as you like: each due
job is claimed by one of them (`bench_jobs`). Its settings are the last `scheduler_saved` config event, else
`BENCH_SCHEDULER` (default off)."""

from __future__ import annotations

from shared.lean import leave_out

leave_out("rich", "aiohttp")  # before anything imports them (shared/lean.py)
# isort: split

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from nats.aio.client import Client as NATS

from services.prober.asking import ProbeAsker
from services.prober.catalog import CatalogRefresh
from services.prober.catalog_fetch import FeedLimits
from services.prober.deprecations import Deprecations
from services.prober.job_lease import BucketRecords, JobLease, MirrorRecords
from services.prober.jobs import JobRunner
from services.prober.onboard_queue import OnboardQueue
from services.prober.onboard_rpc import OnboardRpc
from services.prober.onboard_runner import OnboardRunner
from services.prober.onboard_steps import OnboardSteps
from services.prober.scheduler import Scheduler, Settings
from services.prober.suite_choice import SuiteHistory
from services.prober.suite_job import SuiteJob
from services.prober.suite_pass import SuitePass
from services.prober.suite_rpc import SuiteRpc
from services.prober.suite_scheduled import scheduled_pass
from shared import bus, subjects
from shared.catalog.merge import Catalog
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter
from shared.events import JobRan, OnboardProgress
from shared.logging import setup_logging
from shared.runtime import login_or_exit, run, serve
from shared.scheduled_jobs import Mode, parse_mode
from shared.settings import ProberSettings, instance_name, settings_or_exit


def settings_of(config: ConfigState, fallback: Mode) -> Callable[[], Settings]:
    def current() -> Settings:
        saved = config.scheduler
        if saved is None:
            return Settings(fallback)
        return Settings(saved.mode, frozenset(saved.off), saved.at)

    return current


async def start_prober(nc: NATS, settings: ProberSettings, fallback: Mode, instance: str
                       ) -> Callable[[], Awaitable[None]]:
    js = nc.jetstream()
    config, history = ConfigState(), SuiteHistory()
    projection = bus.Projection(js, subjects.CONFIG, config.apply, "prober-config")
    scores = bus.Projection(js, f"{subjects.SUITE_PREFIX}.>", history.apply, "prober-suite")
    for started in (projection, scores):
        await started.start()
    asker = ProbeAsker(nc)
    writer = ConfigWriter(js, projection, config)
    deprecations = Deprecations(nc, config, writer, asker)
    catalog = CatalogRefresh(nc, config, writer, FeedLimits.of(settings))
    catalog_sub = await catalog.serve(nc)
    suite = SuiteJob(SuitePass(nc, config, by=instance), config, history, settings.home)
    suite_subs = await SuiteRpc(suite).serve(nc)
    onboarding = await start_onboarding(nc, config, projection, writer, asker, suite, settings, instance,
                                        catalog.store.catalog)

    async def record(event: JobRan) -> None:
        await bus.publish_event(js, event)

    async def suite_pass(job: str) -> tuple[str, str]:
        return await scheduled_pass(suite, job)

    lease = JobLease(BucketRecords(js), instance, settings.job_lease_s)
    runner = JobRunner(config, asker, deprecations, deprecations.write, suite_pass, catalog=catalog.job)
    scheduler = Scheduler(settings_of(config, fallback), lease, runner, record)
    task = asyncio.create_task(scheduler.run(), name="scheduler")

    def report(done: asyncio.Task[None]) -> None:
        if not done.cancelled() and done.exception() is not None:
            scheduler.log.error("scheduler_crashed", exc_info=done.exception())

    task.add_done_callback(report)

    async def stop() -> None:
        await onboarding()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        for sub in (*suite_subs, catalog_sub):
            await sub.unsubscribe()
        for started in (scores, projection):
            await started.stop()

    return stop


async def start_onboarding(nc: NATS, config: ConfigState, projection: bus.Projection, writer: ConfigWriter,
                           asker: ProbeAsker, suite: SuiteJob, settings: ProberSettings, instance: str,
                           catalog: Callable[[], Awaitable[Catalog]]) -> Callable[[], Awaitable[None]]:
    """O-1..O-4: this replica's share of the onboarding queue (its runner, and answering the queue's RPC)."""
    js = nc.jetstream()
    records = await MirrorRecords.open(nc, subjects.ONBOARD_BUCKET)
    queue = OnboardQueue(records)

    async def publish(event: OnboardProgress) -> None:
        await bus.publish_event(js, event)

    steps = OnboardSteps(nc, config, writer, asker, suite, catalog=catalog)
    runner = OnboardRunner(queue, steps, publish, instance, settings.onboard_lease_s, settings.onboard_tick_s)
    sub = await OnboardRpc(nc, config, projection, queue, instance, runner.wake.set).serve(nc)
    task = asyncio.create_task(runner.run(), name="onboard-runner")

    async def stop() -> None:
        await sub.unsubscribe()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await records.close()

    return stop


def main() -> None:
    settings = settings_or_exit(ProberSettings, "prober")
    log = setup_logging("prober", settings.log_level)
    try:
        mode = parse_mode(settings.scheduler)
    except ValueError as exc:
        raise SystemExit(f"prober: BENCH_SCHEDULER: {exc}") from None
    instance = instance_name("prober")
    login = login_or_exit("prober", settings)
    log.info("prober_starting", scheduler=mode.value)
    run(serve("prober", instance, settings, login, lambda nc: start_prober(nc, settings, mode, instance)))


if __name__ == "__main__":
    main()
