"""Event → row mapping for the usage ledger (L-5), route turns (RM-9), learned limits (L-3) and quota
records (L-4)."""

from __future__ import annotations

from datetime import timedelta

from services.ledger.fold import LimitLearnedRow, QuotaRow, RouteTurnRow, UsageRow, fold_batch
from tests.unit.ledger.factories import (
    T0,
    call_used,
    completed,
    limit_learned,
    quota,
    quota_observed,
    route_offload,
    route_turn,
)

P = "p20261202-093000-abcd"
CONV = "r20261202-093000-beef"


def test_a_seat_is_also_one_usage_line_starting_after_its_pacing_wait() -> None:
    event = completed(f"{P}.member1", alias="a", seconds=5.0, paced="waited", waited_s=2.0, served_by="a-v2",
                      swap=True, connection="groq")
    rows = fold_batch([(7, event)])
    seat = rows.seats[f"{P}.member1"]
    assert (seat.served_by, seat.swap, seat.paced, seat.waited_s) == ("a-v2", True, "waited", 2.0)
    assert list(rows.usage.values()) == [UsageRow(
        call=f"{P}.member1", seq=7, event=f"seat:{P}.member1", t=T0 - timedelta(seconds=3), at=T0, panel=P,
        alias="a", connection="groq", endpoint="groq", served="a-served", served_by="a-v2", swap=True,
        collection="core", purpose="panel", status="ok", failure=None, http_status=200, attempts=1,
        tokens_in=12, tokens_out=34, reasoning=5, cached=2, estimated=False, seconds=5.0, first_token_s=None,
        caller="caller-1", paced="waited", waited_s=2.0,
    )]


def test_the_first_completion_of_a_call_is_its_usage_line() -> None:
    first = completed(f"{P}.member1", event_id="seat:x:1", seconds=1.0)
    late = completed(f"{P}.member1", event_id="seat:x:2", seconds=420.0, status="error",
                     error="no answer in 420s")
    rows = fold_batch([(1, first), (2, late)])
    assert [(u.seq, u.status) for u in rows.usage.values()] == [(1, "ok")]


def test_a_refused_seat_counts_no_request_and_no_token() -> None:
    event = completed(f"{P}.member1", status="error", error="Error: client failed: rate limit (not sent; …)",
                      paced="refused", attempts=0, seconds=0.0)
    (usage,) = fold_batch([(1, event)]).usage.values()
    assert (usage.status, usage.attempts, usage.tokens_in, usage.tokens_out) == ("refused", 0, 0, 0)


def test_a_seat_cut_by_its_deadline_is_a_timeout_and_other_failures_errors() -> None:
    rows = fold_batch([
        (1, completed(f"{P}.member1", status="error", error="no answer in 420s", seconds=420.0)),
        (2, completed(f"{P}.member2", status="error", error="Error: Error code: 500 - boom")),
        (3, completed(f"{P}.member3", status="empty")),
    ])
    assert [u.status for u in rows.usage.values()] == ["timeout", "error", "empty"]


def test_probe_and_shadow_seats_are_usage_and_a_route_offload_is_not() -> None:
    rows = fold_batch([
        (1, completed(f"{P}.shadow1", purpose="shadow", seat="shadow")),
        (2, completed("probe.a", purpose="probe", seat="probe")),
        (3, route_offload(CONV, 1, "a")),
    ])
    assert set(rows.seats) == {f"{P}.shadow1", "probe.a", f"{CONV}.1"}
    offload = rows.seats[f"{CONV}.1"]
    assert (offload.purpose, offload.seat, offload.panel) == ("route", "route", CONV)
    # The route attempts report their own usage (`call_used`): the offload would count its call twice.
    assert set(rows.usage) == {f"{P}.shadow1", "probe.a"}


def test_call_used_becomes_a_usage_line_of_its_conversation() -> None:
    ok = call_used(f"{CONV}.t1.1", alias="a", seconds=3.0, waited_s=1.0)
    refused = call_used(f"{CONV}.t1.2", alias="b", status="error", paced="refused", attempts=0, tokens_in=50,
                        seconds=0.0)
    again = call_used(f"{CONV}.t1.1", alias="a", tokens_in=999)
    rows = fold_batch([(4, ok), (5, refused), (6, again)])
    assert rows.usage[f"{CONV}.t1.1"] == UsageRow(
        call=f"{CONV}.t1.1", seq=4, event=f"used:{CONV}.t1.1", t=T0 - timedelta(seconds=2), at=T0, panel=CONV,
        alias="a", connection="local", endpoint="local", served="a-served", served_by="a-served", swap=False,
        collection="agents", purpose="route", status="ok", failure=None, http_status=200, attempts=1,
        tokens_in=100, tokens_out=20, reasoning=3, cached=0, estimated=False, seconds=3.0, first_token_s=0.8,
        caller="caller-2", paced="sent", waited_s=1.0,
    )
    assert (rows.usage[f"{CONV}.t1.2"].status, rows.usage[f"{CONV}.t1.2"].tokens_in) == ("refused", 0)
    assert [e.type for e in rows.events] == ["call_used"] * 3


def test_route_turns_are_rows_without_the_prompt() -> None:
    turn = route_turn(CONV, 2, alias="a")
    failed = route_turn(CONV, 3, alias="")
    rows = fold_batch([(1, turn), (2, failed), (3, turn)])
    assert rows.route_turns[turn.id] == RouteTurnRow(
        id=turn.id, seq=1, at=T0, conversation=CONV, call=f"{CONV}.1", collection="bench/agents", key="local",
        alias="a", turn=2, task="Fix the failing test", status="ok", seconds=4.2, first_token_s=0.8,
        tool_calls=2, finish="tool_calls", tokens_in=100, tokens_out=20, reasoning=None, tried=["b", "a"],
        error="",
    )
    assert (rows.route_turns[failed.id].alias, rows.route_turns[failed.id].call) == ("", "")
    assert len(rows.route_turns) == 2


def test_learned_limits_are_rows() -> None:
    event = limit_learned("a", "rpm", 30, call=f"{P}.member1")
    assert fold_batch([(3, event), (4, event)]).limits_learned == {event.id: LimitLearnedRow(
        id=event.id, seq=3, at=T0, alias="a", connection="local", axis="rpm", allowed=30, call=f"{P}.member1",
        why=f"stated in the provider's error for call {P}.member1",
    )}


def test_the_latest_quota_record_per_connection_model_metric_and_window_wins() -> None:
    resets = T0 + timedelta(hours=5)
    first = quota_observed("c1", [quota("requests", "day", 1000, 10, resets),
                                  quota("tokens", "minute", 6000, 50)])
    later = quota_observed("c2", [quota("requests", "day", 1000, 4, resets)])
    other_model = quota_observed("c3", [quota("requests", "day", 1000, 99)], alias="b")
    rows = fold_batch([(1, first), (2, later), (3, other_model)])
    assert rows.quota_records[("local", "a", "requests", "day")] == QuotaRow(
        connection="local", alias="a", metric="requests", period="day", seq=2, event="quota:c2", call="c2",
        observed_at=T0, allowed=1000, remaining=4, reset_at=resets, source="x-ratelimit-remaining-requests",
    )
    assert rows.quota_records[("local", "a", "tokens", "minute")].remaining == 50
    assert rows.quota_records[("local", "b", "requests", "day")].remaining == 99
    assert len(rows.quota_records) == 3
