"""The ledger at work: follow the stream into the store, answer only once caught up, rebuild by replay.

Every answer waits until the fold has applied everything the stream held when the question came (its
last sequence, read from JetStream), so a verdict sent right after a reply always finds its seat. Reads
and rebuilds share one gate: a rebuild closes the door, waits for reads in progress, swaps the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import structlog
from nats.js import JetStreamContext

from services.ledger import export_files, folding, offloads, quotas
from services.ledger.follower import Follower
from services.ledger.store import CHECKPOINT_THRESHOLD, MEMORY_LIMIT, Store, discard, exports_of
from shared import bus, subjects
from shared.commands import (
    ExportChunkReply,
    ExportChunkRequest,
    ExportReply,
    ExportRequest,
    QuotaReply,
    SqlReply,
    SqlRequest,
    UsageLine,
    UsageRequest,
    VerdictRequest,
)
from shared.ids import candidate_id, utcnow

log = structlog.get_logger("ledger")

T = TypeVar("T")

ANSWER_WAIT_S = 8.0
REBUILD_WAIT_S = 3600.0


class Behind(Exception):
    """The fold has not reached the sequence a question needs within the wait."""


class Ledger:
    def __init__(
        self, js: JetStreamContext, path: Path, batch_max: int, linger_s: float = 0.0, threads: int = 1,
        memory_limit: str = MEMORY_LIMIT, checkpoint: str = CHECKPOINT_THRESHOLD,
    ) -> None:
        self.js = js
        self.path = path
        self.threads, self.memory_limit, self.checkpoint = threads, memory_limit, checkpoint
        self.batch_max = batch_max
        self.linger_s = linger_s
        # Set while someone waits for the fold to reach a sequence: the fold stops lingering for them.
        self._urgent = asyncio.Event()
        self._waiting = 0
        self.store: Store | None = None
        self.position = 0
        self._changed = asyncio.Condition()
        self._open = asyncio.Event()
        self._readers = 0
        self._follower: Follower | None = None
        self._fold_task: asyncio.Task[None] | None = None
        self._verdicts = asyncio.Lock()
        self._rebuilds = asyncio.Lock()

    # ------------------------------------------------------------ life

    async def start(self) -> None:
        self.store = await asyncio.to_thread(
            Store, self.path, self.threads, self.memory_limit, self.checkpoint)
        self.position = await asyncio.to_thread(self.store.position)
        log.info("ledger_opened", path=str(self.path), seq=self.position)
        await self._follow()
        self._open.set()

    async def stop(self) -> None:
        self._open.clear()
        await self._unfollow()
        await self._no_readers()
        if self.store is not None:
            await asyncio.to_thread(self.store.close)
            self.store = None

    async def _follow(self) -> None:
        assert self.store is not None
        self._follower = Follower(self.js, self.batch_max)
        await self._follower.start(self.position + 1)
        self._fold_task = asyncio.create_task(self._fold_loop(self._follower, self.store))

    async def _unfollow(self) -> None:
        if self._follower is not None:
            await self._follower.stop()
            self._follower = None
        if self._fold_task is not None:
            self._fold_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._fold_task
            self._fold_task = None

    # ------------------------------------------------------------ the fold

    async def _fold_loop(self, follower: Follower, store: Store) -> None:
        await folding.fold(follower, store, self.position, self._written, self.linger_s, self._urgent)

    async def _written(self, seq: int) -> None:
        async with self._changed:
            self.position = seq
            self._changed.notify_all()

    # ------------------------------------------------------------ waiting and reading

    async def stream_last_seq(self) -> int:
        info = await self.js.stream_info(subjects.EVENTS_STREAM)
        return int(info.state.last_seq)

    async def caught_up(self, seq: int, wait_s: float = ANSWER_WAIT_S) -> None:
        if self.position >= seq:
            return
        self._waiting += 1
        self._urgent.set()
        try:
            async with self._changed:
                await asyncio.wait_for(self._changed.wait_for(lambda: self.position >= seq), wait_s)
        except TimeoutError:
            where = f"at {self.position} of {seq}"
            raise Behind(f"the ledger is still folding the event stream ({where})") from None
        finally:
            self._waiting -= 1
            if not self._waiting:
                self._urgent.clear()

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(store, *args)` in a thread, once the fold holds everything the stream held when asked."""
        target = await self.stream_last_seq()
        end = time.monotonic() + ANSWER_WAIT_S
        while not (self._open.is_set() and self.position >= target):
            left = end - time.monotonic()
            try:
                await asyncio.wait_for(self._open.wait(), max(left, 0.001))
            except TimeoutError:
                raise Behind("the ledger is being rebuilt") from None
            await self.caught_up(target, max(end - time.monotonic(), 0.001))
        if self.store is None:  # a rebuild failed half-way: nothing to read until the next start
            raise Behind("the ledger's file is not open")
        self._readers += 1
        try:
            return await asyncio.to_thread(fn, self.store, *args)
        finally:
            async with self._changed:
                self._readers -= 1
                self._changed.notify_all()

    async def _no_readers(self) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self._readers == 0)

    # ------------------------------------------------------------ answers

    async def verdict(self, req: VerdictRequest) -> offloads.Decision:
        """Decide (H-G10) and, when something changes, publish the verdict and wait until it is folded.

        Verdicts are taken one at a time, so two at once on one call are judged one after the other.
        """
        async with self._verdicts:
            seat, stored = await self.read(Store.verdict_facts, req.call)
            decision = offloads.decide_verdict(req, seat, stored, utcnow())
            if isinstance(decision, offloads.Record):
                seq = await bus.publish_event(self.js, decision.event)
                await self.caught_up(seq)
                log.info("verdict_recorded", call=req.call, useful=req.useful, seq=seq)
            return decision

    async def pending(self, calls: list[str]) -> list[str]:
        known = await self.read(Store.pending_facts, calls)
        return offloads.pending(calls, known)

    async def record(self, collection: str, task: str) -> dict[str, dict[str, Any]]:
        judged = await self.read(Store.judged, collection)
        return offloads.tally(judged, collection, task)

    async def quota(self) -> QuotaReply:
        """L-7 as of now."""
        now = utcnow()
        return quotas.quota_reply(await self.read(Store.quota_facts, now), now)

    async def usage(self, req: UsageRequest) -> list[UsageLine]:
        return await self.read(Store.usage, req)

    async def sql(self, req: SqlRequest) -> SqlReply:
        return await self.read(Store.sql, req.sql, req.max_rows)

    async def export(self, req: ExportRequest) -> ExportReply:
        """`bench ledger export`: Parquet files of what is new since the asker's marks, in its folder."""
        root = exports_of(self.path)
        await asyncio.to_thread(export_files.sweep, root)
        now = utcnow()
        return await self.read(Store.export, req, root, candidate_id("x", now), now)

    async def export_chunk(self, req: ExportChunkRequest) -> ExportChunkReply:
        return await asyncio.to_thread(export_files.read_chunk, exports_of(self.path), req)

    async def status(self) -> dict[str, Any]:
        rows = await self.read(Store.counts)
        return {"seq": self.position, "rows": rows}

    async def rebuild(self) -> dict[str, Any]:
        """Drop the file and fold the stream again from sequence 1 (`bench ledger rebuild`)."""
        async with self._rebuilds:
            started = time.monotonic()
            target = await self.stream_last_seq()
            self._open.clear()
            try:
                await self._unfollow()
                await self._no_readers()
                if self.store is not None:
                    await asyncio.to_thread(self.store.close)
                    self.store = None
                await asyncio.to_thread(discard, self.path)
                self.store = await asyncio.to_thread(
                    Store, self.path, self.threads, self.memory_limit, self.checkpoint)
                self.position = 0
                await self._follow()
            finally:
                self._open.set()
            await self.caught_up(target, REBUILD_WAIT_S)
            counts = await self.read(Store.counts)
            seconds = round(time.monotonic() - started, 3)
            log.info("ledger_rebuilt", events=counts["events_applied"], seconds=seconds)
            return {"ok": True, "events": counts["events_applied"], "seconds": seconds}
