"""How far behind the stream the ledger is, and how full the JetStream store is: read every few seconds
into the ops port's gauges and the ledger's readiness (a ledger far behind answers stale views)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import structlog
from nats.js import JetStreamContext

from shared import metrics, subjects

log = structlog.get_logger("ledger")

EVERY_S = 5.0
FULL_WARNING = 0.8


class StreamWatch:
    def __init__(self, js: JetStreamContext, position: Callable[[], int], ready_lag: int) -> None:
        self.js, self.position, self.ready_lag = js, position, ready_lag
        self.lag: int | None = None  # None until the first look
        self._task: asyncio.Task[None] | None = None
        self._warned = False

    def start(self) -> StreamWatch:
        self._task = asyncio.create_task(self._loop(), name="stream-watch")
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def problem(self) -> str | None:
        """For readiness: a ledger more than `ready_lag` events behind is not ready."""
        if self.lag is None:
            return "the stream has not been looked at yet"
        return None if self.lag <= self.ready_lag else f"{self.lag} events behind the stream"

    async def _loop(self) -> None:
        while True:
            with contextlib.suppress(Exception):  # the bus away: the last figures stand, readiness says so
                await self.look()
            await asyncio.sleep(EVERY_S)

    async def look(self) -> None:
        info = await self.js.stream_info(subjects.EVENTS_STREAM)
        self.lag = max(0, int(info.state.last_seq) - self.position())
        metrics.LEDGER_LAG.set(self.lag)
        metrics.EVENTS_STREAM_BYTES.set(info.state.bytes)
        account = await self.js.account_info()
        limit = account.limits.max_storage
        ratio = account.storage / limit if limit and limit > 0 else 0.0
        metrics.STORE_FILL_RATIO.set(ratio)
        if ratio >= FULL_WARNING and not self._warned:
            log.warning("jetstream_store_filling", fill=round(ratio, 3), stream_bytes=info.state.bytes)
        self._warned = ratio >= FULL_WARNING
