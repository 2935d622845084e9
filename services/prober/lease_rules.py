"""Who runs a due job (HL-7: exactly once across prober replicas, never overlapping itself). Pure.

Each job has one record in the `bench_jobs` bucket: the due time last claimed, who holds it, until when
the claim is good, and whether that run finished. A replica claims a due time by writing the record with
compare-and-set, so of two replicas ticking at once one wins; a holder renews its claim while it runs, so a
replica that dies mid-job leaves a claim that lapses and the due time is taken over (resumed) by another.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, tzinfo
from enum import StrEnum

from services.prober.schedule import Due, Job, due_times

CATCH_UP_DAYS = 7  # HL-7: older misses are dropped
LATE_S = 300  # a run more than 5 min after its due time is "catching up"


@dataclass(frozen=True)
class JobRecord:
    due: datetime
    instance: str
    until: datetime
    done: bool = False

    def encode(self) -> bytes:
        data = asdict(self)
        data.update(due=self.due.isoformat(), until=self.until.isoformat())
        return json.dumps(data, sort_keys=True).encode()

    @classmethod
    def decode(cls, raw: bytes) -> JobRecord:
        data = json.loads(raw)
        return cls(due=datetime.fromisoformat(data["due"]), instance=data["instance"],
                   until=datetime.fromisoformat(data["until"]), done=bool(data["done"]))


class Verdict(StrEnum):
    CLAIM = "claim"  # nobody ran this due time: run it
    TAKE_OVER = "take over"  # its holder stopped renewing mid-run: resume it
    SKIP = "skip"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    why: str = ""


def decide(record: JobRecord | None, due: datetime, now: datetime, me: str) -> Decision:
    """What this replica does about `due` given the job's record."""
    if record is None:
        return Decision(Verdict.CLAIM)
    live = record.until > now and not record.done
    if record.due > due:
        return Decision(Verdict.SKIP, f"a later run (due {record.due.isoformat()}) is already recorded")
    if record.due == due:
        if record.done:
            return Decision(Verdict.SKIP, "already ran")
        if live:
            where = "here" if record.instance == me else f"on {record.instance}"
            return Decision(Verdict.SKIP, f"running {where}")
        return Decision(Verdict.TAKE_OVER, f"{record.instance} stopped mid-run")
    if live:
        return Decision(Verdict.SKIP, f"previous run is still going (due {record.due.isoformat()})")
    return Decision(Verdict.CLAIM)


def claimed(due: datetime, me: str, now: datetime, lease_s: float) -> JobRecord:
    return JobRecord(due=due, instance=me, until=now + timedelta(seconds=lease_s))


def missed(job: Job, record: JobRecord | None, since: datetime | None, now: datetime,
           tz: tzinfo | None = None) -> Due | None:
    """The one run to catch up on start: the latest due time after the job's last claimed one (or, for a
    job never run, after the scheduler was set) within the last 7 days; None when nothing was missed."""
    start = record.due if record is not None else since
    if start is None:
        return None
    start = max(start, now - timedelta(days=CATCH_UP_DAYS))
    found = due_times(job, start, now, tz)
    return Due(job.name, found[-1]) if found else None


def abandoned(record: JobRecord, now: datetime) -> bool:
    """A run claimed within the last 7 days that never finished and whose claim has lapsed."""
    return not record.done and record.until <= now and now - record.due < timedelta(days=CATCH_UP_DAYS)


def catching_up(due: datetime, now: datetime) -> bool:
    return (now - due).total_seconds() > LATE_S
