"""What each scheduled job does when it runs (HL-2, HL-4, HL-5): the scheduler's `Runner`.

Jobs whose work is not built (the catalog refresh, the suites, the capabilities probe) say so in their
run's record instead of pretending.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable

from services.prober.asking import ProbeAsker
from services.prober.probes import probed_models, run_id, samples
from services.prober.schedule import Due
from shared.config_state import ConfigState
from shared.events import SeatCompleted
from shared.failures import failure_class
from shared.probe_calls import LARGE, TINY, ProbeKind, probe_call
from shared.scheduled_jobs import JobName

Check = Callable[[Due], Awaitable[tuple[str, str]]]


def summary(answers: list[SeatCompleted], asked: int) -> str:
    """`<asked> calls: <n> answered, <class> <n>, …`."""
    classes = Counter(failure_class(a.status, a.error, a.answer) for a in answers)
    answered = classes.pop(None, 0)
    failed = ", ".join(f"{name} {n}" for name, n in sorted(classes.items(), key=lambda kv: str(kv[0])))
    unanswered = asked - len(answers)
    parts = [f"{asked} calls: {answered} answered", failed, f"{unanswered} unanswered" if unanswered else ""]
    return ", ".join(p for p in parts if p)


class JobRunner:
    def __init__(self, config: ConfigState, asker: ProbeAsker, deprecations: Check | None = None) -> None:
        self.config, self.asker, self.deprecations = config, asker, deprecations

    async def run(self, due: Due, late: bool) -> tuple[str, str]:
        if due.job == JobName.AVAILABILITY:
            return await self.probe(due, ((TINY, 1),))
        if due.job == JobName.PERF:
            return await self.probe(due, ((TINY, 3), (LARGE, 3)))
        if due.job == JobName.DEPRECATIONS and self.deprecations is not None:
            return await self.deprecations(due)
        return "not built", f"{due.job} is not built yet"

    async def probe(self, due: Due, kinds: tuple[tuple[ProbeKind, int], ...]) -> tuple[str, str]:
        """HL-2: each probed model, each prompt kind, its samples (1 for `:free` models)."""
        run, now = run_id(due.job, due.at), time.time()
        calls = [
            probe_call(self.config, run, model, kind, now, sample, task=due.job)
            for model in probed_models(self.config)
            for kind, most in kinds
            for sample in range(min(most, samples(model)))
        ]
        answers = await self.asker.ask_all(calls)
        return "done", summary(answers, len(calls))
