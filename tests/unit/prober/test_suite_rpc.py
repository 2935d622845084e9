"""`bench.rpc.prober.suite`: a pass's scores as the reply, a clear refusal for what cannot run."""

from __future__ import annotations

from typing import Any, cast

import pytest

from services.prober.suite_calls import NotRunnable
from services.prober.suite_job import PassOutcome, SuiteJob
from services.prober.suite_rpc import SuiteRpc
from shared import rpc, subjects
from shared.commands import SuiteRunReply, SuiteRunRequest
from tests.unit.fake_bus import FakeBus
from tests.unit.ledger.factories import suite_answered


class Job:
    """Stands in for `SuiteJob`: answers from a script."""

    async def run(self, model: str = "", task: str = "", which: Any = None) -> PassOutcome:
        if model == "nobody":
            raise NotRunnable("'nobody' is not a registered model", 404)
        return PassOutcome(model or "picked", [suite_answered(model or "picked", "race")], [], ["gone"])


async def serve(job: Job) -> FakeBus:
    bus = FakeBus()
    await SuiteRpc(cast(SuiteJob, job)).serve(bus)
    return bus


async def ask(bus: FakeBus, **fields: Any) -> SuiteRunReply:
    return await rpc.call(bus, subjects.RPC_PROBER_SUITE, SuiteRunRequest(**fields), SuiteRunReply)


async def test_a_pass_answers_its_scores() -> None:
    reply = await ask(await serve(Job()), model="m")
    assert (reply.alias, [r.task for r in reply.results], reply.skipped) == ("m", ["race"], ["gone"])


async def test_what_cannot_run_is_refused_with_its_status() -> None:
    bus = await serve(Job())
    with pytest.raises(rpc.RpcFailure) as unknown:
        await ask(bus, model="nobody")
    assert unknown.value.status == 404
    with pytest.raises(rpc.RpcFailure) as both:
        await ask(bus, model="m", next="paid")
    assert (both.value.status, both.value.message) == (400, "give a model or next, not both")

