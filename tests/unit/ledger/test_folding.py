"""The fold loop (`folding`): pulled bytes give the same rows as folding the events themselves, with the
garbage collector paused only for the batch; batches are written one at a time in stream order, a failed
write is tried again before anything after it, and a write under way finishes before the loop stops."""

from __future__ import annotations

import asyncio
import gc
import threading
import tracemalloc
from typing import cast

import pytest

from services.ledger import folding
from services.ledger.fold import fold_batch
from services.ledger.folding import prepare
from services.ledger.store import Staged, Store
from shared.events import EventBase, encode_event
from tests.unit.ledger.factories import answered, completed, seated

P = "p20261202-093000-abcd"


def _events() -> list[EventBase]:
    calls = [f"{P}.a", f"{P}.b"]
    return [seated(P), completed(calls[0], alias="a"),
            completed(calls[1], alias="b", status="error", error="HTTP 500"), answered(P, calls)]


def test_bytes_fold_to_the_rows_of_the_events() -> None:
    events = _events()
    pulled = [(i + 1, encode_event(e)) for i, e in enumerate(events)]
    assert prepare(pulled) == fold_batch([(i + 1, e) for i, e in enumerate(events)])


def test_an_undecodable_event_is_skipped() -> None:
    events = _events()
    newer = b'{"type": "from_a_newer_schema"}'
    pulled = [(1, encode_event(events[0])), (2, newer), (3, encode_event(events[1]))]
    assert prepare(pulled) == fold_batch([(1, events[0]), (3, events[1])])


def test_a_batch_is_decoded_as_it_is_folded_not_held_whole() -> None:
    """Only the rows outlive each event: a batch decoded whole first held every event besides its rows
    (the ledger's peak while catching up grew with the batch size)."""
    long = "an answer a seat gave " * 20
    pulled = [(i + 1, encode_event(completed(f"{P}.m{i}", answer=long))) for i in range(2_000)]
    tracemalloc.start()
    try:
        rows = prepare(pulled)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(rows.seats) == 2_000
    assert peak < 1.5 * held, (peak, held)


@pytest.mark.parametrize("was_enabled", [True, False])
def test_the_collector_is_restored_however_the_batch_ends(
    monkeypatch: pytest.MonkeyPatch, was_enabled: bool
) -> None:
    seen: list[bool] = []

    def failing(events: object) -> object:
        seen.append(gc.isenabled())
        raise RuntimeError("mapping failed")

    monkeypatch.setattr(folding, "fold_batch", failing)
    enabled = gc.isenabled()
    (gc.enable if was_enabled else gc.disable)()
    try:
        with pytest.raises(RuntimeError):
            prepare([(1, encode_event(_events()[0]))])
        assert seen == [False]
        assert gc.isenabled() is was_enabled
    finally:
        (gc.enable if enabled else gc.disable)()


class Source:
    """Hands out the given batches, then waits like an idle stream."""

    def __init__(self, batches: list[list[tuple[int, bytes]]]) -> None:
        self.left = batches

    async def next_batch(self, linger_s: float = 0.0, urgent: asyncio.Event | None = None) -> list[
            tuple[int, bytes]]:
        if not self.left:
            await asyncio.Event().wait()
        return self.left.pop(0)


class Recorder:
    """A store that records the slot of each stage and the position of each commit, failing or holding the
    commits it is told to."""

    def __init__(self, fail_once: int = 0, hold: int = 0) -> None:
        self.tried: list[int] = []
        self.applied: list[int] = []
        self.staged: list[int] = []  # the slot of each batch staged
        self.staged_twice = threading.Event()
        self.busy: set[int] = set()  # slots whose batch is being committed
        self.fail_once, self.hold = fail_once, hold
        self.holding, self.release = threading.Event(), threading.Event()

    def stage(self, rows: object, slot: int = 0) -> Staged:
        assert slot not in self.busy, "a slot is staged while its own batch is being committed"
        self.staged.append(slot)
        if len(self.staged) == 2:
            self.staged_twice.set()
        return Staged(slot, (), None)

    def commit(self, staged: Staged, seq: int) -> None:
        self.busy.add(staged.slot)
        try:
            self.write(seq)
        finally:
            self.busy.discard(staged.slot)

    def write(self, seq: int) -> None:
        self.tried.append(seq)
        if seq == self.fail_once:
            self.fail_once = 0
            raise RuntimeError("disk full")
        if seq == self.hold:
            self.holding.set()
            self.release.wait()
        self.applied.append(seq)


def pulled(first: int, count: int) -> list[tuple[int, bytes]]:
    event = encode_event(_events()[0])
    return [(seq, event) for seq in range(first, first + count)]


async def fold_until(store: Recorder, batches: list[list[tuple[int, bytes]]], last: int) -> list[int]:
    told: list[int] = []
    reached = asyncio.Event()

    async def written(seq: int) -> None:
        told.append(seq)
        if seq == last:
            reached.set()

    task = asyncio.create_task(folding.fold(Source(batches), cast(Store, store), 0, written))
    await asyncio.wait_for(reached.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return told


async def test_batches_are_written_one_at_a_time_in_stream_order() -> None:
    store = Recorder()
    told = await fold_until(store, [pulled(1, 3), pulled(4, 2), pulled(6, 4)], 9)
    assert store.applied == [3, 5, 9] and told == [3, 5, 9]


async def test_a_failed_write_is_tried_again_before_anything_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(folding, "RETRY_S", 0.0)
    store = Recorder(fail_once=5)
    told = await fold_until(store, [pulled(1, 3), pulled(4, 2), pulled(6, 4)], 9)
    assert store.tried == [3, 5, 5, 9] and store.applied == [3, 5, 9] and told == [3, 5, 9]


async def test_the_next_batch_is_staged_in_the_other_slot_while_the_last_is_committed() -> None:
    store = Recorder(hold=3)
    done = asyncio.Event()

    async def written(seq: int) -> None:
        if seq == 9:
            done.set()

    task = asyncio.create_task(folding.fold(Source([pulled(1, 3), pulled(4, 2), pulled(6, 4)]),
                                            cast(Store, store), 0, written))
    try:
        assert await asyncio.to_thread(store.holding.wait, 10)
        # The second batch is staged while the first one's commit is still held.
        assert await asyncio.to_thread(store.staged_twice.wait, 10)
        assert store.applied == []
    finally:
        store.release.set()
    await asyncio.wait_for(done.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert store.applied == [3, 5, 9] and store.staged == [0, 1, 0]


async def test_a_write_under_way_when_the_fold_stops_finishes_first() -> None:
    store = Recorder(hold=3)
    task = asyncio.create_task(folding.fold(Source([pulled(1, 3)]), cast(Store, store), 0, noop))
    await asyncio.to_thread(store.holding.wait, 10)
    task.cancel()
    store.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert store.applied == [3]  # the transaction ended before the fold did: the position matches the rows


async def noop(seq: int) -> None:
    return None
