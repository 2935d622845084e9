"""The fold's loop: gather a batch, decode, map and stage it, while the last one is committed.

A write has two halves (`Store.stage`, `Store.commit`). Staging is Python: decoding, mapping, and the
appender converting every value into a slot's temporary stage tables; it holds the interpreter lock.
Committing is DuckDB's own work (the merges into the keyed tables, the derived usage lines, the commit),
which releases it. So the next batch is staged in one thread while the last is committed in another, in two
slots of stage tables, and on two cores the fold runs at the pace of its slower half. (An earlier pipeline
split the work at the appender instead, so both threads held the lock most of the time, and it was slower
than no pipeline at all; `benchmarks.ledger` measures it.)

Commits stay one at a time, in stream order, each one transaction with its stream position. A commit that
has begun finishes even when the loop is cancelled, so the file's position always matches its rows; a
commit that fails is tried again from its stage (the file is the only thing that can fail it) and nothing
after it is committed meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Protocol

import structlog

from services.ledger.fold import Rows, fold_batch
from services.ledger.store import Staged, Store
from shared.events import EventBase, decode_event

log = structlog.get_logger("ledger")

RETRY_S = 1.0

Batch = list[tuple[int, bytes]]  # (stream sequence, the event's JSON), in stream order
Written = Callable[[int], Awaitable[None]]  # told each stream sequence once its batch is in the file


class BatchSource(Protocol):
    """Where batches come from (the stream's `Follower`; a list in the benchmark)."""

    async def next_batch(self, linger_s: float = 0.0, urgent: asyncio.Event | None = None) -> Batch: ...


def prepare(batch: Batch) -> Rows:
    """A batch's rows. Python's cyclic garbage collector is paused meanwhile: a batch makes tens of thousands
    of objects, each allocation burst set off a collection over the whole heap, and that was half of the
    decoding time (16.9 against 8.7 us an event). Nothing made here is cyclic; refcounting frees it."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return fold_batch(decoded(batch))
    finally:
        if paused:
            gc.enable()


def decoded(batch: Batch) -> Iterator[tuple[int, EventBase]]:
    """Each event decoded as the fold reaches it, so only its rows outlive it: a batch decoded whole first
    held every event and its rows at once (78 MB at the peak for 20,000 seats, against 19 MB of rows)."""
    for seq, data in batch:
        try:
            event = decode_event(data)
        except ValueError as exc:  # a newer schema: skip it, do not stop the fold
            log.warning("event_undecodable", seq=seq, error=str(exc)[:200])
            continue
        yield seq, event


def stage(store: Store, batch: Batch, slot: int) -> Staged:
    return store.stage(prepare(batch), slot)


async def write(store: Store, staged: Staged, batch: tuple[int, int], written: Written) -> None:
    """Commit one staged batch (its first and last sequence) in a thread, trying again until the file takes
    it; then say so."""
    first, last = batch
    started = time.perf_counter()
    while True:
        work = asyncio.ensure_future(asyncio.to_thread(store.commit, staged, last))
        try:
            await asyncio.shield(work)
            break
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await work  # the transaction in flight ends, committed or rolled back, before we stop
            raise
        except Exception:
            log.exception("fold_failed", first=first, last=last)
            await asyncio.sleep(RETRY_S)
    log.debug("batch_applied", first=first, last=last, seconds=round(time.perf_counter() - started, 4))
    await written(last)


async def fold(
    source: BatchSource, store: Store, after: int, written: Written, linger_s: float = 0.0,
    urgent: asyncio.Event | None = None,
) -> None:
    """Fold what `source` hands out past sequence `after`, forever (until cancelled)."""
    writing: asyncio.Task[None] | None = None
    queued = after  # the last sequence handed to a commit
    slot = 0
    try:
        while True:
            gathered = await source.next_batch(linger_s, urgent)
            batch = [(seq, data) for seq, data in gathered if seq > queued]
            if not batch:
                continue
            if batch[0][0] != queued + 1:
                log.warning("sequence_gap", after=queued, next=batch[0][0])
            staged = await asyncio.to_thread(stage, store, batch, slot)
            if writing is not None:
                await writing  # its slot is the other one; this one's turn comes after it
            writing = asyncio.create_task(write(store, staged, (batch[0][0], batch[-1][0]), written))
            queued = batch[-1][0]
            slot = 1 - slot
    finally:
        if writing is not None:
            writing.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writing
