"""The conversation table (RM-4) in the `bench_conversations` KV bucket, shared by every gateway replica.

A conversation's next turn may land on any replica, or on one started after a restart, and still find its
model. Writes are compare-and-set on the entry's revision: two replicas opening the same new conversation
at once agree on one id (the loser adopts the winner's record), and two turns of one conversation that end
at once are both counted. The bucket's TTL (one hour) expires an entry nobody rewrote: every turn rewrites.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

import structlog
from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue
from pydantic import ValidationError

from services.gateway.route.conversation import Conversation, live
from shared import subjects

log = structlog.get_logger("gateway.route")

WRITE_TRIES = 50


class ConversationStore:
    def __init__(self, js: JetStreamContext) -> None:
        self.js = js
        self._kv: KeyValue | None = None

    async def kv(self) -> KeyValue:
        if self._kv is None:
            self._kv = await self.js.key_value(subjects.CONVERSATIONS_BUCKET)
        return self._kv

    async def read(self, key: str) -> tuple[Conversation | None, int]:
        """The record under `key` and its revision (0 when there is none)."""
        kv = await self.kv()
        try:
            entry = await kv.get(key)
        except KeyNotFoundError:
            return None, 0
        try:
            return Conversation.from_json(entry.value or b""), entry.revision or 0
        except ValidationError:  # a record of another schema: the conversation starts afresh
            log.warning("conversation_unreadable", key=key)
            return None, entry.revision or 0

    async def _write(self, key: str, record: Conversation, revision: int) -> bool:
        """Compare-and-set: False when the entry changed since `revision` was read."""
        kv = await self.kv()
        try:
            if revision:
                await kv.update(key, record.to_json(), last=revision)
            else:
                await kv.create(key, record.to_json())
        except KeyWrongLastSequenceError:
            return False
        return True

    async def open(
        self, key: str, fresh: Callable[[], Awaitable[Conversation]], now: datetime, revision: int
    ) -> Conversation:
        """A new conversation under `key`, unless another turn opened a live one first: then that one.
        `revision` is that of the (lapsed or absent) record the caller read."""
        record = await fresh()
        for _ in range(WRITE_TRIES):
            if await self._write(key, record, revision):
                return record
            current, revision = await self.read(key)
            found = live(current, now)
            if found is not None:
                return found
        raise RuntimeError("bench_conversations: no write won after many tries")

    async def close_turn(
        self, key: str, opened: Conversation, apply: Callable[[Conversation], Conversation]
    ) -> tuple[Conversation, Conversation]:
        """Apply one turn's outcome to the latest record of the conversation: (before, after). A record that
        expired meanwhile is written back from the turn's own view; one that a newer conversation replaced
        is left alone."""
        for _ in range(WRITE_TRIES):
            current, revision = await self.read(key)
            if current is not None and current.id != opened.id:
                return opened, apply(opened)
            before = current or opened
            after = apply(before)
            if await self._write(key, after, revision):
                return before, after
        raise RuntimeError("bench_conversations: no write won after many tries")
