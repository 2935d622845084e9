"""The offload rules: verdicts (H-G10), pending seats (H-G11) and a collection's record (H-G12)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.ledger.offloads import (
    Judged,
    NotFound,
    Record,
    SeatFacts,
    StoredVerdict,
    Unchanged,
    decide_verdict,
    pending,
    seat_note,
    tally,
)
from shared.commands import VerdictRequest
from shared.ids import digest

NOW = datetime(2026, 12, 3, 23, 59, tzinfo=UTC)
CALL = "p20261202-093000-abcd.member1"
SEAT = SeatFacts(call=CALL, alias="a", seat="member", task="fix it (bench/core, code)", status="ok",
                 seconds=1.26, error="", shape="code")


def req(useful: bool = True, note: str | None = None, real: list[str] | None = None,
        false: list[str] | None = None) -> VerdictRequest:
    return VerdictRequest.model_validate({"call": CALL, "useful": useful, "note": note, "real": real,
                                          "false": false})


def stored(seq: int = 40, useful: bool = True, note: str = "checked", real: tuple[str, ...] = ("r1",),
           false: tuple[str, ...] = ()) -> StoredVerdict:
    yesterday = NOW - timedelta(days=1)
    return StoredVerdict(seq=seq, at=yesterday, useful=useful, note=note, real=real, false=false)


def test_seat_note_is_label_status_and_seconds_with_a_short_error() -> None:
    assert seat_note(SEAT) == "member; ok in 1.3s"
    errored = SeatFacts(CALL, "a", "explorer 2", "t", "error", 420.0, "x" * 300)
    assert seat_note(errored) == "explorer 2; error in 420.0s: " + "x" * 120


def test_a_route_conversations_note_names_its_first_turn() -> None:
    """RM-9: `route conversation; first turn <status> in <s>s`, whatever its seat label or error."""
    offload = SeatFacts("r20261202-093000-beef.1", "a", "route", "Fix it (bench/agents:route)", "ok", 2.34,
                        "", purpose="route")
    assert seat_note(offload) == "route conversation; first turn ok in 2.3s"
    decision = decide_verdict(VerdictRequest(call=offload.call, useful=True), offload, None, NOW)
    assert isinstance(decision, Record)
    assert decision.entry["note"] == "route conversation; first turn ok in 2.3s"
    assert decision.entry["task"] == "Fix it (bench/agents:route)" and decision.event.call == offload.call


def test_unknown_call_is_404() -> None:
    decision = decide_verdict(req(), None, None, NOW)
    assert isinstance(decision, NotFound) and decision.status == 404
    assert decision.message.startswith(f"no offload with call id '{CALL}'")


def test_first_verdict_with_blank_note_keeps_the_seat_note() -> None:
    decision = decide_verdict(req(True, note="   ", real=["the race"]), SEAT, None, NOW)
    assert isinstance(decision, Record)
    event = decision.event
    assert (event.call, event.alias, event.useful, event.note) == (CALL, "a", True, "member; ok in 1.3s")
    assert event.shape == "code"  # the seater tallies it under its panel's shape
    assert event.real == ["the race"] and event.false_claims == [] and event.by == "local" and event.at == NOW
    assert event.id.startswith(f"verdict:{CALL}:") and event.id.endswith(":0")
    assert decision.entry == {"date": "2026-12-03", "model": "a", "task": "fix it (bench/core, code)",
                              "useful": True, "note": "member; ok in 1.3s", "call": CALL,
                              "real": ["the race"], "false": []}


def test_blank_note_and_empty_claims_keep_the_previous_verdicts_values() -> None:
    decision = decide_verdict(req(False, note="", real=[], false=None), SEAT, stored(), NOW)
    assert isinstance(decision, Record)
    assert (decision.event.useful, decision.event.note, decision.event.real) == (False, "checked", ["r1"])
    assert decision.event.id.endswith(":40")


def test_new_values_replace_the_previous_ones() -> None:
    decision = decide_verdict(req(True, note="better", real=["r2"], false=["f1"]), SEAT, stored(), NOW)
    assert isinstance(decision, Record)
    event = decision.event
    assert (event.note, event.real, event.false_claims) == ("better", ["r2"], ["f1"])


def test_the_stored_verdict_again_writes_nothing() -> None:
    for again in (req(True, "checked", ["r1"]), req(True), req(True, None, [], [])):
        decision = decide_verdict(again, SEAT, stored(), NOW)
        assert isinstance(decision, Unchanged)
        assert decision.entry["date"] == "2026-12-02" and decision.entry["note"] == "checked"


def test_verdict_id_names_its_content_and_predecessor() -> None:
    a = decide_verdict(req(True, "x"), SEAT, stored(seq=7), NOW)
    b = decide_verdict(req(True, "x"), SEAT, stored(seq=7), NOW + timedelta(hours=1))
    c = decide_verdict(req(True, "y"), SEAT, stored(seq=7), NOW)
    d = decide_verdict(req(True, "x"), SEAT, stored(seq=9), NOW)
    assert isinstance(a, Record) and isinstance(b, Record) and isinstance(c, Record) and isinstance(d, Record)
    assert a.event.id == b.event.id != c.event.id
    assert a.event.id.rsplit(":", 1)[0] == d.event.id.rsplit(":", 1)[0] and d.event.id.endswith(":9")
    assert digest('[true,"x",["r1"],[]]') in a.event.id


def test_pending_keeps_order_and_only_unjudged_answered_seats() -> None:
    known = {"p.m1": ("ok", False), "p.m2": ("empty", False), "p.m3": ("error", False), "p.m4": ("ok", True)}
    assert pending(["p.m4", "p.m2", "nope", "p.m3", "p.m1", "p.m2"], known) == ["p.m2", "p.m1", "p.m2"]
    assert pending([], known) == []


def judged(alias: str, collection: str, useful: bool, note: str = "", day: int = 1) -> Judged:
    return Judged(alias=alias, task=f"do it (bench/{collection}, code)", useful=useful, note=note,
                  at=datetime(2026, 12, day, 22, tzinfo=UTC))


def test_record_counts_only_that_collections_judged_calls() -> None:
    rows = [
        judged("a", "x", True, day=1), judged("a", "x", False, day=3), judged("b", "x", True, day=2),
        judged("a", "xy", True), judged("c", "other", False),
    ]
    assert tally(rows, "bench/x") == {
        "a": {"useful": 1, "notUseful": 1, "judged": 2, "lastAt": "2026-12-03"},
        "b": {"useful": 1, "notUseful": 0, "judged": 1, "lastAt": "2026-12-02"},
    }
    assert tally(rows, "bench/none") == {}


def test_record_task_filter_reads_the_verdict_note() -> None:
    rows = [judged("a", "x", True, "thicken slab faces: fine"), judged("a", "x", False, "other work")]
    assert tally(rows, "bench/x", "thicken slab faces") == {
        "a": {"useful": 1, "notUseful": 0, "judged": 1, "lastAt": "2026-12-01"},
    }
