"""The fold's loop: gather a batch, decode and map it, write it, while the next one is already decoded.

Decoding and mapping a batch is Python (it holds the interpreter lock); writing it is mostly DuckDB's own
work (appends, key merges, the commit), which does not. So the next batch is prepared in one thread while
the last is written in another, and on two cores the fold runs at the pace of its slower half instead of
the two added up (`benchmarks.ledger` measures it).

Writes stay one at a time, in stream order, each one transaction with its stream position (`Store.apply`).
A write that has begun finishes even when the loop is cancelled, so the file's position always matches its
rows; a write that fails is tried again (the file is the only thing that can fail it) and nothing after it
is written meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

import structlog

from services.ledger.fold import Rows, fold_batch
from services.ledger.store import Store
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
        events: list[tuple[int, EventBase]] = []
        for seq, data in batch:
            try:
                events.append((seq, decode_event(data)))
            except ValueError as exc:  # a newer schema: skip it, do not stop the fold
                log.warning("event_undecodable", seq=seq, error=str(exc)[:200])
        return fold_batch(events)
    finally:
        if paused:
            gc.enable()


async def write(store: Store, rows: Rows, batch: tuple[int, int], written: Written) -> None:
    """Write one batch (its first and last sequence) in a thread, trying again until the file takes it;
    then say so."""
    first, last = batch
    started = time.perf_counter()
    while True:
        work = asyncio.ensure_future(asyncio.to_thread(store.apply, rows, last))
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
    queued = after  # the last sequence handed to a write
    try:
        while True:
            gathered = await source.next_batch(linger_s, urgent)
            batch = [(seq, data) for seq, data in gathered if seq > queued]
            if not batch:
                continue
            if batch[0][0] != queued + 1:
                log.warning("sequence_gap", after=queued, next=batch[0][0])
            rows = await asyncio.to_thread(prepare, batch)
            if writing is not None:
                await writing
            writing = asyncio.create_task(write(store, rows, (batch[0][0], batch[-1][0]), written))
            queued = batch[-1][0]
    finally:
        if writing is not None:
            writing.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writing
