"""P-11 seat results: status, rounding, error tail, provider notices in a success reply."""

from __future__ import annotations

from services.caller.outcome import CallOutcome, Tally, Usage, no_answer_text, notice_phrase, seat_result


def test_status_error_then_empty_then_ok() -> None:
    assert seat_result("hi", "Error: x", 1.0).status == "error"
    assert seat_result("  \n", "", 1.0).status == "empty"
    assert seat_result("hi", "", 1.0).status == "ok"


def test_seconds_rounded_to_a_tenth() -> None:
    assert seat_result("hi", "", 1.2649).seconds == 1.3
    assert seat_result("hi", "", 0.04).seconds == 0.0


def test_error_keeps_its_last_500_chars() -> None:
    error = "Error: " + "x" * 600 + "END"
    result = seat_result("", error, 1.0)
    assert len(result.error) == 500 and result.error.endswith("END")


def test_a_short_notice_is_an_error_with_empty_answer() -> None:
    result = seat_result("You have run out of credits, upgrade your plan", "", 0.3)
    assert result.status == "error" and result.answer == ""
    assert result.error == (
        "provider notice in a success reply (run out of credits): "
        "You have run out of credits, upgrade your plan"
    )


def test_notice_excerpt_is_at_most_200_chars() -> None:
    text = "Daily limit reached. " + "y" * 300
    assert len(text) <= 400 and notice_phrase(text) == "daily limit reached"
    result = seat_result(text, "", 1.0)
    assert result.error.startswith("provider notice in a success reply (daily limit reached): ")
    assert len(result.error.split("): ", 1)[1]) == 200


def test_a_long_answer_mentioning_a_phrase_is_an_answer() -> None:
    text = "Here is how pricing works: when you upgrade your plan ... " + "detail " * 80
    assert len(text) > 400
    assert seat_result(text, "", 1.0).status == "ok"


def test_no_answer_text() -> None:
    assert no_answer_text(420.0) == "no answer in 420s"
    assert no_answer_text(2.5) == "no answer in 2.5s"


def test_tally_counts_requests_sent_and_sums_reported_usage() -> None:
    tally = Tally()
    tally.sent()
    tally.answered(CallOutcome(error="Error: Error code: 429 - x", http_status=429))
    assert (tally.attempts, tally.usage) == (1, None)
    for usage in (Usage(10, 2, 1, 0), Usage(10, 3, 0, 4)):
        tally.sent()
        tally.answered(CallOutcome(text="a", usage=usage))
    tally.sent()  # cut off by the deadline: sent, never answered
    assert tally.attempts == 4 and tally.usage == Usage(20, 5, 1, 4)
