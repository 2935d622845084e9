"""The seater's route-mode answer (RM-3): the gateway decided who is eligible, the seater ranks them.

Ranking reads only the rotation the seater already folds (verdicts, cooldowns, last seats), so it is a
lookup, never a write. The draw is injected: production uses real randomness, tests a fixed one.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime
from typing import Any

import structlog
from nats.aio.client import Client as NATS
from pydantic import ValidationError

from services.seater.ranking import route_order
from services.seater.rotation import Rotation
from shared import bus, subjects
from shared.commands import PlanRefusal, RoutePlan, RouteRequest
from shared.ids import utcnow

log = structlog.get_logger("seater.route")


class RouteRanker:
    def __init__(self, rotation: Rotation, draw: Callable[[], float] = random.random,
                 now: Callable[[], datetime] = utcnow) -> None:
        self.rotation, self.draw, self.now = rotation, draw, now

    def rank(self, data: bytes) -> RoutePlan:
        try:
            request = RouteRequest.model_validate_json(data)
        except ValidationError as exc:
            why = f"bad route request: {exc.errors()[0]['msg']}"
            return RoutePlan(refusal=PlanRefusal(status=400, message=why))
        order = route_order(list(dict.fromkeys(request.aliases)), self.rotation, self.now(), self.draw)
        log.info("route_ranked", collection=request.collection, order=order)
        return RoutePlan(order=order)

    async def handle(self, data: bytes) -> bytes:
        return self.rank(data).model_dump_json().encode()

    async def serve(self, nc: NATS) -> Any:
        return await bus.serve_rpc(nc, subjects.RPC_SEATER_ROUTE, subjects.SEATER_QUEUE, self.handle)
