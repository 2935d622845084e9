"""The seater's route-mode answer (RM-3): the gateway decided who is eligible, the seater ranks them; and
why a collection ranks as it does (`bench.rpc.seater.rank`).

Ranking reads only the rotation the seater already folds (verdicts, cooldowns, last seats), so it is a
lookup, never a write. The draw is injected: production uses real randomness, tests a fixed one.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime

import structlog

from services.seater.ranking import explain, route_order
from services.seater.rotation import Rotation
from shared import rpc, subjects
from shared.commands import RankReply, RankRequest, RoutePlan, RouteRequest
from shared.config_state import ConfigState
from shared.ids import utcnow

log = structlog.get_logger("seater.route")


class RouteRanker:
    def __init__(self, rotation: Rotation, config: ConfigState, draw: Callable[[], float] = random.random,
                 now: Callable[[], datetime] = utcnow) -> None:
        self.rotation, self.config, self.draw, self.now = rotation, config, draw, now

    async def rank(self, request: RouteRequest) -> RoutePlan:
        order = route_order(list(dict.fromkeys(request.aliases)), self.rotation, self.now(), self.draw)
        log.info("route_ranked", collection=request.collection, order=order)
        return RoutePlan(order=order)

    async def explain(self, request: RankRequest) -> RankReply:
        col = self.config.collections.get(request.collection)
        if col is None:
            raise rpc.RpcFailure(404, f"no collection named {request.collection!r}")
        return explain(col, self.config, self.rotation, self.now())

    async def serve(self, bus: rpc.Bus) -> list[rpc.Subscription]:
        return [
            await rpc.serve(bus, subjects.RPC_SEATER_ROUTE, subjects.SEATER_QUEUE, RouteRequest, self.rank),
            await rpc.serve(bus, subjects.RPC_SEATER_RANK, subjects.SEATER_QUEUE, RankRequest, self.explain),
        ]
