"""Windows seeded from the ledger's history (L-2): which scope a call needs, the merge that counts each
call once, the month's count, and marks kept only while their limits bind."""

from __future__ import annotations

from datetime import UTC, datetime

from services.caller.pacing import Entry, Limit, Windows, decide, take, tidy
from services.caller.seeding import CONNECTION, merge, refresh, to_seed
from shared.commands import PacingReply, PacingRow

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC).timestamp()
RPD_100 = Limit("connection", "groq", "rpd", 100, "your limit")
RPM_2 = Limit("connection", "groq", "rpm", 2, "your limit")
MODEL_RPD = Limit("model", "a", "rpd", 5, "your limit")


def history(*rows: PacingRow, month: int = 0) -> PacingReply:
    return PacingReply(at=NOW, rows=list(rows), month="2026-12", month_requests=month)


def test_a_connection_limit_needs_the_whole_connection_a_model_limit_its_alias() -> None:
    doc = Windows()
    assert to_seed(doc, [], "a") is None  # nothing binds: nothing to ask
    assert to_seed(doc, [RPD_100, MODEL_RPD], "a") == CONNECTION
    assert to_seed(doc, [MODEL_RPD], "a") == "a"
    doc.seeded = {"a"}
    assert to_seed(doc, [MODEL_RPD], "a") is None and to_seed(doc, [RPD_100], "a") == CONNECTION
    doc.seeded = {CONNECTION}
    assert to_seed(doc, [MODEL_RPD], "b") is None  # the connection's history holds every alias


def test_eighty_sent_before_a_limit_of_100_leave_room_for_20() -> None:
    rows = [(NOW - 3600 + 60 * (n // 10), "a" if n % 2 else "b", 1, 50, "") for n in range(80)]
    doc = Windows()
    assert refresh(doc, [RPD_100], "a", history(*rows, month=80), NOW)
    tidy(doc, NOW)
    admitted = 0
    while decide(doc, [RPD_100], "a", 10, NOW, NOW + 30).kind == "admit":
        take(doc, "a", 10, NOW, 0.0, "", f"p.member{admitted}")
        admitted += 1
    assert admitted == 20 and doc.seeded == {CONNECTION} and doc.months == {"2026-12": 100}


def test_a_call_the_windows_still_hold_is_not_counted_twice_and_flights_stay() -> None:
    doc = Windows(entries=[
        Entry(NOW - 30, "a", 1, 40, call="p.member1"),  # ended, also in the ledger: the doc's entry stays
        Entry(NOW - 20, "a", 1, 40, call="p.member1"),  # its retry
        Entry(NOW - 5, "a", 1, 99, until=NOW + 400, slot="p.member2:1", call="p.member2"),  # in flight
        Entry(NOW - 600, "a", 3, 300),  # a bucket of calls the ledger has too: gives way
        Entry(NOW - 600, "z", 2, 200),  # another alias, not seeded by an alias seed
    ], months={"2026-12": 9})
    reply = history((NOW - 31, "a", 2, 80, "p.member1"), (NOW - 600, "a", 4, 400, ""),
                    (NOW - 90_000, "a", 1, 1, ""), (NOW - 600, "z", 7, 700, ""), month=50)
    merge(doc, reply, "a", NOW)
    assert sorted((e.t, e.alias, e.requests, e.tokens, e.call) for e in doc.entries) == [
        (NOW - 600, "a", 4, 400, ""),  # the ledger's bucket, not the doc's, and nothing a day old
        (NOW - 600, "z", 2, 200, ""),
        (NOW - 30, "a", 1, 40, "p.member1"),
        (NOW - 20, "a", 1, 40, "p.member1"),
        (NOW - 5, "a", 1, 99, "p.member2"),
    ]
    assert doc.seeded == {"a"} and doc.months == {"2026-12": 9}  # an alias seed leaves the month alone


def test_a_connection_seed_counts_the_month_once_with_the_calls_the_ledger_has_not_heard_of() -> None:
    doc = Windows(entries=[
        Entry(NOW - 10, "a", 1, 40, call="p.member1"),  # folded: in the ledger's 50
        Entry(NOW - 5, "b", 1, 40, call="p.member3"),  # settled, its usage not published yet
        Entry(NOW - 2, "a", 1, 40, until=NOW + 60, slot="s", call="p.member2"),  # in flight
    ], months={"2026-12": 3})
    merge(doc, history((NOW - 11, "a", 1, 40, "p.member1"), month=50), CONNECTION, NOW)
    assert doc.months == {"2026-12": 52} and len(doc.entries) == 3


def test_a_month_that_has_turned_since_the_ledger_answered_is_left_alone() -> None:
    doc = Windows(months={"2026-12": 3})
    merge(doc, PacingReply(at=NOW, month="2026-11", month_requests=500), CONNECTION, NOW)
    assert doc.months == {"2026-12": 3} and doc.seeded == {CONNECTION}


def test_marks_last_only_while_their_limits_bind() -> None:
    doc = Windows(seeded={CONNECTION})
    assert refresh(doc, [RPD_100, MODEL_RPD], "a", None, NOW) and doc.seeded == {CONNECTION, "a"}
    assert not refresh(doc, [RPD_100, MODEL_RPD], "a", None, NOW)  # nothing new: nothing to write
    assert refresh(doc, [MODEL_RPD], "a", None, NOW) and doc.seeded == {"a"}  # connection limit gone
    assert not refresh(doc, [], "b", None, NOW)  # another alias's call says nothing about `a`
    assert refresh(doc, [], "a", None, NOW) and doc.seeded == set()


def test_without_an_answer_nothing_is_marked_so_a_later_call_seeds() -> None:
    doc = Windows(entries=[Entry(NOW - 10, "a", 1, 40, call="p.member1")])
    assert not refresh(doc, [RPM_2], "a", None, NOW)
    assert doc.seeded == set() and to_seed(doc, [RPM_2], "a") == CONNECTION


def test_the_seeded_marks_and_call_ids_survive_the_bucket() -> None:
    doc = Windows(entries=[Entry(NOW - 10, "a", 1, 40, call="p.member1")], seeded={CONNECTION, "a"})
    again = Windows.from_json(doc.to_json())
    assert again == doc
    tidy(again, NOW + 200)  # old enough for a minute bucket: the id goes, the count stays
    assert [(e.requests, e.call) for e in again.entries] == [(1, "")]
