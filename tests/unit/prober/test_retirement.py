"""HL-5's auto-retire rules on injected evidence and time (A-93), and the alerts ahead of them (C-16)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.prober.retirement import Evidence, Model, after_confirming, assess, judge, pending_message

NOW = datetime(2026, 1, 10, 8, tzinfo=UTC)
GONE = 'Error: Error code: 404 - {"error": "The model `x` does not exist"}'


def fail(days_ago: float, failure: str, detail: str = "") -> Evidence:
    return Evidence(NOW - timedelta(days=days_ago), answered=False, failure=failure, detail=detail)


def answer(days_ago: float) -> Evidence:
    return Evidence(NOW - timedelta(days=days_ago), answered=True)


def model(alias: str, *evidence: Evidence, connection: str = "c1", **more: object) -> Model:
    return Model(alias, f"v/{alias}", connection, tuple(evidence), **more)  # type: ignore[arg-type]


def actions(*models: Model) -> list[tuple[str, str]]:
    return [(v.alias, v.action) for v in assess(models, NOW).verdicts]


def test_a93_structural_today_is_retired_only_after_one_confirming_call_fails_the_same_way() -> None:
    gone = model("gone", answer(3), fail(0.1, "structural", GONE))
    verdict = judge(gone, NOW)
    assert verdict.action == "confirm" and verdict.why.startswith("structural")
    confirmed = after_confirming(verdict, "structural", GONE)
    assert (confirmed.action, confirmed.why.split(",")[0]) == ("retire", "structural")
    answered = after_confirming(verdict, None, "")
    assert (answered.action, answered.days) == ("pending", 1)
    assert after_confirming(verdict, "capacity", "429").action == "pending"
    # A hard failure older than a day is no longer "immediate".
    assert judge(model("old", fail(2, "structural", GONE)), NOW).action == "pending"


def test_a93_rate_limits_alone_never_retire_within_7_days() -> None:
    limited = model("limited", *(fail(d, "capacity", "429 rate limit") for d in (6, 5, 4, 3, 2, 1, 0.1)))
    timed_out = model("slow", *(fail(d, "timeout") for d in (5, 3, 0.5)))
    assert actions(limited, timed_out, model("fine", answer(0.2), connection="c2")) == [
        ("limited", "well"), ("slow", "well"), ("fine", "well")]
    # Past 7 days of failing on 3 days or more, the backstop retires whatever the class.
    stuck = model("stuck", *(fail(d, "capacity", "429") for d in (8, 5, 1)))
    assert judge(stuck, NOW).action == "retire"


def test_a93_when_all_models_of_a_connection_are_down_none_is_retired_and_the_connection_is_held() -> None:
    others = [fail(d, "other", "500 broken") for d in (3, 2, 1)]
    result = assess([model("a", *others), model("b", fail(0.1, "structural", GONE)),
                     model("elsewhere", *others, connection="c2")], NOW)
    assert [(v.alias, v.action) for v in result.verdicts] == [
        ("a", "held"), ("b", "held"), ("elsewhere", "retire")]
    assert result.held == {"c1": ["a", "b"]}
    # One model on the connection still answering: the connection is fine, the rules apply.
    assert actions(model("a", *others), model("ok", answer(0.1))) == [("a", "retire"), ("ok", "well")]


def test_other_failures_retire_on_3_distinct_days_and_are_pending_before() -> None:
    two_days = model("flaky", fail(1.2, "other"), fail(1.1, "other"), fail(0.1, "other"))
    verdict = judge(two_days, NOW)
    assert (verdict.action, verdict.days) == ("pending", 1)
    assert pending_message("flaky", verdict.days) == "flaky retires in 1 day unless it answers"
    assert judge(model("gone", *(fail(d, "other") for d in (2, 1, 0.1))), NOW).action == "retire"


def test_any_answer_resets_the_clock_and_failures_before_a_restore_are_ignored() -> None:
    answered = model("back", *(fail(d, "other") for d in (4, 3, 2)), answer(1))
    assert judge(answered, NOW).action == "well"
    restored = model("restored", *(fail(d, "other") for d in (4, 3, 2)), restored=NOW - timedelta(days=1))
    assert judge(restored, NOW).action == "well"
    signin = model("signin", *(fail(d, "signin") for d in (4, 3, 2)))
    quota = model("quota", *(fail(d, "other", "free-models-per-day exceeded") for d in (4, 3, 2)))
    guard = "Error: client failed: not sent: the free-tier guard holds x (payment required: $)"
    held = model("held", fail(0.1, "entitlement", guard))
    assert actions(signin, quota, held) == [("signin", "well"), ("quota", "well"), ("held", "well")]


def test_three_days_missing_from_the_listing_retires_without_a_confirming_call_or_the_guard() -> None:
    one_day = model("leaving", missing_since=NOW - timedelta(days=1))
    verdict = judge(one_day, NOW)
    assert (verdict.action, verdict.days) == ("pending", 2)
    gone = model("gone", fail(0.5, "other"), missing_since=NOW - timedelta(days=3))
    also_down = model("down", fail(0.5, "other"))
    assert actions(gone, also_down) == [("gone", "retire"), ("down", "held")]
