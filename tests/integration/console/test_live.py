"""The dashboard's live feed on a real bus: a page's stream hears the events published after it opened,
never the stream's history, as one `change` frame per event naming its kind."""

from __future__ import annotations

import asyncio
import uuid

from services.console.dashboard.live import Live, frame
from shared import bus
from shared.events import CollectionRemoved, VerdictRecorded


async def test_a_page_hears_new_events_only(nc: bus.NATS) -> None:
    js = nc.jetstream()
    history = CollectionRemoved(id=f"cfg:{uuid.uuid4().hex}", name="before")
    await bus.publish_event(js, history)  # a config event from before the page opened
    hub = Live(js)
    left = asyncio.Event()
    stream = hub.stream(left.is_set)
    try:
        assert await anext(stream) == "retry: 3000\n\n"  # subscribed by now
        news = VerdictRecorded(id=f"vd:{uuid.uuid4().hex}", call="p20260101-120000-ab12.member1", alias="a",
                               useful=True)
        await bus.publish_event(js, news)
        assert await asyncio.wait_for(anext(stream), 10) == frame("verdict")  # not `config`: no history
        left.set()
        try:
            await asyncio.wait_for(anext(stream), 10)
        except StopAsyncIteration:
            pass
        else:
            raise AssertionError("the stream went on after its page left")
    finally:
        await hub.close()


async def test_a_page_read_before_an_event_catches_up_once_its_feed_opens(nc: bus.NATS) -> None:
    js = nc.jetstream()
    hub = Live(js)
    read_at = await hub.position()  # the page is read here ...
    await bus.publish_event(js, CollectionRemoved(id=f"cfg:{uuid.uuid4().hex}", name="between"))
    left = asyncio.Event()
    now = await hub.position()
    late, current = hub.stream(left.is_set, since=read_at), hub.stream(left.is_set, since=now)
    try:
        assert await anext(late) == "retry: 3000\n\n"  # ... and its feed opens after the event
        assert await asyncio.wait_for(anext(late), 10) == frame("catch-up")
        assert await anext(current) == "retry: 3000\n\n"
        news = VerdictRecorded(id=f"vd:{uuid.uuid4().hex}", call="p20260101-120000-ab12.member2", alias="a",
                               useful=True)
        await bus.publish_event(js, news)
        assert await asyncio.wait_for(anext(current), 10) == frame("verdict")  # no catch-up: nothing missed
    finally:
        left.set()
        await hub.close()
