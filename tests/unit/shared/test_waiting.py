"""`next_within`: a queued item at once, a later one when it comes, a TimeoutError when none does."""

from __future__ import annotations

import asyncio

import pytest

from shared.waiting import next_within


async def test_a_queued_item_is_taken_even_with_no_time_left() -> None:
    queue: asyncio.Queue[int] = asyncio.Queue()
    queue.put_nowait(1)
    assert await next_within(queue, 0) == 1


async def test_an_item_put_while_waiting_is_returned() -> None:
    queue: asyncio.Queue[int] = asyncio.Queue()
    asyncio.get_running_loop().call_soon(queue.put_nowait, 2)
    assert await next_within(queue, 5) == 2


async def test_no_item_in_time_raises_timeout_and_leaves_the_queue_usable() -> None:
    queue: asyncio.Queue[int] = asyncio.Queue()
    with pytest.raises(TimeoutError):
        await next_within(queue, 0.01)
    with pytest.raises(TimeoutError):
        await next_within(queue, 0)
    queue.put_nowait(3)
    assert await next_within(queue, 0) == 3
