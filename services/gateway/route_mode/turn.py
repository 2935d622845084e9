"""One route turn on the bus (RM-5, RM-6): walk the members in order and relay the live one.

The turn runs in a task of its own, apart from the HTTP request that asked for it: a client that hangs up
stops nothing, and the turn is still recorded. Each member is one relay (see `relay`); one that fails
before its first piece is replaced by the next, invisibly; once one went live it is the turn's only
member. When the turn is over the client gets its end, with the conversation record as it will be
written; then the record is brought forward (compare-and-set, so a concurrent turn is not lost; this
replica's next read of it waits for the write), and a beat later (`bus.RECORDS_AFTER_S`) the records
follow (see `aftermath`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Literal

import structlog

from services.gateway.route_mode.aftermath import queue_shadows, record_turn
from services.gateway.route_mode.assemble import Chunk, MemberStream, TurnSummary
from services.gateway.route_mode.bench import route_bench, turn_status
from services.gateway.route_mode.failover import Attempt, Failover, TurnFailure, silent
from services.gateway.route_mode.prepared import Done, Failed, Pieces, PreparedTurn, Replica, TurnRun
from services.gateway.route_mode.record import route_call
from services.gateway.route_mode.relay import MemberRelay
from services.gateway.route_mode.upstream_request import upstream_body
from shared import metrics
from shared.bus import RECORDS_AFTER_S
from shared.commands import RELAY_SILENCE_S
from shared.ids import utcnow

log = structlog.get_logger("gateway.route")

# The caller runs the same first-piece window from when it accepted; the gateway's own watch (for a caller
# that died) waits a little longer, so the caller's failure, with its reason, normally comes first.
RELAY_MARGIN_S = 1.0


@dataclass
class Ending:
    """How one member's attempt ended."""

    kind: Literal["answered", "empty", "failed", "broke"]
    error: str = ""
    status: int | None = None
    summary: TurnSummary | None = None
    held: list[Chunk] = field(default_factory=list)


