"""The `bench_limits` bucket: one key per connection, read with its revision and written only if nobody
wrote since (compare-and-set), so every caller replica takes from the same windows.

Reads come from this process's mirror of the bucket (a watch), so a call that nothing limits costs no
round trip; a write against a copy that was a moment behind fails and is decided again on a fresh read.
"""

from __future__ import annotations

import base64

from nats.aio.client import Client as NATS

from services.caller.pacing import Windows
from shared import subjects
from shared.kv_mirror import KvMirror


def key_of(connection: str) -> str:
    """KV keys allow only `[-/_=.a-zA-Z0-9]`: a connection name is encoded, not trusted."""
    return "c." + base64.urlsafe_b64encode(connection.encode()).decode().rstrip("=")


class WindowStore:
    def __init__(self, mirror: KvMirror) -> None:
        self.mirror = mirror

    @classmethod
    async def open(cls, nc: NATS) -> WindowStore:
        kv = await nc.jetstream().key_value(subjects.LIMITS_BUCKET)
        return cls(await KvMirror(kv, lambda: int(nc.stats["reconnects"])).start())

    async def close(self) -> None:
        await self.mirror.stop()

    async def read(self, connection: str) -> tuple[Windows, int]:
        """The document and its revision (0: no such key yet)."""
        copy = await self.mirror.read(key_of(connection))
        return Windows.from_json(copy.value), copy.revision

    async def write(self, connection: str, doc: Windows, revision: int) -> bool:
        """False when another caller wrote first: read again and decide again."""
        return await self.mirror.write(key_of(connection), doc.to_json(), revision)
