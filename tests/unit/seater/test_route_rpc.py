"""RM-3 over the bus: the seater ranks the members the gateway found eligible, with an injected draw."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.seater.rotation import Rotation
from services.seater.route_rpc import RouteRanker
from shared import rpc, subjects
from shared.commands import RankReply, RankRequest, RoutePlan, RouteRequest
from shared.config_state import ConfigState
from shared.events import CooldownStarted, SeatCompleted, VerdictRecorded
from tests.unit.fake_bus import FakeBus
from tests.unit.ledger.factories import suite_answered
from tests.unit.seater.factory import bench, collection, model

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def answered(alias: str, ago: timedelta) -> SeatCompleted:
    return SeatCompleted(id=f"s-{alias}", call=f"r1.{alias}", panel="r1", seat="route", alias=alias,
                         served=alias, endpoint="e", connection="e", purpose="route", status="ok", seconds=1,
                         at=NOW - ago)


def rotation() -> Rotation:
    r = Rotation()
    r.apply(VerdictRecorded(id="v1", call="r1.1", alias="m-b", useful=True))
    r.apply(answered("m-a", timedelta(hours=1)))
    r.apply(answered("m-b", timedelta(minutes=1)))
    r.apply(CooldownStarted(id="c1", alias="m-d", connection="e", until=NOW + timedelta(minutes=5)))
    return r


async def rank(draw: float, aliases: list[str]) -> RoutePlan:
    """Asked over the bus, as the gateway asks."""
    bus = FakeBus()
    await RouteRanker(rotation(), ConfigState(), draw=lambda: draw, now=lambda: NOW).serve(bus)
    return await rpc.call(bus, subjects.RPC_SEATER_ROUTE, RouteRequest(collection="agents", aliases=aliases),
                          RoutePlan)


async def test_useful_first_resting_last() -> None:
    assert (await rank(0.9, ["m-a", "m-d", "m-b", "m-c"])).order == ["m-b", "m-a", "m-c", "m-d"]


async def test_one_turn_in_four_the_stalest_fresh_member_goes_first() -> None:
    # m-c never answered a route turn nor sat: the stalest of the fresh members.
    assert (await rank(0.1, ["m-a", "m-d", "m-b", "m-c"])).order == ["m-c", "m-b", "m-a", "m-d"]


async def test_a_bad_request_is_refused() -> None:
    bus = FakeBus()
    await RouteRanker(Rotation(), ConfigState()).serve(bus)
    await bus.publish(subjects.RPC_SEATER_ROUTE, b'{"aliases": "m-a"}', reply="_INBOX.asker")
    refused = rpc.failure_of(bus.published[-1][1])
    assert bus.published[-1][0] == "_INBOX.asker"
    assert refused is not None and refused.status == 400 and refused.message.startswith("collection:")


async def test_the_ranking_explains_itself() -> None:
    """`bench collection rank`: the order without the draw, and each member's evidence."""
    r = rotation()
    r.apply(suite_answered("m-c", "race", found=3, missed=1, n=1))
    r.apply(suite_answered("m-c", "seed-x-control", found=0, missed=1, n=2, recall=False, shape="seeded",
                           wrong="false alarm"))
    config = bench([model(a) for a in ["m-a", "m-b", "m-c", "m-d"]],
                   collection("agents", ["m-a", "m-d", "m-b", "m-c"], shape="code"))
    bus = FakeBus()
    await RouteRanker(r, config, draw=lambda: 0.0, now=lambda: NOW).serve(bus)
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
