"""L-5's usage lines as the fold derives them in SQL (`services/ledger/usage_lines.py`) from a batch's seats
and `call_used` rows, in one batch and across batches."""

from __future__ import annotations

from datetime import timedelta

from services.ledger.fold import UsageRow, fold_batch
from services.ledger.store import Store
from shared.events import EventBase
from tests.integration.ledger.process import apply_each
from tests.unit.ledger.factories import T0, call_used, completed, route_offload

P = "p20261202-093000-abcd"
CONV = "r20261202-093000-beef"


def apply_together(store: Store, *events: EventBase) -> None:
    """All the events in one batch."""
    first = store.position() + 1
    store.apply(fold_batch(enumerate(events, start=first)), first + len(events) - 1)


def lines(store: Store) -> dict[str, UsageRow]:
    rows = store.con.cursor().execute("SELECT * FROM usage ORDER BY seq").fetchall()
    return {row[0]: UsageRow._make(row) for row in rows}


def test_a_seat_is_also_one_usage_line_starting_after_its_pacing_wait(store: Store) -> None:
    apply_each(store, completed(f"{P}.member1", alias="a", seconds=5.0, paced="waited", waited_s=2.0,
                                served_by="a-v2", swap=True, connection="groq"))
    assert lines(store) == {f"{P}.member1": UsageRow(
        call=f"{P}.member1", seq=1, event=f"seat:{P}.member1", t=T0 - timedelta(seconds=3), at=T0, panel=P,
        alias="a", connection="groq", endpoint="groq", served="a-served", served_by="a-v2", swap=True,
        collection="core", purpose="panel", status="ok", failure=None, http_status=200, attempts=1,
        tokens_in=12, tokens_out=34, reasoning=5, cached=2, estimated=False, seconds=5.0, first_token_s=None,
        caller="caller-1", paced="waited", waited_s=2.0,
    )}


def test_the_first_completion_of_a_call_is_its_usage_line_in_a_batch_and_across_batches(store: Store) -> None:
    first = completed(f"{P}.member1", event_id="seat:x:1", seconds=1.0)
    late = completed(f"{P}.member1", event_id="seat:x:2", seconds=420.0, status="error",
                     error="no answer in 420s")
    apply_together(store, first, late)
    apply_each(store, late, call_used(f"{P}.member1", tokens_in=999))
    assert [(u.seq, u.status, u.tokens_in) for u in lines(store).values()] == [(1, "ok", 12)]


def test_a_refused_call_counts_no_request_and_no_token(store: Store) -> None:
    why = "Error: client failed: not sent: the free-tier guard holds a (payment required: x)"
    apply_together(
        store,
        completed(f"{P}.member1", status="error", error=why, paced="refused", attempts=0, seconds=0.0),
        call_used(f"{CONV}.t1.2", alias="b", status="error", paced="refused", attempts=0, tokens_in=50,
                  seconds=0.0),
    )
    found = [(u.status, u.attempts, u.tokens_in, u.tokens_out) for u in lines(store).values()]
    assert found == [("refused", 0, 0, 0), ("refused", 0, 0, 0)]


def test_a_seat_cut_by_its_deadline_is_a_timeout_and_other_failures_errors(store: Store) -> None:
    apply_together(
        store,
        completed(f"{P}.member1", status="error", error="no answer in 420s", seconds=420.0),
        completed(f"{P}.member2", status="error", error="Error: Error code: 500 - boom"),
        completed(f"{P}.member3", status="empty"),
    )
    assert [u.status for u in lines(store).values()] == ["timeout", "error", "empty"]


def test_probe_and_shadow_seats_are_usage_and_a_route_offload_is_not(store: Store) -> None:
    apply_together(
        store,
        completed(f"{P}.shadow1", purpose="shadow", seat="shadow"),
        completed("probe.a", purpose="probe", seat="probe"),
        route_offload(CONV, 1, "a"),
    )
    # The route attempts report their own usage (`call_used`): the offload would count its call twice.
    assert set(lines(store)) == {f"{P}.shadow1", "probe.a"}


def test_call_used_becomes_a_usage_line_of_its_conversation(store: Store) -> None:
    ok = call_used(f"{CONV}.t1.1", alias="a", seconds=3.0, waited_s=1.0)
    apply_together(store, ok, call_used(f"{CONV}.t1.1", alias="a", tokens_in=999))
    assert lines(store) == {f"{CONV}.t1.1": UsageRow(
        call=f"{CONV}.t1.1", seq=1, event=f"used:{CONV}.t1.1", t=T0 - timedelta(seconds=2), at=T0, panel=CONV,
        alias="a", connection="local", endpoint="local", served="a-served", served_by="a-served", swap=False,
        collection="agents", purpose="route", status="ok", failure=None, http_status=200, attempts=1,
        tokens_in=100, tokens_out=20, reasoning=3, cached=0, estimated=False, seconds=3.0, first_token_s=0.8,
        caller="caller-2", paced="sent", waited_s=1.0,
    )}
