"""Merger candidates (P-15) and route ranking (RM-3) from verdicts, rests and seat times."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from services.seater.ranking import (
    LEADER_CHALLENGE_CHANCE,
    LEADER_EXPLORE_CHANCE,
    ROUTE_RANKINGS,
    SAMPLING_EXPLORE_CHANCE,
    _belief_draw,
    led_order,
    merger_candidates,
    never_first,
    route_order,
    sampled_order,
)
from services.seater.rotation import Rotation
from shared.events import CooldownStarted, ModelUpdated, PanelSeated, SuiteAnswered, VerdictRecorded
from shared.settings import SeaterSettings
from tests.unit.ledger.factories import T0, suite_answered
from tests.unit.seater.factory import at, bench, collection, model, retire

MEMBERS = ["a", "b", "c", "d"]


def judged(shape: str, verdicts: list[tuple[str, bool]]) -> Rotation:
    """One panel of `shape`, then one verdict per (alias, useful), each on its own call."""
    rotation = Rotation()
    rotation.apply(PanelSeated(id="seated:p1", panel="p1", collection="core", shape=shape, shape_by="x",
                               seats=[]))
    for i, (alias, useful) in enumerate(verdicts):
        rotation.apply(VerdictRecorded(id=f"v{i}", call=f"p1.member{i}", alias=alias, useful=useful,
                                       shape=shape))
    return rotation


def never() -> Callable[[], float]:
    def draw() -> float:
        raise AssertionError("no draw expected")

    return draw


def test_the_collections_merger_alone_when_set() -> None:
    config = bench([model(a) for a in [*MEMBERS, "boss"]], collection("core", MEMBERS, merger="boss"))
    assert merger_candidates(config.collections["core"], "code", config, Rotation()) == ["boss"]


def test_a_retired_merger_falls_back_to_verdicts() -> None:
    config = bench([model(a) for a in [*MEMBERS, "boss"]], collection("core", MEMBERS, merger="boss"))
    config.apply(retire("boss", at(1)))
    assert merger_candidates(config.collections["core"], "code", config, Rotation()) == MEMBERS


def test_members_with_useful_verdicts_on_the_shape_first_by_count_then_ratio() -> None:
    config = bench([model(a) for a in MEMBERS], collection("core", MEMBERS))
    rotation = judged("code", [
        ("c", True), ("c", False),  # 1 useful of 2
        ("d", True),  # 1 useful of 1: same count, better ratio
        ("b", True), ("b", True), ("b", False), ("b", False), ("b", False),  # 2 useful of 5
        ("a", False),  # judged, never useful: stays in member order
    ])
    assert merger_candidates(config.collections["core"], "code", config, rotation) == ["b", "d", "c", "a"]
    # Verdicts on another shape do not count.
    assert merger_candidates(config.collections["core"], "prose", config, rotation) == MEMBERS


def test_route_ranks_by_useful_verdicts_resting_members_last() -> None:
    rotation = judged("code", [("c", True), ("c", True), ("b", True)])
    rotation.apply(CooldownStarted(id="cool", alias="c", connection="ep", until=at(100)))
    assert route_order(MEMBERS, rotation, at(0), lambda: 0.9) == ["b", "a", "d", "c"]
    assert route_order(MEMBERS, rotation, at(100), lambda: 0.9) == ["c", "b", "a", "d"]


def test_one_time_in_four_the_stalest_fresh_member_goes_first() -> None:
    rotation = judged("code", [("a", True)])
    for i, alias in enumerate(["a", "b", "c"]):
        rotation.hold(f"p{i}", [alias], at(i))
    assert route_order(MEMBERS, rotation, at(10), lambda: 0.25) == ["a", "b", "c", "d"]
    assert route_order(MEMBERS, rotation, at(10), lambda: 0.24) == ["d", "a", "b", "c"]
    rotation.hold("p9", ["d"], at(9))
    assert route_order(MEMBERS, rotation, at(10), lambda: 0.0) == ["a", "b", "c", "d"]
    assert route_order(["c", "d", "b"], rotation, at(10), lambda: 0.9) == ["c", "d", "b"]
    assert route_order(["c", "d", "b"], rotation, at(10), lambda: 0.0) == ["b", "c", "d"]


def test_no_draw_without_two_fresh_members() -> None:
    rotation = Rotation()
    rotation.apply(CooldownStarted(id="cool", alias="b", connection="ep", until=at(100)))
    assert route_order(["a", "b"], rotation, at(0), never()) == ["a", "b"]


# ---------------------------------------------------------------- the sampling rule (BENCH_ROUTE_RANKING)


def draws(*values: float) -> Callable[[], float]:
    """The given draws in order, then an error: the rule must take exactly as many as the test expects."""
    pending = list(values)

    def draw() -> float:
        assert pending, "more draws than expected"
        return pending.pop(0)

    return draw


def test_sampling_keeps_the_members_order_until_anyone_is_judged() -> None:
    rotation = Rotation()
    rotation.apply(CooldownStarted(id="cool", alias="a", connection="ep", until=at(100)))
    # One draw only: the explore chance, missed.
    assert sampled_order(MEMBERS, rotation, at(0), draws(0.9)) == ["b", "c", "d", "a"]


def test_sampling_puts_the_highest_belief_draw_first_resting_members_last() -> None:
    rotation = judged("code", [("a", False)] * 6 + [("b", True)] * 6 + [("c", True)] * 2 + [("c", False)])
    rotation.apply(CooldownStarted(id="cool", alias="b", connection="ep", until=at(100)))
    # Median draws (0.5) rank by belief: c (2 of 3) over d (never judged: even odds), a (0 of 6) after; b
    # rests. Then the explore draw, missed.
    assert sampled_order(MEMBERS, rotation, at(0), draws(0.5, 0.5, 0.5, 0.5, 0.9)) == ["c", "d", "a", "b"]
    # An unjudged member drawn high beats a proven one: that is how the rule explores by its doubt.
    assert sampled_order(MEMBERS, rotation, at(100), draws(0.5, 0.5, 0.5, 0.999, 0.9))[0] == "d"
    assert sampled_order(MEMBERS, rotation, at(100), draws(0.5, 0.5, 0.5, 0.5, 0.9))[0] == "b"


def test_sampling_still_tries_the_stalest_fresh_member_first_now_and_then() -> None:
    rotation = judged("code", [("a", True)] * 5)
    for i, alias in enumerate(["a", "b", "c"]):
        rotation.hold(f"p{i}", [alias], at(i))
    chance = SAMPLING_EXPLORE_CHANCE
    assert sampled_order(MEMBERS, rotation, at(10), draws(0.5, 0.5, 0.5, 0.5, chance))[0] == "a"
    assert sampled_order(MEMBERS, rotation, at(10), draws(0.5, 0.5, 0.5, 0.5, chance - 0.01))[0] == "d"


@given(
    verdicts=st.lists(st.tuples(st.sampled_from(MEMBERS), st.booleans()), max_size=30),
    resting=st.sets(st.sampled_from(MEMBERS)),
    drawn=st.lists(st.floats(min_value=0.0, max_value=1.0, exclude_max=True), min_size=5, max_size=5),
)
def test_sampling_orders_every_member_once_fresh_ones_first(
    verdicts: list[tuple[str, bool]], resting: set[str], drawn: list[float]
) -> None:
    rotation = judged("code", verdicts)
    for alias in resting:
        rotation.apply(CooldownStarted(id=f"cool-{alias}", alias=alias, connection="ep", until=at(100)))
    order = sampled_order(MEMBERS, rotation, at(0), iter(drawn).__next__)
    assert sorted(order) == sorted(MEMBERS)
    assert [a in resting for a in order] == sorted(a in resting for a in order)


@given(useful=st.integers(0, 50), more=st.integers(1, 50), u=st.floats(0.01, 0.99))
def test_a_belief_draw_rises_with_useful_verdicts_and_with_the_draw(useful: int, more: int, u: float) -> None:
    judged_ = float(useful + more)
    assert _belief_draw(useful + 1, judged_ + 1, u) > _belief_draw(useful, judged_ + 1, u)
    assert _belief_draw(useful, judged_, min(0.999, u + 0.001)) > _belief_draw(useful, judged_, u)


# ---------------------------------------------------------------- the leader rule (the default)


def test_the_leader_keeps_the_members_order_until_anyone_is_judged() -> None:
    rotation = Rotation()
    rotation.apply(CooldownStarted(id="cool", alias="a", connection="ep", until=at(100)))
    # Nobody challenges without evidence: the one draw is the stalest-first chance, missed.
    assert led_order(MEMBERS, rotation, at(0), draws(0.9)) == ["b", "c", "d", "a"]


def test_the_leader_is_the_best_mean_belief_resting_members_last() -> None:
    # a 0 of 6, b 6 of 6 (resting), c 2 of 3, d never judged (even odds).
    rotation = judged("code", [("a", False)] * 6 + [("b", True)] * 6 + [("c", True)] * 2 + [("c", False)])
    rotation.apply(CooldownStarted(id="cool", alias="b", connection="ep", until=at(100)))
    # Both chances missed: two draws, no belief drawn.
    assert led_order(MEMBERS, rotation, at(0), draws(0.9, 0.9)) == ["c", "d", "a", "b"]
    assert led_order(MEMBERS, rotation, at(100), draws(0.9, 0.9)) == ["b", "c", "d", "a"]


def test_a_challenger_is_the_highest_belief_draw_among_the_others() -> None:
    rotation = judged("code", [("a", False)] * 6 + [("b", True)] * 6 + [("c", True)] * 2 + [("c", False)])
    hit = LEADER_CHALLENGE_CHANCE - 0.01
    # Challenged: one draw per fresh member after the leader b (c, d, a), then the stalest chance, missed.
    assert led_order(MEMBERS, rotation, at(0), draws(hit, 0.5, 0.5, 0.5, 0.9)) == ["c", "b", "d", "a"]
    # d, never judged, drawn high beats c: challenges go where the evidence leaves doubt.
    assert led_order(MEMBERS, rotation, at(0), draws(hit, 0.5, 0.99, 0.5, 0.9)) == ["d", "b", "c", "a"]
    # A draw at the chance itself is a miss.
    assert led_order(MEMBERS, rotation, at(0), draws(LEADER_CHALLENGE_CHANCE, 0.9))[0] == "b"


def test_the_leader_still_tries_the_stalest_fresh_member_first_now_and_then() -> None:
    rotation = judged("code", [("a", True)] * 5)
    for i, alias in enumerate(["a", "b", "c"]):
        rotation.hold(f"p{i}", [alias], at(i))
    assert led_order(MEMBERS, rotation, at(10), draws(0.9, LEADER_EXPLORE_CHANCE))[0] == "a"
    assert led_order(MEMBERS, rotation, at(10), draws(0.9, LEADER_EXPLORE_CHANCE - 0.01))[0] == "d"


def test_the_leader_follows_recent_verdicts_over_old_ones() -> None:
    """Faded evidence: a leader that turned bad loses its place within a few dozen verdicts."""
    rotation = judged("code", [("a", True)] * 40 + [("b", True)] * 7 + [("b", False)] * 3)
    assert led_order(MEMBERS, rotation, at(0), never_first)[0] == "a"
    for i in range(40):
        rotation.apply(VerdictRecorded(id=f"late{i}", call=f"p1.late{i}", alias="a", useful=False))
    assert led_order(MEMBERS, rotation, at(0), never_first)[0] == "b"


@given(
    verdicts=st.lists(st.tuples(st.sampled_from(MEMBERS), st.booleans()), max_size=30),
    resting=st.sets(st.sampled_from(MEMBERS)),
    drawn=st.lists(st.floats(min_value=0.0, max_value=1.0, exclude_max=True), min_size=6, max_size=6),
)
def test_the_leader_orders_every_member_once_fresh_ones_first(
    verdicts: list[tuple[str, bool]], resting: set[str], drawn: list[float]
) -> None:
    rotation = judged("code", verdicts)
    for alias in resting:
        rotation.apply(CooldownStarted(id=f"cool-{alias}", alias=alias, connection="ep", until=at(100)))
    order = led_order(MEMBERS, rotation, at(0), iter(drawn).__next__)
    assert sorted(order) == sorted(MEMBERS)
    assert [a in resting for a in order] == sorted(a in resting for a in order)


@given(verdicts=st.lists(st.tuples(st.sampled_from(MEMBERS), st.booleans()), min_size=1, max_size=40))
def test_without_a_challenge_or_exploring_the_leader_has_the_best_record(
    verdicts: list[tuple[str, bool]]
) -> None:
    rotation = judged("code", verdicts)
    first = led_order(MEMBERS, rotation, at(0), draws(0.9, 0.9))[0]

    def mean(alias: str) -> float:
        useful, judged_ = rotation.recently_useful(alias)
        return (1.0 + useful) / (2.0 + judged_)

    assert mean(first) == pytest.approx(max(map(mean, MEMBERS)))


def test_the_rules_are_named_for_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ROUTE_RANKINGS == {"verdicts": route_order, "sampling": sampled_order, "leader": led_order}
    assert set(get_args(SeaterSettings.model_fields["route_ranking"].annotation)) == set(ROUTE_RANKINGS)
    monkeypatch.delenv("BENCH_ROUTE_RANKING", raising=False)
    assert SeaterSettings().route_ranking == "leader"  # the study's winner (docs/selection.md)
    monkeypatch.setenv("BENCH_ROUTE_RANKING", "sampling")
    assert SeaterSettings().route_ranking == "sampling"
    monkeypatch.setenv("BENCH_ROUTE_RANKING", "verdicts")
    assert SeaterSettings().route_ranking == "verdicts"
    monkeypatch.setenv("BENCH_ROUTE_RANKING", "elo")
    with pytest.raises(ValidationError, match="route_ranking"):
        SeaterSettings()


def scored(*answers: SuiteAnswered) -> Rotation:
    rotation = Rotation()
    for n, answer in enumerate(answers, 1):
        rotation.apply(answer, n)
    return rotation


def test_route_ranks_verified_suite_findings_after_useful_verdicts() -> None:
    rotation = judged("code", [("d", True)])
    answers = [suite_answered("b", "t1", found=2, n=1), suite_answered("c", "t1", found=1, n=2),
               suite_answered("c", "t2", found=3, n=3)]
    for n, answer in enumerate(answers, 10):
        rotation.apply(answer, n)
    assert route_order(MEMBERS, rotation, at(0), lambda: 0.9) == ["d", "c", "b", "a"]


def test_route_ranking_changes_when_suite_results_change() -> None:
    before = scored(suite_answered("b", "t1", found=1, n=1), suite_answered("c", "t1", found=2, n=2))
    assert route_order(MEMBERS, before, at(0), lambda: 0.9) == ["c", "b", "a", "d"]
    # c is asked t1 again and finds nothing this time: the latest answer counts.
    after = scored(suite_answered("b", "t1", found=1, n=1), suite_answered("c", "t1", found=2, n=2),
                   suite_answered("c", "t1", found=0, missed=2, n=3, at=T0 + timedelta(seconds=5)))
    assert route_order(MEMBERS, after, at(0), lambda: 0.9) == ["b", "a", "c", "d"]


def test_tasks_outside_routing_recall_and_non_answers_do_not_rank() -> None:
    rotation = scored(suite_answered("c", "claim-1", found=1, recall=False, n=1),
                      suite_answered("b", "t1", found=0, missed=1, n=2),
                      suite_answered("b", "t1", kind="timeout", found=0, n=3, at=T0 + timedelta(seconds=9)))
    assert (rotation.suite.findings("c"), rotation.suite.recall("b").of) == (0, 1)
    assert route_order(MEMBERS, rotation, at(0), lambda: 0.9) == MEMBERS


def test_the_routers_primary_merges_after_proven_members_even_when_not_a_member() -> None:
    config = bench([model(a) for a in [*MEMBERS, "ace", "adhoc"]], collection("core", MEMBERS))
    config.apply(ModelUpdated(id="cfg:adhoc", alias="adhoc", ad_hoc=True))
    rotation = judged("code", [("c", True)])
    for n, answer in enumerate([suite_answered("ace", "t1", found=3, missed=1, n=1, shape="code"),
                                suite_answered("d", "t1", found=1, missed=3, n=2, shape="code"),
                                suite_answered("adhoc", "t1", found=4, n=3, shape="code")], 10):
        rotation.apply(answer, n)
    order = merger_candidates(config.collections["core"], "code", config, rotation)
    assert order == ["c", "ace", "a", "b", "d"]


def test_the_primary_is_the_best_on_the_shape_else_overall() -> None:
    rotation = scored(suite_answered("a", "t1", found=1, missed=1, n=1, shape="code"),
                      suite_answered("b", "t2", found=3, n=2, shape="review"))
    assert rotation.suite.primary(MEMBERS, "code") == "a"
    assert rotation.suite.primary(MEMBERS, "prose") == "b"
    assert Rotation().suite.primary(MEMBERS, "code") is None


def test_a_rescoring_replaces_its_answer_however_its_id_sorts() -> None:
    """T-5: re-scorings keep the answer's time; the later one in the stream counts."""
    original = suite_answered("b", "t1", found=0, missed=2, n=1)
    first = original.model_copy(update={"id": f"{original.id}:rescored:ffff", "found": ["f0"],
                                        "missed": ["m0"]})
    second = original.model_copy(update={"id": f"{original.id}:rescored:0000", "found": ["f0", "f1"],
                                         "missed": []})
    rotation = scored(original, first, second)
    assert (rotation.suite.findings("b"), rotation.suite.recall("b").of) == (2, 2)


def test_sampling_ranks_by_suite_findings_until_anyone_is_judged() -> None:
    """T-5 under the sampling rule: equal draws (no verdicts yet) go to more verified findings first."""
    rotation = scored(suite_answered("c", "t1", found=2, n=1), suite_answered("b", "t1", found=1, n=2))
    assert sampled_order(MEMBERS, rotation, at(0), draws(0.9)) == ["c", "b", "a", "d"]


def test_sampling_draws_outrank_suite_findings_once_members_are_judged() -> None:
    rotation = judged("code", [("a", True)] * 3)
    for n, answer in enumerate([suite_answered("d", "t1", found=5, n=1)], 10):
        rotation.apply(answer, n)
    # Median draws: a's belief (4 of 5) first; b, c and d tie at even odds and d's findings lift it.
    assert sampled_order(MEMBERS, rotation, at(0), draws(0.5, 0.5, 0.5, 0.5, 0.9)) == ["a", "d", "b", "c"]
