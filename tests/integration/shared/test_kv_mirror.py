"""The KV mirror against a real NATS server: another writer's values arrive by the watch, a stale copy only
fails a compare-and-set, and a reconnect begins the watch again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from nats.js.kv import KeyValue

from shared import bus, subjects
from shared.kv_mirror import ABSENT, KvMirror
from shared.natsserver import NatsServer


class CountingKv:
    """The bucket, counting the reads that went to the server."""

    def __init__(self, kv: KeyValue) -> None:
        self.kv, self.gets = kv, 0

    async def get(self, key: str) -> KeyValue.Entry:
        self.gets += 1
        return await self.kv.get(key)

    def __getattr__(self, name: str) -> object:
        return getattr(self.kv, name)


async def until(check: object, within: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not check():  # type: ignore[operator]
        assert loop.time() < end, "the condition never held"
        await asyncio.sleep(0.01)


@pytest.fixture
async def bucket(nc: bus.NATS) -> KeyValue:
    return await nc.jetstream().key_value(subjects.LIMITS_BUCKET)


@pytest.fixture
async def mirror(nc: bus.NATS, bucket: KeyValue) -> AsyncIterator[tuple[KvMirror, CountingKv]]:
    counting = CountingKv(bucket)
    mirror = await KvMirror(counting, lambda: int(nc.stats["reconnects"])).start()  # type: ignore[arg-type]
    await until(lambda: mirror.live)
    try:
        yield mirror, counting
    finally:
        await mirror.stop()


async def test_another_writers_value_is_read_without_a_round_trip(
    mirror: tuple[KvMirror, CountingKv], bucket: KeyValue
) -> None:
    view, counting = mirror
    assert await view.read("c.absent") == ABSENT and counting.gets == 0  # live: no key is no key
    revision = await bucket.put("c.other", b"theirs")
    await until(lambda: view.copies.get("c.other") is not None)
    copy = await view.read("c.other")
    assert (copy.value, copy.revision, counting.gets) == (b"theirs", revision, 0)


async def test_a_stale_copy_fails_the_write_and_the_next_read_goes_to_the_server(
    mirror: tuple[KvMirror, CountingKv], bucket: KeyValue
) -> None:
    view, counting = mirror
    assert await view.write("c.k", b"mine", 0)
    mine = await view.read("c.k")
    await bucket.update("c.k", b"theirs", last=mine.revision)  # written before our watch says so
    view.copies["c.k"] = mine  # the watch has not told us yet
    assert not await view.write("c.k", b"mine again", mine.revision)
    fresh = await view.read("c.k")
    assert fresh.value == b"theirs" and counting.gets == 1
    assert await view.write("c.k", b"mine again", fresh.revision)
    assert (await bucket.get("c.k")).value == b"mine again"


async def test_a_reconnect_begins_the_watch_again(nats_server: NatsServer, nc: bus.NATS) -> None:
    bucket = await nc.jetstream().key_value(subjects.LIMITS_BUCKET)
    view = await KvMirror(bucket, lambda: int(nc.stats["reconnects"])).start()
    try:
        await until(lambda: view.live)
        nats_server.restart()
        await until(lambda: nc.is_connected and nc.stats["reconnects"] > 0, 20.0)
        writer = await bus.connect(nats_server.url, "writer", nats_server.login("admin"))
        try:
            await (await writer.jetstream().key_value(subjects.LIMITS_BUCKET)).put("c.after", b"new")
        finally:
            await writer.close()
        assert (await view.read("c.after")).value == b"new"  # read from the server while the watch begins
        await until(lambda: view.live and "c.after" in view.copies)
    finally:
        await view.stop()
