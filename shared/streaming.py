"""A streamed reply without an anyio task group per response, and with as few writes as it can.

uvicorn speaks ASGI 2.3, so Starlette's `StreamingResponse` opens a task group for every stream to notice
a client that goes away; on the route path that showed as a slice of each turn's time to first byte. Here
the stream runs in the request's own task (no task to start, no loop turn before the headers), and a small
watcher of `receive` cancels that task when the client leaves, closing the generator exactly as Starlette
would.

Every ASGI body message is one write to the socket (uvloop writes at once, it does not gather), and each
write wakes the client. A generator that knows its last piece yields it as `Last`: it goes out with the
end of the response in one write, instead of the piece and then the end.
"""

from __future__ import annotations

import asyncio

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send


class Last(bytes):
    """The stream's last piece: sent with the response's end, and nothing of the stream is read after it."""


class LeanStreamingResponse(StreamingResponse):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        task = asyncio.current_task()
        assert task is not None
        left = False

        async def watch() -> None:
            nonlocal left
            await self.listen_for_disconnect(receive)
            left = True
            task.cancel()

        watcher = asyncio.ensure_future(watch())
        try:
            await self.stream_response(send)
        except asyncio.CancelledError:
            if not left:  # we were cancelled ourselves, not by the client leaving
                raise
            task.uncancel()
        finally:
            watcher.cancel()  # not awaited: a watcher cancelled before it ran does nothing
        if self.background is not None:
            await self.background()

    async def stream_response(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        async for chunk in self.body_iterator:
            if not isinstance(chunk, bytes | memoryview):
                chunk = chunk.encode(self.charset)
            if isinstance(chunk, Last):
                await send({"type": "http.response.body", "body": bytes(chunk), "more_body": False})
                close = getattr(self.body_iterator, "aclose", None)
                if close is not None:  # the generator's own `finally` runs now, not when it is collected
                    await close()
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
