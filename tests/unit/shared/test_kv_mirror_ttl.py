"""The KV mirror forgets copies a bucket's TTL has aged out on the server (no I/O: a bucket stand-in)."""

from __future__ import annotations

from shared.kv_mirror import ABSENT, KvMirror


class Bucket:
    """Compare-and-set writes with revisions, as the server keeps them."""

    def __init__(self) -> None:
        self.revision = 0

    async def create(self, key: str, value: bytes) -> int:
        self.revision += 1
        return self.revision

    async def update(self, key: str, value: bytes, last: int) -> int:
        self.revision += 1
        return self.revision


async def test_a_copy_older_than_the_ttl_is_dropped() -> None:
    now = [1000.0]
    mirror = KvMirror(Bucket(), lambda: 0, ttl_s=3600, clock=lambda: now[0])  # type: ignore[arg-type]
    mirror.live = True  # as once the watch has delivered the bucket
    assert await mirror.write("c.old", b"v", 0)
    now[0] += 1800
    assert await mirror.write("c.new", b"w", 0)
    assert (await mirror.read("c.old")).value == b"v"
    now[0] += 1801  # c.old is past the TTL, c.new is not
    assert await mirror.read("c.old") == ABSENT
    assert (await mirror.read("c.new")).value == b"w"
