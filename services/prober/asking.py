"""Probe calls go through the callers like any seat (`shared.seat_wait`): keys, pacing and the free-tier
guard stay in the callers.

Each connection's calls are asked one at a time, so a probe of many models never crowds a limited
connection (the callers' pacing holds each call until its window has room); connections go side by side.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import structlog
from nats.aio.client import Client as NATS

from services.prober.probes import by_connection
from shared.commands import SeatCall
from shared.events import SeatCompleted
from shared.seat_wait import ask_and_wait

log = structlog.get_logger("prober.asking")


class ProbeAsker:
    def __init__(self, nc: NATS) -> None:
        self.nc = nc

    async def ask_all(self, calls: Iterable[SeatCall], gap_s: float = 0.0) -> list[SeatCompleted]:
        """Every call's completion (a call nobody answered in time is left out); `gap_s` between one
        connection's calls (HL-3)."""
        groups = by_connection(calls)
        results = await asyncio.gather(*(self._ask_in_turn(group, gap_s) for group in groups.values()))
        return [done for group in results for done in group]

    async def _ask_in_turn(self, calls: list[SeatCall], gap_s: float) -> list[SeatCompleted]:
        done: list[SeatCompleted] = []
        for i, call in enumerate(calls):
            if i and gap_s:
                await asyncio.sleep(gap_s)
            answer = await self.ask(call)
            if answer is not None:
                done.append(answer)
        return done

    async def ask(self, call: SeatCall) -> SeatCompleted | None:
        answer = await ask_and_wait(self.nc, call)
        if answer is None:
            log.warning("probe_unanswered", call=call.call, alias=call.alias)
        return answer
