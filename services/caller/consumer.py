"""The transport: a durable pull consumer on the `BENCH_CALLS` work queue, shared by every caller replica,
with a standing request at the server (`StandingPull`), so a queued call reaches a caller at once.

Each call runs in its own task and heartbeats (`in_progress`) while the provider works and until its
events are stored; they are published before the ack, so a caller that dies mid-call leaves the call to be
redelivered, never lost. A call that may have been answered already is looked up first (`redelivery`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import structlog
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import BadRequestError
from pydantic import ValidationError

from services.caller.call_metrics import count_call
from services.caller.config_wait import ConfigWait
from services.caller.limit_book import LimitBook
from services.caller.limit_events import QuotaNews, limits_learned
from services.caller.redelivery import may_be_answered
from services.caller.seat_events import cooldown_started, seat_completed, seat_expired
from services.caller.upstream import Upstream
from shared import bus, metrics, subjects
from shared.commands import SeatCall
from shared.events import EventBase, SeatCompleted
from shared.ids import utcnow
from shared.seat_wait import stored_completion
from shared.settings import CallerSettings
from shared.standing_pull import StandingPull

log = structlog.get_logger("caller")

MAX_DELIVER = 5
MAX_ACK_PENDING = 20_000
PULL_WINDOW = 64
QUEUE_LOOK_S = 5.0
PUBLISH_PATIENCE_S = 60.0


def consumer_config(settings: CallerSettings) -> js_api.ConsumerConfig:
    return js_api.ConsumerConfig(
        durable_name=subjects.CALLERS_CONSUMER,
        filter_subject=subjects.CALLS_ALL,
        deliver_policy=js_api.DeliverPolicy.ALL,
        ack_policy=js_api.AckPolicy.EXPLICIT,
        ack_wait=settings.ack_wait_s,
        max_deliver=MAX_DELIVER,
        max_ack_pending=MAX_ACK_PENDING,
    )


async def ensure_consumer(js: JetStreamContext, settings: CallerSettings) -> None:
    """Every replica declares the same consumer; the server keeps one."""
    try:
        await js.add_consumer(subjects.CALLS_STREAM, consumer_config(settings))
    except BadRequestError as exc:
        log.warning("consumer_config_kept", error=str(exc)[:200])


class CallConsumer:
    def __init__(
        self, nc: NATS, upstream: Upstream, book: LimitBook, settings: CallerSettings,
        instance: str, config: ConfigWait,
    ) -> None:
        self.nc, self.js = nc, nc.jetstream()
        self.upstream, self.settings, self.instance = upstream, settings, instance
        self.config = config
        self.book, self.quota_news = book, QuotaNews()
        self.inflight: dict[asyncio.Task[None], Msg] = {}
        self._pull: StandingPull | None = None
        self._watch: asyncio.Task[None] | None = None
        self._reconnects, self._connected_at = int(nc.stats["reconnects"]), time.time()

    async def start(self) -> None:
        await ensure_consumer(self.js, self.settings)
        self._pull = await StandingPull(
            self.nc, subjects.CALLS_STREAM, subjects.CALLERS_CONSUMER, self._spawn,
            lambda: self.settings.concurrency - len(self.inflight), window=PULL_WINDOW,
        ).start()
        self._watch = asyncio.create_task(self._watch_queue(), name="queue-watch")

    async def _watch_queue(self) -> None:
        """The work queue's depth and redeliveries, for the ops port's gauges."""
        while True:
            with contextlib.suppress(Exception):
                info = await self.js.consumer_info(subjects.CALLS_STREAM, subjects.CALLERS_CONSUMER)
                metrics.WORK_QUEUE_PENDING.set(info.num_pending or 0)
                metrics.WORK_QUEUE_REDELIVERED.set(info.num_redelivered or 0)
            await asyncio.sleep(QUEUE_LOOK_S)

    def _spawn(self, msg: Msg) -> None:
        task = asyncio.create_task(self._handle(msg))
        self.inflight[task] = msg
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.inflight.pop(task, None)
        if self._pull is not None:
            self._pull.top_up()
        if not task.cancelled() and task.exception() is not None:
            log.error("call_task_failed", error=repr(task.exception())[:300])

    async def _handle(self, msg: Msg) -> None:
        try:
            call = SeatCall.model_validate_json(msg.data)
        except ValidationError as exc:
            log.error("seat_call_undecodable", subject=msg.subject, error=str(exc)[:300])
            await msg.term()
            return
        # This task's context is its own (a copy), so the ids are bound without restoring anything after;
        # `bound_contextvars` would read every context variable on the way in.
        structlog.contextvars.bind_contextvars(call=call.call, panel=call.panel)
        meta = msg.metadata  # parsed from the reply subject on every access: once here
        delivered = meta.num_delivered
        # Held until the events are stored: a publish that waits out a NATS restart must not let the call go
        # to another caller meanwhile.
        heartbeat = asyncio.create_task(self._heartbeat(msg))
        try:
            stored_at = meta.timestamp.timestamp()
            if may_be_answered(delivered, stored_at, self._connected_since()) and await self._answered(call):
                log.info("call_already_answered", delivered=delivered)
                events: list[EventBase] = []
            else:
                events = await self._run(call, delivered)
                await self._publish(events)
        finally:
            heartbeat.cancel()
        await msg.ack()
        done = events[0] if events else None
        if isinstance(done, SeatCompleted):  # logged once the answer is on its way, not before
            count_call(done.alias, done.connection, done.status, done.seconds, done.waited_s, done.paced)
            log.info("call_finished", status=done.status, seconds=done.seconds, attempts=done.attempts,
                     http_status=done.http_status, paced=done.paced, served_by=done.served_by,
                     swap=done.swap, error=done.error[:200], delivered=delivered)

    def _connected_since(self) -> float:
        """When this caller's current connection began, or a little later (so never too early): a reconnect
        is noticed by the first call handled after it."""
        reconnects = int(self.nc.stats["reconnects"])
        if reconnects != self._reconnects:
            self._reconnects, self._connected_at = reconnects, time.time()
        return self._connected_at

    async def _answered(self, call: SeatCall) -> bool:
        """Whether a `SeatCompleted` for this call is stored (by the caller that held it before, or by the
        gateway that gave up on it). A failed look counts as no: a call made twice beats a call lost."""
        try:
            return await stored_completion(self.nc, call.call) is not None
        except Exception as exc:
            log.warning("answer_lookup_failed", error=f"{type(exc).__name__}: {exc}"[:200])
            return False

    async def _heartbeat(self, msg: Msg) -> None:
        """Tell the server we still hold the call, so it is not redelivered while the provider thinks."""
        while True:
            await asyncio.sleep(self.settings.heartbeat_s)
            with contextlib.suppress(Exception):
                await msg.in_progress()

    async def _run(self, call: SeatCall, delivered: int) -> list[EventBase]:
        if time.time() >= call.deadline:
            log.info("call_expired", delivered=delivered)
            return [seat_expired(call, self.instance)]
        if self.config.behind(call.config_seq):  # decided on a config at least as new as the gateway's
            await self.config.reach(call.config_seq)
        log.debug("call_started", alias=call.alias, endpoint=call.endpoint, delivered=delivered,
                 instance=self.instance)
        report = await self.upstream.call(call)
        completed = seat_completed(call, report, self.instance)
        events: list[EventBase] = [completed]
        cooldown = cooldown_started(call, completed.error, utcnow()) if completed.error else None
        if cooldown is not None:
            events.append(cooldown)
        events += limits_learned(call, report, self.book)
        quotas = self.quota_news.event(call, report.quotas, time.time())
        return events if quotas is None else [*events, quotas]

    async def _publish(self, events: list[EventBase]) -> None:
        """Events first, ack after. A paid answer is worth waiting for: the call stays held (heartbeats)
        while the bus is away, for up to `PUBLISH_PATIENCE_S`; only then is it left to be redelivered."""
        give_up = time.monotonic() + PUBLISH_PATIENCE_S
        for event in events:
            pause = 0.2
            while True:
                try:
                    await bus.publish_event(self.js, event)
                    break
                except Exception as exc:
                    if time.monotonic() + pause >= give_up:
                        raise
                    log.warning("event_publish_retried", error=f"{type(exc).__name__}: {exc}"[:200])
                    await asyncio.sleep(pause)
                    pause = min(2 * pause, 2.0)

    async def stop(self) -> None:
        """Stop taking calls and finish those in flight within the drain (`BENCH_DRAIN_S`): a call handed
        back would be paid for again by the caller that takes it. Only what outlasts the drain goes back."""
        if self._watch is not None:
            self._watch.cancel()
        if self._pull is not None:
            await self._pull.stop()
            self._pull = None
        if self.inflight:
            log.info("caller_draining", calls=len(self.inflight), drain_s=self.settings.drain_s)
            await asyncio.wait(list(self.inflight), timeout=self.settings.drain_s)
        for task, msg in list(self.inflight.items()):
            task.cancel()
            with contextlib.suppress(Exception):
                await msg.nak()
