"""`bench.rpc.prober.suite`: one pass at a time per prober, a clear refusal for what cannot run."""

from __future__ import annotations

import asyncio
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
    """Stands in for `SuiteJob`: answers from a script, and can be held mid-pass."""

    def __init__(self) -> None:
        self.started, self.release = asyncio.Event(), asyncio.Event()
        self.release.set()

    async def run(self, model: str = "", task: str = "", which: Any = None) -> PassOutcome:
        self.started.set()
        await self.release.wait()
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


async def test_a_second_pass_while_one_runs_is_refused() -> None:
    job = Job()
    job.release.clear()
    bus = await serve(job)
    first = asyncio.create_task(ask(bus, model="m"))
    await job.started.wait()  # the first pass holds the prober
    with pytest.raises(rpc.RpcFailure) as busy:
        await ask(bus, model="m")
    assert busy.value.status == 409
    job.release.set()
    assert (await first).alias == "m"
