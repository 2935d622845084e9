"""The shape picker across the bus (P-4, C-9): the question goes through a real caller process to the fake
provider acting as the decision model; the asking side logs in as the seater, so its grant is what
production has. Its answer names the shape; its silence and its nonsense fall back to `general`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from services.seater.planning import Draft, plan_panel
from services.seater.rotation import Rotation
from services.seater.shape_asking import ShapeAsker
from services.seater.shapes import Picked
from shared import bus
from shared.commands import PlanRequest, picker_text
from shared.config_state import ConfigState
from shared.events import CollectionSaved, ConfigEvent, EndpointSaved, ModelRegistered
from shared.ids import utcnow
from shared.natsserver import NatsServer
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess, callers, module_nats, provider, saved_endpoints
from tests.integration.caller.test_caller_service import caller_env
from tests.integration.seater.test_seater import Seaters, ask, explorer_aliases

__all__ = ["callers", "module_nats", "provider", "saved_endpoints"]

POOL = [("m1", "general"), ("g1", "general"), ("c1", "code")]
TEXT = picker_text("You review pull requests.", "Fix the off-by-one in this loop: for i in range(n + 1)")


async def bench_with(nc: bus.NATS, saved: list[EndpointSaved], picker: str) -> ConfigState:
    """The pool, one decision model and a collection of no shape, on the bus and in a fold of our own."""
    config = ConfigState()
    events: list[ConfigEvent] = list(saved)
    events += [ModelRegistered(id=f"cfg:{a}:{picker}", alias=a, served=a, endpoint="fake", role=role)
               for a, role in [*POOL, (picker, "decision")]]
    events.append(CollectionSaved(id=f"cfg:core:{picker}", name="core", members=["m1"]))
    for event in events:
        config.apply(event, await bus.publish_event(nc.jetstream(), event))
    return config


async def picked(nats_server: NatsServer, config: ConfigState, timeout_s: float = 20.0) -> Picked | None:
    seater = await bus.connect(nats_server.url, "test-seater", nats_server.login("seater"))
    try:
        return await ShapeAsker(seater, timeout_s=timeout_s, grace_s=1.0).pick(
            PlanRequest(collection="core", text=TEXT), config)
    finally:
        await seater.close()


async def test_the_decision_models_answer_names_the_shape_and_admits_code_explorers(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess],
) -> None:
    provider.set_model("pick-sure", answer='{"choice": "code", "confidence": 0.92}')
    config = await bench_with(nc, saved_endpoints, "pick-sure")
    callers(caller_env())
    answer = await picked(nats_server, config)
    assert answer == Picked("code", "pick-sure, 0.92")
    [sent] = [r for r in provider.requests() if r["model"] == "pick-sure"]
    assert sent["body"]["messages"][-1]["content"].endswith(TEXT)  # asked once, through the caller
    draft = plan_panel(PlanRequest(collection="core"), config, Rotation(), utcnow(), answer)
    assert isinstance(draft, Draft)
    assert (draft.shape, sorted(m.alias for m in draft.explorers)) == ("code", ["c1", "g1"])


async def test_a_silent_decision_model_falls_back_to_general(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess],
) -> None:
    provider.set_model("pick-mute", behaviour="hang")
    config = await bench_with(nc, saved_endpoints, "pick-mute")
    callers(caller_env())
    # The caller gives up at the call's deadline and says so; the seater reads that as a failure.
    assert await picked(nats_server, config, timeout_s=2.0) == Picked(
        "general", "pick-mute failed (no answer in 2s)")


async def test_a_nonsense_answer_falls_back_to_general(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess],
) -> None:
    provider.set_model("pick-odd", answer="I like turtles")
    config = await bench_with(nc, saved_endpoints, "pick-odd")
    callers(caller_env())
    assert await picked(nats_server, config) == Picked(
        "general", "pick-odd failed (no choice in its answer: 'I like turtles')")


async def test_a_seater_process_plans_with_the_picked_shape(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess], tmp_path: Path,
) -> None:
    """The whole path: the plan RPC carries the text, the seater asks through a caller, the plan has the
    shape, its why and the explorers the shape admits (a `code` model among them)."""
    provider.set_model("pick-plan", answer='{"choice": "code", "confidence": 0.92}')
    await bench_with(nc, saved_endpoints, "pick-plan")
    callers(caller_env())
    seaters = Seaters(nats_server, tmp_path)
    try:
        await seaters.start(nc)
        plan = await ask(nc, text=TEXT)
    finally:
        seaters.stop_all()
    assert (plan.shape, plan.shape_by) == ("code", "pick-plan, 0.92")
    assert sorted(explorer_aliases(plan)) == ["c1", "g1"]
