"""`bench.rpc.prober.suite` answered by a real prober process (T-1, T-6): it reads the tasks from its data
folder, refuses the bad one with its field and reason, asks the model through a real caller and appends the
pass's report to `runs/suite-<date>.md`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.prober.asking import ProbeAsker
from services.prober.jobs import JobRunner
from services.prober.schedule import Due
from services.prober.suite_choice import SuiteHistory
from services.prober.suite_job import SuiteJob
from services.prober.suite_pass import SuitePass
from services.prober.suite_scheduled import scheduled_pass
from shared import bus, rpc, subjects
from shared.commands import RescoreReply, RescoreRequest, SuiteRunReply, SuiteRunRequest
from shared.config_state import ConfigState
from shared.events import EndpointSaved, ModelRegistered
from shared.natsserver import NatsServer
from suite.scoring import verdict
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess
from tests.integration.caller.test_caller_service import caller_env
from tests.integration.service_process import ServiceProcess

CODE = "def window_full(used, limit):\n    return used >= limit\n"


def write_task(tasks: Path, task_id: str, body: Mapping[str, object], fixture: str | None = None) -> None:
    folder = tasks / task_id
    (folder / "fixtures").mkdir(parents=True)
    (folder / "task.json").write_text(json.dumps({"id": task_id, "title": task_id, **body}))
    if fixture is not None:
        (folder / "fixtures" / "pacing.py").write_text(fixture)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    tasks = tmp_path / "home" / "suite" / "tasks"
    claim = {"prompt": "Claim: window_full says a window is full when used equals the limit.",
             "attach": ["services/caller/pacing.py"], "shape": "claim", "score_in": "first_line",
             "must_find": [verdict(True).model_dump()], "must_not_claim": [verdict(False).model_dump()]}
    write_task(tasks, "claim-window-full", claim, CODE)
    write_task(tasks, "claim-escapes", {**claim, "attach": ["../../../etc/passwd"]})
    write_task(tasks, "claim-missing", {**claim, "attach": ["gone.py"]})
    return tmp_path / "home"


@pytest.fixture
def prober(nats_server: NatsServer, home: Path) -> Iterator[ServiceProcess]:
    proc = ServiceProcess("prober", nats_server, home).start()
    try:
        yield proc
    finally:
        proc.stop()


async def test_a_pass_on_request_reads_its_tasks_and_reports(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess], home: Path,
    prober: ServiceProcess,
) -> None:
    provider.set_model("suite-rpc", answer="VERDICT: TRUE\n`used >= limit` is true when they are equal.")
    model = ModelRegistered(id="cfg:suite-rpc", alias="suite-rpc", served="suite-rpc", endpoint="fake")
    for event in (EndpointSaved(id="cfg:fake2", name="fake", base=provider.base_for("chat")), model):
        await bus.publish_event(nc.jetstream(), event)
    callers(caller_env())
    reply = await rpc.call(nc, subjects.RPC_PROBER_SUITE, SuiteRunRequest(model="suite-rpc"), SuiteRunReply,
                           timeout=60)
    assert reply.alias == "suite-rpc"
    assert [(r.task, r.kind, r.found, r.invented) for r in reply.results] == [
        ("claim-window-full", "answered", ["VERDICT: TRUE"], [])]
    assert reply.refused == ["claim-escapes: attach: '../../../etc/passwd' goes above its root (..)"]
    assert reply.skipped == ["claim-missing"]
    [report] = (home / "runs").glob("suite-*.md")
    assert f"suite-rpc · {reply.run}" in report.read_text() and "| claim-window-full | answered | 1/1 |" in (
        report.read_text())

    with pytest.raises(rpc.RpcFailure) as unknown:
        await rpc.call(nc, subjects.RPC_PROBER_SUITE, SuiteRunRequest(model="nobody"), SuiteRunReply,
                       timeout=10)
    assert (unknown.value.status, unknown.value.message) == (404, "'nobody' is not a registered model")


async def test_a_changed_task_rescores_the_stored_answer(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess], home: Path,
    prober: ServiceProcess,
) -> None:
    """T-5: after the task file changes, `rescore` scores the answer the stream keeps again; no model is
    asked, and only the changed score is recorded."""
    provider.set_model("suite-again", answer="VERDICT: TRUE\n`used >= limit` is true when they are equal.")
    model = ModelRegistered(id="cfg:suite-again", alias="suite-again", served="suite-again", endpoint="fake")
    for event in (EndpointSaved(id="cfg:fake3", name="fake", base=provider.base_for("chat")), model):
        await bus.publish_event(nc.jetstream(), event)
    callers(caller_env())
    await rpc.call(nc, subjects.RPC_PROBER_SUITE, SuiteRunRequest(model="suite-again"), SuiteRunReply,
                   timeout=60)
    asked = len(provider.requests())
    unchanged = await rpc.call(nc, subjects.RPC_PROBER_RESCORE, RescoreRequest(), RescoreReply, timeout=30)
    assert unchanged.changed == []

    file = home / "suite" / "tasks" / "claim-window-full" / "task.json"
    flipped = json.loads(file.read_text())
    flipped["must_find"], flipped["must_not_claim"] = flipped["must_not_claim"], flipped["must_find"]
    file.write_text(json.dumps(flipped))
    reply = await rpc.call(nc, subjects.RPC_PROBER_RESCORE, RescoreRequest(), RescoreReply, timeout=30)
    assert [(r.alias, r.task, r.before, r.after) for r in reply.changed] == [
        ("suite-again", "claim-window-full", "answered 1/1", "answered 0/1, invented VERDICT: TRUE")]
    assert len(provider.requests()) == asked


async def test_the_scheduled_suite_jobs_run_a_pass_through_the_job_runner(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess],
    home: Path,
) -> None:
    """T-6 as the scheduler runs it: `JobRunner` hands `suite` to `scheduled_pass`, which tests the paid
    model; `suite-free` finds no `:free` model and says so. Logged in as the prober."""
    provider.set_model("suite-job", answer="VERDICT: TRUE\n`used >= limit` is true when they are equal.")
    config = ConfigState()
    model = ModelRegistered(id="cfg:suite-job", alias="suite-job", served="suite-job", endpoint="fake")
    for event in (EndpointSaved(id="cfg:fake3", name="fake", base=provider.base_for("chat")), model):
        config.apply(event, await bus.publish_event(nc.jetstream(), event))
    callers(caller_env())
    prober = await bus.connect(nats_server.url, "test-prober", nats_server.login("prober"))
    try:
        asker = SuitePass(prober, config, by="prober-test", deadline_s=30)
        job = SuiteJob(asker, config, SuiteHistory(), home)

        async def suite(name: str) -> tuple[str, str]:
            return await scheduled_pass(job, name)

        runner = JobRunner(config, ProbeAsker(prober), suite=suite)
        due = datetime.now(UTC)
        assert await runner.run(Due("suite", due), False) == (
            "done", "suite-job: 1 asked, 1 answered, 0 confidently wrong, 1 tasks refused, 1 skipped")
        assert await runner.run(Due("suite-free", due), False) == (
            "done", "no model to test: give one, or none is left for this schedule")
    finally:
        await prober.close()
