"""The job runner hands the scheduler's `suite` and `suite-free` jobs to the suite pass (T-6) and the
`catalog` job to the catalog refresh (CAT-1); a job whose work was not handed in raises, so the scheduler
records a failed run with the reason; a run stored by an older prober as `not built` reads as failed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import cast

import pytest

from services.prober.asking import ProbeAsker
from services.prober.jobs import JobRunner, NoRunner
from services.prober.schedule import Due
from shared.config_state import ConfigState
from shared.events import JobRan, decode_event, encode_event

DUE = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


async def test_the_suite_jobs_run_a_suite_pass_and_the_catalog_job_its_refresh() -> None:
    asked: list[str] = []

    async def suite(job: str) -> tuple[str, str]:
        asked.append(job)
        return "done", f"{job} ran"

    async def catalog(due: Due) -> tuple[str, str]:
        asked.append(f"{due.job} {due.at:%H:%M}")
        return "done", "refreshed"

    runner = JobRunner(ConfigState(), cast(ProbeAsker, None), suite=suite)
    with pytest.raises(NoRunner, match="catalog job"):
        await runner.run(Due("catalog", DUE), False)
    runner = JobRunner(ConfigState(), cast(ProbeAsker, None), suite=suite, catalog=catalog)
    assert await runner.run(Due("suite", DUE), False) == ("done", "suite ran")
    assert await runner.run(Due("suite-free", DUE), False) == ("done", "suite-free ran")
    assert await runner.run(Due("catalog", DUE), False) == ("done", "refreshed")
    assert asked == ["suite", "suite-free", "catalog 09:00"]


async def test_without_a_suite_pass_the_suite_jobs_have_no_runner() -> None:
    runner = JobRunner(ConfigState(), cast(ProbeAsker, None))
    with pytest.raises(NoRunner, match="suite job"):
        await runner.run(Due("suite", DUE), False)


def test_a_run_stored_as_not_built_by_an_older_prober_reads_as_failed() -> None:
    ran = JobRan(id="job:suite:x", by="prober-0", job="suite", due=DUE, mode="run", instance="prober-0",
                 started=DUE, outcome="failed", summary="no runner")
    stored = encode_event(ran).replace(b'"outcome":"failed"', b'"outcome":"not built"')
    assert b"not built" in stored
    read = decode_event(stored)
    assert isinstance(read, JobRan) and read.outcome == "failed"
