"""The `bench_limits` bucket: one key per connection, read with its revision and written only if nobody
wrote since (compare-and-set), so every caller replica takes from the same windows."""

from __future__ import annotations

import base64

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from services.caller.pacing import Windows
from shared import subjects


def key_of(connection: str) -> str:
    """KV keys allow only `[-/_=.a-zA-Z0-9]`: a connection name is encoded, not trusted."""
    return "c." + base64.urlsafe_b64encode(connection.encode()).decode().rstrip("=")


class WindowStore:
    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv

    @classmethod
    async def open(cls, js: JetStreamContext) -> WindowStore:
        return cls(await js.key_value(subjects.LIMITS_BUCKET))

    async def read(self, connection: str) -> tuple[Windows, int]:
        """The document and its revision (0: no such key yet)."""
        try:
            entry = await self.kv.get(key_of(connection))
        except KeyNotFoundError:
            return Windows(), 0
        return Windows.from_json(entry.value), int(entry.revision or 0)

    async def write(self, connection: str, doc: Windows, revision: int) -> bool:
        """False when another caller wrote first: read again and decide again."""
        try:
            if revision:
                await self.kv.update(key_of(connection), doc.to_json(), last=revision)
            else:
                await self.kv.create(key_of(connection), doc.to_json())
        except KeyWrongLastSequenceError:
            return False
        return True
