"""The standing pull against a real NATS server: messages come without a request per message, in turn across
two consumers, each exactly once; no more than the capacity is held; a request that expires is asked again,
and so is one lost with a server that died."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from nats.aio.msg import Msg
from nats.js import api

from shared import bus
from shared.natsserver import NatsServer
from shared.standing_pull import StandingPull

STREAM, DURABLE = "WQ", "workers"


async def until(check: Callable[[], bool], within: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not check():
        assert loop.time() < end, "the condition never held"
        await asyncio.sleep(0.01)


class Worker:
    """Holds what it was given until told to let go (ack)."""

    def __init__(self, capacity: int = 100) -> None:
        self.capacity, self.held, self.seen = capacity, [], []  # type: tuple[int, list[Msg], list[str]]
        self.pull: StandingPull | None = None

    def take(self, msg: Msg) -> None:
        self.held.append(msg)
        self.seen.append(msg.data.decode())

    async def ack_all(self) -> None:
        held, self.held = self.held, []
        for msg in held:
            await msg.ack()
        assert self.pull is not None
        self.pull.top_up()

    async def start(self, nc: bus.NATS, **kw: float) -> Worker:
        self.pull = await StandingPull(nc, STREAM, DURABLE, self.take, lambda: self.capacity - len(self.held),
                                       **kw).start()  # type: ignore[arg-type]
        return self


async def work_queue(nc: bus.NATS) -> bus.NATS:
    js = nc.jetstream()
    await js.add_stream(name=STREAM, subjects=["wq.>"], retention=api.RetentionPolicy.WORK_QUEUE)
    await js.add_consumer(STREAM, api.ConsumerConfig(durable_name=DURABLE, ack_policy=api.AckPolicy.EXPLICIT,
                                                     ack_wait=30))
    return nc


@pytest.fixture
async def queue(nc: bus.NATS) -> bus.NATS:
    return await work_queue(nc)


@pytest.fixture
async def other(nats_server: NatsServer) -> AsyncIterator[bus.NATS]:
    conn = await bus.connect(nats_server.url, "test-other", nats_server.login("admin"))
    try:
        yield conn
    finally:
        await conn.close()


async def publish(nc: bus.NATS, names: list[str]) -> None:
    for name in names:
        await nc.jetstream().publish(f"wq.{name}", name.encode())


async def test_two_consumers_take_turns_and_each_message_comes_once(queue: bus.NATS, other: bus.NATS) -> None:
    a, b = await Worker().start(queue), await Worker().start(other)
    names = [f"m{i}" for i in range(10)]
    for name in names:  # one at a time, as a panel's calls land
        await publish(queue, [name])
        await until(lambda n=name: n in a.seen + b.seen)  # type: ignore[misc]
    assert sorted(a.seen + b.seen) == sorted(names)
    # The server hands them out in turn to the waiting requests (near enough: not all to whoever asked first).
    assert min(len(a.seen), len(b.seen)) >= 3
    await a.ack_all()
    await b.ack_all()


async def test_no_more_than_the_capacity_is_held_until_some_is_let_go(queue: bus.NATS) -> None:
    w = await Worker(capacity=3).start(queue)
    await publish(queue, [f"m{i}" for i in range(8)])
    await until(lambda: len(w.held) == 3)
    await asyncio.sleep(0.3)  # the other five wait at the server, not here
    assert len(w.held) == 3
    await w.ack_all()
    await until(lambda: len(w.seen) == 6)
    await w.ack_all()
    await until(lambda: len(w.seen) == 8)
    assert w.seen == [f"m{i}" for i in range(8)]
    await w.ack_all()


async def test_an_expired_request_is_asked_again(queue: bus.NATS) -> None:
    w = await Worker().start(queue, expires_s=0.3, heartbeat_s=0.1)
    await asyncio.sleep(1.0)  # several requests expire meanwhile
    await publish(queue, ["late"])
    await until(lambda: w.seen == ["late"])
    await w.ack_all()


async def test_a_request_lost_to_a_server_restart_is_asked_again(nats_server: NatsServer) -> None:
    nc = await work_queue(await bus.connect(nats_server.url, "test-restart", nats_server.login("admin")))
    try:
        w = await Worker().start(nc, heartbeat_s=0.2)
        await asyncio.sleep(0.3)
        assert nats_server.proc is not None
        nats_server.proc.kill()  # no goodbye (a graceful stop ends each waiting request with a 409)
        nats_server.proc.wait()
        nats_server.start()  # the waiting request died with the server
        await until(lambda: nc.is_connected and nc.stats["reconnects"] > 0, 20)
        await publish(nc, ["after-restart"])
        await until(lambda: w.seen == ["after-restart"], 20)
        await w.ack_all()
    finally:
        await nc.close()
