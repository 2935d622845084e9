"""An ordered consumer on `BENCH_EVENTS` from a given sequence, handing out what has arrived in batches.

Messages wait in a bounded queue: while the fold writes one batch, the next gathers; when the queue is
full the subscription stops taking messages and JetStream's flow control holds the rest on the server.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js import api as js_api

from shared import subjects

HEARTBEAT_S = 1.0


class Follower:
    def __init__(self, js: JetStreamContext, batch_max: int) -> None:
        self.js = js
        self.batch_max = max(1, batch_max)
        self._queue: asyncio.Queue[tuple[int, bytes]] = asyncio.Queue(maxsize=self.batch_max)
        self._sub: Any = None

    async def start(self, from_seq: int) -> None:
        config = js_api.ConsumerConfig(
            deliver_policy=js_api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=max(1, from_seq)
        )
        self._sub = await self.js.subscribe(
            subjects.EVENTS_ALL, stream=subjects.EVENTS_STREAM, ordered_consumer=True, cb=self._on_msg,
            idle_heartbeat=HEARTBEAT_S, config=config,
        )
        # nats-py resumes a reset ordered consumer after the last sequence it saw, which starts at 0: without
        # this, a NATS restart before the first new event would replay the whole stream from sequence 1.
        jsi = getattr(self._sub, "_jsi", None)
        if jsi is not None:
            jsi._sseq = max(0, from_seq - 1)

    async def _on_msg(self, msg: Msg) -> None:
        await self._queue.put((msg.metadata.sequence.stream, msg.data))

    async def next_batch(
        self, linger_s: float = 0.0, urgent: asyncio.Event | None = None
    ) -> list[tuple[int, bytes]]:
        """Wait for one message, then gather more for up to `linger_s` (or until `urgent` is set).

        Each batch is one DuckDB transaction; a busy bus folded event by event spends its time committing.
        Lingering trades a little lag for big batches, and a reader waiting on the fold cuts it short.
        """
        loop = asyncio.get_running_loop()
        batch = [await self._queue.get()]
        deadline = loop.time() + linger_s
        while len(batch) < self.batch_max:
            try:
                batch.append(self._queue.get_nowait())
                continue
            except asyncio.QueueEmpty:
                pass
            left = deadline - loop.time()
            if left <= 0 or urgent is None or urgent.is_set():
                break
            more = await self._wait_more(left, urgent)
            if more is None:
                break
            batch.append(more)
        return batch

    async def _wait_more(self, within_s: float, urgent: asyncio.Event) -> tuple[int, bytes] | None:
        get = asyncio.ensure_future(self._queue.get())
        hurry = asyncio.ensure_future(urgent.wait())
        try:
            await asyncio.wait({get, hurry}, timeout=within_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            hurry.cancel()
            if not get.done():
                get.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await get
        if get.done() and not get.cancelled():
            return get.result()
        return None

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None
