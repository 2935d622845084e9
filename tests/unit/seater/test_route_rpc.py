"""RM-3 over the bus: the seater ranks the members the gateway found eligible, with an injected draw."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.seater.ranking import route_order
from services.seater.rotation import Rotation
from services.seater.route_rpc import RouteRanker
from shared import rpc, subjects
from shared.commands import RoutePlan, RouteRequest
from shared.events import CooldownStarted, SeatCompleted, VerdictRecorded
from tests.unit.fake_bus import FakeBus

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
    await RouteRanker(rotation(), route_order, draw=lambda: draw, now=lambda: NOW).serve(bus)
    return await rpc.call(bus, subjects.RPC_SEATER_ROUTE, RouteRequest(collection="agents", aliases=aliases),
                          RoutePlan)


async def test_useful_first_resting_last() -> None:
    assert (await rank(0.9, ["m-a", "m-d", "m-b", "m-c"])).order == ["m-b", "m-a", "m-c", "m-d"]


async def test_one_turn_in_four_the_stalest_fresh_member_goes_first() -> None:
    # m-c never answered a route turn nor sat: the stalest of the fresh members.
    assert (await rank(0.1, ["m-a", "m-d", "m-b", "m-c"])).order == ["m-c", "m-b", "m-a", "m-d"]


async def test_a_bad_request_is_refused() -> None:
    bus = FakeBus()
    await RouteRanker(Rotation(), route_order).serve(bus)
    await bus.publish(subjects.RPC_SEATER_ROUTE, b'{"aliases": "m-a"}', reply="_INBOX.asker")
    refused = rpc.failure_of(bus.published[-1][1])
    assert bus.published[-1][0] == "_INBOX.asker"
    assert refused is not None and refused.status == 400 and refused.message.startswith("collection:")
