"""RM-2..RM-4 over the bus: the gateway asks, the seater answers with the seating or a refusal in the one
error shape, and a seater not yet folded far enough says so with a 503."""

from __future__ import annotations

from datetime import UTC, datetime

from services.seater.ranking import route_order
from services.seater.rotation import Rotation
from services.seater.route_rpc import RouteSeater
from shared import rpc, subjects
from shared.commands import RouteRequest, RouteSeating, TurnNeeds
from tests.unit.fake_bus import FakeBus
from tests.unit.gateway.factories import collection, config, endpoint, model

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
STATE = config(endpoint("fake"), model("m-a", tools=True), model("m-b"), collection("agents", ["m-a", "m-b"]))


async def ask(seater: RouteSeater, request: RouteRequest) -> RouteSeating:
    bus = FakeBus()
    await seater.serve(bus)
    return await rpc.call(bus, subjects.RPC_SEATER_ROUTE, request, RouteSeating)


async def test_the_seating_comes_back_over_the_bus() -> None:
    seater = RouteSeater(STATE, Rotation(), route_order, draw=lambda: 0.9, now=lambda: NOW)
    seating = await ask(seater, RouteRequest(collection="agents", needs=TurnNeeds(tools=True)))
    assert seating.order == ["m-a"] and [s.alias for s in seating.skipped] == ["m-b"]


async def test_a_refusal_keeps_its_status_and_message() -> None:
    seater = RouteSeater(STATE, Rotation(), route_order)
    try:
        await ask(seater, RouteRequest(collection="agents", needs=TurnNeeds(estimate=10, images=1)))
    except rpc.RpcFailure as failure:
        assert failure.answered and failure.status == 400 and "no member of bench/agents" in failure.message
    else:
        raise AssertionError("a turn nobody can take was seated")


async def test_a_seater_that_is_not_ready_refuses_with_503() -> None:
    async def unready(config_seq: int) -> None:
        raise rpc.RpcFailure(503, f"the seater cannot plan right now (folded before {config_seq}); try again")

    seater = RouteSeater(STATE, Rotation(), route_order, ready=unready)
    try:
        await ask(seater, RouteRequest(collection="agents", config_seq=99))
    except rpc.RpcFailure as failure:
        assert failure.status == 503 and "99" in failure.message
    else:
        raise AssertionError("an unready seater answered")


async def test_a_bad_request_is_refused() -> None:
    bus = FakeBus()
    await RouteSeater(STATE, Rotation(), route_order).serve(bus)
    await bus.publish(subjects.RPC_SEATER_ROUTE, b'{"needs": "tools"}', reply="_INBOX.asker")
    refused = rpc.failure_of(bus.published[-1][1])
    assert bus.published[-1][0] == "_INBOX.asker"
    assert refused is not None and refused.status == 400 and refused.message.startswith("collection:")
