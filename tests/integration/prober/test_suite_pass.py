"""A suite pass through the real request path (T-2, T-3, T-6): real NATS, real caller processes and the fake
provider; the pass logs in as the prober, so its bus grant is what production has."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from services.prober.suite_calls import Asked
from services.prober.suite_pass import SuitePass
from shared import bus
from shared.alerts import paid_key
from shared.config_state import ConfigState
from shared.events import (
    AlertRaised,
    ConfigEvent,
    EndpointSaved,
    LimitsSaved,
    ModelRegistered,
    SuiteAnswered,
)
from shared.natsserver import NatsServer
from suite.seed_repo import drafts_for
from suite.seeding import functions, mutations
from suite.task import Task
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess
from tests.integration.caller.test_caller_service import caller_env

ROOT = Path(__file__).resolve().parents[3]
REAL = "suite/clauses.py"
WHY = " The comparison decides whether a negation precedes the mention, which is the whole rule."


def most_in(times: list[float], window: float) -> int:
    return max(len([t for t in times if start <= t < start + window]) for start in times)


def seeded_pair() -> tuple[Task, str, Task, str, int, str]:
    """A bug planted in a real function of this repository (`negated`: its `is not None` loses the `not`),
    and its control: the same function unchanged."""
    [negated] = [f for f in functions((ROOT / REAL).read_text()) if f.name == "negated"]
    [mutation] = [m for m in mutations(negated) if m.kind == "removed not"]
    bug, control = drafts_for(REAL, negated, mutation, "", "2026-12-03")
    return bug.task, bug.fixture, control.task, control.fixture, mutation.line, mutation.after.strip()


async def setup(nc: bus.NATS, provider: FakeProvider, models: list[str]) -> ConfigState:
    config = ConfigState()
    events: list[ConfigEvent] = [EndpointSaved(id="cfg:fake", name="fake", base=provider.base_for("chat"))]
    events += [ModelRegistered(id=f"cfg:{m}", alias=m, served=m, endpoint="fake") for m in models]
    for event in events:
        config.apply(event, await bus.publish_event(nc.jetstream(), event))
    return config


def asked(task: Task, fixture: str) -> Asked:
    return Asked(task, f"{task.prompt}\n\n===== FILE: {task.attach[0]} =====\n{fixture}")


async def test_a_seeded_bug_and_its_control_scored_for_three_scripted_models(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    bug, bug_code, control, control_code, line, planted = seeded_pair()
    provider.set_model("suite-finder", answers={planted: f"FAULT: line {line}\n{WHY}"},
                       answer=f"NO FAULT\n{WHY}")
    provider.set_model("suite-alarmist", answer=f"FAULT: line {line}\n{WHY}")
    provider.set_model("suite-silent", behaviour="empty")
    config = await setup(nc, provider, ["suite-finder", "suite-alarmist", "suite-silent"])
    callers(caller_env())
    prober = await bus.connect(nats_server.url, "test-prober", nats_server.login("prober"))
    try:
        suite_pass = SuitePass(prober, config, by="prober-test", deadline_s=30)
        tasks = [asked(bug, bug_code), asked(control, control_code)]
        results = {alias: await suite_pass.run(alias, tasks)
                   for alias in ("suite-finder", "suite-alarmist", "suite-silent")}
    finally:
        await prober.close()

    def summary(events: list[SuiteAnswered]) -> list[tuple[str, str, list[str], list[str], str]]:
        return [(e.task, e.kind, e.found, e.invented, e.wrong) for e in events]

    fault = f"FAULT: line {line}"
    assert summary(results["suite-finder"]) == [
        (bug.id, "answered", [fault], [], ""), (control.id, "answered", ["NO FAULT"], [], "")]
    assert summary(results["suite-alarmist"]) == [
        (bug.id, "answered", [fault], [], ""),
        (control.id, "answered", [], ["a fault in the control"], "false alarm")]
    assert [(e.kind, e.found, e.invented) for e in results["suite-silent"]] == [("error", [], [])] * 2
    confidently_wrong = {a: sum(bool(e.wrong) for e in r) for a, r in results.items()}
    assert confidently_wrong == {"suite-finder": 0, "suite-alarmist": 1, "suite-silent": 0}
    asked_texts = [r["body"]["messages"][-1]["content"] for r in provider.requests()
                   if r["model"] == "suite-finder"]
    assert asked_texts == [t.prompt for t in tasks]  # each task asked once, as built, through the callers


async def test_twenty_tasks_on_a_ten_rpm_connection_never_exceed_it_and_finish(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    provider.set_model("suite-paced", answer="The race is in the read-modify-write of the window document.")
    config = await setup(nc, provider, ["suite-paced"])
    limit = LimitsSaved(id="cfg:rpm10", scope="connection", name="fake", rpm=10)
    await bus.publish_event(nc.jetstream(), limit)
    callers(caller_env())
    task = Task(id="race", title="race", prompt="Where is the race?", must_find=["race"],
                must_not_claim=["leak"])
    prober = await bus.connect(nats_server.url, "test-prober", nats_server.login("prober"))
    started = time.time()
    try:
        results = await SuitePass(prober, config, by="prober-test", deadline_s=90).run(
            "suite-paced", [Asked(task, f"{task.prompt} ({n})") for n in range(20)])
    finally:
        await prober.close()
    received = [r["at"] for r in provider.requests() if r["model"] == "suite-paced" and r["at"] >= started]
    assert [e.kind for e in results] == ["answered"] * 20 and all(e.found == ["race"] for e in results)
    assert len(received) == 20 and most_in(received, 60.0) <= 10
    assert max(received) - min(received) >= 60.0  # the last ten waited for the first ten's minute to pass


async def test_a_held_model_is_not_called_and_its_tasks_are_no_answers(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    """The free-tier guard holds a model on a `went paid` alert for suite calls as for any seat (U-5)."""
    provider.set_model("suite-held", answer="The race is in the read-modify-write of the window document.")
    config = await setup(nc, provider, ["suite-held"])
    alert = AlertRaised(id="cfg:held", key=paid_key("suite-held"), kind="went paid", message="priced now")
    config.apply(alert, await bus.publish_event(nc.jetstream(), alert))
    callers(caller_env())
    task = Task(id="race", title="race", prompt="Where is the race?", must_find=["race"])
    prober = await bus.connect(nats_server.url, "test-prober", nats_server.login("prober"))
    try:
        [result] = await SuitePass(prober, config, by="prober-test", deadline_s=30).run(
            "suite-held", [Asked(task, task.prompt)])
    finally:
        await prober.close()
    assert result.kind == "error" and "the free-tier guard holds suite-held" in result.reason
    assert not [r for r in provider.requests() if r["model"] == "suite-held"]
