"""The suite job (T-6) with its pass stood in for: what it reads from the data folder, one run at a time,
and the scheduler's view of it (`scheduled_pass`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import cast

import pytest

from services.prober.suite_calls import Asked, NotRunnable
from services.prober.suite_choice import SuiteHistory
from services.prober.suite_job import SuiteJob
from services.prober.suite_pass import SuitePass
from services.prober.suite_scheduled import scheduled_pass
from shared.config_state import ConfigState
from shared.events import EndpointSaved, ModelRegistered, SuiteAnswered
from tests.unit.ledger.factories import suite_answered


class Pass:
    """Stands in for `SuitePass`: records what it was asked, can be held mid-pass."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str]]] = []
        self.started, self.release = asyncio.Event(), asyncio.Event()
        self.release.set()

    async def run(self, alias: str, tasks: list[Asked]) -> list[SuiteAnswered]:
        self.asked.append((alias, [a.task.id for a in tasks]))
        self.started.set()
        await self.release.wait()
        return [suite_answered(alias, a.task.id, n=n, wrong="trap" if n == 2 else "")
                for n, a in enumerate(tasks, 1)]


def home(tmp_path: Path) -> Path:
    for n in range(1, 9):
        folder = tmp_path / "suite" / "tasks" / f"t{n}"
        folder.mkdir(parents=True)
        body = {"id": f"t{n}", "title": "t", "prompt": "p", "must_find": ["x"], "draft": n == 8}
        (folder / "task.json").write_text(json.dumps(body))
    return tmp_path


def job(tmp_path: Path, fake: Pass) -> SuiteJob:
    config = ConfigState()
    config.apply(EndpointSaved(id="cfg:ep", name="ep", base="http://127.0.0.1:9/v1"))
    config.apply(ModelRegistered(id="cfg:p", alias="paid-one", served="org/p", endpoint="ep"))
    return SuiteJob(cast(SuitePass, fake), config, SuiteHistory(), home(tmp_path))


async def test_a_scheduled_pass_asks_six_tasks_of_the_chosen_model_and_reports(tmp_path: Path) -> None:
    fake = Pass()
    suite = job(tmp_path, fake)
    outcome, summary = await scheduled_pass(suite, "suite")
    assert fake.asked == [("paid-one", ["t1", "t2", "t3", "t4", "t5", "t6"])]  # t8 is a draft
    assert (outcome, summary) == ("done", "paid-one: 6 asked, 6 answered, 1 confidently wrong")
    report = next((tmp_path / "runs").glob("suite-*.md")).read_text()
    assert "paid-one" in report and "| t2 | answered | 1/1 | x | trap |" in report
    assert await scheduled_pass(suite, "suite-free") == (
        "done", "no model to test: give one, or none is left for this schedule")  # no :free model here


async def test_one_pass_at_a_time_whoever_asks(tmp_path: Path) -> None:
    fake = Pass()
    fake.release.clear()
    suite = job(tmp_path, fake)
    first = asyncio.create_task(suite.run(model="paid-one"))
    await fake.started.wait()
    assert await scheduled_pass(suite, "suite") == (
        "skipped", "a suite pass is running on this prober; try again when it ends")
    with pytest.raises(NotRunnable) as busy:
        await suite.rescore()
    assert busy.value.status == 409
    fake.release.set()
    assert (await first).alias == "paid-one"
