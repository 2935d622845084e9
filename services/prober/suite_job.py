"""A suite pass as a job (T-6): read the tasks from the data folder, choose the model and the tasks, run
the pass, append its report. The scheduler's `suite` and `suite-free` jobs call `run(which="paid")` and
`run(which="free")`; `bench suite run` reaches the same method over `bench.rpc.prober.suite`.

Tasks are read at every run, so a task added or fixed on disk is used by the next pass; a task that does
not load is refused with its field and reason and named in the reply, never run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import structlog

from services.prober.suite_calls import Asked, NotRunnable, rescored
from services.prober.suite_choice import Next, SuiteHistory, pick_model, pick_tasks
from services.prober.suite_pass import SuitePass
from services.prober.suite_report import report
from shared import bus
from shared.config_state import ConfigState
from shared.events import SuiteAnswered
from shared.ids import utcnow
from suite.task import TaskRefused, build_prompt, load_suite, read_repos

log = structlog.get_logger("prober.suite")

BUSY = "a suite pass is running on this prober; try again when it ends"


@dataclass(frozen=True)
class PassOutcome:
    alias: str
    results: list[SuiteAnswered]
    refused: list[TaskRefused]
    skipped: list[str]  # tasks whose attachment is missing


class SuiteJob:
    def __init__(self, suite_pass: SuitePass, config: ConfigState, history: SuiteHistory, home: Path) -> None:
        self.suite_pass, self.config, self.history, self.home = suite_pass, config, history, home
        self.busy = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def alone(self) -> AsyncIterator[None]:
        """One pass or rescore at a time per prober, asked or scheduled: another is refused, not queued."""
        if self.busy.locked():
            raise NotRunnable(BUSY, 409)
        async with self.busy:
            yield

    async def run(self, model: str = "", task: str = "", which: Next | None = None) -> PassOutcome:
        """One pass: `model` (an alias) or the T-6 choice for `which` (paid or free); `task` alone (drafts
        too), else at most six tasks chosen by T-6. Raises `NotRunnable` when there is nothing to run."""
        async with self.alone():
            return await self._run(model, task, which)

    async def _run(self, model: str, task: str, which: Next | None) -> PassOutcome:
        repos = read_repos(self.home)
        loaded, refused = load_suite(self.home / "suite" / "tasks", repos)
        tasks = [t for t, _ in loaded]
        alias = model or (pick_model(self.config, self.history, which, tasks) if which else None)
        if not alias:
            raise NotRunnable("no model to test: give one, or none is left for this schedule")
        if alias not in self.config.models:
            raise NotRunnable(f"{alias!r} is not a registered model", 404)
        if task:
            chosen = [t for t in tasks if t.id == task]
            if not chosen:
                why = next((r.reason for r in refused if r.task == task), "no such task")
                raise NotRunnable(f"task {task!r}: {why}", 404 if why == "no such task" else 400)
        else:
            chosen = pick_tasks(tasks, self.history, alias)
        folders = {t.id: f for t, f in loaded}
        asked, skipped = [], []
        for t in chosen:
            prompt = build_prompt(t, folders[t.id], repos)
            if prompt is None:
                skipped.append(t.id)
            else:
                asked.append(Asked(t, prompt))
        results = await self.suite_pass.run(alias, asked) if asked else []
        for result in results:
            self.history.apply(result)
        if results:
            self._append_report(alias, results)
        return PassOutcome(alias, results, refused, skipped)

    async def rescore(self) -> list[tuple[SuiteAnswered, SuiteAnswered]]:
        """T-5: every model's latest answer per task scored again from the answer the stream keeps, with
        today's task file and scorer; each changed score is published. Returns (before, after) pairs."""
        async with self.alone():
            return await self._rescore()

    async def _rescore(self) -> list[tuple[SuiteAnswered, SuiteAnswered]]:
        loaded, _ = load_suite(self.home / "suite" / "tasks", read_repos(self.home))
        tasks = {t.id: t for t, _ in loaded}
        changed = []
        for (_, task_id), old in sorted(self.history.latest.items()):
            task, seat = tasks.get(task_id), await self.suite_pass.stored(old.call)
            new = rescored(old, task, seat, self.suite_pass.by) if task and seat else None
            if new is not None:
                await bus.publish_event(self.suite_pass.js, new)
                self.history.apply(new)
                changed.append((old, new))
        return changed

    def _append_report(self, alias: str, results: list[SuiteAnswered]) -> None:
        now = utcnow()
        runs = self.home / "runs"
        try:
            runs.mkdir(parents=True, exist_ok=True)
            with (runs / f"suite-{now:%Y-%m-%d}.md").open("a", encoding="utf-8") as out:
                out.write(report(alias, results, now))
        except OSError as exc:  # the scores are on the bus already; the report is a convenience
            log.warning("suite_report_not_written", error=str(exc)[:200])
