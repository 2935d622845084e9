"""HL-7 on a real `bench_jobs` bucket: two prober replicas (each its own connection, with the prober's own
credentials) ticking across a due time run it once; a replica stopped mid-job leaves it to the other, which
runs it once. Time is injected; the claims are real compare-and-set writes."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from services.prober.job_lease import BucketRecords, JobLease, record_key
from services.prober.lease_rules import JobRecord
from services.prober.schedule import JOBS
from services.prober.scheduler import Scheduler, Settings
from shared import bus, subjects
from shared.events import JobRan
from shared.natsserver import NatsServer
from shared.scheduled_jobs import Mode
from tests.unit.prober.test_scheduler import MONDAY_0459, PARIS, FakeTime, Runner

OFF = frozenset(j.name for j in JOBS if j.name != "availability")


def replica(nc: bus.NATS, name: str, t: FakeTime, runner: Runner, recorded: list[JobRan]) -> Scheduler:
    async def record(event: JobRan) -> None:
        recorded.append(event)

    return Scheduler(lambda: Settings(Mode.RUN, OFF), JobLease(BucketRecords(nc.jetstream()), name, 120.0),
                     runner, record, tz=PARIS, clock=t.clock, sleep=t.sleep, pause=t.pause)


async def until_cancelled(*schedulers: Scheduler) -> None:
    with pytest.raises(asyncio.CancelledError):
        await asyncio.gather(*(s.run() for s in schedulers))


async def connected(nats_server: NatsServer, count: int) -> list[bus.NATS]:
    return [await bus.connect(nats_server.url, f"test-prober-{i}", nats_server.login("prober"))
            for i in range(count)]


async def test_two_replicas_across_a_due_time_run_it_once(nats_server: NatsServer, nc: bus.NATS) -> None:
    conns = await connected(nats_server, 2)
    try:
        runners, recorded = [Runner(), Runner()], list[JobRan]()
        times = [FakeTime(MONDAY_0459, MONDAY_0459 + timedelta(minutes=3)) for _ in conns]
        await until_cancelled(*(replica(c, f"p{i}", t, r, recorded)
                                for i, (c, t, r) in enumerate(zip(conns, times, runners, strict=True))))
        assert sum(len(r.ran) for r in runners) == 1
        assert [e.job for e in recorded] == ["availability"]
    finally:
        for c in conns:
            await c.close()


async def test_a_replica_stopped_mid_job_leaves_it_to_be_run_once_by_the_other(
    nats_server: NatsServer, nc: bus.NATS
) -> None:
    first_nc, second_nc = await connected(nats_server, 2)
    try:
        stuck, recorded = Runner(block=asyncio.Event()), list[JobRan]()
        first_time = FakeTime(MONDAY_0459, MONDAY_0459 + timedelta(minutes=2))
        await until_cancelled(replica(first_nc, "p1", first_time, stuck, recorded))
        assert len(stuck.ran) == 1 and recorded == []
        later = MONDAY_0459 + timedelta(minutes=6)
        other = Runner()
        await until_cancelled(replica(second_nc, "p2", FakeTime(later, later + timedelta(minutes=2)), other,
                                      recorded))
        assert len(other.ran) == 1
        assert [(e.instance, e.took_over) for e in recorded] == [("p2", True)]
        kv = await nc.jetstream().key_value(subjects.JOBS_BUCKET)
        assert JobRecord.decode((await kv.get(record_key("availability"))).value or b"").done
    finally:
        await first_nc.close()
        await second_nc.close()
