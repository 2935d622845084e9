"""A panel on the bus: plan with the seater, queue one call per seat, gather the answers as they land, and
in merged mode ask the merger (a seat of its own) once they are in.

Each panel runs in a task of its own, apart from the HTTP request that asked for it: a client that hangs up
stops nothing (S-7, P-10); every seat still completes and the panel is still logged (`PanelAnswered`).
The request reads the panel's progress from `PanelRun.updates()`.

Answers arrive on a core-NATS subscription to `bench.ev.seat.<panel>.*`, opened before any call is
queued, so the message a client sees is the very message the stream stored. A completion missed while
the connection was down is found by looking in the stream (after a reconnect, and every
`seat_recheck_s`). At the deadline the gateway writes the seat's error itself; the stream keeps whichever
completion came first, and that is the one used.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import structlog
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg as NatsMsg
from nats.js.api import PubAck
from nats.js.errors import NotFoundError

from services.gateway.ask import Ask
from services.gateway.panel.calls import (
    Question,
    merger_question,
    no_answer_error,
    panel_answered,
    panel_question,
    seat_call,
    seat_failed,
)
from services.gateway.panel.flatten import without_images
from services.gateway.panel.merge import Merge, choose_merger, merged
from services.gateway.panel.progress import Failed, Finished, Landed, Seated, Update
from services.gateway.panel.resolve import Resolved
from services.gateway.updates import Updates
from shared import bus, bus_calls, metrics, subjects
from shared.commands import PICK_GRACE_S, PICK_TIMEOUT_S, Plan, PlanRequest, picker_text
from shared.config_state import ConfigState
from shared.events import SeatCompleted, SeatPlan, decode_event
from shared.refusal import Refusal
from shared.settings import GatewaySettings
from shared.waiting import next_within

log = structlog.get_logger("gateway.panel")

PLAN_TIMEOUT_S = 3.0  # one try: a seater answers in milliseconds once it is up
PUBLISH_TIMEOUT_S = 10.0


class PanelRun(Updates[Update]):
    """One panel in flight. `updates()` yields Seated, then Landed per seat in finish order, then
    Finished, or Failed at any point."""

    def __init__(self) -> None:
        super().__init__()
        self.task: asyncio.Task[None] | None = None

    async def updates(self) -> AsyncIterator[Update]:
        while True:
            update = await self.next()
            yield update
            if isinstance(update, Finished | Failed):
                return


def seat_event(data: bytes) -> SeatCompleted | None:
    try:
        event = decode_event(data)
    except Exception as exc:  # a newer schema, or not an event at all: not this panel's answer
        log.warning("seat_event_undecodable", error=str(exc)[:200])
        return None
    return event if isinstance(event, SeatCompleted) else None


class Gathering:
    """A round of seats as their answers land: the first completion per seat counts, later copies do not.
    Panel seats are told to the run as they land; the merger's round tells nobody (`run` None)."""

    def __init__(self, run: PanelRun | None, by_call: dict[str, SeatPlan]) -> None:
        self.run = run
        self.by_call = by_call
        self.results: dict[str, SeatCompleted] = {}
        self.inbox: asyncio.Queue[bytes] = asyncio.Queue()

    async def on_msg(self, msg: NatsMsg) -> None:
        self.inbox.put_nowait(msg.data)

    def missing(self) -> list[SeatPlan]:
        return [seat for call, seat in self.by_call.items() if call not in self.results]

    def land(self, done: SeatCompleted) -> None:
        seat = self.by_call.get(done.call)
        if seat is None or done.call in self.results:
            return
        self.results[done.call] = done
        log.debug("seat_landed", call=done.call, status=done.status, seconds=done.seconds)
        if self.run is not None:
            self.run.put(Landed(seat, done))

    def land_bytes(self, data: bytes) -> None:
        done = seat_event(data)
        if done is not None:
            self.land(done)


