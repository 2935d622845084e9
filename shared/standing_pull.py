"""A pull consumer that keeps its requests waiting at the server, so a message is pushed the moment it lands.

nats-py's `fetch()` asks, waits for one message and returns, so every further message costs another
request round trip, and the third call of a panel waits for two of them. Here a standing request for up
to `window` messages stays at the server: each message comes straight to `on_msg`, and the server still
hands each one to a single consumer, in turn across the replicas that are waiting, and never more than
they asked for. What is owed is topped up as messages arrive and work finishes, and asked again after a
reconnect or when the server has gone silent past its idle heartbeats.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable

import structlog
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

log = structlog.get_logger("bus")

STATUS = "Status"
PENDING = "Nats-Pending-Messages"
HEARTBEAT = "100"


class StandingPull:
    def __init__(
        self,
        nc: NATS,
        stream: str,
        durable: str,
        on_msg: Callable[[Msg], None],
        capacity: Callable[[], int],
        window: int = 64,
        expires_s: float = 30.0,
        heartbeat_s: float = 1.0,
    ) -> None:
        """`on_msg` takes each message (it must not block); `capacity()` says how many more this consumer
        may hold now, so what is owed plus what is held never passes it."""
        self.nc, self.on_msg, self.capacity = nc, on_msg, capacity
        self.window, self.expires_s, self.heartbeat_s = window, expires_s, heartbeat_s
        self.next_subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{durable}"
        self.owed = 0
        self._inbox = nc.new_inbox()
        self._sub: object | None = None
        self._heard = 0.0
        self._reconnects = 0
        self._watch: asyncio.Task[None] | None = None
        self._asking: set[asyncio.Task[None]] = set()

    async def start(self) -> StandingPull:
        self._sub = await self.nc.subscribe(self._inbox, cb=self._arrived)
        self._reconnects = int(self.nc.stats["reconnects"])
        self._heard = asyncio.get_running_loop().time()
        await self._ask()
        self._watch = asyncio.create_task(self._watchdog())
        return self

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()  # type: ignore[attr-defined]

    def top_up(self) -> None:
        """Ask for more once half the window is spent and there is room (call when work finishes)."""
        if self.owed <= self.window // 2 and self._room() > 0:
            task = asyncio.create_task(self._ask())
            self._asking.add(task)
            task.add_done_callback(self._asking.discard)

    def _room(self) -> int:
        return min(self.window, self.capacity() - self.owed)

    async def _ask(self) -> None:
        want = self._room()
        if want <= 0:
            return
        self.owed += want
        request = {"batch": want, "expires": int(self.expires_s * 1e9),
                   "idle_heartbeat": int(self.heartbeat_s * 1e9)}
        try:
            await self.nc.publish(self.next_subject, json.dumps(request).encode(), reply=self._inbox)
        except Exception as exc:  # the connection is away: the watchdog asks again once it is back
            self.owed -= want
            log.warning("pull_request_failed", error=f"{type(exc).__name__}: {exc}"[:200])

    async def _arrived(self, msg: Msg) -> None:
        self._heard = asyncio.get_running_loop().time()
        status = msg.headers.get(STATUS) if msg.headers else None
        if status is None:
            self.owed = max(0, self.owed - 1)
            self.on_msg(msg)
        elif status != HEARTBEAT:
            # 408: a request expired; 409: the server ended one early. Either way it tells how many of
            # the messages it owed will not come; without that count, nothing is assumed owed any more.
            pending = msg.headers.get(PENDING) if msg.headers else None
            self.owed = max(0, self.owed - int(pending)) if pending is not None else 0
            if status != "408":
                log.info("pull_request_ended", status=status)
        self.top_up()

    async def _watchdog(self) -> None:
        """After a reconnect (or a server restart) the waiting requests may be gone: ask again."""
        while True:
            await asyncio.sleep(self.heartbeat_s / 2)
            loop = asyncio.get_running_loop()
            reconnects = int(self.nc.stats["reconnects"])
            silent = loop.time() - self._heard > 3 * self.heartbeat_s
            if reconnects != self._reconnects or (silent and self.nc.is_connected):
                self._reconnects, self._heard = reconnects, loop.time()
                self.owed = 0
                await self._ask()
