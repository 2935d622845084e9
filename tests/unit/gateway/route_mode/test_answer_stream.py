"""The streamed route answer's writes: what is already queued goes out together (the end included), the
format's opening goes with the first bytes, and a keep-alive follows the opening after a silence."""

from __future__ import annotations

import asyncio
from typing import Any

from services.gateway.route_mode.answer import stream_turn
from services.gateway.route_mode.assemble import Chunk, TurnSummary
from services.gateway.route_mode.prepared import Done, Pieces, TurnRun


class Encoder:
    """Writes each piece's text, so the writes show how pieces were grouped."""

    def start(self) -> bytes:
        return b"<start>"

    def chunk(self, chunk: Chunk) -> bytes:
        return str(chunk.get("t", "")).encode()

    def keepalive(self) -> bytes:
        return b"<ka>"

    def finish(self, summary: TurnSummary, bench: dict[str, Any]) -> bytes:
        return b"<end>"

    def error(self, status: int, message: str) -> bytes:
        return b"<error>"


SUMMARY = TurnSummary(text="abc", reasoning="", tool_calls=(), finish_reason="stop", usage=None)


async def writes(run: TurnRun, first: Pieces | None, keepalive_s: float = 60.0) -> list[bytes]:
    return [w async for w in stream_turn(Encoder(), run, first, keepalive_s)]  # type: ignore[arg-type]


async def test_pieces_and_the_end_already_queued_go_out_in_one_write_with_the_opening() -> None:
    run = TurnRun()
    for text in ("b", "c"):
        run.put(Pieces([{"t": text}], "m"))
    run.put(Done(SUMMARY, {}, "m"))
    assert await writes(run, Pieces([{"t": "a"}], "m")) == [b"<start>abc<end>"]


async def test_pieces_go_out_without_waiting_for_an_end_not_queued_yet() -> None:
    run = TurnRun()
    run.put(Pieces([{"t": "b"}], "m"))

    async def later() -> None:
        await asyncio.sleep(0.01)
        run.put(Done(SUMMARY, {}, "m"))

    ending = asyncio.create_task(later())
    assert await writes(run, Pieces([{"t": "a"}], "m")) == [b"<start>ab", b"<end>"]
    await ending


async def test_a_piece_that_writes_nothing_still_sends_the_opening_with_the_end() -> None:
    run = TurnRun()
    run.put(Done(SUMMARY, {}, "m"))
    assert await writes(run, Pieces([{"t": ""}], "m")) == [b"<start><end>"]


async def test_after_a_grace_200_the_opening_comes_before_the_keepalive() -> None:
    run = TurnRun()
    run.put(Pieces([{"t": "a"}], "m"))
    run.put(Done(SUMMARY, {}, "m"))
    assert await writes(run, None) == [b"<start><ka>", b"a<end>"]
