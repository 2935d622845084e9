"""What each scheduled job does when it runs (HL-2, HL-3, HL-4, HL-5, T-6, CAT-1): the scheduler's `Runner`.

A job whose work was not handed in (only a runner built with fewer hooks, in tests) raises `NoRunner`: the
scheduler records that run as `failed` with the reason, never as done.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable

from services.prober.asking import ProbeAsker
from services.prober.probes import capabilities_found, capability_calls, probed_models, run_id, samples
from services.prober.schedule import Due
from services.prober.suite_scheduled import SUITE_JOBS
from shared.config_state import ConfigState
from shared.events import ModelLearned, SeatCompleted
from shared.failures import failure_class
from shared.probe_calls import LARGE, TINY, ProbeKind, probe_call
from shared.scheduled_jobs import JobName

Check = Callable[[Due], Awaitable[tuple[str, str]]]
Learn = Callable[[ModelLearned], Awaitable[None]]
SuitePass = Callable[[str], Awaitable[tuple[str, str]]]  # `suite` or `suite-free` → (outcome, summary)
CAPABILITY_GAP_S = 30.0  # HL-3: between one connection's calls


def summary(answers: list[SeatCompleted], asked: int) -> str:
    """`<asked> calls: <n> answered, <class> <n>, …`."""
    classes = Counter(failure_class(a.status, a.error, a.answer) for a in answers)
    answered = classes.pop(None, 0)
    failed = ", ".join(f"{name} {n}" for name, n in sorted(classes.items(), key=lambda kv: str(kv[0])))
    unanswered = asked - len(answers)
    parts = [f"{asked} calls: {answered} answered", failed, f"{unanswered} unanswered" if unanswered else ""]
    return ", ".join(p for p in parts if p)


class NoRunner(LookupError):
    """The runner was built without the hook this job needs."""


class JobRunner:
    def __init__(self, config: ConfigState, asker: ProbeAsker, deprecations: Check | None = None,
                 learn: Learn | None = None, suite: SuitePass | None = None,
                 capability_gap_s: float = CAPABILITY_GAP_S, catalog: Check | None = None) -> None:
        self.config, self.asker, self.deprecations, self.learn = config, asker, deprecations, learn
        self.suite, self.catalog = suite, catalog
        self.capability_gap_s = capability_gap_s

    async def run(self, due: Due, late: bool) -> tuple[str, str]:
        if due.job == JobName.AVAILABILITY:
            return await self.probe(due, ((TINY, 1),))
        if due.job == JobName.PERF:
            return await self.probe(due, ((TINY, 3), (LARGE, 3)))
        if due.job == JobName.DEPRECATIONS and self.deprecations is not None:
            return await self.deprecations(due)
        if due.job == JobName.CAPABILITIES and self.learn is not None:
            return await self.capabilities(due)
        if due.job in SUITE_JOBS and self.suite is not None:
            return await self.suite(due.job)
        if due.job == JobName.CATALOG and self.catalog is not None:
            return await self.catalog(due)
        raise NoRunner(f"no work was handed to this prober for the {due.job} job")

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

    async def capabilities(self, due: Due) -> tuple[str, str]:
        """HL-3: a tools call and a reasoning question per model, 30 s apart on a connection; only what
        they found and was not known yet is stored (`model_learned`)."""
        assert self.learn is not None
        calls = capability_calls(self.config, run_id(due.job, due.at), time.time(), due.job)
        answers = await self.asker.ask_all(calls, self.capability_gap_s)
        found = capabilities_found(self.config, answers)
        source = f"probe {due.at:%Y-%m-%d}"
        for alias, shown in found.items():
            await self.learn(ModelLearned(id="", by="prober", alias=alias, source=source,
                                          tools=True if "tools" in shown else None,
                                          reasoning=True if "reasoning" in shown else None))
        learned = ", ".join(f"{a}: {' and '.join(sorted(shown))}" for a, shown in sorted(found.items()))
        return "done", f"{summary(answers, len(calls))}; learned {learned or 'nothing new'}"
