"""The bus messages a route turn sends and records (RM-5, RM-9, shadow seats). Pure.

Each attempt is a `RouteCall` to one caller. When the turn is over it is recorded as one `RouteTurn` (never
the prompt), plus, the first time a model answers the conversation, its one unjudged offload: a
`SeatCompleted` with purpose `route` under `<conv>.<n>`. The offload carries no token counts: every upstream
call's usage is already in its own `CallUsed` line, and counting it twice would double the usage views.
Shadow members get the same turn as ordinary seat calls with purpose `shadow`, answered by whichever
caller takes them off the work queue, after the agent has its answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.gateway.route_mode.assemble import TurnSummary
from services.gateway.route_mode.bench import RouteOffload, RouteTurn, Status
from services.gateway.route_mode.conversation import Conversation
from services.gateway.route_mode.failover import Attempt
from services.gateway.route_mode.upstream_request import upstream_options
from shared import events
from shared.commands import MESSAGES, RouteCall, RouteSeat, SeatCall
from shared.events import EndpointSaved, SeatCompleted
from shared.ids import event_id

ROUTE_SEAT = "route"
SHADOW_SEAT = "shadow"


def bare(collection: str) -> str:
    """`bench/core` → `core`: how seats and usage lines name a collection."""
    return collection.removeprefix("bench/")


def attempt_call(conversation: Conversation, turn: int, attempt: Attempt) -> str:
    """The usage id of one member's attempt: `<conv>.t<turn>.<position>`."""
    return f"{conversation.id}.t{turn}.{attempt.position}"


def route_call(
    conversation: Conversation, turn: int, attempt: Attempt, member: RouteSeat, endpoint: EndpointSaved,
    body: dict[str, Any], relay: str, first_piece_s: float, deadline: float,
    config_seq: int = 0,
) -> RouteCall:
    """`config_seq` is the gateway's config position: the caller decides on a config at least as new."""
    return RouteCall(
        call=attempt_call(conversation, turn, attempt), conversation=conversation.id, turn=turn,
        alias=member.alias, served=member.served, endpoint=endpoint.name, base=endpoint.base,
        api=endpoint.api, headers=dict(endpoint.headers), connection=member.connection,
        collection=bare(conversation.collection), body=body, relay=relay, first_piece_s=first_piece_s,
        deadline=deadline, retries=attempt.retries, config_seq=config_seq,
    )


def turn_event(record: RouteTurn, by: str) -> events.RouteTurn:
    return events.RouteTurn(
        id=event_id("turn", record.conversation, str(record.turn)), at=record.at, by=by,
        conversation=record.conversation, call=record.call, collection=bare(record.model), key=record.key,
        alias=record.alias, turn=record.turn, task=record.task, status=record.status, seconds=record.seconds,
        first_token_s=record.first_token_s, tool_calls=record.tool_calls, finish=record.finish or "",
        tokens_in=record.tokens_in, tokens_out=record.tokens_out, reasoning_tokens=record.reasoning,
        tried=list(record.tried or []), error=record.error or "",
    )


def answer_text(summary: TurnSummary) -> str:
    """What the model answered, for the offload: its text, then one line per tool call it made."""
    calls = [f"[tool call] {call.name}({call.arguments_json()})" for call in summary.tool_calls]
    return "\n".join(part for part in (summary.text, *calls) if part)


def offload_event(
    offload: RouteOffload, conversation: Conversation, member: RouteSeat,
    summary: TurnSummary, status: Status, seconds: float, by: str,
) -> SeatCompleted:
    return SeatCompleted(
        id=event_id("seat", offload.call), by=by, call=offload.call, panel=conversation.id, seat=ROUTE_SEAT,
        alias=member.alias, served=member.served, endpoint=member.endpoint, connection=member.connection,
        collection=bare(conversation.collection), task=offload.task, purpose="route", status=status,
        seconds=round(seconds, 1), answer=answer_text(summary), caller=by,
    )


def shadow_calls(
    conversation: Conversation, turn: int, shadows: Sequence[tuple[RouteSeat, EndpointSaved]],
    messages: Sequence[dict[str, Any]], route_fields: dict[str, Any], task: str, deadline: float,
    timeout_s: float, config_seq: int = 0,
) -> list[SeatCall]:
    """One seat call per shadow seat (with its endpoint): the turn as the agent sent it,
    under `<conv>.shadow<k>.t<turn>`."""
    asked = MESSAGES.validate_python(messages)
    return [
        SeatCall(
            call=f"{conversation.id}.shadow{k}.t{turn}", panel=conversation.id, seat=SHADOW_SEAT,
            alias=seat.alias, served=seat.served, endpoint=endpoint.name, base=endpoint.base,
            api=endpoint.api, headers=dict(endpoint.headers), connection=seat.connection,
            collection=bare(conversation.collection), task=task, purpose="shadow", messages=asked,
            options=upstream_options(route_fields, None, seat.max_output), deadline=deadline,
            timeout_s=timeout_s, config_seq=config_seq,
        )
        for k, (seat, endpoint) in enumerate(shadows, 1)
    ]
