"""A streamed reply without an anyio task group per response.

uvicorn speaks ASGI 2.3, so Starlette's `StreamingResponse` opens a task group for every stream to notice
a client that goes away; on the route path that showed as a slice of each turn's time to first byte. A
plain task watching `receive` does the same job: when the client leaves, the stream's task is cancelled
(its generator closed), exactly as Starlette would.
"""

from __future__ import annotations

import asyncio
import contextlib

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send


class LeanStreamingResponse(StreamingResponse):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stream = asyncio.ensure_future(self.stream_response(send))
        left = asyncio.Event()

        async def watch() -> None:
            await self.listen_for_disconnect(receive)
            left.set()
            stream.cancel()

        watcher = asyncio.ensure_future(watch())
        try:
            await stream
        except asyncio.CancelledError:
            if not left.is_set():  # we were cancelled ourselves, not the client leaving
                raise
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        if self.background is not None:
            await self.background()
