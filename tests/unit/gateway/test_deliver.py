"""The streamed panel after its 200 (S-2..S-5, A-27): pieces in finish order, keep-alives, errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from services.gateway.deliver import stream_bytes
from services.gateway.formats import OPENAI_CHAT
from services.gateway.panel.merge import Merge
from services.gateway.panel.present import AllMode, MergedMode
from services.gateway.panel.progress import Failed, Finished, Landed, Seated, Update
from services.gateway.panel.text import FOOTER, bench_object, full_text, head, section
from services.gateway.updates import Updates
from tests.unit.factories import done, plan

ASK = OPENAI_CHAT.parse(
    {"model": "bench/core", "stream": True, "messages": [{"role": "user", "content": "q"}]}, {}
)


async def collect(updates: list[Update], first: Update | None) -> list[Any]:
    queue: Updates[Update] = Updates()
    for update in updates:
        queue.put(update)
    raw = b""
    async for chunk in stream_bytes(
        OPENAI_CHAT.encoder(ASK, "bench/core"), AllMode(), queue, first, 30.0
    ):
        raw += chunk
    frames: list[Any] = []
    for frame in raw.decode().split("\n\n"):
        if frame.startswith(":"):
            frames.append("keep-alive")
        elif frame == "data: [DONE]":
            frames.append("[DONE]")
        elif frame:
            frames.append(json.loads(frame[len("data: ") :]))
    return frames


def text_of(frames: list[Any]) -> str:
    return "".join(
        f["choices"][0]["delta"].get("content", "") for f in frames if isinstance(f, dict) and "choices" in f
    )


async def test_sections_come_in_finish_order_and_the_text_is_the_reply() -> None:
    p = plan(members=2, explorers=1)
    m1, m2, x1 = p.seats
    results = {
        x1.call: done(x1, answer="fast"),
        m2.call: done(m2, answer="middle"),
        m1.call: done(m1, answer="slow"),
    }
    updates: list[Update] = [
        Landed(x1, results[x1.call]),
        Landed(m2, results[m2.call]),
        Landed(m1, results[m1.call]),
        Finished(p, results),
    ]
    frames = await collect(updates, first=Seated(p))
    assert frames[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert frames[-1] == "[DONE]"
    final = frames[-2]
    assert final["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "stop"}
    assert final["bench"] == bench_object(p, results)
    text = text_of(frames)
    assert text.index("fast") < text.index("middle") < text.index("slow")
    # S-4: the plain reply's pieces, with the sections in finish order instead of seat order.
    in_finish_order = [x1, m2, m1]
    assert (
        text == head(p) + "".join("\n" + section(s, results[s.call]) for s in in_finish_order) + "\n" + FOOTER
    )
    assert len(text) == len(full_text(p, results))
    assert "keep-alive" not in frames


async def test_a_grace_200_is_followed_by_a_keepalive_then_the_heading() -> None:
    p = plan(members=1, explorers=0)
    (m1,) = p.seats
    results = {m1.call: done(m1)}
    frames = await collect([Seated(p), Landed(m1, results[m1.call]), Finished(p, results)], first=None)
    assert frames[0]["choices"][0]["delta"]["role"] == "assistant"
    assert frames[1] == "keep-alive"
    assert frames[2]["choices"][0]["delta"]["content"].startswith("Bench bench/core")


async def test_silence_brings_keepalives_until_the_next_update() -> None:
    p = plan(members=1, explorers=0)
    (m1,) = p.seats
    results = {m1.call: done(m1, answer="late answer")}
    queue: Updates[Update] = Updates()
    stream = stream_bytes(OPENAI_CHAT.encoder(ASK, "bench/core"), AllMode(), queue, Seated(p), 0.01)
    assert b'"role": "assistant"' in await anext(stream)
    assert b"Bench bench/core" in await anext(stream)
    assert await anext(stream) == b": keep-alive\n\n"
    assert await anext(stream) == b": keep-alive\n\n"
    queue.put(Landed(m1, results[m1.call]))
    queue.put(Finished(p, results))
    rest = b"".join([chunk async for chunk in stream])
    assert b"late answer" in rest
    assert rest.endswith(b"data: [DONE]\n\n")


async def test_an_error_after_the_200_is_written_into_the_stream() -> None:
    frames = await collect([Failed(503, "collection 'core' has no members")], first=None)
    assert frames[-2] == {
        "error": {"message": "collection 'core' has no members", "type": "bench_gateway", "code": 503}
    }
    assert frames[-1] == "[DONE]"


async def test_merged_mode_keeps_the_client_waiting_while_its_updates_write_nothing() -> None:
    """Keep-alives count silence on the wire: landed seats of a merged panel write nothing, so however
    often they land they must not hold the keep-alives back (S-3, S-4)."""
    p = plan(members=1, explorers=0)
    (m1,) = p.seats
    results = {m1.call: done(m1)}
    queue: Updates[Update] = Updates()

    async def land_often() -> None:
        while True:  # five times per keep-alive period
            queue.put(Landed(m1, results[m1.call]))
            await asyncio.sleep(0.01)

    feeder = asyncio.create_task(land_often())
    stream = stream_bytes(OPENAI_CHAT.encoder(ASK, "bench/core"), MergedMode(), queue, Seated(p), 0.05)
    try:
        assert b'"role": "assistant"' in await anext(stream)
        async with asyncio.timeout(5):
            assert await anext(stream) == b": keep-alive\n\n"
            assert await anext(stream) == b": keep-alive\n\n"
    finally:
        feeder.cancel()
    queue.put(Finished(p, results, Merge(note="no seat answered")))
    rest = b"".join([chunk async for chunk in stream])
    frames = [json.loads(f[len("data: ") :]) for f in rest.decode().split("\n\n") if f.startswith("data: {")]
    assert [f["choices"][0]["delta"].get("content", "")[:30] for f in frames] == [
        "_Merged reply unavailable: no ", ""
    ]
    assert frames[-1]["bench"]["note"] == "no seat answered"
