"""Event → row mapping for provider calls (L-5), route turns (RM-9), learned limits (L-3) and quota
records (L-4)."""

from __future__ import annotations

from datetime import timedelta

from services.ledger.fold import CallUsedRow, LimitLearnedRow, QuotaRow, RouteTurnRow, fold_batch
from tests.unit.ledger.factories import (
    T0,
    call_used,
    completed,
    limit_learned,
    quota,
    quota_observed,
    route_turn,
)

P = "p20261202-093000-abcd"
CONV = "r20261202-093000-beef"


def test_call_used_is_staged_as_its_conversation_s_call_and_a_seat_keeps_its_pacing() -> None:
    seat = completed(f"{P}.member1", alias="a", seconds=5.0, paced="waited", waited_s=2.0, served_by="a-v2",
                     swap=True, connection="groq")
    ok = call_used(f"{CONV}.t1.1", alias="a", seconds=3.0, waited_s=1.0)
    again = call_used(f"{CONV}.t1.1", alias="a", tokens_in=999)
    rows = fold_batch([(3, seat), (4, ok), (6, again)])
    row = rows.seats[f"{P}.member1"]
    assert (row.served_by, row.swap, row.paced, row.waited_s) == ("a-v2", True, "waited", 2.0)
    # Usage lines are derived from these in SQL (tests/integration/ledger/test_usage_lines.py).
    assert rows.calls_used == {f"{CONV}.t1.1": CallUsedRow(
        call=f"{CONV}.t1.1", seq=4, event=f"used:{CONV}.t1.1", at=T0, panel=CONV, alias="a",
        connection="local", endpoint="local", served="a-served", served_by="a-served", swap=False,
        collection="agents", purpose="route", status="ok", error="", failure=None, http_status=200,
        attempts=1, tokens_in=100, tokens_out=20, reasoning=3, cached=0, estimated=False, seconds=3.0,
        first_token_s=0.8, caller="caller-2", paced="sent", waited_s=1.0,
    )}
    assert [e.type for e in rows.events] == ["seat_completed", "call_used", "call_used"]


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
