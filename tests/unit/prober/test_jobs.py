"""The job runner hands the scheduler's `suite` and `suite-free` jobs to the suite pass (T-6) and the
`catalog` job to the catalog refresh (CAT-1); a job whose work was not handed in says so."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import cast

from services.prober.asking import ProbeAsker
from services.prober.jobs import JobRunner
from services.prober.schedule import Due
from shared.config_state import ConfigState

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
    assert await runner.run(Due("catalog", DUE), False) == ("not built", "catalog is not built yet")
    runner = JobRunner(ConfigState(), cast(ProbeAsker, None), suite=suite, catalog=catalog)
    assert await runner.run(Due("suite", DUE), False) == ("done", "suite ran")
    assert await runner.run(Due("suite-free", DUE), False) == ("done", "suite-free ran")
    assert await runner.run(Due("catalog", DUE), False) == ("done", "refreshed")
    assert asked == ["suite", "suite-free", "catalog 09:00"]


async def test_without_a_suite_pass_the_suite_jobs_are_not_built() -> None:
    runner = JobRunner(ConfigState(), cast(ProbeAsker, None))
    assert await runner.run(Due("suite", DUE), False) == ("not built", "suite is not built yet")
