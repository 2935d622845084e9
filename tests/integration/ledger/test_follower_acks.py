"""The follower on a real JetStream acknowledges only what it means to: all deliveries up to one, every
quarter of what the server may have out. nats-py acknowledges every delivery after its callback unless told
not to, which doubled the messages each event costs the ledger and the server."""

from __future__ import annotations

from nats.js import api as js_api

from services.ledger.follower import Follower
from shared import bus, subjects


async def publish(nc: bus.NATS, count: int) -> None:
    js = nc.jetstream()
    for _ in range(count):
        await js.publish("bench.ev.test", b"{}", stream=subjects.EVENTS_STREAM)


async def handed_out(follower: Follower, count: int) -> list[int]:
    seen: list[int] = []
    while len(seen) < count:
        seen += [seq for seq, _ in await follower.next_batch()]
    return seen


async def consumer(nc: bus.NATS) -> js_api.ConsumerInfo:
    infos = await nc.jsm().consumers_info(subjects.EVENTS_STREAM)
    ours = [info for info in infos if info.config.filter_subject == subjects.EVENTS_ALL]
    assert len(ours) == 1
    return ours[0]


async def test_deliveries_are_acknowledged_together_not_one_by_one(nc: bus.NATS) -> None:
    follower = Follower(nc.jetstream(), batch_max=40)  # up to 80 out; all acknowledged at every 20th
    await follower.start(1)
    try:
        await publish(nc, 3)
        assert await handed_out(follower, 3) == [1, 2, 3]
        info = await consumer(nc)  # asked on the connection that would have sent any acknowledgement first
        assert info.num_ack_pending == 3
        assert info.ack_floor is not None and (info.ack_floor.consumer_seq or 0) == 0

        await publish(nc, 20)
        assert await handed_out(follower, 20) == list(range(4, 24))
        info = await consumer(nc)
        assert info.ack_floor is not None and info.ack_floor.consumer_seq == 20
        assert info.num_ack_pending == 3
    finally:
        await follower.stop()
