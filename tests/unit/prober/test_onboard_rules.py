"""The onboarding queue's rules (O-3, O-4, A-94): what may be queued, one item at a time across replicas,
Stop and Clear, taking over an item whose prober died, candidates and dismissals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.prober import onboard_candidates as cands
from services.prober import onboard_rules as rules
from services.prober.onboard_rules import Outcome, QueueDoc
from shared.events import ModelRetired
from shared.onboarding import OnboardAsk
from tests.unit.factories import config, endpoint, model

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
LEASE = 60.0
LISTED = {"fake": ["org/new-a", "org/new-b", "org/new-c", "m-a", "gone", "org/judge"],
          "other": ["x/y"]}


def state():  # type: ignore[no-untyped-def]
    return config(endpoint("fake"), endpoint("other", base="https://other.example/v1"), model("m-a"),
                  model("gone"), ModelRetired(id="cfg:r", alias="gone", why="dead"),
                  model("judge", served="org/judge", role="decision"))


def ask(served: str, endpoint: str = "fake", mode: str = "full") -> OnboardAsk:
    return OnboardAsk(served=served, endpoint=endpoint, mode=mode)


def queued(*served: str, doc: QueueDoc | None = None) -> QueueDoc:
    asks = [ask(s) for s in served]
    assert rules.refusals(asks, state(), doc or QueueDoc(), LISTED) == []
    return rules.enqueue(doc or QueueDoc(), asks, [f"o{s[-1]}" for s in served], NOW)


def test_a94_the_same_served_id_twice_is_refused_as_a_whole() -> None:
    errors = rules.refusals([ask("org/new-a"), ask("org/new-b"), ask("org/new-a")], state(), QueueDoc(),
                            LISTED)
    assert errors == ["'org/new-a' on 'fake' is picked twice"]


def test_a94_registered_or_retired_models_are_refused() -> None:
    errors = rules.refusals([ask("m-a"), ask("gone"), ask("org/new-a")], state(), QueueDoc(), LISTED)
    assert errors == ["'m-a' on 'fake' is already registered as 'm-a'",
                      "'gone' on 'fake' was retired as 'gone'; restore it instead"]


def test_a94_an_item_already_queued_is_refused() -> None:
    doc = queued("org/new-a")
    errors = rules.refusals([ask("org/new-a")], state(), doc, LISTED)
    assert errors == ["'org/new-a' on 'fake' is already queued"]


def test_a_served_id_the_endpoint_does_not_list_is_refused_with_near_matches() -> None:
    errors = rules.refusals([ask("org/neww-b")], state(), QueueDoc(), LISTED)
    assert errors == ["fake does not list 'org/neww-b'; near matches: org/new-b, org/new-c, org/new-a"]


def test_bad_ids_modes_endpoints_and_sizes_are_named() -> None:
    errors = rules.refusals([ask("bad id!"), ask("org/new-a", mode="slow"), ask("x/y", endpoint="nope")],
                            state(), QueueDoc(), LISTED)
    assert errors[0].startswith("'bad id!' is not a served id")
    assert errors[1] == "'org/new-a' on 'fake': mode must be one of full, quick, quick-adhoc"
    assert errors[2].startswith("'x/y' on 'nope': no endpoint 'nope'")
    assert rules.refusals([], state(), QueueDoc(), LISTED) == ["send 1 to 50 items (got 0)"]
    too_many = rules.refusals([ask("org/new-a")] * 51, state(), QueueDoc(), LISTED)
    assert too_many == ["send 1 to 50 items (got 51)"]


def test_a_failed_listing_refuses_its_items() -> None:
    errors = rules.refusals([ask("org/new-a")], state(), QueueDoc(), {"fake": "502 bad gateway"})
    assert errors == ["'org/new-a' on 'fake': fake's model list failed: 502 bad gateway"]


def take(doc: QueueDoc, me: str, at: datetime = NOW) -> rules.Turn:
    turn = rules.take_turn(doc, me, at, LEASE)
    assert turn is not None
    return turn


def test_a94_one_at_a_time_across_replicas() -> None:
    doc = queued("org/new-a", "org/new-b")
    first = take(doc, "p1")
    assert first.item is not None and first.item.served == "org/new-a" and first.item.state == "running"
    assert rules.take_turn(first.doc, "p2", NOW + timedelta(seconds=30), LEASE) is None
    ended = rules.finished(first.doc, "p1", first.item.id, Outcome("done", "ok", "new-a"), NOW)
    second = take(ended, "p2")
    assert second.item is not None and second.item.served == "org/new-b"


def test_a_lapsed_lease_is_taken_over_and_counted_then_failed_visibly() -> None:
    doc = take(queued("org/new-a", "org/new-b"), "p1").doc
    later = NOW
    for attempt, who in ((2, "p2"), (3, "p3")):
        later += timedelta(seconds=LEASE + 1)
        turn = take(doc, who, later)
        assert turn.item is not None and (turn.item.served, turn.item.attempts) == ("org/new-a", attempt)
        doc = turn.doc
    later += timedelta(seconds=LEASE + 1)
    turn = take(doc, "p4", later)
    assert [(i.served, i.state) for i in turn.gave_up] == [("org/new-a", "failed")]
    assert "its prober stopped 3 times" in turn.gave_up[0].note
    assert turn.item is not None and turn.item.served == "org/new-b"


def test_a_runner_that_lost_its_lease_can_write_nothing() -> None:
    doc = take(queued("org/new-a"), "p1").doc
    stolen = take(doc, "p2", NOW + timedelta(seconds=LEASE + 1))
    item = stolen.doc.items[0].id
    with pytest.raises(rules.Lost):
        rules.at_step(stolen.doc, "p1", item, 2, "", NOW, LEASE)
    with pytest.raises(rules.Lost):
        rules.finished(stolen.doc, "p1", item, Outcome("done"), NOW)


def test_a94_stop_skips_the_queued_items_and_the_running_one_ends() -> None:
    turn = take(queued("org/new-a", "org/new-b", "org/new-c"), "p1")
    stopped = rules.stop(turn.doc, NOW)
    assert [i.state for i in stopped.items] == ["running", "skipped", "skipped"] and stopped.stopping
    assert turn.item is not None
    ended = rules.finished(stopped, "p1", turn.item.id, Outcome("done"), NOW)
    assert not ended.stopping and rules.take_turn(ended, "p1", NOW, LEASE) is None


def test_clear_refuses_while_running_and_a_new_batch_replaces_a_finished_one() -> None:
    turn = take(queued("org/new-a"), "p1")
    with pytest.raises(rules.Refused):
        rules.clear(turn.doc)
    assert turn.item is not None
    ended = rules.finished(turn.doc, "p1", turn.item.id, Outcome("no answer"), NOW)
    assert [i.served for i in queued("org/new-b", doc=ended).items] == ["org/new-b"]
    assert rules.clear(ended).items == []


def test_items_added_while_running_join_the_batch() -> None:
    turn = take(queued("org/new-a"), "p1")
    assert [i.served for i in queued("org/new-b", doc=turn.doc).items] == ["org/new-a", "org/new-b"]


def test_candidates_leave_out_registered_retired_and_decision_models_and_mark_new_ones() -> None:
    first, _ = cands.candidates(state(), QueueDoc(), LISTED)
    assert [(c.key, c.new) for c in first] == [
        ("org/new-a", False), ("org/new-b", False), ("org/new-c", False), ("x/y@other", False)]
    doc = cands.seen(QueueDoc(), {"fake": ["org/new-a"]})
    doc = cands.dismiss(doc, ["org/new-b"], undo=False)
    shown, dismissed = cands.candidates(state(), doc, {"fake": LISTED["fake"]})
    assert [(c.served, c.new) for c in shown] == [("org/new-a", False), ("org/new-c", True)]
    assert [c.served for c in dismissed] == ["org/new-b"]
    assert cands.dismiss(doc, ["org/new-b"], undo=True).dismissed == []


def test_a_refusal_is_404_for_what_does_not_exist_409_for_what_is_in_the_way_else_400() -> None:
    doc = queued("org/new-a")
    missing = rules.refusals([ask("org/new-z"), ask("x", endpoint="nope")], state(), doc, LISTED)
    in_the_way = rules.refusals([ask("org/new-a"), ask("m-a"), ask("org/zzz")], state(), doc, LISTED)
    bad = rules.refusals([ask("org/new-b"), ask("org/new-b")], state(), doc, LISTED)
    assert [rules.Refused(e).status for e in (missing, in_the_way, bad)] == [404, 409, 400]
