"""The scheduler loop on a fake clock and an in-memory job bucket (SPEC HL-7, A-92): `off` runs nothing,
`log-only` says `would run <job>` when due, a missed run within 7 days runs once on start, a job never
overlaps itself, and replicas sharing the bucket run each due time once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from structlog.testing import capture_logs

from services.prober.job_lease import JobLease, record_key
from services.prober.lease_rules import JobRecord
from services.prober.schedule import JOBS, Due
from services.prober.scheduler import Scheduler, Settings
from shared.events import JobRan
from shared.scheduled_jobs import Mode, parse_mode

PARIS = ZoneInfo("Europe/Paris")
MONDAY_0459 = datetime(2026, 1, 5, 4, 59, tzinfo=PARIS).astimezone(UTC)


class MemoryRecords:
    """The `bench_jobs` bucket's compare-and-set, in memory (shared by in-process replicas)."""

    def __init__(self) -> None:
        self.data: dict[str, tuple[bytes, int]] = {}
        self.revision = 0

    async def get(self, key: str) -> tuple[bytes, int] | None:
        return self.data.get(key)

    async def put(self, key: str, value: bytes, last: int | None) -> int | None:
        held = self.data.get(key)
        if (held[1] if held else None) != last:
            return None
        self.revision += 1
        self.data[key] = (value, self.revision)
        return self.revision


class FakeTime:
    """A clock that moves only when the scheduler sleeps between ticks; it stops the loop once past `end`."""

    def __init__(self, start: datetime, end: datetime) -> None:
        self.now, self.end = start, end
        self.moved = asyncio.Event()

    def clock(self) -> datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        for _ in range(5):  # let running jobs move on
            await asyncio.sleep(0)
        if self.now >= self.end:
            raise asyncio.CancelledError
        self.now += timedelta(seconds=seconds)
        self.moved.set()
        self.moved = asyncio.Event()

    async def pause(self, seconds: float) -> None:
        """A running job's renewal wait, on the same fake clock."""
        wake = self.now + timedelta(seconds=seconds)
        while self.now < wake:
            await self.moved.wait()


class Runner:
    def __init__(self, block: asyncio.Event | None = None) -> None:
        self.ran: list[tuple[str, datetime, bool]] = []
        self.block = block

    async def run(self, due: Due, late: bool) -> tuple[str, str]:
        self.ran.append((due.job, due.at, late))
        if self.block is not None:
            await self.block.wait()
        return "done", "ok"


class Rig:
    def __init__(self, t: FakeTime, mode: Mode, records: MemoryRecords | None = None, name: str = "p1",
                 runner: Runner | None = None, since: datetime | None = None,
                 off: frozenset[str] = frozenset()) -> None:
        self.records = records or MemoryRecords()
        self.runner = runner or Runner()
        self.recorded: list[JobRan] = []
        self.settings = Settings(mode, off, since)
        self.scheduler = Scheduler(lambda: self.settings, JobLease(self.records, name, 120.0), self.runner,
                                   self.record, tz=PARIS, clock=t.clock, sleep=t.sleep, pause=t.pause)

    async def record(self, event: JobRan) -> None:
        self.recorded.append(event)


def run(*schedulers: Scheduler) -> None:
    async def all_of() -> None:
        await asyncio.gather(*(s.run() for s in schedulers))

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(all_of())


def due_logs(logs: list[dict[str, object]], prefix: str) -> list[str]:
    return [str(e["event"]) for e in logs if str(e["event"]).startswith(prefix)]


def test_a92_off_runs_nothing_and_records_nothing() -> None:
    t = FakeTime(MONDAY_0459, MONDAY_0459 + timedelta(days=1))
    rig = Rig(t, Mode.OFF, since=MONDAY_0459 - timedelta(days=3))
    with capture_logs() as logs:
        run(rig.scheduler)
    assert rig.runner.ran == [] and rig.recorded == [] and rig.records.data == {}
    assert [e["event"] for e in logs] == ["scheduler_off"]


def test_a92_log_only_writes_would_run_at_each_due_time() -> None:
    t = FakeTime(MONDAY_0459, MONDAY_0459 + timedelta(hours=2, minutes=2))
    rig = Rig(t, Mode.LOG_ONLY)
    with capture_logs() as logs:
        run(rig.scheduler)
    assert due_logs(logs, "would run") == [
        "would run availability", "would run catalog", "would run suite-free", "would run perf",
    ]
    assert rig.runner.ran == []
    first = rig.recorded[0]
    assert (first.job, first.mode, first.outcome) == ("availability", "log-only", "would run")
    for event in rig.recorded:
        assert event.due.astimezone(PARIS).minute == 0 and not event.catching_up


