"""The follower's batching: one message starts a batch, more gather while it lingers, a reader cuts it
short."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from nats.js import api as js_api

from services.ledger.follower import Follower


class Stream:
    """Stands in for JetStream: the start of every consumer made."""

    def __init__(self) -> None:
        self.starts: list[int | None] = []
        self.configs: list[js_api.ConsumerConfig] = []
        self.manual_ack: list[bool] = []

    async def subscribe(
        self, subject: str, *, stream: str | None = None, cb: Any = None,
        config: js_api.ConsumerConfig | None = None, idle_heartbeat: float | None = None,
        flow_control: bool = False, manual_ack: bool = False,
    ) -> Any:
        assert config is not None
        self.starts.append(config.opt_start_seq)
        self.manual_ack.append(manual_ack)
        self.configs.append(config)
        return SimpleNamespace(unsubscribe=self.nothing, consumer_info=self.nothing)

    async def nothing(self) -> None:
        return None


def follower() -> Follower:
    return Follower(js=Stream(), batch_max=10)


def delivered(consumer: int, stream: int, acks: list[int] | None = None) -> Any:
    sequence = SimpleNamespace(consumer=consumer, stream=stream)

    async def ack() -> None:
        if acks is not None:
            acks.append(consumer)

    return SimpleNamespace(metadata=SimpleNamespace(sequence=sequence), data=b"x", ack=ack)


async def test_the_server_may_have_only_so_much_out_unacknowledged() -> None:
    """A backlog larger than nats-py's buffer must wait on the server, not overflow the client: the consumer
    caps unacknowledged deliveries, and the follower acknowledges (all up to one) as it queues them."""
    stream = Stream()
    f = Follower(js=stream, batch_max=10)
    await f.start(1)
    acks: list[int] = []
    for n in range(1, 11):
        await f._on_msg(delivered(n, n, acks))
    await f.stop()
    config = stream.configs[0]
    assert config.ack_policy == js_api.AckPolicy.ALL and config.max_ack_pending == 20
    assert config.max_deliver == 1  # never delivered twice, acknowledged or not
    assert acks == [5, 10]
    assert stream.manual_ack == [True]  # nats-py acknowledges nothing on its own


async def test_a_lost_delivery_starts_a_new_consumer_after_the_last_event_handed_out() -> None:
    stream = Stream()
    f = Follower(js=stream, batch_max=10)
    await f.start(41)
    await f._on_msg(delivered(1, 41))
    await f._on_msg(delivered(3, 43))  # delivery 2 never came
    await f._on_msg(delivered(1, 42))  # the new consumer's first
    await f._on_msg(delivered(2, 41))  # a repeat is not handed out twice
    await f.stop()
    assert stream.starts == [41, 42]
    assert [s for s, _ in await f.next_batch()] == [41, 42]


async def test_without_linger_a_batch_is_what_has_already_arrived() -> None:
    f = follower()
    for seq in (1, 2, 3):
        f._queue.put_nowait((seq, b"x"))
    assert [s for s, _ in await f.next_batch()] == [1, 2, 3]


async def test_lingering_gathers_later_messages_until_a_reader_is_waiting() -> None:
    f = follower()
    urgent = asyncio.Event()
    f._queue.put_nowait((1, b"x"))
    batch = asyncio.create_task(f.next_batch(linger_s=3600, urgent=urgent))
    await asyncio.sleep(0)  # the batch has taken message 1 and waits for more
    await f._queue.put((2, b"x"))
    await f._queue.put((3, b"x"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not batch.done()  # still lingering: nobody is waiting on the fold
    urgent.set()
    assert [s for s, _ in await asyncio.wait_for(batch, 5)] == [1, 2, 3]
    assert f._queue.empty()


async def test_a_full_batch_does_not_linger() -> None:
    f = Follower(js=Stream(), batch_max=2)
    for seq in (1, 2):
        f._queue.put_nowait((seq, b"x"))
    batch = await asyncio.wait_for(f.next_batch(linger_s=3600, urgent=asyncio.Event()), 5)
    assert [s for s, _ in batch] == [1, 2]


async def test_a_consumer_replaced_while_a_message_waits_on_a_full_queue_loses_nothing_and_repeats_nothing(
) -> None:
    """The put of event 2 waits on a full queue when the consumer is replaced (the server did not answer in
    time under load): the new consumer starts from 2, not after it, whether or not the old put completes."""
    stream = Stream()
    f = Follower(js=stream, batch_max=1)
    await f.start(1)
    await f._on_msg(delivered(1, 1))  # fills the queue
    waiting = asyncio.create_task(f._on_msg(delivered(2, 2)))
    await asyncio.sleep(0)
    await f._resubscribe("TimeoutError")
    assert stream.starts == [1, 2]
    waiting.cancel()  # nats-py may end the old consumer's callback
    assert [s for s, _ in await f.next_batch()] == [1]
    await f._on_msg(delivered(1, 2))  # the new consumer delivers it again
    assert [s for s, _ in await f.next_batch()] == [2]

    kept = Follower(js=Stream(), batch_max=1)  # and when the old put does complete, 2 is handed out once
    await kept.start(1)
    await kept._on_msg(delivered(1, 1))
    old = asyncio.create_task(kept._on_msg(delivered(2, 2)))
    await asyncio.sleep(0)
    await kept._resubscribe("TimeoutError")
    new = asyncio.create_task(kept._on_msg(delivered(1, 2)))
    await asyncio.sleep(0)
    assert [s for s, _ in await kept.next_batch()] == [1]
    await asyncio.wait_for(old, 5)
    assert [s for s, _ in await kept.next_batch()] == [2]
    await asyncio.wait_for(new, 5)  # its repeat of 2 is queued...
    third = asyncio.create_task(kept._on_msg(delivered(2, 3)))
    assert [s for s, _ in await asyncio.wait_for(kept.next_batch(), 5)] == [3]  # ...and dropped
    await asyncio.wait_for(third, 5)
    await f.stop()
    await kept.stop()
