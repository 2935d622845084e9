"""The scheduler loop on a fake clock: `off` runs nothing, `log-only` says `would run <job>` when due."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from structlog.testing import capture_logs

from services.prober.schedule import Mode, parse_mode
from services.prober.scheduler import Scheduler

PARIS = ZoneInfo("Europe/Paris")


class FakeTime:
    """A clock that moves only when the scheduler sleeps; it stops the loop once past `end`."""

    def __init__(self, start: datetime, end: datetime) -> None:
        self.now = start
        self.end = end
        self.sleeps: list[float] = []

    def clock(self) -> datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if self.now >= self.end:
            raise asyncio.CancelledError
        self.now += timedelta(seconds=seconds)


def run(scheduler: Scheduler) -> None:
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(scheduler.run())


def test_off_runs_nothing_and_never_ticks() -> None:
    t = FakeTime(datetime(2026, 1, 5, 3, 59, tzinfo=UTC), datetime(2026, 1, 6, tzinfo=UTC))
    with capture_logs() as logs:
        asyncio.run(Scheduler(Mode.OFF, tz=PARIS, clock=t.clock, sleep=t.sleep).run())
    assert t.sleeps == []
    assert [e["event"] for e in logs] == ["scheduler_off"]


def test_log_only_says_would_run_at_each_due_time_within_a_tick() -> None:
    start = datetime(2026, 1, 5, 4, 59, tzinfo=PARIS).astimezone(UTC)  # a Monday
    t = FakeTime(start, start + timedelta(hours=2, minutes=2))
    with capture_logs() as logs:
        run(Scheduler(Mode.LOG_ONLY, tz=PARIS, clock=t.clock, sleep=t.sleep))
    would = [e for e in logs if e["event"].startswith("would run")]
    assert [e["event"] for e in would] == [
        "would run availability", "would run catalog", "would run suite-free", "would run perf",
    ]
    assert set(t.sleeps) == {30.0}
    for entry in would:
        assert entry["log_level"] == "info"
        assert datetime.fromisoformat(entry["due"]).astimezone(PARIS).minute == 0


def test_run_mode_says_the_probe_is_not_built_rather_than_pretending() -> None:
    start = datetime(2026, 1, 5, 4, 59, 45, tzinfo=PARIS).astimezone(UTC)
    t = FakeTime(start, start + timedelta(minutes=1))
    with capture_logs() as logs:
        run(Scheduler(Mode.RUN, tz=PARIS, clock=t.clock, sleep=t.sleep))
    due = [e for e in logs if e.get("job")]
    assert [(e["event"], e["log_level"]) for e in due] == [
        ("cannot run availability: its probe is not built yet", "warning")
    ]


def test_a_clock_stepped_back_does_not_fire_a_due_time_twice() -> None:
    five = datetime(2026, 1, 5, 5, tzinfo=PARIS).astimezone(UTC)
    times = iter([five - timedelta(seconds=10), five + timedelta(seconds=20), five - timedelta(seconds=5),
                  five + timedelta(seconds=25)])

    async def sleep(_: float) -> None:
        pass

    def clock() -> datetime:
        try:
            return next(times)
        except StopIteration:
            raise asyncio.CancelledError from None

    with capture_logs() as logs:
        run(Scheduler(Mode.LOG_ONLY, tz=PARIS, clock=clock, sleep=sleep))
    assert [e["event"] for e in logs if e.get("job")] == ["would run availability"]


@pytest.mark.parametrize(
    ("text", "mode"), [("off", Mode.OFF), ("log-only", Mode.LOG_ONLY), (" RUN ", Mode.RUN)]
)
def test_modes_parse(text: str, mode: Mode) -> None:
    assert parse_mode(text) is mode


def test_an_unknown_mode_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="BENCH_SCHEDULER='daily' is not one of off, log-only, run"):
        parse_mode("daily")
