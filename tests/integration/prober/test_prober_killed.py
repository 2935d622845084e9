"""HL-7 with real prober processes: one killed (SIGKILL) in the middle of a job leaves the job to the other,
which runs it once, and the provider is asked once. The job is made due by the catch-up on start: its last
run is recorded three days ago, so the latest availability due time since is missed and run on start."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from services.prober.job_lease import record_key
from services.prober.lease_rules import JobRecord
from shared import bus, subjects
from shared.events import EndpointSaved, JobRan, ModelRegistered, SchedulerSaved, decode_event
from shared.natsserver import NatsServer
from shared.scheduled_jobs import JobName, Mode
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess
from tests.integration.caller.test_caller_service import caller_env, stored_events
from tests.integration.service_process import ServiceProcess

SLOW = "kill-slow"
LEASE_S = "4"


def prober(nats_server: NatsServer, home: Path, name: str) -> ServiceProcess:
    return ServiceProcess("prober", nats_server, home, {"BENCH_JOB_LEASE_S": LEASE_S}, log_name=name)


async def until(check: Callable[[], object], within: float, what: str) -> None:
    end = time.monotonic() + within
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"{what} did not happen within {within}s")
        await asyncio.sleep(0.1)


async def test_a_prober_killed_mid_job_leaves_it_to_the_other_which_runs_it_once(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess], tmp_path: Path,
) -> None:
    provider.set_model(SLOW, latency_ms=8000)
    js = nc.jetstream()
    await bus.publish_event(js, ModelRegistered(id="cfg:slow", alias=SLOW, served=SLOW, endpoint="fake"))
    off = [job for job in JobName if job != JobName.AVAILABILITY]
    await bus.publish_event(js, SchedulerSaved(id="cfg:sched", mode=Mode.RUN, off=off))
    long_ago = datetime.now(UTC) - timedelta(days=3)
    kv = await js.key_value(subjects.JOBS_BUCKET)
    await kv.create(record_key("availability"), JobRecord(long_ago, "p0", long_ago, done=True).encode())
    callers(caller_env())

    first = prober(nats_server, tmp_path / "home", "prober-1").start()
    await until(lambda: any(r["model"] == SLOW for r in provider.requests()), 30, "the probe call")
    first.kill()  # mid-job: its call is still with the provider
    await asyncio.sleep(float(LEASE_S) + 1)  # its claim lapses
    second = prober(nats_server, tmp_path / "home", "prober-2").start()
    try:
        ran: list[JobRan] = []

        async def look() -> None:
            ran[:] = [e for raw in await stored_events(nc, f"{subjects.JOB_PREFIX}.>")
                      if isinstance(e := decode_event(raw), JobRan)]

        end = time.monotonic() + 60
        while not ran and time.monotonic() < end:
            await look()
            await asyncio.sleep(0.5)
        assert [(e.job, e.took_over, e.outcome, e.summary) for e in ran] == [
            ("availability", True, "done", "1 calls: 1 answered")]
        assert ran[0].instance.endswith(f"-{second.pid}")
        assert sum(1 for r in provider.requests() if r["model"] == SLOW) == 1
        record = JobRecord.decode((await kv.get(record_key("availability"))).value or b"")
        assert record.done and record.due == ran[0].due
    finally:
        second.stop()
