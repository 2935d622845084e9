"""How a run in flight (a panel, a route turn) tells the request that waits on it what happened: `Updates`
in order, the last of which ends the run; `Failed` is how every reply mode says it failed (before the 200:
its status; after it, the error the stream ends with)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Generic, TypeVar

from shared.waiting import next_within

T = TypeVar("T")


@dataclass(frozen=True)
class Failed:
    status: int
    message: str


class Updates(Generic[T]):
    """What one run in flight has told so far, in order, for the request that waits on it."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[T] = asyncio.Queue()

    def put(self, update: T) -> None:
        self._queue.put_nowait(update)

    async def next(self) -> T:
        return await self._queue.get()

    def take_nowait(self) -> T | None:
        """The next update if one is queued already, else None."""
        return None if self._queue.empty() else self._queue.get_nowait()

    async def next_within(self, seconds: float) -> T:
        """The next update; TimeoutError when none comes within `seconds`."""
        return await next_within(self._queue, seconds)
