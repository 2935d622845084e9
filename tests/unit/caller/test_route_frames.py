"""The frames of one relay: the first piece leaves at once, later chunks leave together when the reading
task waits, the end carries what is still held, and the numbers run without a gap."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from services.caller.route_relay import Frames
from shared.commands import RelayOutcome
from tests.unit.fake_bus import FakeBus

RELAY = "bench.relay.gw.abc"


def sent(bus: FakeBus) -> list[dict[str, Any]]:
    assert {subject for subject, _ in bus.published} <= {RELAY}
    return [json.loads(payload) for _, payload in bus.published]


def chunk(content: str | None = None, role: str | None = None) -> dict[str, Any]:
    delta = {k: v for k, v in {"role": role, "content": content}.items() if v is not None}
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}


def kinds(frames: list[dict[str, Any]]) -> list[tuple[int, str, list[str]]]:
    return [(f["seq"], f["kind"], [c["choices"][0]["delta"].get("content", "") for c in f["chunks"]])
            for f in frames]


async def test_the_first_piece_leaves_at_once_and_the_rest_of_a_read_in_one_frame() -> None:
    nc = FakeBus()
    frames = Frames(nc, RELAY)
    await frames.chunk(chunk(role="assistant"))
    await frames.chunk(chunk("He"))
    assert kinds(sent(nc)) == [(0, "chunks", ["", "He"])]  # before any other task ran
    for piece in ("llo", " there", "!"):  # one read's worth: no wait between them
        await frames.chunk(chunk(piece))
    assert len(sent(nc)) == 1
    await asyncio.sleep(0)  # the reading task waits for the next read
    assert kinds(sent(nc))[1:] == [(1, "chunks", ["llo", " there", "!"])]


async def test_the_end_carries_the_chunks_still_held_before_its_outcome() -> None:
    nc = FakeBus()
    frames = Frames(nc, RELAY)
    await frames.chunk(chunk("Hi"))
    await frames.chunk(chunk(" you"))
    await frames.end(RelayOutcome(status="ok"))
    await asyncio.sleep(0)  # the send scheduled for " you" finds nothing left
    assert kinds(sent(nc)) == [(0, "chunks", ["Hi"]), (1, "end", [" you"])]
    assert sent(nc)[1]["outcome"]["status"] == "ok"


async def test_chunks_without_a_piece_wait_for_the_read_to_end_too() -> None:
    nc = FakeBus()
    frames = Frames(nc, RELAY)
    await frames.chunk(chunk(role="assistant"))
    assert sent(nc) == []
    await asyncio.sleep(0)
    assert kinds(sent(nc)) == [(0, "chunks", [""])]
    await frames.end(RelayOutcome(status="error", error="HTTP 500"))
    assert kinds(sent(nc))[1:] == [(1, "fail", [])]


async def test_once_the_reply_is_read_to_its_end_what_is_held_goes_with_the_end() -> None:
    nc = FakeBus()
    frames = Frames(nc, RELAY)
    await frames.chunk(chunk("Hi"))
    await frames.chunk(chunk(" you"))  # a send is scheduled for the next wait
    frames.last_read()
    await frames.chunk(chunk("!"))
    await asyncio.sleep(0)  # the reading task tears the request down: the scheduled send does not go
    assert kinds(sent(nc)) == [(0, "chunks", ["Hi"])]
    await frames.end(RelayOutcome(status="ok"))
    assert kinds(sent(nc)) == [(0, "chunks", ["Hi"]), (1, "end", [" you", "!"])]
