"""A consumer on `BENCH_EVENTS` from a given sequence, handing out what has arrived in batches.

Messages wait in a bounded queue: while the fold writes one batch, the next gathers; when the queue is
full the subscription stops taking messages. The server then stops too: the consumer acknowledges all
deliveries up to one (ack-all) every quarter of `max_ack_pending`, and the server sends no more than that
many unacknowledged. (Flow control alone did not hold it: a 1M-event rebuild overflowed nats-py's 256 MB
pending buffer with ~180,000 slow-consumer drops.) Only those acknowledgements go out: nats-py would
otherwise acknowledge every delivery after its callback too (`manual_ack`), one message more per event
for the ledger and the server. An acknowledgement says "queued", not "folded": the ledger's own position
says what is folded, and a delivery never comes twice (`max_deliver=1`).

The consumer is an ephemeral push consumer this module replaces itself, always from the sequence after
the last one it handed out: when the server no longer knows it (a NATS restart loses it), and when a
delivery is missing (its consumer sequence skips). nats-py's ordered consumer would do the same from the
last sequence *it* saw, which is 0 before the first new event: it would replay the whole stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

import structlog
from nats.aio.msg import Msg
from nats.js import api as js_api

from shared import subjects

log = structlog.get_logger("ledger.follower")

HEARTBEAT_S = 1.0
CHECK_S = 2.0  # with nothing delivered for this long, ask the server whether the consumer still exists


class Consumer(Protocol):
    async def consumer_info(self) -> js_api.ConsumerInfo: ...

    async def unsubscribe(self) -> None: ...


class EventStream(Protocol):
    """The part of JetStream the follower uses (nats-py's `JetStreamContext` is one)."""

    async def subscribe(
        self, subject: str, *, stream: str | None = None, cb: Any = None,
        config: js_api.ConsumerConfig | None = None, idle_heartbeat: float | None = None,
        flow_control: bool = False, manual_ack: bool = False,
    ) -> Any: ...


class Follower:
    def __init__(self, js: EventStream, batch_max: int) -> None:
        self.js = js
        self.batch_max = max(1, batch_max)
        self._queue: asyncio.Queue[tuple[int, bytes]] = asyncio.Queue(maxsize=self.batch_max)
        # Deliveries the server may have out unacknowledged: the queue's worth and as much again in nats-py.
        self.ack_pending = 2 * self.batch_max
        self.ack_every = max(1, self.ack_pending // 4)
        self._sub: Consumer | None = None
        self._next = 1  # the stream sequence to queue next (advanced only once one is in the queue)
        self._handed = 0  # the last stream sequence handed out in a batch
        self._delivered = 0  # the last consumer sequence heard from the current consumer
        self._heard = False  # anything delivered since the last check
        self._watch: asyncio.Task[None] | None = None

    async def start(self, from_seq: int) -> None:
        self._next = max(1, from_seq)
        self._handed = self._next - 1
        await self._subscribe()
        self._watch = asyncio.create_task(self._watching())

    async def _subscribe(self) -> None:
        config = js_api.ConsumerConfig(
            deliver_policy=js_api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=self._next,
            ack_policy=js_api.AckPolicy.ALL, max_ack_pending=self.ack_pending, max_deliver=1,
            mem_storage=True, num_replicas=1,
        )
        self._delivered = 0
        self._sub = await self.js.subscribe(
            subjects.EVENTS_ALL, stream=subjects.EVENTS_STREAM, cb=self._on_msg, config=config,
            idle_heartbeat=HEARTBEAT_S, flow_control=True, manual_ack=True,
        )

    async def _resubscribe(self, why: str) -> None:
        log.warning("follower_resubscribing", start=self._next, why=why)
        old, self._sub = self._sub, None
        if old is not None:
            with contextlib.suppress(Exception):
                await old.unsubscribe()
        await self._subscribe()

    async def _watching(self) -> None:
        """While nothing arrives, check now and then that the server still holds the consumer."""
        while True:
            await asyncio.sleep(CHECK_S)
            if self._heard:
                self._heard = False
                continue
            try:
                if self._sub is None:
                    await self._subscribe()
                else:
                    await self._sub.consumer_info()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # gone with a restart, or the server is away: try again from here
                with contextlib.suppress(Exception):
                    await self._resubscribe(type(exc).__name__)

    async def _on_msg(self, msg: Msg) -> None:
        sequence = msg.metadata.sequence
        if sequence.consumer != self._delivered + 1:  # lost on the way: start again after the last one
            await self._resubscribe(f"delivery {sequence.consumer} after {self._delivered}")
            return
        self._delivered = sequence.consumer
        self._heard = True
        if sequence.stream < self._next:  # already queued (a replaced consumer starts after it)
            return
        # `_next` moves only once the message is in the queue: a consumer replaced while this put waits on a
        # full queue (its callback may be cancelled) starts again from this message, never after it. If the
        # old put completes too, the repeat is dropped when batches are handed out.
        await self._queue.put((sequence.stream, msg.data))
        self._next = max(self._next, sequence.stream + 1)
        if sequence.consumer % self.ack_every == 0:
            with contextlib.suppress(Exception):  # a lost ack only delays deliveries until it expires
                await msg.ack()

    async def next_batch(
        self, linger_s: float = 0.0, urgent: asyncio.Event | None = None
    ) -> list[tuple[int, bytes]]:
        """Wait for one message, then gather more for up to `linger_s` (or until `urgent` is set).

        Each batch is one DuckDB transaction; a busy bus folded event by event spends its time committing.
        Lingering trades a little lag for big batches, and a reader waiting on the fold cuts it short.
        """
        while True:
            fresh = []
            for seq, data in await self._gathered(linger_s, urgent):
                if seq > self._handed:  # a repeat from a replaced consumer is not handed out twice
                    self._handed = seq
                    fresh.append((seq, data))
            if fresh:
                return fresh

    async def _gathered(self, linger_s: float, urgent: asyncio.Event | None) -> list[tuple[int, bytes]]:
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
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
            self._watch = None
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None