class RouteTurnRun:
    """One turn's walk; `run()` never raises: whatever happens, the request hears an end."""

    def __init__(self, replica: Replica, prepared: PreparedTurn, updates: TurnRun) -> None:
        self.replica, self.prepared, self.updates = replica, prepared, updates
        self.failover = Failover(prepared.collection, prepared.seating.order)
        self.turn = prepared.conversation.next_turn
        self.loop = asyncio.get_running_loop()
        self.turn_end = prepared.started + replica.settings.route_deadline_s
        self.first_token_s: float | None = None

    async def run(self) -> None:
        structlog.contextvars.bind_contextvars(conversation=self.prepared.conversation.id)
        try:
            await self._walk()
        except Exception as exc:
            why = f"{type(exc).__name__}: {exc}"
            log.error("route_turn_failed", error=why[:500])
            if not self.updates.ended:
                self.updates.put(Failed(500, f"the route turn failed ({why[:300]})"))

    async def _walk(self) -> None:
        attempt = self.failover.current
        ending = Ending("failed")
        while attempt is not None:
            ending = await self._attempt(attempt)
            if ending.kind == "failed":
                log.info("route_failed_over", alias=attempt.alias, error=ending.error[:300])
                attempt = self.failover.failed(ending.error)
            elif ending.kind == "empty":
                attempt = self.failover.empty()
                if attempt is None and self.failover.state == "answered_empty":
                    break
            else:
                break
        seconds = self.loop.time() - self.prepared.started
        if self.failover.state in ("live", "answered_empty") and ending.kind in ("answered", "empty"):
            await self._answered(ending, seconds)
        else:
            await self._failed(ending, seconds)

    async def _answered(self, ending: Ending, seconds: float) -> None:
        assert ending.summary is not None and self.failover.current is not None
        alias, summary = self.failover.current.alias, ending.summary
        if ending.held:  # the last member's empty reply is its answer: what it sent goes out
            self.updates.put(Pieces(ending.held, alias))
        now = utcnow()
        order = self.prepared.seating.order
        store, key, opened = self.replica.store, self.prepared.key, self.prepared.conversation
        apply = lambda c: c.after_turn(alias, order, now)  # noqa: E731
        # The end goes out with the record as it will be written, and the write follows (until it is done,
        # this replica's next read of the conversation gets that record): the client does not wait on the bus.
        foreseen = await store.foresee(key, opened, apply)
        skipped = self.prepared.seating.skipped
        bench = route_bench(foreseen, alias, foreseen.turns, self.failover.failed_over, skipped)
        self.updates.put(Done(summary, bench, alias))
        await asyncio.sleep(0)  # the request writes the end now, before the record's encoding and the write
        before, after = await store.close_turn(key, opened, apply, foreseen)
        # The conversation's record is written at once (another replica may take its next turn); the turn's
        # records wait a beat, for the client's last read and its agent's next turn.
        await asyncio.sleep(RECORDS_AFTER_S)
        status = turn_status(summary, "")
        metrics.ROUTE_TURN_SECONDS.labels(status).observe(seconds)
        log.info("route_turn_answered", alias=alias, turn=after.turns, status=status,
                 seconds=round(seconds, 2), tried=self.failover.tried, tool_calls=len(summary.tool_calls))
        await record_turn(self.replica, self.prepared, before, after, alias, status, seconds,
                          self.first_token_s, summary, self.failover.tried, "")
        await queue_shadows(self.replica, self.prepared, after, alias)

    async def _failed(self, ending: Ending, seconds: float) -> None:
        live = ending.kind == "broke"
        order = self.prepared.seating.order
        failure: TurnFailure = (self.failover.part_way(ending.error, ending.status) if live
                                else self.failover.failure())
        self.updates.put(Failed(failure.status, failure.message))
        await asyncio.sleep(0)  # the request answers now, before the record's encoding and the write
        metrics.ROUTE_TURN_SECONDS.labels("error").observe(seconds)
        alias = self.failover.current.alias if live and self.failover.current else ""
        log.info("route_turn_failed", alias=alias, status=failure.status, error=failure.message[:300])
        now = utcnow()
        before, after = await self.replica.store.close_turn(
            self.prepared.key, self.prepared.conversation, lambda c: c.after_turn("", order, now))
        await record_turn(self.replica, self.prepared, before, after, alias, "error", seconds,
                          self.first_token_s, ending.summary if live else None, self.failover.tried,
                          failure.message)

    # ------------------------------------------------------------ one member

    async def _attempt(self, attempt: Attempt) -> Ending:
        config, settings = self.replica.config, self.replica.settings
        member = self.prepared.seating.seat(attempt.alias)
        endpoint = config.endpoints.get(member.endpoint)
        if endpoint is None:
            return Ending("failed", f"endpoint {member.endpoint!r} is not configured on this gateway")
        if self.loop.time() >= self.turn_end:
            return Ending("failed", f"the turn's {settings.route_deadline_s:g}s ran out before this member")
        own = {"max_tokens": member.max_tokens} if member.max_tokens else None  # the model's option (P-10)
        asked = self.prepared
        body = upstream_body(member.served, asked.ask.messages, asked.fields, own, member.max_output)
        relay = await self.replica.relays.open()
        try:
            deadline = time.time() + (self.turn_end - self.loop.time())
            call = route_call(asked.conversation, self.turn, attempt, member, endpoint, body, relay.relay,
                              settings.route_first_piece_s, deadline, config.seq)
            refused = await relay.ask(call)
            if refused:
                return Ending("failed", refused)
            return await self._follow(relay, attempt)
        finally:
            relay.close()

    async def _follow(self, relay: MemberRelay, attempt: Attempt) -> Ending:
        window_s = self.replica.settings.route_first_piece_s
        window_end = self.loop.time() + window_s + RELAY_MARGIN_S
        stream = MemberStream()

        def ended(error: str, status: int | None = None) -> Ending:
            return Ending("broke" if stream.live else "failed", error, status, stream.summary())

        while True:
            until = self.turn_end if stream.assembly.anything else min(window_end, self.turn_end)
            # A live caller beats every RELAY_BEAT_S: a longer silence means it died (invariant 3).
            heard_by = self.loop.time() + RELAY_SILENCE_S
            frame = await relay.next(min(until, heard_by) - self.loop.time())
            if frame is None or isinstance(frame, str):
                await relay.cancel()
                if frame is None and heard_by < until:
                    frame = f"the caller went silent for {RELAY_SILENCE_S:g}s (it may have stopped)"
                elif frame is None:
                    deadline_s = self.replica.settings.route_deadline_s
                    frame = f"no answer in {deadline_s:g}s" if stream.assembly.anything else silent(window_s)
                return ended(frame)
            if frame.kind == "beat":
                continue
            passed: list[Chunk] = []
            for chunk in frame.chunks:
                passed += stream.feed(chunk)
                if stream.error:
                    break
            if passed:
                if self.failover.state == "trying":
                    self.failover.went_live()
                    self.first_token_s = self.loop.time() - self.prepared.started
                self.updates.put(Pieces(passed, attempt.alias))
            if stream.error:
                await relay.cancel()
                return ended(stream.error)
            if frame.kind == "chunks":
                continue
            outcome = frame.outcome
            if frame.kind == "fail" or outcome is None or outcome.status == "error":
                error = outcome.error if outcome is not None else "the caller ended the call without a reason"
                return ended(error or "the call failed", outcome.http_status if outcome else None)
            if stream.live:
                return Ending("answered", summary=stream.summary())
            return Ending("empty", summary=stream.summary(), held=stream.release())
