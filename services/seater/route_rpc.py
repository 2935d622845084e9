"""The seater's route-mode answer (RM-2..RM-4): who may take the turn, and in which order they are tried;
and why a collection ranks as it does (`bench.rpc.seater.rank`).

Decided from the configuration and the rotation the seater already folds (verdicts, suite scores,
cooldowns, last seats), so it is a lookup, never a write. The ranking rule is chosen by the setting
`BENCH_ROUTE_RANKING`; the draw is injected: production uses real randomness, tests a fixed one.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from datetime import datetime

import structlog

from services.seater.ranking import RouteRanking, explain
from services.seater.rotation import Rotation
from services.seater.route_seating import seat_route
from shared import rpc, subjects
from shared.commands import PlanRefusal, RankReply, RankRequest, RouteRequest, RouteSeating
from shared.config_state import ConfigState
from shared.ids import utcnow

log = structlog.get_logger("seater.route")


async def folded(config_seq: int) -> None:
    """Nothing to wait for (a seater whose fold is already where it must be)."""


class RouteSeater:
    def __init__(
        self, config: ConfigState, rotation: Rotation, ranking: RouteRanking,
        ready: Callable[[int], Awaitable[None]] = folded, draw: Callable[[], float] = random.random,
        now: Callable[[], datetime] = utcnow,
    ) -> None:
        self.config, self.rotation, self.ranking = config, rotation, ranking
        self.ready, self.draw, self.now = ready, draw, now

    async def seat(self, request: RouteRequest) -> RouteSeating:
        await self.ready(request.config_seq)
        plan = seat_route(request, self.config, self.rotation, self.now(), self.draw, self.ranking)
        if isinstance(plan, PlanRefusal):
            log.info("route_refused", collection=request.collection, status=plan.status)
            raise rpc.RpcFailure(plan.status, plan.message)
        log.info("route_seated", collection=request.collection, order=plan.order,
                 skipped=[s.alias for s in plan.skipped])
        return plan

    async def explain(self, request: RankRequest) -> RankReply:
        col = self.config.collections.get(request.collection)
        if col is None:
            raise rpc.RpcFailure(404, f"no collection named {request.collection!r}")
        return explain(col, self.config, self.rotation, self.now(), self.ranking)

    async def serve(self, bus: rpc.Bus) -> list[rpc.Subscription]:
        return [
            await rpc.serve(bus, subjects.RPC_SEATER_ROUTE, subjects.SEATER_QUEUE, RouteRequest, self.seat),
            await rpc.serve(bus, subjects.RPC_SEATER_RANK, subjects.SEATER_QUEUE, RankRequest, self.explain),
        ]
