"""The scheduler's `suite` and `suite-free` jobs (T-6) as one call: which models they test, and the line
their run's record keeps. The scheduler awaits `scheduled_pass(job, name)` for those two job names."""

from __future__ import annotations

from services.prober.suite_calls import NotRunnable
from services.prober.suite_choice import Next
from services.prober.suite_job import PassOutcome, SuiteJob
from shared.scheduled_jobs import JobName

SUITE_JOBS: dict[str, Next] = {JobName.SUITE: "paid", JobName.SUITE_FREE: "free"}


def summary(outcome: PassOutcome) -> str:
    """`<alias>: <n> asked, <n> answered, <n> confidently wrong[, <n> refused][, <n> skipped]`."""
    results = outcome.results
    answered = sum(r.kind == "answered" for r in results)
    parts = [f"{outcome.alias}: {len(results)} asked", f"{answered} answered",
             f"{sum(bool(r.wrong) for r in results)} confidently wrong"]
    if outcome.refused:
        parts.append(f"{len(outcome.refused)} tasks refused")
    if outcome.skipped:
        parts.append(f"{len(outcome.skipped)} skipped")
    return ", ".join(parts)


async def scheduled_pass(job: SuiteJob, name: str) -> tuple[str, str]:
    """(outcome, summary): `done` after a pass, or with nothing to test; `skipped` while another pass runs."""
    try:
        outcome = await job.run(which=SUITE_JOBS[name])
    except NotRunnable as exc:
        return ("skipped" if exc.status == 409 else "done"), str(exc)
    return "done", summary(outcome)
