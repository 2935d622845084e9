"""U-4 retry decisions: which failures, how long to wait, never past the deadline; the budget retry."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from services.caller.outcome import CallOutcome
from services.caller.retries import backoff_s, doubled_budget, is_retryable, retry_after_seconds, retry_wait

NOW = 1_000_000.0


def status(code: int, retry_after: str | None = None) -> CallOutcome:
    return CallOutcome(error=f"Error: Error code: {code} - x", http_status=code, retry_after=retry_after)


@pytest.mark.parametrize("code", [408, 409, 429, 500, 502, 503, 529])
def test_retryable_statuses(code: int) -> None:
    assert is_retryable(status(code))


@pytest.mark.parametrize("code", [400, 401, 403, 404, 422, 307])
def test_not_retryable_statuses(code: int) -> None:
    assert not is_retryable(status(code))


def test_connection_errors_are_retryable_and_answers_are_not() -> None:
    assert is_retryable(CallOutcome(error="Error: client failed: connection error", connection_failed=True))
    assert not is_retryable(CallOutcome(text="hi", http_status=200))
    assert not is_retryable(
        CallOutcome(error="Error: client failed: stream cut before [DONE]", http_status=200)
    )


def test_retry_after_seconds_or_http_date() -> None:
    assert retry_after_seconds("2", NOW) == 2.0
    assert retry_after_seconds("0.5", NOW) == 0.5
    date = format_datetime(datetime.fromtimestamp(NOW + 30, UTC), usegmt=True)
    assert retry_after_seconds(date, NOW) == pytest.approx(30, abs=1)
    assert retry_after_seconds("soon", NOW) is None
    assert retry_after_seconds(None, NOW) is None


def test_sane_retry_after_is_used_as_is() -> None:
    assert backoff_s(1, 2.0, lambda: 0.9) == 2.0
    assert backoff_s(2, 60.0, lambda: 0.9) == 60.0


@pytest.mark.parametrize("retry_after", [None, 0.0, -3.0, 61.0, 3600.0])
def test_otherwise_half_a_second_then_one_jittered(retry_after: float | None) -> None:
    assert 0.4 <= backoff_s(1, retry_after, lambda: 0.0) <= backoff_s(1, retry_after, lambda: 0.999) <= 0.6
    assert 0.8 <= backoff_s(2, retry_after, lambda: 0.0) <= backoff_s(2, retry_after, lambda: 0.999) <= 1.2


def test_backoff_is_capped_at_eight_seconds() -> None:
    assert backoff_s(10, None, lambda: 0.999) == 8.0


def test_two_more_tries_then_none() -> None:
    outcome = status(429, "1")
    assert retry_wait(outcome, 0, 2, NOW, NOW + 420) == 1.0
    assert retry_wait(outcome, 1, 2, NOW, NOW + 420) == 1.0
    assert retry_wait(outcome, 2, 2, NOW, NOW + 420) is None


def test_never_waits_past_the_deadline() -> None:
    assert retry_wait(status(429, "5"), 0, 2, NOW, NOW + 4) is None
    assert retry_wait(status(429, "5"), 0, 2, NOW, NOW + 6) == 5.0


def test_no_retry_for_a_client_error() -> None:
    assert retry_wait(status(401), 0, 2, NOW, NOW + 420) is None


def cut_empty(**over: object) -> CallOutcome:
    fields: dict[str, object] = {"text": "", "finish": "length", "http_status": 200}
    fields.update(over)
    return CallOutcome(**fields)  # type: ignore[arg-type]


def test_empty_answer_cut_by_length_doubles_the_budget_once() -> None:
    assert doubled_budget(cut_empty(), "panel", {"max_tokens": 100, "x": 1}) == {"max_tokens": 200, "x": 1}
    assert doubled_budget(cut_empty(), "panel", {"max_completion_tokens": 50}) == {
        "max_completion_tokens": 100
    }


def test_budget_retry_is_capped_at_max_output() -> None:
    assert doubled_budget(cut_empty(), "panel", {"max_tokens": 100}, max_output=150) == {"max_tokens": 150}
    assert doubled_budget(cut_empty(), "panel", {"max_tokens": 100}, max_output=100) is None


@pytest.mark.parametrize(
    ("outcome", "purpose", "options"),
    [
        (cut_empty(), "merger", {"max_tokens": 100}),  # panel seats only
        (cut_empty(text="partial"), "panel", {"max_tokens": 100}),  # not empty
        (cut_empty(finish="stop"), "panel", {"max_tokens": 100}),  # not cut by length
        (cut_empty(error="Error: x"), "panel", {"max_tokens": 100}),
        (cut_empty(), "panel", {}),  # no budget to double
    ],
)
def test_budget_retry_only_for_empty_length_panel_seats(
    outcome: CallOutcome, purpose: str, options: dict[str, object]
) -> None:
    assert doubled_budget(outcome, purpose, options) is None
