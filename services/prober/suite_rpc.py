"""`bench.rpc.prober.suite`: a suite pass now (`bench suite run`), the same job the scheduler runs;
`bench.rpc.prober.rescore`: the latest answers scored again (T-5). One at a time per prober: a second
request while one runs is refused (409), not queued behind it."""

from __future__ import annotations

from services.prober.suite_calls import NotRunnable
from services.prober.suite_job import SuiteJob
from shared import rpc, subjects
from shared.commands import (
    Rescored,
    RescoreReply,
    RescoreRequest,
    SuiteResult,
    SuiteRunReply,
    SuiteRunRequest,
)
from shared.events import SuiteAnswered


class SuiteRpc:
    def __init__(self, job: SuiteJob) -> None:
        self.job = job

    async def handle(self, request: SuiteRunRequest) -> SuiteRunReply:
        if request.model and request.next:
            raise rpc.RpcFailure(400, "give a model or next, not both")
        try:
            outcome = await self.job.run(request.model, request.task, request.next or None)
        except NotRunnable as exc:
            raise rpc.RpcFailure(exc.status, str(exc)) from None
        return SuiteRunReply(
            run=outcome.results[0].run if outcome.results else "", alias=outcome.alias,
            results=[SuiteResult(task=r.task, kind=r.kind, found=r.found, missed=r.missed,
                                 invented=r.invented, wrong=r.wrong, reason=r.reason, seconds=r.seconds)
                     for r in outcome.results],
            refused=[str(r) for r in outcome.refused], skipped=outcome.skipped,
        )

    async def rescore(self, request: RescoreRequest) -> RescoreReply:
        try:
            changed = await self.job.rescore()
        except NotRunnable as exc:
            raise rpc.RpcFailure(exc.status, str(exc)) from None
        return RescoreReply(changed=[
            Rescored(alias=new.alias, task=new.task, call=new.call, before=outline(old), after=outline(new))
            for old, new in changed
        ])

    async def serve(self, bus: rpc.Bus) -> list[rpc.Subscription]:
        return [
            await rpc.serve(bus, subjects.RPC_PROBER_SUITE, subjects.PROBER_QUEUE, SuiteRunRequest,
                            self.handle),
            await rpc.serve(bus, subjects.RPC_PROBER_RESCORE, subjects.PROBER_QUEUE, RescoreRequest,
                            self.rescore),
        ]


def outline(score: SuiteAnswered) -> str:
    """A score in a few words: `answered 2/3, invented x` or the non-answer's kind."""
    if score.kind != "answered":
        return score.kind
    found = f"{len(score.found)}/{len(score.found) + len(score.missed)}"
    return f"answered {found}" + (f", invented {', '.join(score.invented)}" if score.invented else "")
