"""A reply's head waits for what follows it in the same loop turn and leaves with it in one write; alone, it
leaves at the end of that turn; nothing else waits, and nothing held is lost when the connection closes."""

from __future__ import annotations

import asyncio

from services.gateway.http_protocol import HeadWithBody

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"


class Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def get_write_buffer_size(self) -> int:
        return sum(map(len, self.writes))

    def get_extra_info(self, name: str) -> str:
        return f"info {name}"


def wrapped() -> tuple[Transport, HeadWithBody]:
    transport = Transport()
    return transport, HeadWithBody(transport, asyncio.get_running_loop())  # type: ignore[arg-type]


async def test_a_head_and_its_body_leave_in_one_write() -> None:
    transport, writes = wrapped()
    writes.write(HEAD)
    assert transport.writes == [] and writes.get_write_buffer_size() == len(HEAD)
    writes.write(b"{}")
    assert transport.writes == [HEAD + b"{}"]
    await asyncio.sleep(0)
    assert transport.writes == [HEAD + b"{}"]  # the end of the turn finds nothing more to send


async def test_a_head_alone_leaves_at_the_end_of_the_turn() -> None:
    transport, writes = wrapped()
    writes.write(HEAD)
    await asyncio.sleep(0)
    assert transport.writes == [HEAD]
    writes.write(b"data: 1\n\n")
    assert transport.writes == [HEAD, b"data: 1\n\n"]


async def test_an_interim_reply_and_other_writes_are_not_held() -> None:
    transport, writes = wrapped()
    writes.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    writes.write(b"5\r\nhello\r\n")
    assert transport.writes == [b"HTTP/1.1 100 Continue\r\n\r\n", b"5\r\nhello\r\n"]


async def test_closing_sends_the_held_head_first_and_aborting_drops_it() -> None:
    transport, writes = wrapped()
    writes.write(HEAD)
    writes.close()
    assert transport.writes == [HEAD] and transport.closed
    await asyncio.sleep(0)
    assert transport.writes == [HEAD]

    transport, writes = wrapped()
    writes.write(HEAD)
    writes.abort()
    await asyncio.sleep(0)
    assert transport.writes == [] and transport.aborted


async def test_everything_else_is_the_transports_own() -> None:
    _, writes = wrapped()
    assert writes.get_extra_info("peername") == "info peername"
