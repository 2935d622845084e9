"""The dashboard's live feed on a real bus: a page's stream hears the events published after it opened,
never the stream's history, as one `change` frame per event naming its kind."""

from __future__ import annotations

import asyncio
import uuid

from services.gateway.dashboard.live import Live, frame
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
