"""What a route call is to the rest of the caller, and what it becomes when it ends (RM-6, RM-9). Pure.

A `RouteCall` is seen as a `SeatCall` (purpose `route`) so the adapters, pacing and limit learning treat it
like any provider call; its end is told twice: a `RelayOutcome` to the asking gateway and a `CallUsed`
event (the call's usage, L-5) to the stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from services.caller.outcome import CallOutcome, CallReport
from services.caller.seat_events import usage_of
from services.caller.swaps import is_swap
from shared.commands import MESSAGES, RelayOutcome, RelayUsage, RouteCall, SeatCall
from shared.events import CallUsed
from shared.ids import event_id

OURS = ("model", "messages", "stream", "stream_options")  # body fields the caller sets itself
ROUTE_SEAT = "route"
Status = Literal["ok", "empty", "error"]


@dataclass
class RouteReport:
    """A call's report plus when its first piece (text or a tool call) went out, from acceptance."""

    report: CallReport
    first_piece_s: float | None = None


def route_seat(call: RouteCall) -> SeatCall:
    """The call as the adapters, the pacer and limit learning know calls."""
    messages = call.body.get("messages")
    return SeatCall(
        call=call.call, panel=call.conversation, seat=ROUTE_SEAT, alias=call.alias, served=call.served,
        endpoint=call.endpoint, base=call.base, api=call.api, headers=dict(call.headers),
        connection=call.connection, collection=call.collection, purpose="route",
        messages=MESSAGES.validate_python(messages if isinstance(messages, list) else []),
        options={k: v for k, v in call.body.items() if k not in OURS}, deadline=call.deadline,
        timeout_s=max(0.0, call.deadline - call.first_piece_s), retries=call.retries,
    )


def route_status(outcome: CallOutcome) -> Status:
    """RM-6: an answer is text or a tool call; reasoning alone is an empty reply."""
    if outcome.error:
        return "error"
    return "ok" if outcome.text or outcome.tool_calls else "empty"


def relay_outcome(seat: SeatCall, routed: RouteReport) -> RelayOutcome:
    report = routed.report
    outcome = report.outcome
    usage, estimated = usage_of(seat, report)
    return RelayOutcome(
        status=route_status(outcome), error=outcome.error, http_status=outcome.http_status,
        finish_reason=outcome.finish or "",
        usage=RelayUsage(tokens_in=usage.tokens_in, tokens_out=usage.tokens_out,
                         reasoning_tokens=usage.reasoning, cached_tokens=usage.cached, estimated=estimated),
        served_by=outcome.model, attempts=report.attempts, paced=report.paced,
        seconds=round(report.seconds, 3), first_piece_s=routed.first_piece_s,
    )


def call_used(call: RouteCall, relayed: RelayOutcome, caller: str, waited_s: float = 0.0) -> CallUsed:
    """L-5: one usage line per route call, whatever became of it."""
    usage = relayed.usage
    return CallUsed(
        id=event_id("used", call.call), by="caller", call=call.call, conversation=call.conversation,
        alias=call.alias, served=call.served, endpoint=call.endpoint, connection=call.connection,
        collection=call.collection, purpose="route", status=relayed.status, seconds=round(relayed.seconds, 1),
        first_token_s=None if relayed.first_piece_s is None else round(relayed.first_piece_s, 2),
        error=relayed.error[-500:], http_status=relayed.http_status, attempts=relayed.attempts,
        tokens_in=usage.tokens_in, tokens_out=usage.tokens_out, reasoning_tokens=usage.reasoning_tokens,
        cached_tokens=usage.cached_tokens, tokens_estimated=usage.estimated, paced=relayed.paced,
        waited_s=round(waited_s, 1),
        served_by=relayed.served_by, swap=is_swap(call.served, relayed.served_by), caller=caller,
    )
