"""The quota view (L-7) from stored facts: what is left of a quota, who rests, which limits are known."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.ledger.quotas import (
    CooldownFact,
    LearnedFact,
    LimitsChange,
    QuotaFact,
    QuotaFacts,
    expired,
    learned_limits,
    left,
    quota_lines,
    quota_reply,
    resting,
    sent_windows,
    user_limits,
)
from shared.commands import QuotaLine, SentCount, SentLine, UserLimit

NOW = datetime(2026, 12, 2, 14, 0, tzinfo=UTC)


def fact(metric: str = "requests", period: str = "day", allowed: int | None = 1000, remaining: int = 10,
         reset_in: timedelta | None = timedelta(hours=3), observed_ago: timedelta = timedelta(minutes=5),
         requests: int = 0, tokens_in: int = 0, tokens_out: int = 0, alias: str = "a") -> QuotaFact:
    return QuotaFact(
        connection="groq", alias=alias, metric=metric, period=period, observed_at=NOW - observed_ago,
        allowed=allowed, remaining=remaining, reset_at=None if reset_in is None else NOW + reset_in,
        source="x-ratelimit-remaining-requests", requests_since=requests, tokens_in_since=tokens_in,
        tokens_out_since=tokens_out,
    )


def test_sent_windows_are_the_last_day_and_this_utc_month() -> None:
    assert sent_windows(NOW) == (datetime(2026, 12, 1, 14, 0, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))
    first_hour = datetime(2027, 1, 1, 0, 30, tzinfo=UTC)
    assert sent_windows(first_hour) == (
        datetime(2026, 12, 31, 0, 30, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))


def test_left_is_remaining_less_what_was_sent_since_until_the_reset() -> None:
    assert left(fact(remaining=10, requests=3), NOW) == 7
    assert left(fact(remaining=2, requests=5), NOW) == 0
    assert left(fact("tokens", remaining=500, tokens_in=100, tokens_out=50, requests=9), NOW) == 350
    assert left(fact("input_tokens", remaining=500, tokens_in=100, tokens_out=50), NOW) == 400
    assert left(fact("output_tokens", remaining=500, tokens_in=100, tokens_out=50), NOW) == 450
    # Past its reset a record allows its whole limit again (unknown when the provider named none).
    assert left(fact(remaining=0, requests=4, reset_in=-timedelta(seconds=1)), NOW) == 1000
    assert left(fact(allowed=None, remaining=0, reset_in=-timedelta(seconds=1)), NOW) is None
    assert left(fact(remaining=0, reset_in=None), NOW) == 0


def test_records_expire_a_day_after_their_reset_or_a_week_after_without_one() -> None:
    assert not expired(fact(reset_in=-timedelta(hours=23)), NOW)
    assert expired(fact(reset_in=-timedelta(hours=25)), NOW)
    assert not expired(fact(reset_in=None, observed_ago=timedelta(days=6)), NOW)
    assert expired(fact(reset_in=None, observed_ago=timedelta(days=8)), NOW)


def test_quota_lines_show_live_records_sorted_with_their_age() -> None:
    lines = quota_lines([
        fact("tokens", "minute", 6000, 500, timedelta(seconds=20), tokens_in=100, alias="b"),
        fact(remaining=10, requests=4, observed_ago=timedelta(seconds=90)),
        fact(reset_in=-timedelta(days=2)),
    ], NOW)
    assert lines == [
        QuotaLine(connection="groq", alias="a", metric="requests", window="day", left=6, of=1000,
                  resets=NOW + timedelta(hours=3), source="x-ratelimit-remaining-requests",
                  observed_at=NOW - timedelta(seconds=90), age_s=90),
        QuotaLine(connection="groq", alias="b", metric="tokens", window="minute", left=400, of=6000,
                  resets=NOW + timedelta(seconds=20), source="x-ratelimit-remaining-requests",
                  observed_at=NOW - timedelta(minutes=5), age_s=300),
    ]


DEFAULT_REST = "rate limited; resting 1800s (default wait)"


def cooling(alias: str, until: timedelta, why: str = DEFAULT_REST) -> CooldownFact:
    return CooldownFact(alias=alias, connection="groq", until=NOW + until, why=why)


def test_resting_models_show_minutes_left_and_whose_wait_it_was() -> None:
    lines = resting([
        cooling("a", timedelta(seconds=61), "rate limited; resting 120s (stated wait)"),
        cooling("a", timedelta(seconds=30), "rate limited; resting 2.5s (stated wait)"),  # shorter: not shown
        cooling("b", timedelta(minutes=29, seconds=59)),
        cooling("c", -timedelta(seconds=1)),
    ], NOW)
    assert [(r.alias, r.minutes_left, r.wait, r.until) for r in lines] == [
        ("a", 2, "stated", NOW + timedelta(seconds=61)),
        ("b", 30, "default", NOW + timedelta(minutes=29, seconds=59)),
    ]


def change(seq: int, scope: str, name: str, **axes: int | None) -> LimitsChange:
    return LimitsChange(seq=seq, at=NOW - timedelta(days=1), by="admin", change={"scope": scope, "name": name,
                                                                                 **axes})


def test_user_limits_are_each_scopes_last_save_and_an_empty_save_removes_them() -> None:
    limits = user_limits([
        change(5, "model", "a", rpd=100),
        change(1, "connection", "groq", rpm=60),
        change(3, "connection", "groq", rpm=30, rpmo=1000),
        change(4, "connection", "gone", rpm=10),
        change(6, "connection", "gone", rpm=None),
    ])
    at = NOW - timedelta(days=1)
    assert limits == [
        UserLimit(scope="connection", name="groq", rpm=30, rpmo=1000, at=at, by="admin"),
        UserLimit(scope="model", name="a", rpd=100, at=at, by="admin"),
    ]


def learned(alias: str, axis: str, allowed: int, day: int, call: str = "") -> LearnedFact:
    return LearnedFact(alias=alias, connection="groq", axis=axis, allowed=allowed,
                       at=datetime(2026, 11, day, 23, tzinfo=UTC), call=call)


def test_learned_limits_are_the_tightest_stated_and_yield_to_the_users() -> None:
    user = [UserLimit(scope="model", name="a", rpd=100, at=NOW, by="admin")]
    lines = learned_limits([
        learned("a", "rpm", 30, 1, "p1.member1"), learned("a", "rpm", 20, 2, "p2.member1"),
        learned("a", "rpm", 25, 3, "p3.member1"), learned("a", "rpd", 500, 4, "p4.member1"),
        learned("b", "context", 8192, 5),
    ], user)
    assert [(x.alias, x.axis, x.limit, x.date, x.where, x.enforced) for x in lines] == [
        ("a", "rpd", 500, "2026-11-04", "call p4.member1", False),
        ("a", "rpm", 20, "2026-11-02", "call p2.member1", True),
        ("b", "context", 8192, "2026-11-05", "", True),
    ]


def test_the_reply_puts_the_four_parts_together() -> None:
    sent = [
        SentLine(connection="zeta", day=SentCount(requests=1, tokens=5),
                 month=SentCount(requests=2, tokens=9)),
        SentLine(connection="groq", day=SentCount(), month=SentCount(requests=4, tokens=40)),
    ]
    reply = quota_reply(QuotaFacts(
        quotas=[fact()], sent=sent, cooldowns=[cooling("a", timedelta(minutes=5))],
        limits=[change(1, "model", "a", rpm=10)], learned=[learned("a", "rpm", 5, 1, "p1.member1")],
    ), NOW)
    assert reply.at == NOW and [q.left for q in reply.quotas] == [10]
    assert [s.connection for s in reply.sent] == ["groq", "zeta"]
    assert [r.alias for r in reply.resting] == ["a"]
    assert [u.name for u in reply.limits.user] == ["a"]
    assert [(x.limit, x.enforced) for x in reply.limits.learned] == [(5, False)]