def test_a92_a_missed_run_within_7_days_is_run_once_on_start() -> None:
    records = MemoryRecords()
    three_days_ago = datetime(2026, 1, 2, 5, tzinfo=PARIS).astimezone(UTC)
    done = JobRecord(three_days_ago, "p0", three_days_ago, done=True)
    asyncio.run(records.put(record_key("availability"), done.encode(), None))
    t = FakeTime(MONDAY_0459, MONDAY_0459 + timedelta(seconds=30))  # stops before today's 05:00
    rig = Rig(t, Mode.RUN, records, since=MONDAY_0459 - timedelta(days=30),
              off=frozenset({"catalog", "suite", "suite-free", "deprecations", "perf", "capabilities"}))
    run(rig.scheduler)
    # Two days missed (Jan 3 and 4): ONE run, the latest, marked as catching up.
    yesterday = datetime(2026, 1, 4, 5, tzinfo=PARIS).astimezone(UTC)
    assert rig.runner.ran == [("availability", yesterday, True)]
    assert [(e.job, e.due, e.catching_up, e.outcome) for e in rig.recorded] == [
        ("availability", yesterday, True, "done")]


def test_misses_older_than_7_days_and_before_the_settings_are_dropped() -> None:
    t = FakeTime(MONDAY_0459, MONDAY_0459 + timedelta(seconds=30))  # stops before 05:00
    records = MemoryRecords()
    long_ago = MONDAY_0459 - timedelta(days=20)
    asyncio.run(records.put(record_key("perf"), JobRecord(long_ago, "p0", long_ago, True).encode(), None))
    rig = Rig(t, Mode.RUN, records, since=MONDAY_0459 - timedelta(hours=1))
    run(rig.scheduler)
    # perf: its last Monday 07:00 within 7 days (Dec 29) is caught up; nothing else was due since the
    # settings were saved an hour ago.
    assert [(job, at.astimezone(PARIS).date().isoformat()) for job, at, _ in rig.runner.ran] == [
        ("perf", "2025-12-29")]


def test_a_job_never_overlaps_its_previous_run() -> None:
    start = datetime(2026, 1, 5, 2, 59, tzinfo=PARIS).astimezone(UTC)
    t = FakeTime(start, start + timedelta(hours=6, minutes=2))
    others = frozenset(j.name for j in JOBS if j.name != "suite")
    rig = Rig(t, Mode.RUN, runner=Runner(block=asyncio.Event()), off=others)
    with capture_logs() as logs:
        run(rig.scheduler)
    assert [job for job, _, _ in rig.runner.ran] == ["suite"]  # 03:00 runs on; 09:00 finds it still going
    assert [e for e in due_logs(logs, "skipped suite") if "previous run is still going" in e]


def test_two_replicas_across_a_due_time_run_it_once() -> None:
    records = MemoryRecords()
    one, two = (FakeTime(MONDAY_0459, MONDAY_0459 + timedelta(minutes=3)) for _ in range(2))
    rigs = [Rig(t, Mode.RUN, records, name, off=frozenset({"catalog", "suite-free", "perf"}))
            for t, name in ((one, "p1"), (two, "p2"))]
    run(*(r.scheduler for r in rigs))
    ran = [entry for r in rigs for entry in r.runner.ran]
    assert [job for job, _, _ in ran] == ["availability"]
    assert len([e for r in rigs for e in r.recorded]) == 1


def test_a_replica_killed_mid_job_leaves_it_to_be_run_once_by_the_other() -> None:
    records = MemoryRecords()
    off = frozenset(j.name for j in JOBS if j.name != "availability")
    first = Rig(FakeTime(MONDAY_0459, MONDAY_0459 + timedelta(minutes=2)), Mode.RUN, records, "p1",
                runner=Runner(block=asyncio.Event()), off=off)
    run(first.scheduler)  # stopped while the job still runs: no finish, no record
    assert [job for job, _, _ in first.runner.ran] == ["availability"] and first.recorded == []
    later = MONDAY_0459 + timedelta(minutes=6)
    second = Rig(FakeTime(later, later + timedelta(minutes=2)), Mode.RUN, records, "p2", off=off)
    run(second.scheduler)
    five = datetime(2026, 1, 5, 5, tzinfo=PARIS).astimezone(UTC)
    assert second.runner.ran == [("availability", five, False)]
    assert [(e.job, e.due, e.took_over, e.instance) for e in second.recorded] == [
        ("availability", five, True, "p2")]
    assert JobRecord.decode(records.data[record_key("availability")][0]).done


@pytest.mark.parametrize(
    ("text", "mode"), [("off", Mode.OFF), ("log-only", Mode.LOG_ONLY), (" RUN ", Mode.RUN)]
)
def test_modes_parse(text: str, mode: Mode) -> None:
    assert parse_mode(text) is mode


def test_an_unknown_mode_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="scheduler mode 'daily' is not one of off, log-only, run"):
        parse_mode("daily")
