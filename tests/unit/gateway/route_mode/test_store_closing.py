"""A turn's end goes out before its conversation record is written (RM-4): what the client is told is what
gets written, and until the write is done this replica's next read of the conversation gets that record
(without waiting on the bus), so a client's next turn, however quick, finds the record that knows the last
one. A write without a foreseen record (a failed turn) makes the read wait for it instead."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from services.gateway.route_mode.conversation import Conversation, new_conversation
from services.gateway.route_mode.store import ConversationStore
from shared.kv_mirror import Copy

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
KEY = "a" * 24


class SlowMirror:
    """A bucket copy whose writes wait until the test lets them through."""

    def __init__(self) -> None:
        self.copies: dict[str, Copy] = {}
        self.gate = asyncio.Event()
        self.writes = 0

    async def read(self, key: str) -> Copy:
        return self.copies.get(key, Copy(None, 0))

    async def write(self, key: str, value: bytes, revision: int) -> bool:
        await self.gate.wait()
        if self.copies.get(key, Copy(None, 0)).revision != revision:
            return False
        self.writes += 1
        self.copies[key] = Copy(value, revision + 1)
        return True


def store_with(mirror: SlowMirror) -> ConversationStore:
    store = ConversationStore(nc=None)  # type: ignore[arg-type]
    store._mirror = mirror  # type: ignore[assignment]
    return store


def opened() -> Conversation:
    return new_conversation("r20261203-120000-abcd", KEY, "core", "local", NOW)


async def test_the_foreseen_record_is_the_written_one_and_a_read_gets_it_without_waiting() -> None:
    mirror = SlowMirror()
    store = store_with(mirror)
    start = opened()
    mirror.copies[KEY] = Copy(start.to_json(), 1)
    apply = lambda c: c.after_turn("m1", ["m1", "m2"], NOW)  # noqa: E731
    foreseen = await store.foresee(KEY, start, apply)
    closing = asyncio.create_task(store.close_turn(KEY, start, apply, foreseen))
    await asyncio.sleep(0)  # the write has begun and waits at the gate
    record, _ = await asyncio.wait_for(store.read(KEY), 1.0)  # the next turn's read does not wait
    assert not closing.done() and record == foreseen
    mirror.gate.set()
    before, after = await closing
    assert after == foreseen and before == start and await store.read(KEY) == (foreseen, 2)
    assert foreseen.turns == 1 and foreseen.model == "m1"
    assert not store._closing and not store._foreseen  # nothing left behind


async def test_without_a_foreseen_record_a_read_waits_for_the_write() -> None:
    mirror = SlowMirror()
    store = store_with(mirror)
    start = opened()
    mirror.copies[KEY] = Copy(start.to_json(), 1)
    closing = asyncio.create_task(store.close_turn(KEY, start, lambda c: c.after_turn("", ["m1"], NOW)))
    await asyncio.sleep(0)
    next_turn = asyncio.create_task(store.read(KEY))
    await asyncio.sleep(0.01)
    assert not next_turn.done()
    mirror.gate.set()
    _, after = await closing
    assert await next_turn == (after, 2)


async def test_a_turn_taken_on_a_foreseen_record_is_counted_after_the_write_before_it() -> None:
    mirror = SlowMirror()
    store = store_with(mirror)
    start = opened()
    mirror.copies[KEY] = Copy(start.to_json(), 1)
    first_apply = lambda c: c.after_turn("m1", ["m1"], NOW)  # noqa: E731
    first_seen = await store.foresee(KEY, start, first_apply)
    first = asyncio.create_task(store.close_turn(KEY, start, first_apply, first_seen))
    await asyncio.sleep(0)
    taken, _ = await store.read(KEY)  # the next turn starts while the first write is in flight
    assert taken is not None and taken.next_turn == 2
    second_apply = lambda c: c.after_turn("m2", ["m2"], NOW)  # noqa: E731
    second_seen = await store.foresee(KEY, taken, second_apply)
    second = asyncio.create_task(store.close_turn(KEY, taken, second_apply, second_seen))
    await asyncio.sleep(0)
    assert await store.read(KEY) == (second_seen, 1)
    mirror.gate.set()
    await asyncio.gather(first, second)
    record, revision = await store.read(KEY)
    assert record == second_seen and record.turns == 2 and revision == 3 and mirror.writes == 2
    assert not store._closing and not store._foreseen


async def test_two_turns_ending_at_once_are_both_counted() -> None:
    mirror = SlowMirror()
    store = store_with(mirror)
    start = opened()
    mirror.copies[KEY] = Copy(start.to_json(), 1)
    first = asyncio.create_task(store.close_turn(KEY, start, lambda c: c.after_turn("m1", ["m1"], NOW)))
    second = asyncio.create_task(store.close_turn(KEY, start, lambda c: c.after_turn("m2", ["m2"], NOW)))
    await asyncio.sleep(0)
    mirror.gate.set()
    await asyncio.gather(first, second)
    record, _ = await store.read(KEY)
    assert record is not None and record.turns == 2 and mirror.writes == 2
    assert not store._closing  # nothing left waiting


async def test_a_read_of_another_conversation_does_not_wait() -> None:
    mirror = SlowMirror()
    store = store_with(mirror)
    start = opened()
    closing = asyncio.create_task(store.close_turn(KEY, start, lambda c: c.after_turn("m1", ["m1"], NOW)))
    await asyncio.sleep(0)
    assert await asyncio.wait_for(store.read("b" * 24), 1.0) == (None, 0)
    mirror.gate.set()
    await closing
