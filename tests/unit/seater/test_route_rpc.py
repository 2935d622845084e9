"""RM-3 over the bus: the seater ranks the members the gateway found eligible, with an injected draw."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.seater.rotation import Rotation
from services.seater.route_rpc import RouteRanker
from shared.commands import RoutePlan, RouteRequest
from shared.events import CooldownStarted, SeatCompleted, VerdictRecorded

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


def rank(draw: float, aliases: list[str]) -> RoutePlan:
    ranker = RouteRanker(rotation(), draw=lambda: draw, now=lambda: NOW)
    return ranker.rank(RouteRequest(collection="agents", aliases=aliases).model_dump_json().encode())


def test_useful_first_resting_last() -> None:
    assert rank(0.9, ["m-a", "m-d", "m-b", "m-c"]).order == ["m-b", "m-a", "m-c", "m-d"]


def test_one_turn_in_four_the_stalest_fresh_member_goes_first() -> None:
    # m-c never answered a route turn nor sat: the stalest of the fresh members.
    assert rank(0.1, ["m-a", "m-d", "m-b", "m-c"]).order == ["m-c", "m-b", "m-a", "m-d"]


def test_a_bad_request_is_refused() -> None:
    plan = RouteRanker(Rotation()).rank(b'{"aliases": "m-a"}')
    assert plan.refusal is not None and plan.refusal.status == 400 and not plan.order
