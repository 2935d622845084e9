"""Both `Records` over a real bucket, logged in as the prober: the same compare-and-set contract whether
reads go to the server (`BucketRecords`) or to the process's copy (`MirrorRecords`, the onboarding queue)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from services.prober.job_lease import BucketRecords, MirrorRecords, Records
from shared import bus, subjects
from shared.natsserver import NatsServer


@pytest.fixture(params=["bucket", "mirror"])
async def records(
    request: pytest.FixtureRequest, nats_server: NatsServer, nc: bus.NATS
) -> AsyncIterator[Records]:
    prober = await bus.connect(nats_server.url, "test-prober", nats_server.login("prober"))
    opened: Records
    if request.param == "bucket":
        opened = BucketRecords(prober.jetstream(), subjects.ONBOARD_BUCKET)
    else:
        opened = await MirrorRecords.open(prober, subjects.ONBOARD_BUCKET)
    try:
        yield opened
    finally:
        if isinstance(opened, MirrorRecords):
            await opened.close()
        await prober.close()


async def test_create_then_compare_and_set(records: Records) -> None:
    assert await records.get("queue") is None
    first = await records.put("queue", b"one", None)
    assert first is not None
    assert await records.put("queue", b"again", None) is None  # must not exist yet
    assert await records.get("queue") == (b"one", first)
    second = await records.put("queue", b"two", first)
    assert second is not None and second > first
    assert await records.put("queue", b"stale", first) is None  # another writer came first
    assert await records.get("queue") == (b"two", second)


async def test_a_write_by_another_process_is_seen(records: Records, nc: bus.NATS) -> None:
    """The mirror's copy follows the bucket: a replica reads what another replica wrote."""
    other = BucketRecords(nc.jetstream(), subjects.ONBOARD_BUCKET)
    written = await other.put("queue", b"from-elsewhere", None)
    assert written is not None
    end = asyncio.get_running_loop().time() + 10
    while await records.get("queue") != (b"from-elsewhere", written):  # the watch brings it in moments
        assert asyncio.get_running_loop().time() < end, "the write was never seen"
        await asyncio.sleep(0.01)
    assert await records.put("queue", b"mine", written) is not None

