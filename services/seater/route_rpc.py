"""The seater's route-mode answer (RM-3): the gateway decided who is eligible, the seater ranks them.

Ranking reads only the rotation the seater already folds (verdicts, cooldowns, last seats), so it is a
lookup, never a write. The rule is chosen by the setting `BENCH_ROUTE_RANKING`; the draw is injected:
production uses real randomness, tests a fixed one.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime

import structlog

from services.seater.ranking import RouteRanking
from services.seater.rotation import Rotation
from shared import rpc, subjects
from shared.commands import RoutePlan, RouteRequest
from shared.ids import utcnow

log = structlog.get_logger("seater.route")


class RouteRanker:
    def __init__(self, rotation: Rotation, ranking: RouteRanking, draw: Callable[[], float] = random.random,
                 now: Callable[[], datetime] = utcnow) -> None:
        self.rotation, self.draw, self.now, self.ranking = rotation, draw, now, ranking

    async def rank(self, request: RouteRequest) -> RoutePlan:
        order = self.ranking(list(dict.fromkeys(request.aliases)), self.rotation, self.now(), self.draw)
        log.info("route_ranked", collection=request.collection, order=order)
        return RoutePlan(order=order)

    async def serve(self, bus: rpc.Bus) -> rpc.Subscription:
        return await rpc.serve(bus, subjects.RPC_SEATER_ROUTE, subjects.SEATER_QUEUE, RouteRequest,
                               self.rank)
