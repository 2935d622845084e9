"""The follower's batching: one message starts a batch, more gather while it lingers, a reader cuts it
short."""

from __future__ import annotations

import asyncio

from services.ledger.follower import Follower


def follower() -> Follower:
    return Follower(js=None, batch_max=10)  # type: ignore[arg-type]  # the queue is all these tests use


async def test_without_linger_a_batch_is_what_has_already_arrived() -> None:
    f = follower()
    for seq in (1, 2, 3):
        f._queue.put_nowait((seq, b"x"))
    assert [s for s, _ in await f.next_batch()] == [1, 2, 3]


async def test_lingering_gathers_later_messages_until_a_reader_is_waiting() -> None:
    f = follower()
    urgent = asyncio.Event()
    f._queue.put_nowait((1, b"x"))
    batch = asyncio.create_task(f.next_batch(linger_s=3600, urgent=urgent))
    await asyncio.sleep(0)  # the batch has taken message 1 and waits for more
    await f._queue.put((2, b"x"))
    await f._queue.put((3, b"x"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not batch.done()  # still lingering: nobody is waiting on the fold
    urgent.set()
    assert [s for s, _ in await asyncio.wait_for(batch, 5)] == [1, 2, 3]
    assert f._queue.empty()


async def test_a_full_batch_does_not_linger() -> None:
    f = Follower(js=None, batch_max=2)  # type: ignore[arg-type]
    for seq in (1, 2):
        f._queue.put_nowait((seq, b"x"))
    batch = await asyncio.wait_for(f.next_batch(linger_s=3600, urgent=asyncio.Event()), 5)
    assert [s for s, _ in batch] == [1, 2]
