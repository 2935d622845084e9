"""The events a finished call becomes: its `SeatCompleted` and, after a rate limit, a `CooldownStarted`."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from services.caller.endpoint_base import is_base_refusal
from services.caller.outcome import CallOutcome, CallReport, Usage, no_answer_text, seat_result
from services.caller.paid_guard import is_held
from services.caller.rate_limits import cooldown_until
from services.caller.redaction import has_images, without_images
from services.caller.swaps import is_swap
from shared.commands import MESSAGES, SeatCall
from shared.events import CooldownStarted, SeatCompleted
from shared.ids import event_id

CHARS_PER_TOKEN = 4


def estimated_usage(call: SeatCall, outcome: CallOutcome) -> Usage:
    """~chars/4 when the provider reported nothing (L-2's in-flight estimate rule)."""
    prompt = json.dumps(MESSAGES.dump_python(call.messages, exclude_unset=True), ensure_ascii=False)
    produced = len(outcome.text) + len(outcome.reasoning) + sum(len(t.arguments) for t in outcome.tool_calls)
    return Usage(tokens_in=len(prompt) // CHARS_PER_TOKEN, tokens_out=produced // CHARS_PER_TOKEN)


def usage_of(call: SeatCall, report: CallReport) -> tuple[Usage, bool]:
    """The provider's usage, or an estimate (flagged) when it reported none but did produce output."""
    if report.usage is not None:
        return report.usage, False
    if report.outcome.produced_output:
        return estimated_usage(call, report.outcome), True
    return Usage(), False


def seat_completed(call: SeatCall, report: CallReport, caller: str) -> SeatCompleted:
    outcome = report.outcome
    error = without_images(outcome.error) if outcome.error and has_images(call.messages) else outcome.error
    result = seat_result(outcome.text, error, report.seconds)
    usage, estimated = usage_of(call, report)
    return SeatCompleted(
        **seat_identity(call), by="caller", caller=caller,
        status=result.status, seconds=result.seconds, answer=result.answer, error=result.error,
        http_status=outcome.http_status, attempts=report.attempts,
        tokens_in=usage.tokens_in, tokens_out=usage.tokens_out, reasoning_tokens=usage.reasoning,
        cached_tokens=usage.cached, tokens_estimated=estimated,
        served_by=outcome.model, swap=is_swap(call.served, outcome.model),
        tool_calls=len(outcome.tool_calls), first_token_s=outcome.first_token_s,
        paced=report.paced, waited_s=round(report.waited_s, 1),
    )


def seat_expired(call: SeatCall, caller: str) -> SeatCompleted:
    """A call taken off the queue after its deadline (e.g. redelivered after a caller died): not sent."""
    return SeatCompleted(**seat_identity(call), by="caller", caller=caller, status="error",
                         seconds=round(call.timeout_s, 1), error=no_answer_text(call.timeout_s), attempts=0)


def seat_identity(call: SeatCall) -> dict[str, Any]:
    return {
        "id": event_id("seat", call.call), "call": call.call, "panel": call.panel, "seat": call.seat,
        "alias": call.alias, "served": call.served, "endpoint": call.endpoint, "connection": call.connection,
        "collection": call.collection, "task": call.task, "purpose": call.purpose,
    }


def cooldown_started(call: SeatCall, error: str, now: datetime) -> CooldownStarted | None:
    """L-3: a failed call whose text says rate limit rests the model until the stated wait (else 30 min).
    Neither the free-tier guard's refusal nor a refused base ever does, whatever words they carry."""
    rest = None if is_held(error) or is_base_refusal(error) else cooldown_until(error, now)
    if rest is None:
        return None
    until, why = rest
    return CooldownStarted(id=event_id("cool", call.alias, until.isoformat()), by="caller", alias=call.alias,
                           connection=call.connection, until=until, why=why)
