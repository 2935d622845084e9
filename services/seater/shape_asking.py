"""The shape picker's transport (SPEC P-4): the question queued for the callers as a seat call and its
answer awaited (`shared.seat_wait`), so the decision model is called where every model is: with the
caller's key, under its connection's pacing. The seater waits at most the call's timeout and a grace."""

from __future__ import annotations

import asyncio
import secrets
import time

import structlog
from nats.aio.client import Client as NATS

from services.seater.shape_picker import due, pick_call, read_answer
from services.seater.shapes import Picked
from shared.commands import PICK_GRACE_S, PICK_TIMEOUT_S, PlanRequest
from shared.config_state import ConfigState
from shared.events import SeatCompleted
from shared.ids import utcnow
from shared.seat_wait import ask_and_wait

log = structlog.get_logger("seater.shape")


class ShapeAsker:
    def __init__(self, nc: NATS, timeout_s: float = PICK_TIMEOUT_S, grace_s: float = PICK_GRACE_S) -> None:
        self.nc, self.timeout_s, self.grace_s = nc, timeout_s, grace_s

    async def pick(self, request: PlanRequest, config: ConfigState) -> Picked | None:
        """The picker's answer, or None when P-4 does not ask it (or no decision model is registered)."""
        model = due(request, config)
        if model is None:
            return None
        now = utcnow()
        # Random enough never to meet a stored completion of another request (which would be read back).
        call = pick_call(f"d{now:%Y%m%d-%H%M%S}-{secrets.token_hex(6)}.shape", model, config, request.text,
                         now)
        call = call.model_copy(update={"timeout_s": self.timeout_s})
        started = time.monotonic()
        done: SeatCompleted | None = None
        try:
            done = await asyncio.wait_for(ask_and_wait(self.nc, call, self.grace_s),
                                          self.timeout_s + self.grace_s)
        except Exception as exc:  # the bus away or the wait over: the picker failed, the panel goes on
            log.warning("shape_pick_unanswered", call=call.call, error=type(exc).__name__)
        picked = read_answer(model.alias, done, round(time.monotonic() - started, 1))
        log.info("shape_picked", call=call.call, picker=model.alias, shape=picked.shape, by=picked.by)
        return picked
