"""A finished call's events: SeatCompleted fields and usage, the expired seat, the cooldown."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from services.caller.outcome import CallOutcome, CallReport, Usage
from services.caller.seat_events import cooldown_started, seat_completed, seat_expired
from shared.commands import SeatCall

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)


def seat_call(**over: Any) -> SeatCall:
    fields: dict[str, Any] = {
        "call": "p20261202-120000-abcd.explorer",
        "panel": "p20261202-120000-abcd",
        "seat": "explorer",
        "alias": "fast",
        "served": "vendor/fast",
        "endpoint": "groq",
        "base": "https://api.example.com/v1",
        "connection": "groq",
        "collection": "code",
        "task": "t",
        "messages": [{"role": "user", "content": "x" * 40}],
        "deadline": 2e9,
        "timeout_s": 420.0,
    }
    fields.update(over)
    return SeatCall.model_validate(fields)


def test_completed_from_a_reported_usage() -> None:
    report = CallReport(
        CallOutcome(text="answer", http_status=200, usage=Usage(10, 4, 2, 3)), 2, Usage(10, 4, 2, 3), 1.26
    )
    event = seat_completed(seat_call(), report, "caller-h-1")
    assert event.id == "seat:p20261202-120000-abcd.explorer"
    assert event.subject() == "bench.ev.seat.p20261202-120000-abcd.explorer"
    assert (event.status, event.answer, event.seconds, event.attempts, event.http_status) == (
        "ok",
        "answer",
        1.3,
        2,
        200,
    )
    assert (event.tokens_in, event.tokens_out, event.reasoning_tokens, event.cached_tokens) == (10, 4, 2, 3)
    assert not event.tokens_estimated
    assert (event.caller, event.seat, event.collection, event.connection) == (
        "caller-h-1",
        "explorer",
        "code",
        "groq",
    )


def test_usage_is_estimated_when_none_was_reported() -> None:
    report = CallReport(CallOutcome(text="y" * 20, http_status=200), 1, None, 0.5)
    event = seat_completed(seat_call(), report, "c")
    assert event.tokens_estimated and event.tokens_out == 5 and event.tokens_in > 10


def test_a_failed_call_with_no_output_has_no_tokens() -> None:
    report = CallReport(CallOutcome(error="Error: Error code: 500 - x", http_status=500), 3, None, 2.0)
    event = seat_completed(seat_call(), report, "c")
    assert (event.status, event.tokens_in, event.tokens_out, event.tokens_estimated) == ("error", 0, 0, False)


def test_errors_of_image_requests_are_redacted() -> None:
    image = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x.example/i.png"}}]}
    ]
    report = CallReport(
        CallOutcome(error="Error: cannot fetch https://x.example/i.png?token=abc", http_status=400),
        1,
        None,
        1.0,
    )
    assert "token=abc" not in seat_completed(seat_call(messages=image), report, "c").error


def test_expired_seat_is_an_error_without_a_call() -> None:
    event = seat_expired(seat_call(), "c")
    assert (event.status, event.error, event.attempts, event.seconds) == (
        "error",
        "no answer in 420s",
        0,
        420.0,
    )


def test_cooldown_after_a_rate_limit() -> None:
    event = cooldown_started(seat_call(), "Error: Error code: 429 - slow down Retry-After: 2", NOW)
    assert event is not None
    assert event.id == "cool:fast:2026-12-02T12:00:02+00:00"
    assert (event.alias, event.connection, event.subject()) == ("fast", "groq", "bench.ev.limit.groq")


def test_no_cooldown_after_other_errors() -> None:
    assert cooldown_started(seat_call(), "Error: Error code: 401 - bad key", NOW) is None


def test_a_silent_swap_is_noted_and_still_a_success() -> None:
    report = CallReport(CallOutcome(text="hi", model="other-model-9b"), 1, None, 0.5)
    event = seat_completed(seat_call(), report, "caller-h-1")
    assert (event.status, event.served_by, event.swap) == ("ok", "other-model-9b", True)
    same = seat_completed(
        seat_call(), CallReport(CallOutcome(text="hi", model="fast-2025-01-01"), 1, None, 0.5), "c"
    )
    assert (same.served_by, same.swap) == ("fast-2025-01-01", False)


def test_pacing_is_recorded_on_the_usage_event() -> None:
    refusal = (
        "Error: client failed: rate limit (not sent; paced by the bench): connection groq allows 1 "
        "requests per minute (your limit) and 1 were used; try again in 50s"
    )
    refused = seat_completed(
        seat_call(), CallReport(CallOutcome(error=refusal), 0, None, 0.0, "refused"), "c"
    )
    assert (refused.status, refused.attempts, refused.paced, refused.error) == (
        "error",
        0,
        "refused",
        refusal,
    )
    waited = seat_completed(
        seat_call(), CallReport(CallOutcome(text="ok"), 1, None, 9.0, "waited", 7.94), "c"
    )
    assert (waited.paced, waited.waited_s) == ("waited", 7.9)
    cooldown = cooldown_started(seat_call(), refusal, NOW)  # L-2a: a refusal teaches a cooldown
    assert cooldown is not None and (cooldown.until - NOW).total_seconds() == 50
