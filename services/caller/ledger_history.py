"""Asking the ledger what a connection was sent (`bench.rpc.ledger.pacing`), for seeding its windows.

Off the hot path as far as it can be: asked only when a limit binds a scope not seeded yet, one question
per connection at a time (calls arriving meanwhile share its answer), a short timeout, and after a failure
no question on that connection for a while: a ledger that is down or behind costs calls their seeding,
never their turn.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import structlog

from shared import rpc, subjects
from shared.commands import PacingReply, PacingRequest

log = structlog.get_logger("caller")

ASK_TIMEOUT_S = 2.0
QUIET_AFTER_FAILURE_S = 30.0


class LedgerHistory:
    def __init__(self, bus: rpc.Bus, timeout_s: float = ASK_TIMEOUT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bus, self.timeout_s, self.clock = bus, timeout_s, clock
        self._asking: dict[str, asyncio.Task[PacingReply | None]] = {}
        self._failed_at: dict[str, float] = {}

    async def fetch(self, connection: str) -> PacingReply | None:
        """The connection's history, or None when the ledger did not answer (the call goes on unseeded)."""
        failed = self._failed_at.get(connection)
        if failed is not None and self.clock() - failed < QUIET_AFTER_FAILURE_S:
            return None
        task = self._asking.get(connection)
        if task is None:
            task = asyncio.create_task(self._ask(connection))
            self._asking[connection] = task
            task.add_done_callback(lambda _: self._asking.pop(connection, None))
        return await asyncio.shield(task)

    async def _ask(self, connection: str) -> PacingReply | None:
        try:
            reply = await rpc.call(self.bus, subjects.RPC_LEDGER_PACING, PacingRequest(connection=connection),
                                   PacingReply, self.timeout_s)
        except rpc.RpcFailure as failure:  # nobody answers, too late, a refusal (behind), an odd answer
            why = failure.message[:200]
        else:
            self._failed_at.pop(connection, None)
            return reply
        log.warning("pacing_unseeded", connection=connection, why=why)
        self._failed_at[connection] = self.clock()
        return None
