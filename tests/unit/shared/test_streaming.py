"""The lean streamed reply: its body goes out as Starlette's would, in the request's own task; a last piece
goes with the end in one message; a client that leaves closes the stream, and a server cancelling the
request is not mistaken for the client leaving."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from starlette.types import Message

from shared.streaming import Last, LeanStreamingResponse

SCOPE = {"type": "http", "asgi": {"spec_version": "2.3"}, "method": "POST", "path": "/"}


class Client:
    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.gone = asyncio.Event()
        self.heard = asyncio.Event()  # some body went out

    async def receive(self) -> Message:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self.sent.append(message)
        if message.get("body"):
            self.heard.set()

    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")


async def test_the_body_goes_out_piece_by_piece_and_ends() -> None:
    async def pieces() -> AsyncIterator[bytes]:
        for piece in (b"data: 1\n\n", b"data: 2\n\n"):
            yield piece

    client = Client()
    reply = LeanStreamingResponse(pieces(), media_type="text/event-stream")
    await reply(SCOPE, client.receive, client.send)
    assert client.sent[0]["type"] == "http.response.start" and client.sent[0]["status"] == 200
    assert client.body() == b"data: 1\n\ndata: 2\n\n"
    assert client.sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


async def test_the_stream_runs_in_the_requests_own_task() -> None:
    tasks: list[asyncio.Task[object] | None] = []

    async def pieces() -> AsyncIterator[bytes]:
        tasks.append(asyncio.current_task())
        yield b"data: 1\n\n"

    client = Client()
    await LeanStreamingResponse(pieces())(SCOPE, client.receive, client.send)
    assert tasks == [asyncio.current_task()]


async def test_a_last_piece_goes_with_the_end_and_closes_the_stream() -> None:
    closed = asyncio.Event()

    async def pieces() -> AsyncIterator[bytes]:
        try:
            yield b"data: 1\n\n"
            yield Last(b"data: 2\n\n")
            yield b"data: never\n\n"
        finally:
            closed.set()

    client = Client()
    await LeanStreamingResponse(pieces())(SCOPE, client.receive, client.send)
    assert [m.get("more_body") for m in client.sent[1:]] == [True, False]
    assert client.sent[-1]["body"] == b"data: 2\n\n" and type(client.sent[-1]["body"]) is bytes
    assert client.body() == b"data: 1\n\ndata: 2\n\n"
    assert closed.is_set()


async def test_a_client_that_leaves_closes_the_stream() -> None:
    closed = asyncio.Event()

    async def endless() -> AsyncIterator[bytes]:
        try:
            while True:
                yield b"data: x\n\n"
                await asyncio.sleep(0.01)
        finally:
            closed.set()

    client = Client()
    reply = asyncio.ensure_future(LeanStreamingResponse(endless())(SCOPE, client.receive, client.send))
    await asyncio.wait_for(client.heard.wait(), 5)
    client.gone.set()
    await asyncio.wait_for(reply, 5)  # returns normally: a client leaving is not an error
    assert closed.is_set()
    assert reply.cancelling() == 0  # the cancellation the watcher caused was taken back


async def test_the_server_cancelling_the_request_is_still_a_cancellation() -> None:
    async def slow() -> AsyncIterator[bytes]:
        await asyncio.sleep(3600)
        yield b""

    client = Client()
    reply = asyncio.ensure_future(LeanStreamingResponse(slow())(SCOPE, client.receive, client.send))
    await asyncio.sleep(0.05)
    reply.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reply
