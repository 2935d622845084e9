"""What a route turn leaves on the bus once its client has the end (RM-9, shadow seats): the turn's record,
the first-answer offload, and the shadow members' seat calls. The client never waits on any of it, and a
publish that fails loses only the record, never the answer."""

from __future__ import annotations

import time

import structlog

from services.gateway.route_mode.assemble import TurnSummary
from services.gateway.route_mode.bench import Status, first_answer_offload, route_turn, task_text
from services.gateway.route_mode.conversation import Conversation
from services.gateway.route_mode.prepared import PreparedTurn, Replica
from services.gateway.route_mode.record import offload_event, shadow_calls, turn_event
from shared import bus, subjects
from shared.events import EventBase

log = structlog.get_logger("gateway.route")


async def record_turn(
    replica: Replica, prepared: PreparedTurn, before: Conversation, after: Conversation, alias: str,
    status: Status, seconds: float, first_token_s: float | None, summary: TurnSummary | None,
    tried: list[str], error: str,
) -> None:
    """The turn's `RouteTurn`, and the offload when `alias` answered this conversation for the first time."""
    task = task_text(prepared.ask.messages)
    record = route_turn(after, alias=alias, at=prepared.at, task=task, status=status, seconds=seconds,
                        first_token_s=first_token_s, summary=summary, tried=tried, error=error)
    out: list[EventBase] = [turn_event(record, replica.instance)]
    offload = first_answer_offload(before, after, alias, task, status, seconds)
    if offload is not None and summary is not None and status != "error":
        seat = prepared.seating.seat(alias)
        out.append(offload_event(offload, after, seat, summary, status, seconds, replica.instance))
    js = replica.nc.jetstream()
    for event in out:
        try:
            await bus.publish_event(js, event)
        except Exception as exc:
            log.error("route_record_lost", event=event.id, error=f"{type(exc).__name__}: {exc}"[:300])


async def queue_shadows(replica: Replica, prepared: PreparedTurn, after: Conversation, alias: str) -> None:
    """Issue 4 (7): the shadow seats the seater named answer the same turn in the background, as seats with
    purpose `shadow` taken by any caller off the work queue (not the member that just answered it)."""
    config, settings = replica.config, replica.settings
    chosen = [
        (seat, endpoint) for seat in prepared.seating.shadows
        if seat.alias != alias and (endpoint := config.endpoints.get(seat.endpoint)) is not None
    ]
    if not chosen:
        return
    task = f"{task_text(prepared.ask.messages)} ({after.collection}:route)"
    calls = shadow_calls(after, after.turns, chosen, prepared.ask.messages, prepared.fields, task,
                         time.time() + settings.seat_deadline_s, settings.seat_deadline_s, config.seq)
    js = replica.nc.jetstream()
    for call in calls:
        try:
            await js.publish(subjects.call_subject(call.call), call.model_dump_json().encode(),
                             headers={"Nats-Msg-Id": f"call:{call.call}"})
        except Exception as exc:
            log.error("shadow_not_queued", call=call.call, error=f"{type(exc).__name__}: {exc}"[:300])
