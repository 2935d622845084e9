"""One route-mode member call (RM-5, RM-6): the seat machinery (key, pacing, adapters, retries) with the
reply passed on chunk by chunk as it arrives instead of gathered.

Two clocks: until the member sends anything (text, reasoning or a tool call) the first-piece window runs
from the moment the call was accepted, pacing included (route mode waits at most that long for a slot);
after that only the turn's deadline. A retry happens only before any chunk went out: the gateway has
started folding what it received, and a second reply would be spliced onto the first. The gateway may
stop the call at any time (it failed over): `stop` is set, the request is abandoned, the usage recorded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import httpx

from services.caller.adapters import ADAPTERS, Adapter
from services.caller.outcome import CallOutcome, CallReport, Tally, client_failed
from services.caller.redaction import without_key
from services.caller.retries import retry_wait
from services.caller.route_chunks import Chunk, chunks_of_outcome, translator_for
from services.caller.route_events import RouteReport
from services.caller.upstream import OpenTicket, ReplyTooLarge, Upstream, read_capped, sse_lines
from services.caller.wire import MAX_REPLY_BYTES, UpstreamRequest
from shared.commands import SeatCall

Emit = Callable[[Chunk], Awaitable[None]]
ReadAll = Callable[[], None]  # told when the member's reply has been read to its end
STOPPED = "stopped: the gateway moved on from this member"


@dataclass
class Stop:
    """Set when the call must end now, with why (the gateway failed over, or this caller is stopping):
    cancels the task doing the call's work, if it runs (no task waits for the stop). Only the first `set`
    cancels: the call takes back exactly the one cancellation it caused (`RouteCaller._stoppable`)."""

    why: str = STOPPED
    stopped: bool = False
    work: asyncio.Task[object] | None = None

    def set(self, why: str = STOPPED) -> None:
        if self.stopped:
            return
        self.why, self.stopped = why, True
        if self.work is not None:
            self.work.cancel()


def silent(window_s: float) -> str:
    """The failure of a member that sent nothing at all in its first-piece window (RM-6)."""
    return f"nothing in {window_s:g}s (no text, reasoning or tool call)"


def piece_kind(chunk: Chunk) -> str:
    """`piece` for text or a tool call, `reasoning` for reasoning alone, "" for anything else."""
    choices = chunk.get("choices")
    delta = choices[0].get("delta") if isinstance(choices, list) and choices and isinstance(
        choices[0], dict) else None
    if not isinstance(delta, dict):
        return ""
    if delta.get("content") or delta.get("tool_calls"):
        return "piece"
    return "reasoning" if delta.get("reasoning_content") or delta.get("reasoning") else ""


@dataclass
class Progress:
    """What went out so far, and the timer the first thing re-arms for the turn's deadline."""

    emit: Emit
    started: float  # loop time at acceptance
    turn_end: float  # loop time of the turn's deadline
    read_all: ReadAll | None = None
    timer: asyncio.Timeout | None = None
    relayed: bool = False  # a chunk went out: no retry any more
    anything: bool = False  # text, reasoning or a tool call went out: the window is over
    first_piece_s: float | None = None

    async def send(self, chunk: Chunk) -> None:
        kind = piece_kind(chunk)
        now = asyncio.get_running_loop().time()
        if kind and not self.anything:
            self.anything = True
            if self.timer is not None:
                self.timer.reschedule(self.turn_end)
        if kind == "piece" and self.first_piece_s is None:
            self.first_piece_s = now - self.started
        self.relayed = True
        await self.emit(chunk)


