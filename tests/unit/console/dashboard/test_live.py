"""Live updates: each event on the stream becomes one `change` frame on every open page's stream, naming
the kind of event; a page that left ends its stream."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from services.console.dashboard.live import Live, frame, kind_of


@dataclass
class Msg:
    subject: str


def test_the_kind_is_the_subjects_third_word() -> None:
    assert [kind_of(s) for s in ("bench.ev.config", "bench.ev.seat.p1.member1", "odd")] == [
        "config", "seat", "odd"]
    assert frame("verdict") == "event: change\ndata: verdict\n\n"


async def test_every_page_hears_each_event_and_a_page_that_left_stops() -> None:
    hub = Live(js=None)  # type: ignore[arg-type]
    hub._sub = object()  # already subscribed: this test feeds the messages itself
    left = asyncio.Event()
    one, two = hub.stream(left.is_set), hub.stream(left.is_set)
    assert await anext(one) == await anext(two) == "retry: 3000\n\n"
    first, second = asyncio.ensure_future(anext(one)), asyncio.ensure_future(anext(two))
    await asyncio.sleep(0)
    await hub._heard(Msg("bench.ev.verdict.p1"))
    assert await first == await second == frame("verdict")
    left.set()
    for stream in (one, two):
        try:
            await anext(stream)
        except StopAsyncIteration:
            continue
        raise AssertionError("a stream went on after its page left")
    assert hub.pages == set()
