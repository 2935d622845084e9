"""RM-6 (A-44..A-47, decision parts): the walk down the order, retries, the turn's status and messages."""

from __future__ import annotations

import pytest

from services.gateway.route_mode.failover import (
    EMPTY_REPLY,
    Attempt,
    FailedOver,
    Failover,
    TurnFailure,
    silent,
)

RATE_429 = "Error: Error code: 429 - {'error': {'message': 'Rate limit reached for requests'}}"
PACED = (
    "Error: client failed: rate limit (not sent; paced by the bench): fake allows 30 requests per minute "
    "(you) and 30 were used; try again in 12s"
)
HTTP_500 = "Error: Error code: 500 - internal error"


def test_up_to_three_members_with_retries_only_for_the_last() -> None:
    turn = Failover("core", ["a", "b", "c", "d", "a"])
    assert turn.attempts == (Attempt("a", 1, False, 0), Attempt("b", 2, False, 0), Attempt("c", 3, True, 2))
    assert Failover("core", ["solo"]).attempts == (Attempt("solo", 1, True, 2),)
    with pytest.raises(ValueError):
        Failover("core", [])


def test_a_429_before_any_output_fails_over_invisibly() -> None:
    turn = Failover("core", ["a", "b"])
    assert turn.current == Attempt("a", 1, False, 0)
    assert turn.failed(RATE_429) == Attempt("b", 2, True, 2)
    assert turn.went_live() == Attempt("b", 2, True, 2)
    assert turn.state == "live" and turn.tried == ["a", "b"]
    assert turn.failed_over == [FailedOver("a", RATE_429)]
    assert "429" in turn.failed_over[0].as_json()["error"]


def test_silence_and_empty_replies_fail_over() -> None:
    turn = Failover("core", ["a", "b", "c"])
    assert turn.failed(silent()) == turn.attempts[1]
    assert turn.empty() == turn.attempts[2]
    assert [f.error for f in turn.failed_over] == [
        "nothing in 90s (no text, reasoning or tool call)",
        EMPTY_REPLY,
    ]


def test_the_last_members_empty_reply_is_its_answer() -> None:
    turn = Failover("core", ["a", "b"])
    turn.failed(HTTP_500)
    assert turn.empty() is None
    assert turn.state == "answered_empty" and turn.current == turn.attempts[1]
    with pytest.raises(RuntimeError):
        turn.failure()


def test_all_failing_is_502_naming_each() -> None:
    turn = Failover("bench/core", ["a", "b"])
    turn.failed(RATE_429)
    assert turn.failed(HTTP_500) is None
    assert turn.state == "failed" and turn.current is None
    assert turn.failure() == TurnFailure(
        502, f"no member of bench/core answered: a: {RATE_429}; b: {HTTP_500}"
    )
    with pytest.raises(RuntimeError):
        turn.failed("again")


def test_all_rate_limited_is_429() -> None:
    turn = Failover("core", ["a", "b", "c"])
    turn.failed(RATE_429)
    turn.failed(PACED)  # a pacing refusal is a rate limit too
    turn.failed("upstream said: Rate Limit exceeded")
    assert turn.failure().status == 429


def test_failed_over_errors_are_cut_to_300_chars() -> None:
    turn = Failover("core", ["a", "b"])
    turn.failed("x" * 1_000)
    assert len(turn.failed_over[0].error) == 300
    turn.failed("y")
    assert len(turn.failure().message) < 400


def test_a_failure_after_the_first_piece_ends_the_stream() -> None:
    turn = Failover("core", ["a", "b"])
    turn.went_live()
    assert turn.part_way("stream cut before [DONE]") == TurnFailure(
        502, "a failed part way through the turn: stream cut before [DONE]"
    )
    assert turn.part_way("overloaded", 503).status == 503
    assert turn.part_way("odd", 200).status == 502
    with pytest.raises(RuntimeError):
        turn.failed("too late to fail over")