class PanelRunner:
    def __init__(self, nc: NATS, config: ConfigState, settings: GatewaySettings, instance: str) -> None:
        self.nc = nc
        self.js = nc.jetstream()
        self.config = config
        self.settings = settings
        self.instance = instance
        self.running: set[asyncio.Task[None]] = set()

    def start(self, ask: Ask, resolved: Resolved) -> PanelRun:
        run = PanelRun()
        task = asyncio.create_task(self._run(run, ask, resolved))
        run.task = task
        self.running.add(task)
        task.add_done_callback(self.running.discard)
        return run

    async def close(self, grace_s: float = 5.0) -> None:
        """Give panels in flight a moment to finish, then stop them (their calls still complete)."""
        if self.running:
            _, late = await asyncio.wait(set(self.running), timeout=grace_s)
            for task in late:
                task.cancel()

    async def _run(self, run: PanelRun, ask: Ask, resolved: Resolved) -> None:
        """Every panel ends its updates with Finished or Failed, whatever goes wrong (H-1: 500 `the panel
        failed (<Type>: <msg>)`)."""
        started, outcome = time.perf_counter(), "failed"
        try:
            await self._panel(run, ask, resolved)
            outcome = "finished"
        except Refusal as refusal:
            run.put(Failed(refusal.status, refusal.message))
        except Exception as exc:
            # No traceback: its frames' locals would write the request's images down (SEC-7).
            why = without_images(f"{type(exc).__name__}: {exc}")
            log.error("panel_failed", error=why[:500])
            run.put(Failed(500, f"the panel failed ({why})"))
        finally:
            metrics.PANEL_SECONDS.labels(resolved.panel_mode, outcome).observe(time.perf_counter() - started)

    async def _panel(self, run: PanelRun, ask: Ask, resolved: Resolved) -> None:
        plan = await self._plan(ask, resolved)
        structlog.contextvars.bind_contextvars(panel=plan.panel)
        run.put(Seated(plan))
        results = await self._ask(plan, plan.seats, panel_question(ask, plan), run)
        merge = await self._merge(plan, ask, results) if resolved.panel_mode == "merged" else None
        # The reply goes out first; the call log line is recorded a beat later, out of the way of the
        # client's read and of its next request.
        run.put(Finished(plan, results, merge))
        for done in results.values():
            metrics.SEATS.labels(done.status).inc()
        await asyncio.sleep(bus.RECORDS_AFTER_S)
        try:
            await bus.publish_event(self.js, panel_answered(plan, ask, self.instance, merge))
        except Exception as exc:  # the answers are in the stream already; only the log line is lost
            log.error("panel_answered_not_recorded", error=f"{type(exc).__name__}: {exc}")
        log.info("panel_answered", seats={c: r.status for c, r in results.items()},
                 merge=merge.note or "merged" if merge is not None else None)

    async def _merge(self, plan: Plan, ask: Ask, results: dict[str, SeatCompleted]) -> Merge:
        """P-15: never raises, so the panel is never lost to its merge; what went wrong becomes the note."""
        seat: SeatPlan | None = None
        try:
            chosen = choose_merger(ask, plan, results)
            if isinstance(chosen, Merge):
                return chosen
            seat, text = chosen
            done = await self._ask(plan, [seat], merger_question(ask, plan, text), None)
            return merged(seat, done[seat.call])
        except Exception as exc:
            why = without_images(f"{type(exc).__name__}: {exc}")[:300]
            log.error("merge_failed", merger=seat.alias if seat else None, error=why)
            who = f"the merger {seat.alias}" if seat else "a merger"
            return Merge(seat=seat, note=f"{who} could not be asked ({why})")

    async def _plan(self, ask: Ask, resolved: Resolved) -> Plan:
        picking = ask.images == 0 and self.config.decision_model() is not None
        request = PlanRequest(
            collection=resolved.name, with_=ask.with_, has_images=ask.images > 0, estimate=ask.estimate,
            key=ask.caller, reply=resolved.panel_mode, config_seq=self.config.seq,
            text=picker_text(ask.system, ask.prompt) if picking else "",
        )
        # A seater that died holding the request, or none up for a moment: asked again within the patience.
        # With a shape picker registered (P-4), the seater may first wait for its answer; without one a plan
        # is waited for no longer than ever, so a seater lost mid-plan costs seconds, not the picker's wait.
        wait = PLAN_TIMEOUT_S + (PICK_TIMEOUT_S + PICK_GRACE_S if picking else 0.0)
        plan = await bus_calls.ask(self.nc, subjects.RPC_SEATER_PLAN, request, Plan, wait,
                                   self.settings.seater_patience_s)
        if plan.refusal is not None:
            raise Refusal(plan.refusal.status, plan.refusal.message)
        return plan

    async def _ask(
        self, plan: Plan, round_seats: list[SeatPlan], question: Question, run: PanelRun | None
    ) -> dict[str, SeatCompleted]:
        """One round: every seat asked `question` at once, each answer gathered as it lands, an error for
        each seat still silent at the deadline."""
        seats = Gathering(run, {seat.call: seat for seat in round_seats})
        # No flush needed: the server handles this connection's SUB before its later PUBs of the calls, so
        # the subscription is live before any caller can see a call, let alone answer it.
        sub = await self.nc.subscribe(subjects.seats_of_panel(plan.panel), cb=seats.on_msg)
        try:
            started = time.monotonic()
            for failed in await self._queue_calls(plan, round_seats, question):
                seats.land(await self._record(failed))
            await self._wait(seats)
            error = no_answer_error(self.settings.seat_deadline_s)
            for seat in seats.missing():
                mine = seat_failed(plan, seat, question, error, time.monotonic() - started, self.instance)
                seats.land(await self._record(mine))
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        return seats.results

    async def _wait(self, seats: Gathering) -> None:
        """Until every seat has landed or the deadline: answers from the subscription as they come, and a look
        in the stream after a reconnect or every `seat_recheck_s` for any the subscription missed."""
        loop = asyncio.get_running_loop()
        end = loop.time() + self.settings.seat_deadline_s
        next_look = loop.time() + self.settings.seat_recheck_s
        reconnects = self.nc.stats["reconnects"]
        while seats.missing() and loop.time() < end:
            now = loop.time()
            try:
                data = await next_within(seats.inbox, min(end - now, next_look - now, 1.0))
            except TimeoutError:
                data = None
            if data is not None:
                seats.land_bytes(data)
                continue
            if self.nc.stats["reconnects"] != reconnects or loop.time() >= next_look:
                reconnects = self.nc.stats["reconnects"]
                next_look = loop.time() + self.settings.seat_recheck_s
                for seat in seats.missing():
                    found = await self._stored_completion(seat.call)
                    if found is not None:
                        seats.land(found)
        while not seats.inbox.empty():
            seats.land_bytes(seats.inbox.get_nowait())

    async def _queue_calls(
        self, plan: Plan, round_seats: list[SeatPlan], question: Question
    ) -> list[SeatCompleted]:
        """Publish one SeatCall per seat, then wait for the acks; returns errors for seats not queued."""
        deadline = time.time() + self.settings.seat_deadline_s
        pending: list[tuple[SeatPlan, asyncio.Future[PubAck]]] = []
        failed: list[SeatCompleted] = []
        for seat in round_seats:
            endpoint = self.config.endpoints.get(seat.endpoint)
            if endpoint is None:
                why = f"endpoint '{seat.endpoint}' is not configured on this gateway"
                failed.append(seat_failed(plan, seat, question, why, 0.0, self.instance))
                continue
            model = self.config.models.get(seat.alias)
            options = {"max_tokens": model.max_tokens} if model is not None and model.max_tokens else {}
            call = seat_call(plan, seat, question, endpoint, deadline, self.settings.seat_deadline_s, options,
                             self.config.seq)
            future = await self.js.publish_async(
                subjects.call_subject(seat.call), call.model_dump_json().encode(),
                headers={"Nats-Msg-Id": f"call:{seat.call}"},
            )
            pending.append((seat, future))
        for seat, future in pending:
            try:
                await asyncio.wait_for(future, PUBLISH_TIMEOUT_S)
            except Exception as exc:
                log.error("seat_call_not_queued", call=seat.call, error=f"{type(exc).__name__}: {exc}")
                why = f"the call could not be queued ({type(exc).__name__})"
                failed.append(seat_failed(plan, seat, question, why, 0.0, self.instance))
        return failed

    async def _stored_completion(self, call: str) -> SeatCompleted | None:
        try:
            raw = await self.js.get_last_msg(subjects.EVENTS_STREAM, subjects.seat_subject(call))
        except NotFoundError:
            return None
        except Exception as exc:
            log.warning("seat_lookup_failed", call=call, error=f"{type(exc).__name__}: {exc}")
            return None
        return seat_event(raw.data or b"")

    async def _record(self, mine: SeatCompleted) -> SeatCompleted:
        """Publish the gateway's own completion for a seat, then read back what the stream kept (a caller's
        answer that got there first wins over ours)."""
        try:
            await bus.publish_event(self.js, mine)
        except Exception as exc:
            log.error("seat_error_not_recorded", call=mine.call, error=f"{type(exc).__name__}: {exc}")
            return mine
        return await self._stored_completion(mine.call) or mine
