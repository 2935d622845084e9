"""When the scheduled jobs are due (SPEC HL-7), as pure functions of two instants.

Jobs are set in local wall-clock time (a 05:00 probe stays at 05:00 across a DST change); the answers
are UTC instants, like every time on the bus. `tz=None` means the process's local zone (`TZ`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from shared.scheduled_jobs import JobName


@dataclass(frozen=True)
class Job:
    name: str
    at: tuple[time, ...]
    weekday: int | None = None  # 0 = Monday; None = every day
    does: str = ""


JOBS: tuple[Job, ...] = (
    Job(JobName.AVAILABILITY, (time(5),), does="tiny probe of every registered model (HL-2)"),
    Job(JobName.CATALOG, (time(6),), does="catalog refresh (CAT-1)"),
    Job(JobName.SUITE_FREE, (time(6),), does="suite for one :free model (T-6)"),
    Job(JobName.DEPRECATIONS, (time(8),), does="served check and auto-retire (HL-4, HL-5)"),
    Job(JobName.PERF, (time(7),), weekday=0, does="weekly perf probe (HL-2)"),
    Job(JobName.CAPABILITIES, (time(7),), weekday=6, does="capabilities probe (HL-3)"),
    Job(JobName.SUITE, (time(3), time(9), time(15), time(21)), does="suite for one paid model (T-6)"),
)


@dataclass(frozen=True)
class Due:
    job: str
    at: datetime  # UTC


def _instant(day: date, at: time, tz: tzinfo | None) -> datetime:
    wall = datetime.combine(day, at)
    local = wall.astimezone() if tz is None else wall.replace(tzinfo=tz)
    return local.astimezone(UTC)


def _local_date(instant: datetime, tz: tzinfo | None) -> date:
    return (instant.astimezone() if tz is None else instant.astimezone(tz)).date()


def due_times(job: Job, after: datetime, until: datetime, tz: tzinfo | None = None) -> list[datetime]:
    """The job's due instants in `(after, until]`, oldest first."""
    if until <= after:
        return []
    found: list[datetime] = []
    # One day of margin each side: a local date can start before or after the UTC one.
    day = _local_date(after, tz) - timedelta(days=1)
    last = _local_date(until, tz) + timedelta(days=1)
    while day <= last:
        if job.weekday is None or day.weekday() == job.weekday:
            for at in job.at:
                instant = _instant(day, at, tz)
                if after < instant <= until:
                    found.append(instant)
        day += timedelta(days=1)
    return sorted(found)


def due_between(
    jobs: tuple[Job, ...], after: datetime, until: datetime, tz: tzinfo | None = None
) -> list[Due]:
    """Every job due in `(after, until]`, by time, then in the order the jobs are listed."""
    order = {job.name: i for i, job in enumerate(jobs)}
    dues = [Due(job.name, at) for job in jobs for at in due_times(job, after, until, tz)]
    return sorted(dues, key=lambda d: (d.at, order[d.job]))
