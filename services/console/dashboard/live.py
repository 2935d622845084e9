"""Live updates for open pages: one ordered consumer per gateway process on the event stream (new events
only, headers only), fanned out to every page's Server-Sent Events stream as the kind of thing that changed
(`config`, `panel`, `seat`, `verdict`, `onboard`, …). Whichever replica a page is open on, it hears every
change made anywhere, because the bus is where changes are; nothing polls. A page says where the stream
stood when it was read (`since`); an event between that read and its feed's start is told as `catch-up`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from nats.js import JetStreamContext
from nats.js import api as js_api

from shared import subjects

QUEUE_MAX = 64  # a page that does not read is dropped from, not waited for
KEEPALIVE_S = 15.0
TICK_S = 1.0  # how often a stream looks whether its page left or the server is stopping


def kind_of(subject: str) -> str:
    """`bench.ev.seat.p…` → `seat`; `bench.ev.config` → `config`."""
    parts = subject.split(".")
    return parts[2] if len(parts) > 2 else subject


def frame(kind: str) -> str:
    return f"event: change\ndata: {kind}\n\n"


class Live:
    def __init__(self, js: JetStreamContext) -> None:
        self.js = js
        self.pages: set[asyncio.Queue[str]] = set()
        self._sub: Any = None
        self._lock = asyncio.Lock()

    async def _start(self) -> None:
        async with self._lock:
            if self._sub is None:
                self._sub = await self.js.subscribe(
                    subjects.EVENTS_ALL, stream=subjects.EVENTS_STREAM, ordered_consumer=True, cb=self._heard,
                    deliver_policy=js_api.DeliverPolicy.NEW, headers_only=True, idle_heartbeat=5.0,
                )

    async def _heard(self, msg: Any) -> None:
        kind = kind_of(msg.subject)
        for queue in list(self.pages):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(kind)

    async def position(self) -> int:
        """The event stream's last sequence now."""
        return int((await self.js.stream_info(subjects.EVENTS_STREAM)).state.last_seq)

    async def stream(self, gone: Callable[[], Any], since: int | None = None) -> AsyncIterator[str]:
        """One page's events until `gone()` (awaitable or not) says the page left or the server stops."""
        await self._start()
        queue: asyncio.Queue[str] = asyncio.Queue(QUEUE_MAX)
        self.pages.add(queue)
        try:
            behind = since is not None and await self.position() > since  # looked once this page hears news
            yield "retry: 3000\n\n"
            if behind:
                yield frame("catch-up")
            quiet = 0.0
            while True:
                try:
                    kind = await asyncio.wait_for(queue.get(), TICK_S)
                except TimeoutError:
                    verdict = gone()
                    if asyncio.iscoroutine(verdict):
                        verdict = await verdict
                    if verdict:
                        return
                    quiet += TICK_S
                    if quiet >= KEEPALIVE_S:
                        quiet = 0.0
                        yield ": keepalive\n\n"
                    continue
                quiet = 0.0
                yield frame(kind)
        finally:
            self.pages.discard(queue)

    async def close(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
