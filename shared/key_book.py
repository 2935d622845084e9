"""The `bench_key_rates` bucket: each key's request window, shared by every gateway replica through
compare-and-set (two replicas never both take the last slot), and when each key was last used."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue
from starlette.datastructures import State

from shared import key_window as window
from shared import subjects
from shared.access import Caller

ATTEMPTS = 50
TOUCH_EVERY_S = 60.0


def generation(key_id: str) -> str:
    """The id of the event that made the key, as a KV key token: a key re-made under the same name starts
    with an empty window."""
    return "".join(ch for ch in key_id.split(":")[-1] if ch.isalnum())[:32] or "0"


def rate_key(caller: Caller) -> str:
    return f"rate.{caller.name}.{generation(caller.key_id)}"


def used_key(name: str) -> str:
    return f"used.{name}"


class KeyBook:
    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv
        self._touched: dict[str, float] = {}

    @classmethod
    async def open(cls, js: JetStreamContext) -> KeyBook:
        return cls(await js.key_value(subjects.KEY_RATES_BUCKET))

    async def take(self, caller: Caller) -> int | None:
        """Count one request against the key's rpm; the seconds to wait when its minute is full, else None."""
        assert caller.rpm
        key = rate_key(caller)
        for _ in range(ATTEMPTS):
            try:
                entry = await self.kv.get(key)
                stamps, revision = window.decode(entry.value), int(entry.revision or 0)
            except KeyNotFoundError:
                stamps, revision = [], 0
            taken = window.take(stamps, caller.rpm, int(time.time() * 1000))
            if taken.retry_after is not None:
                return taken.retry_after
            try:
                if revision:
                    await self.kv.update(key, window.encode(taken.stamps), last=revision)
                else:
                    await self.kv.create(key, window.encode(taken.stamps))
            except KeyWrongLastSequenceError:
                await asyncio.sleep(0)
                continue
            return None
        raise RuntimeError(f"the rate window of key {caller.name} kept changing")

    async def touch(self, name: str) -> None:
        """Record a use, at most once a minute per replica (SEC-4 `last_used`)."""
        now = time.monotonic()
        if now - self._touched.get(name, -TOUCH_EVERY_S) < TOUCH_EVERY_S:
            return
        self._touched[name] = now
        await self.kv.put(used_key(name), datetime.now(UTC).isoformat().encode())

    async def last_used(self, name: str) -> str | None:
        try:
            entry = await self.kv.get(used_key(name))
        except KeyNotFoundError:
            return None
        return entry.value.decode() if entry.value else None

    async def forget(self, name: str) -> None:
        """A revoked key's last use goes with it (a new key of that name starts unused)."""
        self._touched.pop(name, None)
        try:
            await self.kv.delete(used_key(name))
        except KeyNotFoundError:
            pass


async def key_book(state: State, js: Any) -> KeyBook:
    """The process's one book, opened on first use and kept on the app's state."""
    book = getattr(state, "key_book", None)
    if book is None:
        book = await KeyBook.open(js)
        state.key_book = book
    return book
