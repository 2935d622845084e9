"""A process's own copy of a JetStream KV bucket, kept current by a watch, so hot paths read it without a
round trip to the server.

Every replica writes with compare-and-set against the revision it read, so a copy that is a moment behind
can only make a write fail; the key is then read from the server for the next try. A key this process
wrote is updated in the copy at once (the watch repeats it later and is ignored by revision). Until the
watch has delivered the bucket's current values, reads go to the server; after a reconnect the watch is
begun again, since it may have missed writes while the connection was down. In a bucket with a TTL the
server drops an entry silently when it ages out; the copy drops it too, once it is older than the TTL.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue


@dataclass(frozen=True)
class Copy:
    value: bytes | None  # None: no such key (never written, deleted or purged)
    revision: int  # 0 when the key was never written
    at: float = 0.0  # when it was written (epoch seconds), for a bucket's TTL


ABSENT = Copy(None, 0)


class KvMirror:
    def __init__(self, kv: KeyValue, reconnects: Callable[[], int], ttl_s: float = 0.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.kv, self.ttl_s, self.clock = kv, ttl_s, clock
        self._swept = clock()
        self.reconnects = reconnects  # the connection's reconnect count: a change means begin again
        self.copies: dict[str, Copy] = {}
        self.stale: set[str] = set()  # keys whose last compare-and-set failed: read from the server
        self.live = False
        self._seen_reconnects = reconnects()
        self._task: asyncio.Task[None] | None = None
        self._watcher: KeyValue.KeyWatcher | None = None

    async def start(self) -> KvMirror:
        self._watcher = await self.kv.watchall()
        self._task = asyncio.create_task(self._follow(self._watcher))
        return self

    async def stop(self) -> None:
        """Ends the watch, which ends the task following it (no cancellation to lose in the client)."""
        if self._watcher is not None:
            with contextlib.suppress(Exception):
                await self._watcher.stop()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task

    async def _follow(self, watcher: KeyValue.KeyWatcher) -> None:
        async for entry in watcher:
            if entry is None:  # every value the bucket held when the watch began is in
                self.live = True
                continue
            gone = entry.operation in (KV_DEL, KV_PURGE)
            at = _epoch(entry.created, self.clock())
            self._keep(entry.key, Copy(None if gone else entry.value, int(entry.revision or 0), at))

    def _keep(self, key: str, copy: Copy) -> None:
        known = self.copies.get(key)
        if known is None or copy.revision > known.revision:
            self.copies[key] = copy
            self.stale.discard(key)

    async def _begin_again(self) -> None:
        self.live = False
        self.copies.clear()
        await self.stop()
        await self.start()

    def _sweep(self) -> None:
        """Drop the copies the bucket's TTL has aged out on the server (at most every tenth of the TTL)."""
        now = self.clock()
        if not self.ttl_s or now - self._swept < self.ttl_s / 10:
            return
        self._swept = now
        for key in [k for k, c in self.copies.items() if now - c.at > self.ttl_s]:
            del self.copies[key]

    async def read(self, key: str) -> Copy:
        self._sweep()
        if self.reconnects() != self._seen_reconnects:
            self._seen_reconnects = self.reconnects()
            await self._begin_again()
        if self.live and key not in self.stale:
            return self.copies.get(key, ABSENT)  # the watch delivers every key there is
        try:
            entry = await self.kv.get(key)
        except KeyNotFoundError:
            fetched = ABSENT
        else:
            at = _epoch(entry.created, self.clock())
            fetched = Copy(entry.value, int(entry.revision or 0), at)
        self.stale.discard(key)
        if fetched.revision:
            self._keep(key, fetched)
        return fetched

    async def write(self, key: str, value: bytes, revision: int) -> bool:
        """Compare-and-set against `revision` (0: the key must not exist yet); False when another writer
        got there first, and the next read of this key goes to the server."""
        try:
            if revision:
                written = await self.kv.update(key, value, last=revision)
            else:
                written = await self.kv.create(key, value)
        except KeyWrongLastSequenceError:
            self.stale.add(key)
            return False
        self._keep(key, Copy(value, int(written), self.clock()))
        return True


def _epoch(created: object, default: float) -> float:
    """When the server stored an entry (the client gives a datetime for watched entries only)."""
    return created.timestamp() if isinstance(created, datetime) else default
