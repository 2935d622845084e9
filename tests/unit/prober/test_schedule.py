"""HL-7 due times: local wall-clock jobs, answered as UTC instants in (after, until]."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

from services.prober.schedule import JOBS, Due, Job, due_between, due_times
from shared.scheduled_jobs import JobName

PARIS = ZoneInfo("Europe/Paris")


def paris(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=PARIS).astimezone(UTC)


def test_a_daily_job_is_due_once_a_day_at_its_local_time() -> None:
    job = Job("availability", (time(5),))
    got = due_times(job, paris(2026, 1, 5, 0, 0), paris(2026, 1, 8, 0, 0), PARIS)
    assert got == [paris(2026, 1, 5, 5), paris(2026, 1, 6, 5), paris(2026, 1, 7, 5)]
    assert got[0] == datetime(2026, 1, 5, 4, tzinfo=UTC)  # Paris is UTC+1 in winter


def test_the_interval_is_open_at_the_start_and_closed_at_the_end() -> None:
    job = Job("availability", (time(5),))
    five = paris(2026, 1, 5, 5)
    assert due_times(job, five, five + timedelta(hours=1), PARIS) == []
    assert due_times(job, five - timedelta(seconds=1), five, PARIS) == [five]
    assert due_times(job, five, five, PARIS) == []
    assert due_times(job, five, five - timedelta(days=1), PARIS) == []


def test_local_time_holds_across_a_dst_change() -> None:
    job = Job("availability", (time(5),))
    # Paris moves to summer time on 2026-03-29.
    got = due_times(job, paris(2026, 3, 28, 0), paris(2026, 3, 30, 0), PARIS)
    assert got == [datetime(2026, 3, 28, 4, tzinfo=UTC), datetime(2026, 3, 29, 3, tzinfo=UTC)]


def test_weekly_jobs_fall_on_their_weekday_only() -> None:
    week = due_between(JOBS, paris(2026, 1, 5, 0), paris(2026, 1, 12, 0), PARIS)  # Mon 5 .. Sun 11
    perf = [d.at for d in week if d.job == "perf"]
    capabilities = [d.at for d in week if d.job == "capabilities"]
    assert perf == [paris(2026, 1, 5, 7)]  # Monday
    assert capabilities == [paris(2026, 1, 11, 7)]  # Sunday


def test_a_week_holds_every_job_as_often_as_hl7_says() -> None:
    week = due_between(JOBS, paris(2026, 1, 5, 0), paris(2026, 1, 12, 0), PARIS)
    counts = {job.name: sum(1 for d in week if d.job == job.name) for job in JOBS}
    assert counts == {
        "availability": 7, "catalog": 7, "suite-free": 7, "deprecations": 7,
        "perf": 1, "capabilities": 1, "suite": 28,
    }


def test_the_schedule_holds_each_named_job_once_in_the_listed_order() -> None:
    """The gateway's status lists `JobName`; the prober runs `JOBS`: the two must not drift apart."""
    assert [job.name for job in JOBS] == list(JobName)


def test_jobs_due_together_keep_the_listed_order_and_time_order() -> None:
    morning = due_between(JOBS, paris(2026, 1, 5, 2, 59), paris(2026, 1, 5, 9, 0), PARIS)
    assert morning == [
        Due("suite", paris(2026, 1, 5, 3)),
        Due("availability", paris(2026, 1, 5, 5)),
        Due("catalog", paris(2026, 1, 5, 6)),
        Due("suite-free", paris(2026, 1, 5, 6)),
        Due("perf", paris(2026, 1, 5, 7)),
        Due("deprecations", paris(2026, 1, 5, 8)),
        Due("suite", paris(2026, 1, 5, 9)),
    ]


def test_ticks_partition_the_dues_each_is_seen_exactly_once() -> None:
    start = paris(2026, 1, 5, 0)
    ticks = [start + timedelta(seconds=30 * i) for i in range(2 * 60 * 24 + 1)]
    seen = [d for a, b in pairwise(ticks) for d in due_between(JOBS, a, b, PARIS)]
    assert seen == due_between(JOBS, ticks[0], ticks[-1], PARIS)
    assert len(seen) == 4 + 4 + 1  # four daily jobs, four suite runs, Monday's perf


def test_the_system_zone_is_used_when_none_is_given() -> None:
    job = Job("availability", (time(5),))
    after = datetime(2026, 1, 5, tzinfo=UTC)
    got = due_times(job, after, after + timedelta(days=2))
    assert len(got) == 2
    assert all(t.tzinfo is UTC for t in got)
    assert {t.astimezone().time() for t in got} == {time(5)}
