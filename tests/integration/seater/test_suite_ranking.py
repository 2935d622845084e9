"""RM-3 with T-5 over a real seater: suite findings order route mode's members, a new score moves them,
and a restarted seater (the fold rebuilt from the stream) ranks exactly as before and as a replay does.
Nobody was ever seated, so the explore-first move (the stalest fresh member) changes nothing."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

from services.seater.ranking import ROUTE_RANKINGS
from shared import bus, rpc, subjects
from shared.commands import RouteRequest, RouteSeating
from shared.events import CollectionSaved
from shared.ids import utcnow
from tests.integration.seater.test_seater import Seaters, configure, publish, replay, seaters
from tests.unit.ledger.factories import T0, suite_answered

__all__ = ["seaters"]

MEMBERS = ["x1", "x2", "x3", "x4"]


async def ranked(nc: bus.NATS) -> list[str]:
    plan = await rpc.call(nc, subjects.RPC_SEATER_ROUTE, RouteRequest(collection="route"), RouteSeating)
    return plan.order


async def ranked_until(nc: bus.NATS, want: list[str], within: float = 10.0) -> list[str]:
    """The seater folds new scores as they arrive: ask until its order is `want`, or give its last."""
    end = time.monotonic() + within
    order = await ranked(nc)
    while order != want and time.monotonic() < end:
        await asyncio.sleep(0.1)
        order = await ranked(nc)
    return order


async def test_suite_findings_rank_route_mode_and_survive_a_restart(nc: bus.NATS, seaters: Seaters) -> None:
    await configure(nc)
    await publish(nc, CollectionSaved(id="cfg:route", name="route", members=MEMBERS))
    await publish(nc, suite_answered("x3", "race", found=2, n=1), suite_answered("x2", "race", found=1, n=2),
                  suite_answered("x4", "claim-1", found=5, recall=False, shape="claim", n=3))
    first = await seaters.start(nc)
    assert await ranked(nc) == ["x3", "x2", "x1", "x4"]  # a claim task is no finding for routing

    # x3 is asked again and misses everything; x1 finds three on another task.
    await publish(nc, suite_answered("x3", "race", found=0, missed=2, n=4, at=T0 + timedelta(minutes=1)),
                  suite_answered("x1", "leak", found=3, n=5))
    assert await ranked_until(nc, ["x1", "x2", "x3", "x4"]) == ["x1", "x2", "x3", "x4"]

    first.stop()
    await seaters.start(nc)
    assert await ranked(nc) == ["x1", "x2", "x3", "x4"]
    _, rotation = await replay(nc)
    # Nobody has a verdict: every rule orders by findings (the seater runs the default, leader).
    for ranking in ROUTE_RANKINGS.values():
        assert ranking(MEMBERS, rotation, utcnow(), lambda: 0.9) == ["x1", "x2", "x3", "x4"]
