"""HL-2 through the callers: each probe call is a seat call on the work queue, answered by a real caller
process (keys, pacing and the free-tier guard stay there), stored as a `seat_completed` with purpose
`probe`; its failure class follows HL-1. A run resumed after a replica died asks nothing twice."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from services.prober.asking import ProbeAsker
from services.prober.jobs import JobRunner
from services.prober.probes import run_id
from services.prober.schedule import Due
from shared import bus, subjects
from shared.config_state import ConfigState
from shared.events import EndpointSaved, ModelLearned, ModelRegistered, SeatCompleted, decode_event
from shared.failures import failure_class
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess
from tests.integration.caller.test_caller_service import caller_env, stored_events

DUE = datetime(2026, 1, 5, 4, tzinfo=UTC)


async def registered(nc: bus.NATS, endpoints: list[EndpointSaved], served: list[str]) -> ConfigState:
    config = ConfigState()
    for endpoint in endpoints:
        config.apply(endpoint)
    for name in served:
        event = ModelRegistered(id=f"cfg:{name}", alias=name, served=name, endpoint="fake")
        config.apply(event, await bus.publish_event(nc.jetstream(), event))
    return config


def probed(provider: FakeProvider, served: list[str]) -> list[str]:
    return [r["model"] for r in provider.requests() if r["model"] in served]


async def test_an_availability_run_asks_every_model_through_the_callers_and_classes_each_failure(
    nc: bus.NATS, prober_nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess],
) -> None:
    served = ["pb-ok", "pb-gone", "pb-slow"]
    provider.set_model("pb-ok")
    provider.set_model("pb-gone", behaviour="not_found")
    provider.set_model("pb-slow", latency_ms=300)
    config = await registered(nc, saved_endpoints, served)
    callers(caller_env())
    runner = JobRunner(config, ProbeAsker(prober_nc))
    outcome, summary = await runner.run(Due("availability", DUE), False)
    assert (outcome, summary) == ("done", "3 calls: 2 answered, structural 1")
    stored = [decode_event(raw) for raw in await stored_events(nc, subjects.seats_of_panel(
        run_id("availability", DUE)))]
    completions = {e.alias: e for e in stored if isinstance(e, SeatCompleted)}
    assert set(completions) == set(served)
    assert {e.purpose for e in completions.values()} == {"probe"}
    assert failure_class(completions["pb-gone"].status, completions["pb-gone"].error) == "structural"
    assert completions["pb-ok"].status == "ok" and completions["pb-ok"].seat == "probe tiny"
    slow = completions["pb-slow"].first_token_s  # the fake waits 300 ms before its first event
    assert slow is not None and 0.3 <= slow <= completions["pb-slow"].seconds + 0.05
    assert sorted(probed(provider, served)) == sorted(served)

    # The same due time again (a replica taking over a run): every answer is already stored.
    again = await JobRunner(config, ProbeAsker(prober_nc)).run(Due("availability", DUE), False)
    assert again == (outcome, summary)
    assert sorted(probed(provider, served)) == sorted(served)


async def test_an_unreachable_endpoint_is_a_failure_class_not_a_crash(
    nc: bus.NATS, prober_nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess],
) -> None:
    down = EndpointSaved(id="cfg:down", name="down", base="http://127.0.0.1:9/v1")
    await bus.publish_event(nc.jetstream(), down)
    config = ConfigState()
    for endpoint in [*saved_endpoints, down]:
        config.apply(endpoint)
    event = ModelRegistered(id="cfg:pb-down", alias="pb-down", served="pb-down", endpoint="down")
    config.apply(event, await bus.publish_event(nc.jetstream(), event))
    callers({**caller_env(), "BENCHWARMERS_KEY_DOWN": "sk-down"})
    outcome, summary = await JobRunner(config, ProbeAsker(prober_nc)).run(Due("availability", DUE), False)
    assert (outcome, summary) == ("done", "1 calls: 0 answered, other 1")


async def test_the_capabilities_probe_learns_only_what_the_answers_showed(
    nc: bus.NATS, prober_nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess],
) -> None:
    provider.set_model("cap-tools", behaviour="tools")
    provider.set_model("cap-reason", behaviour="reasoning")
    provider.set_model("cap-broken", behaviour="no_tools")
    config = await registered(nc, saved_endpoints, ["cap-tools", "cap-reason", "cap-broken"])
    callers(caller_env())
    learned: list[ModelLearned] = []

    async def learn(event: ModelLearned) -> None:
        learned.append(event)
        config.apply(event)

    runner = JobRunner(config, ProbeAsker(prober_nc), learn=learn, capability_gap_s=0.0)
    outcome, summary = await runner.run(Due("capabilities", DUE), False)
    assert outcome == "done"
    assert summary.endswith("learned cap-reason: reasoning, cap-tools: tools"), summary
    assert [(e.alias, e.tools, e.reasoning, e.source) for e in learned] == [
        ("cap-tools", True, None, "probe 2026-01-05"), ("cap-reason", None, True, "probe 2026-01-05")]
    assert config.models["cap-tools"].tools is True and config.models["cap-broken"].tools is None
    tools_asked = [r for r in provider.requests() if r["model"] == "cap-broken" and r["body"].get("tools")]
    assert len(tools_asked) == 1  # the forced-need question, with its one tool, asked once
