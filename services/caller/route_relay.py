"""Route mode's relay (RM-5, RM-6): take a member's turn over request/reply, stream it back over core NATS.

A gateway asks on `bench.rpc.caller.route` (queue `callers`: one caller takes it) and is answered at once;
the call runs in a task of its own (started before the answer, so the provider's request leaves first),
publishing numbered `RelayFrame`s on the gateway's relay subject as the member's chunks arrive, and ends
with `end` or `fail`. The gateway stops a member it gave up on by publishing on the relay's cancel subject;
every caller hears every cancel on one wildcard subscription (a call costs no SUB and UNSUB of its own) and
stops the call it holds under that relay, if any. Afterwards the call's usage (`CallUsed`) and what its
failure teaches about limits (cooldown, stated limits, quotas) go to the stream, as for a seat, a beat
after the end (`bus.RECORDS_AFTER_S`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from functools import partial
from typing import Any

import structlog
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg as NatsMsg

from services.caller.call_metrics import count_call
from services.caller.config_wait import ConfigWait
from services.caller.limit_book import LimitBook
from services.caller.limit_events import QuotaNews, limits_learned
from services.caller.route_call import RouteCaller, Stop, piece_kind
from services.caller.route_chunks import Chunk
from services.caller.route_events import RouteReport, call_used, relay_outcome, route_seat
from services.caller.seat_events import cooldown_started
from shared import bus, rpc, subjects
from shared.commands import RELAY_BEAT_S, RelayOutcome, RouteAccepted, RouteCall, SeatCall
from shared.events import EventBase
from shared.ids import utcnow

log = structlog.get_logger("caller.route")

STOP_GRACE_S = 5.0
STOPPING = "stopped: the caller is shutting down"


class Frames:
    """The numbered frames of one relay, in order on one connection (core NATS keeps a publisher's order).

    Chunks are held and sent together: everything parsed from one read of the member's reply leaves in one
    frame, when the reading task next waits (a task scheduled by the first chunk held), or with the end.
    Once the reply is read to its end (`last_read`), what is held waits for the end frame: one frame, and
    one pass through the gateway, fewer on the way to the client's last byte."""

    def __init__(self, bus: rpc.Bus, relay: str) -> None:
        self.nc, self.relay, self.seq = bus, relay, 0
        self.spoke = False  # a chunk with text, reasoning or a tool call went out
        self.held: list[Chunk] = []
        self._sending: asyncio.Task[None] | None = None  # kept: a task nobody holds may be collected
        self.read_all = False

    async def _publish(self, frame: dict[str, Any]) -> None:
        frame["seq"] = self.seq  # numbered and queued in the client at once: no await comes between
        self.seq += 1
        await self.nc.publish(self.relay, json.dumps(frame, ensure_ascii=False).encode())

    async def chunk(self, chunk: Chunk) -> None:
        self.held.append(chunk)
        if not self.spoke and piece_kind(chunk):
            # The first real piece (and the role-only chunks before it) leave now, with one loop turn for
            # the NATS client's flusher: a provider's read often holds many pieces, and the time to first
            # byte should not wait for the last of them.
            self.spoke = True
            await self.send_held()
            await asyncio.sleep(0)
        elif len(self.held) == 1 and not self.read_all:
            self._sending = asyncio.create_task(self._send_soon())

    def last_read(self) -> None:
        """The member's reply is read to its end: the chunks held go with the end frame."""
        self.read_all = True
        if self._sending is not None:
            self._sending.cancel()  # not started yet, or it sent already: a send is never cut in two

    async def send_held(self) -> None:
        if self.held:
            chunks, self.held = self.held, []
            await self._publish({"kind": "chunks", "chunks": chunks})

    async def _send_soon(self) -> None:
        try:
            await self.send_held()
        except Exception as exc:  # the bus is away: the gateway sees the gap, or the silence
            log.warning("route_frame_not_sent", error=f"{type(exc).__name__}: {exc}"[:300])

    async def beat(self) -> None:
        """Say the call is alive, however long the member thinks, until the call ends."""
        while True:
            await asyncio.sleep(RELAY_BEAT_S)
            await self._publish({"kind": "beat"})

    async def end(self, outcome: RelayOutcome) -> None:
        chunks, self.held = self.held, []
        await self._publish({"kind": "fail" if outcome.status == "error" else "end", "chunks": chunks,
                             "outcome": outcome.model_dump()})


class RouteRelay:
    def __init__(
        self, nc: NATS, caller: RouteCaller, book: LimitBook, instance: str, config: ConfigWait,
        records_after_s: float = bus.RECORDS_AFTER_S,
    ) -> None:
        self.nc, self.js, self.caller, self.book, self.instance = nc, nc.jetstream(), caller, book, instance
        self.config, self.records_after_s = config, records_after_s
        self.quota_news = QuotaNews()
        self.running: dict[asyncio.Task[None], Stop] = {}
        self.stops: dict[str, Stop] = {}  # by relay subject: the calls a cancel can reach
        self._subs: list[Any] = []

    async def start(self) -> RouteRelay:
        every_cancel = subjects.relay_cancel_subject(subjects.relay_subject("*", "*"))
        self._subs = [await self.nc.subscribe(every_cancel, cb=self._on_cancel),
                      await rpc.serve(self.nc, subjects.RPC_CALLER_ROUTE, subjects.CALLER_QUEUE, RouteCall,
                                      self.accept)]
        return self

    async def _on_cancel(self, msg: NatsMsg) -> None:
        stop = self.stops.get(subjects.relay_of_cancel(msg.subject))
        if stop is not None:
            stop.set()

    async def accept(self, call: RouteCall) -> RouteAccepted:
        """Take the call: its cancel is heard from now on (the gateway may give up the moment it hears
        back), and it runs in a task of its own. That task starts first, and its request is on its way to
        the provider (or held by pacing) before the acceptance is even built: the acceptance is not on the
        way to the first byte, the request is."""
        stop = self.stops[call.relay] = Stop()
        task = asyncio.create_task(self._run(call, stop, asyncio.get_running_loop().time()))
        self.running[task] = stop
        task.add_done_callback(partial(self._finished, call.relay))
        await asyncio.sleep(0)
        return RouteAccepted(caller=self.instance)

    def _finished(self, relay: str, task: asyncio.Task[None]) -> None:
        self.running.pop(task, None)
        self.stops.pop(relay, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("route_call_failed", error=repr(task.exception())[:300])

    async def _run(self, call: RouteCall, stop: Stop, accepted: float) -> None:
        # This task's context is its own (a copy): bound without restoring, no read of every variable.
        structlog.contextvars.bind_contextvars(call=call.call, conversation=call.conversation)
        seat = route_seat(call)
        frames = Frames(self.nc, call.relay)
        log.debug("route_call_started", alias=call.alias, endpoint=call.endpoint, retries=call.retries)
        beating = asyncio.create_task(frames.beat())
        try:
            if self.config.behind(call.config_seq):  # the wait counts in the first-piece window
                await self.config.reach(call.config_seq)
            routed = await self.caller.call(seat, call.first_piece_s, frames.chunk, stop, accepted,
                                            frames.last_read)
        except Exception as exc:  # the bus under pacing failed: the gateway must still hear an end
            beating.cancel()
            failed = f"the caller failed ({type(exc).__name__})"
            await frames.end(RelayOutcome(status="error", error=failed))
            raise
        finally:
            beating.cancel()  # not awaited: a cancelled beat publishes nothing, and the end need not wait
        relayed = relay_outcome(seat, routed)
        await frames.end(relayed)
        # A failure's news (a cooldown, a limit) goes at once: no other turn should pick the member meanwhile.
        # A good call's usage line waits a beat: the turn's end and the agent's next turn go first.
        await asyncio.sleep(self.records_after_s if relayed.status != "error" else 0)
        log.info("route_call_finished", status=relayed.status, seconds=relayed.seconds,
                 attempts=relayed.attempts, http_status=relayed.http_status, frames=frames.seq,
                 error=relayed.error[:200])
        await self._record(call, seat, relayed, routed)

    async def _record(
        self, call: RouteCall, seat: SeatCall, relayed: RelayOutcome, routed: RouteReport
    ) -> None:
        """The usage line, and what a failure teaches about limits (L-3, L-4), as a seat's call would."""
        used = call_used(call, relayed, self.instance, routed.report.waited_s)
        count_call(used.alias, used.connection, used.status, used.seconds, used.waited_s, used.paced)
        events: list[EventBase] = [used]
        cooldown = cooldown_started(seat, relayed.error, utcnow()) if relayed.error else None
        if cooldown is not None:
            events.append(cooldown)
        events += limits_learned(seat, routed.report, self.book)
        quotas = self.quota_news.event(seat, routed.report.quotas, time.time())
        if quotas is not None:
            events.append(quotas)
        for event in events:
            try:
                await bus.publish_event(self.js, event)
            except Exception as exc:  # the gateway has its answer; only the record is lost
                why = f"{type(exc).__name__}: {exc}"
                log.error("route_event_not_recorded", event=event.id, error=why[:300])

    async def stop(self, drain_s: float = 0.0) -> None:
        """Stop taking calls; those in flight may finish within `drain_s` (their agents keep their turn),
        then what is left is stopped (its gateway fails over) and recorded."""
        accepting, cancels = self._subs[1:], self._subs[:1]
        for sub in accepting:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        if self.running and drain_s > 0:
            await asyncio.wait(list(self.running), timeout=drain_s)
        for sub in cancels:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        for stop in self.running.values():
            stop.set(STOPPING)
        if self.running:
            await asyncio.wait(list(self.running), timeout=STOP_GRACE_S)
