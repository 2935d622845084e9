"""RM-2..RM-4 over the bus: the gateway asks, the seater answers with the seating or a refusal in the one
error shape, and a seater not yet folded far enough says so with a 503."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.seater.ranking import ROUTE_RANKINGS, RouteRanking, route_order
from services.seater.rotation import Rotation
from services.seater.route_rpc import RouteSeater
from shared import rpc, subjects
from shared.commands import RankReply, RankRequest, RouteRequest, RouteSeating, TurnNeeds
from shared.events import CooldownStarted, SeatCompleted, VerdictRecorded
from tests.unit.factories import collection, config, endpoint, model
from tests.unit.fake_bus import FakeBus
from tests.unit.ledger.factories import suite_answered
from tests.unit.seater import factory

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


def answered(alias: str, ago: timedelta) -> SeatCompleted:
    return SeatCompleted(id=f"s-{alias}", call=f"r1.{alias}", panel="r1", seat="route", alias=alias,
                         served=alias, endpoint="e", connection="e", purpose="route", status="ok", seconds=1,
                         at=NOW - ago)


def rotation() -> Rotation:
    r = Rotation()
    r.apply(VerdictRecorded(id="v1", call="r1.1", alias="m-b", useful=True, at=NOW - timedelta(hours=1)))
    r.apply(answered("m-a", timedelta(hours=1)))
    r.apply(answered("m-b", timedelta(minutes=1)))
    r.apply(CooldownStarted(id="c1", alias="m-d", connection="e", until=NOW + timedelta(minutes=5)))
    return r


@pytest.mark.parametrize("ranking", sorted(ROUTE_RANKINGS))
async def test_the_ranking_explains_itself(ranking: str) -> None:
    """`bench collection rank`: the order by the seater's rule without the draw, and each member's evidence;
    suite findings break the tie between members no verdict separates, under either rule."""
    r = rotation()
    r.apply(suite_answered("m-c", "race", found=3, missed=1, n=1))
    r.apply(suite_answered("m-c", "seed-x-control", found=0, missed=1, n=2, recall=False, shape="seeded",
                           wrong="false alarm"))
    config = factory.bench([factory.model(a) for a in ["m-a", "m-b", "m-c", "m-d"]],
                           factory.collection("agents", ["m-a", "m-d", "m-b", "m-c"], shape="code"))
    rule: RouteRanking = ROUTE_RANKINGS[ranking]
    bus = FakeBus()
    await RouteSeater(config, r, rule, draw=lambda: 0.0, now=lambda: NOW).serve(bus)
    reply = await rpc.call(bus, subjects.RPC_SEATER_RANK, RankRequest(collection="agents"), RankReply)
    order = [(line.place, line.alias) for line in reply.route]
    assert order == [(1, "m-b"), (2, "m-c"), (3, "m-a"), (4, "m-d")]
    why = {line.alias: line.why for line in reply.route}
    assert why["m-b"] == "1 useful of 1 judged; no suite score"
    assert why["m-c"] == "0 useful of 0 judged; 3 suite findings of 4 (over 1 tasks); 1 confidently wrong"
    assert why["m-d"].endswith("resting until 2026-12-02 12:05 UTC: last")
    assert reply.primary == "m-c" and reply.mergers == ["m-c", "m-a", "m-d", "m-b"]
    with pytest.raises(rpc.RpcFailure) as unknown:
        await rpc.call(bus, subjects.RPC_SEATER_RANK, RankRequest(collection="nope"), RankReply)
    assert (unknown.value.status, unknown.value.message) == (404, "no collection named 'nope'")
