"""The conversation table (RM-4) in the `bench_conversations` KV bucket, shared by every gateway replica.

A conversation's next turn may land on any replica, or on one started after a restart, and still find its
model. Writes are compare-and-set on the entry's revision: two replicas opening the same new conversation
at once agree on one id (the loser adopts the winner's record), and two turns of one conversation that end
at once are both counted. The bucket's TTL (one hour) expires an entry nobody rewrote: every turn rewrites.
A turn reads the record from this replica's mirror of the bucket (a watch), not from the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime

import structlog
from nats.aio.client import Client as NATS
from nats.js.kv import KeyValue
from pydantic import ValidationError

from services.gateway.route_mode.conversation import Conversation, live
from shared import subjects
from shared.bus import CONVERSATIONS_TTL_S
from shared.kv_mirror import KvMirror

log = structlog.get_logger("gateway.route")

WRITE_TRIES = 50


class ConversationStore:
    def __init__(self, nc: NATS) -> None:
        self.nc = nc
        self._mirror: KvMirror | None = None
        self._opening = asyncio.Lock()
        # The conversations whose turn is being written (see `close_turn`), and the record each write will
        # most likely leave: a read of one answers with that record, or waits for the write without one.
        self._closing: dict[str, asyncio.Future[None]] = {}
        self._foreseen: dict[str, Conversation] = {}

    async def mirror(self) -> KvMirror:
        if self._mirror is not None:  # every turn after the first: no lock to take
            return self._mirror
        async with self._opening:
            if self._mirror is None:
                kv = await self.nc.jetstream().key_value(subjects.CONVERSATIONS_BUCKET)
                reconnects = lambda: int(self.nc.stats["reconnects"])  # noqa: E731
                self._mirror = await KvMirror(kv, reconnects, CONVERSATIONS_TTL_S).start()
        return self._mirror

    async def kv(self) -> KeyValue:
        return (await self.mirror()).kv

    async def close(self) -> None:
        if self._mirror is not None:
            await self._mirror.stop()

    async def read(self, key: str) -> tuple[Conversation | None, int]:
        """The record under `key` and its revision (0 when there is none). While a turn of it is being
        written here (a client's next turn may come before the write is done), the record that write will
        leave, without waiting on the bus; for a write without a foreseen record, once it is done."""
        foreseen = self._foreseen.get(key)
        if foreseen is not None:
            _, revision = await self._read(key)
            return foreseen, revision
        closing = self._closing.get(key)
        if closing is not None:
            await asyncio.shield(closing)
        return await self._read(key)

    async def _read(self, key: str) -> tuple[Conversation | None, int]:
        copy = await (await self.mirror()).read(key)
        if copy.value is None:
            return None, copy.revision
        try:
            return Conversation.from_json(copy.value), copy.revision
        except ValidationError:  # a record of another schema: the conversation starts afresh
            log.warning("conversation_unreadable", key=key)
            return None, copy.revision

    async def _write(self, key: str, record: Conversation, revision: int) -> bool:
        """Compare-and-set: False when the entry changed since `revision` was read."""
        return await (await self.mirror()).write(key, record.to_json(), revision)

    async def open(
        self, key: str, fresh: Callable[[], Awaitable[Conversation]], now: datetime, revision: int
    ) -> Conversation:
        """A new conversation under `key`, unless another turn opened a live one first: then that one.
        `revision` is that of the (lapsed or absent) record the caller read."""
        record = await fresh()
        for _ in range(WRITE_TRIES):
            if await self._write(key, record, revision):
                return record
            current, revision = await self._read(key)
            found = live(current, now)
            if found is not None:
                return found
        raise RuntimeError("bench_conversations: no write won after many tries")

    async def foresee(
        self, key: str, opened: Conversation, apply: Callable[[Conversation], Conversation]
    ) -> Conversation:
        """What `close_turn` will most likely write, read from this replica's copy (no round trip): the
        client's end can go out before the write. Another turn of the conversation ending at the same
        moment elsewhere makes the written record differ (its turn count by one); the record stays right."""
        current, _ = await self.read(key)
        return apply(opened if current is None or current.id != opened.id else current)

    async def close_turn(
        self, key: str, opened: Conversation, apply: Callable[[Conversation], Conversation],
        foreseen: Conversation | None = None,
    ) -> tuple[Conversation, Conversation]:
        """Apply one turn's outcome to the latest record of the conversation: (before, after). A record that
        expired meanwhile is written back from the turn's own view; one that a newer conversation replaced
        is left alone. Until it is written, this replica's reads of `key` get `foreseen` (what `foresee`
        said the write will leave), or wait for the write when there is none: a client that had the end of
        its turn sends its next turn to a record that knows the last one. Its next turn does not wait on
        the bus for the write: at 32 concurrent conversations that wait was most of route mode's overhead."""
        previous = self._closing.get(key)
        closing = self._closing[key] = asyncio.get_running_loop().create_future()
        if foreseen is not None:
            self._foreseen[key] = foreseen
        else:
            self._foreseen.pop(key, None)
        try:
            if previous is not None:
                await asyncio.shield(previous)
            return await self._close_turn(key, opened, apply)
        finally:
            closing.set_result(None)
            if self._closing.get(key) is closing:
                del self._closing[key]
                self._foreseen.pop(key, None)

    async def _close_turn(
        self, key: str, opened: Conversation, apply: Callable[[Conversation], Conversation]
    ) -> tuple[Conversation, Conversation]:
        for _ in range(WRITE_TRIES):
            current, revision = await self._read(key)
            if current is not None and current.id != opened.id:
                return opened, apply(opened)
            before = current or opened
            after = apply(before)
            if await self._write(key, after, revision):
                return before, after
        raise RuntimeError("bench_conversations: no write won after many tries")
