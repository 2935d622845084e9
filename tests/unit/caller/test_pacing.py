"""L-2/L-2a window arithmetic: admit, wait or refuse; quotas until reset (A-91); the refusal text (A-86)."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from services.caller.pacing import (
    Entry,
    Limit,
    Windows,
    decide,
    month_key,
    next_month_start,
    refusal_text,
    remember,
    settle,
    take,
    tidy,
    wait_words,
)
from services.caller.quota_headers import Quota

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC).timestamp()
RPM1 = Limit("connection", "groq", "rpm", 1, "your limit")


def sent(doc: Windows, alias: str, at: float, tokens: int = 10) -> None:
    take(doc, alias, tokens, at, 0.0, "")


def test_a86_rpm_1_second_call_waits_when_the_deadline_allows() -> None:
    doc = Windows()
    sent(doc, "m", NOW)
    decision = decide(doc, [RPM1], "m", 10, NOW + 10, deadline=NOW + 120)
    assert decision.kind == "wait" and decision.at == NOW + 15  # looks again within 5 s
    assert decide(doc, [RPM1], "m", 10, NOW + 58, deadline=NOW + 120).at == NOW + 60  # the window frees


def test_a86_rpm_1_second_call_is_refused_when_the_deadline_is_too_close() -> None:
    doc = Windows()
    sent(doc, "m", NOW)
    decision = decide(doc, [RPM1], "m", 10, NOW + 10, deadline=NOW + 61)  # frees at +60, deadline-2 = +59
    assert decision.kind == "refuse" and decision.block is not None
    assert refusal_text(decision.block, NOW + 10) == (
        "Error: client failed: rate limit (not sent; paced by the bench): "
        "connection groq allows 1 requests per minute (your limit) and 1 were used; try again in 50s"
    )


def test_model_limits_count_only_that_model_and_connection_limits_count_all() -> None:
    doc = Windows()
    for i in range(3):
        sent(doc, "a" if i < 2 else "b", NOW + i)
    model_a = Limit("model", "a", "rpm", 3, "learned 2026-12-01")
    assert decide(doc, [model_a], "a", 1, NOW + 5, NOW + 300).kind == "admit"
    connection = Limit("connection", "groq", "rpm", 3, "your limit")
    assert decide(doc, [connection], "b", 1, NOW + 5, NOW + 300).kind == "wait"


def test_tokens_per_minute_and_a_prompt_bigger_than_the_window() -> None:
    tpm = Limit("model", "m", "tpm", 1000, "your limit")
    doc = Windows()
    sent(doc, "m", NOW, tokens=700)
    assert decide(doc, [tpm], "m", 300, NOW + 1, NOW + 300).kind == "admit"
    blocked = decide(doc, [tpm], "m", 301, NOW + 1, NOW + 300)
    assert blocked.kind == "wait" and blocked.block is not None and blocked.block.free_at == NOW + 60
    huge = decide(doc, [tpm], "m", 5000, NOW + 1, NOW + 300)  # waits for an empty window
    assert huge.kind == "wait" and huge.block is not None and huge.block.free_at == NOW + 60
    assert decide(Windows(), [tpm], "m", 5000, NOW, NOW + 300).kind == "admit"


def test_a_day_window_frees_when_its_oldest_entries_age_out() -> None:
    rpd = Limit("model", "m", "rpd", 2, "your limit")
    doc = Windows()
    sent(doc, "m", NOW - 70000)
    sent(doc, "m", NOW - 100)
    decision = decide(doc, [rpd], "m", 1, NOW, NOW + 420)
    assert decision.kind == "refuse" and decision.block is not None
    assert decision.block.free_at == NOW - 70000 + 86400
    assert refusal_text(decision.block, NOW).endswith("try again in 5h")  # 16400 s, rounded up


def test_month_limit_frees_at_the_next_month() -> None:
    rpmo = Limit("connection", "groq", "rpmo", 1, "your limit")
    doc = Windows()
    sent(doc, "m", NOW - 3 * 86400)  # November: another month
    assert decide(doc, [rpmo], "m", 1, NOW, NOW + 420).kind == "admit"
    sent(doc, "m", NOW - 86400)  # December 1st
    decision = decide(doc, [rpmo], "m", 1, NOW, NOW + 420)
    assert decision.kind == "refuse" and decision.block is not None
    assert decision.block.free_at == datetime(2027, 1, 1, tzinfo=UTC).timestamp()
    assert month_key(NOW) == "2026-12" and next_month_start(NOW) == decision.block.free_at


def test_calls_in_flight_count_whatever_their_age_until_they_expire() -> None:
    doc = Windows()
    take(doc, "m", 10, NOW - 300, NOW + 100, "slot-1")  # sent 5 minutes ago, still running
    assert decide(doc, [RPM1], "m", 1, NOW, NOW + 420).kind == "wait"
    settle(doc, "slot-1", 42)
    assert doc.entries[0].tokens == 42 and decide(doc, [RPM1], "m", 1, NOW, NOW + 420).kind == "admit"
    crashed = Windows()
    take(crashed, "m", 10, NOW - 300, NOW - 1, "slot-2")  # its caller died: the slot has expired
    tidy(crashed, NOW)
    assert decide(crashed, [RPM1], "m", 1, NOW, NOW + 420).kind == "admit"


def test_a91_a_quota_record_holds_until_its_reset_counting_calls_sent_since() -> None:
    doc = Windows()
    remember(doc, "llama", [Quota("requests", "day", 14400, 2, NOW + 600, NOW, "x-ratelimit")])
    assert decide(doc, [], "llama", 1, NOW + 1, NOW + 420).kind == "admit"
    sent(doc, "llama", NOW + 1)
    sent(doc, "llama", NOW + 2)
    refused = decide(doc, [], "llama", 1, NOW + 3, NOW + 420)  # remaining 2 minus 2 sent since = 0
    assert refused.kind == "refuse" and refused.block is not None
    assert refusal_text(refused.block, NOW + 3) == (
        "Error: client failed: rate limit (not sent; paced by the bench): "
        "model llama allows 14400 requests per day (provider quota, x-ratelimit) and 14400 were used; "
        "try again in 10m"
    )
    assert decide(doc, [], "llama", 1, NOW + 3, NOW + 900).kind == "wait"  # the reset is before the deadline
    assert decide(doc, [], "other", 1, NOW + 3, NOW + 420).kind == "admit"  # alias scope
    tidy(doc, NOW + 601)
    assert not doc.quotas and decide(doc, [], "llama", 1, NOW + 601, NOW + 900).kind == "admit"


def test_a_retry_after_record_blocks_until_it_passes() -> None:
    doc = Windows()
    remember(doc, "m", [Quota("requests", "retry", None, 0, NOW + 2, NOW, "retry-after")])
    decision = decide(doc, [], "m", 1, NOW + 0.5, NOW + 60)
    assert decision.kind == "wait" and decision.at == NOW + 2


def test_newer_observations_replace_older_ones() -> None:
    doc = Windows()
    remember(doc, "m", [Quota("requests", "minute", 30, 5, NOW + 60, NOW, "x-ratelimit")])
    remember(doc, "m", [Quota("requests", "minute", 30, 9, NOW + 50, NOW - 5, "x-ratelimit")])
    assert doc.quotas["m|requests|minute"].remaining == 5


def test_tidy_keeps_counts_and_the_document_round_trips() -> None:
    doc = Windows()
    for i in range(50):
        sent(doc, "m", NOW - 3600 + i, tokens=3)
    sent(doc, "m", NOW - 90000)  # older than a day: forgotten
    take(doc, "m", 7, NOW, NOW + 400, "live")
    tidy(doc, NOW)
    assert len(doc.entries) <= 3 and sum(e.requests for e in doc.entries) == 51
    assert sum(e.tokens for e in doc.entries) == 157
    again = Windows.from_json(doc.to_json())
    assert again == doc and Windows.from_json(None) == Windows()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=600), min_size=1, max_size=120), st.integers(1, 8))
def test_admissions_never_exceed_a_limit_in_any_window(times: list[float], n: int) -> None:
    """Whatever the order calls arrive in, at most n are admitted in any 60 s."""
    limit = Limit("connection", "c", "rpm", n, "your limit")
    doc, admitted = Windows(), []
    for at in sorted(times):
        now = NOW + at
        tidy(doc, now)
        if decide(doc, [limit], "m", 1, now, now + 1).kind == "admit":
            take(doc, "m", 1, now, 0.0, "")
            admitted.append(now)
    for start in admitted:
        assert len([t for t in admitted if start <= t < start + 60]) <= n


def test_wait_words() -> None:
    assert [wait_words(s) for s in (0.2, 59.1, 119, 120, 7199, 7200)] == [
        "1s",
        "60s",
        "119s",
        "2m",
        "120m",
        "2h",
    ]


def test_entry_counts_in_its_window_or_while_in_flight() -> None:
    assert Entry(NOW - 10, "m", 1, 1).counts(NOW, 60) and not Entry(NOW - 61, "m", 1, 1).counts(NOW, 60)
    assert Entry(NOW - 61, "m", 1, 1, until=NOW + 1).counts(NOW, 60)


def test_a_settled_call_counts_from_when_it_left_never_from_earlier() -> None:
    """L-2: a provider counts a request from its arrival, so the pacer counts an attempt from when its last
    byte left, when that is later than its admission (a new connection took its time)."""
    doc = Windows()
    take(doc, "m", 10, NOW, NOW + 400, "slot-1")
    settle(doc, "slot-1", 12, sent_at=NOW + 0.4)
    assert decide(doc, [RPM1], "m", 1, NOW + 59, NOW + 420).at == NOW + 60.4  # not NOW + 60
    assert decide(doc, [RPM1], "m", 1, NOW + 60.4, NOW + 420).kind == "admit"
    early = Windows()
    take(early, "m", 10, NOW, NOW + 400, "slot-2")
    settle(early, "slot-2", 12, sent_at=NOW - 5)  # another clock's moment before the admission: ignored
    assert early.entries[0].t == NOW and decide(early, [RPM1], "m", 1, NOW + 60, NOW + 420).kind == "admit"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(min_value=0, max_value=400), st.floats(min_value=0, max_value=2)),
                min_size=1, max_size=80), st.integers(1, 6))
def test_sent_requests_never_exceed_a_limit_in_any_providers_minute(
    calls: list[tuple[float, float]], n: int
) -> None:
    """Each admitted call leaves after its own sending time (0–2 s) and is settled then: counted from
    when they left, as a provider counts them, at most n fall in any 60 s."""
    limit = Limit("connection", "c", "rpm", n, "your limit")
    doc, left, pending = Windows(), [], []  # pending: (leaves at, slot)
    for i, (at, sending) in enumerate(sorted(calls)):
        now = NOW + at
        for leaves, slot in sorted(p for p in pending if p[0] <= now):
            settle(doc, slot, 1, sent_at=leaves)
            pending.remove((leaves, slot))
        tidy(doc, now)
        if decide(doc, [limit], "m", 1, now, now + 1).kind == "admit":
            take(doc, "m", 1, now, now + 400, f"s{i}")
            pending.append((now + sending, f"s{i}"))
            left.append(now + sending)
    for start in left:
        assert len([t for t in left if start <= t < start + 60]) <= n