class RouteCaller:
    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream

    async def call(
        self, seat: SeatCall, first_piece_s: float, emit: Emit, stop: Stop, accepted: float | None = None,
        read_all: ReadAll | None = None,
    ) -> RouteReport:
        """The call until it ends, fails, falls silent past its window, or is stopped. `accepted` (loop time)
        is when the call was taken, if before now: its window and its first piece count from then."""
        loop = asyncio.get_running_loop()
        started = loop.time() if accepted is None else accepted
        progress = Progress(emit, started, loop.time() + max(0.0, seat.deadline - time.time()), read_all)
        tally, open_ticket = Tally(), OpenTicket()
        outcome = await self._stoppable(seat, first_piece_s, progress, tally, open_ticket, stop)
        if open_ticket.ticket is not None:  # cut short: the estimate stands
            await self.upstream.pacer.settle(seat, open_ticket.ticket, open_ticket.tokens, [])
        key = self.upstream.keys.key_for(seat.endpoint)
        outcome.error, outcome.text = without_key(outcome.error, key), without_key(outcome.text, key)
        report = CallReport(outcome, tally.attempts, tally.usage, loop.time() - started, tally.paced,
                            round(tally.waited_s, 3), tally.quotas)
        return RouteReport(report, progress.first_piece_s)

    async def _stoppable(self, seat: SeatCall, window_s: float, progress: Progress, tally: Tally,
                         open_ticket: OpenTicket, stop: Stop) -> CallOutcome:
        """The call's work in the caller's own task, so the request leaves before anything else this
        process queued (the acceptance's reply among them): no task of its own, no loop turn to start it.
        A stop cancels this task; the one cancellation it caused is taken back here, any other goes on."""
        if stop.stopped:
            return CallOutcome(error=stop.why)
        task = asyncio.current_task()
        assert task is not None
        stop.work = task
        try:
            return await self._timed(seat, window_s, progress, tally, open_ticket)
        except asyncio.CancelledError:
            if not stop.stopped or task.uncancel() > 0:
                raise
            return CallOutcome(error=stop.why)
        finally:
            stop.work = None

    async def _timed(self, seat: SeatCall, window_s: float, progress: Progress, tally: Tally,
                     open_ticket: OpenTicket) -> CallOutcome:
        window_end = min(progress.turn_end, progress.started + window_s)
        try:
            async with asyncio.timeout_at(window_end) as timer:
                progress.timer = timer
                return await self._with_retries(seat, window_end, progress, tally, open_ticket)
        except TimeoutError:
            if progress.anything:
                return CallOutcome(error=f"no answer in {progress.turn_end - progress.started:.0f}s")
            return CallOutcome(error=silent(window_s))

    async def _with_retries(self, seat: SeatCall, window_end: float, progress: Progress, tally: Tally,
                            open_ticket: OpenTicket) -> CallOutcome:
        key = self.upstream.keys.key_for(seat.endpoint)
        refusal = self.upstream.refusal(seat, key)
        if refusal:
            return client_failed(refusal)
        adapter = ADAPTERS[seat.api]
        request = adapter.build(seat, key)
        retries, last = 0, None
        while True:
            # Pacing may hold the call only as long as the window leaves (a later slot is a refusal).
            window_epoch = time.time() + (window_end - asyncio.get_running_loop().time())
            paced_seat = seat.model_copy(update={"deadline": min(seat.deadline, window_epoch)})
            outcome = await self.upstream.paced_attempt(
                seat, request, tally, open_ticket,
                lambda sent: self.attempt(sent, adapter, seat.api, progress), admit_as=paced_seat)
            if tally.refused:
                return last or outcome
            last = outcome
            if progress.relayed:
                return outcome
            fallback = adapter.fallback(request, outcome)
            if fallback is not None:
                request = fallback
                continue
            wait = retry_wait(outcome, retries, seat.retries, time.time(), window_epoch, self.upstream.chance)
            if wait is None:
                return outcome
            retries += 1
            await asyncio.sleep(wait)

    async def attempt(self, request: UpstreamRequest, adapter: Adapter, api: str,
                      progress: Progress) -> CallOutcome:
        """One HTTP request, its chunks passed on as they come; every failure becomes an outcome."""
        return await self.upstream.exchange(request, lambda resp: self._relay(resp, adapter, api, progress))

    @staticmethod
    async def _relay(resp: httpx.Response, adapter: Adapter, api: str, progress: Progress) -> CallOutcome:
        if "text/event-stream" not in resp.headers.get("content-type", ""):
            raw = await read_capped(resp)
            if raw.lstrip().startswith((b"data:", b"event:")):
                lines = raw.decode(errors="replace").splitlines()
            else:
                outcome = adapter.parse_plain(raw)
                if not outcome.error:
                    for chunk in chunks_of_outcome(outcome):
                        await progress.send(chunk)
                return outcome
        else:
            lines = None
        parser, translator, size = adapter.parser(), translator_for(api), 0
        source = sse_lines(resp) if lines is None else _iterate(lines)
        async for line in source:
            size += len(line) + 1
            if size > MAX_REPLY_BYTES:
                raise ReplyTooLarge
            parser.feed_line(line)
            if parser.outcome.error:
                break
            for chunk in translator.feed_line(line):
                await progress.send(chunk)
            if parser.done:
                if progress.read_all is not None:
                    progress.read_all()
                break
        return parser.finish()


async def _iterate(lines: list[str]) -> AsyncIterator[str]:
    for line in lines:
        yield line
