"""Waiting for the next item of a queue with a time limit, without the cost of `asyncio.wait_for`.

`wait_for` wraps every wait in a new task; hot loops (relay frames, seat answers, stream updates) wait once
per message, so an item already queued is taken at once and otherwise a plain timeout scope is used.
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

T = TypeVar("T")


async def next_within(queue: asyncio.Queue[T], seconds: float) -> T:
    """The queue's next item; TimeoutError when none comes within `seconds`."""
    if not queue.empty():
        return queue.get_nowait()
    if seconds <= 0:
        raise TimeoutError
    async with asyncio.timeout(seconds):
        return await queue.get()
