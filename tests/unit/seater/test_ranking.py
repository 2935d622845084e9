"""Merger candidates (P-15) and route ranking (RM-3) from verdicts, rests and seat times."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from services.seater.ranking import merger_candidates, route_order
from services.seater.rotation import Rotation
from shared.events import CooldownStarted, ModelUpdated, PanelSeated, SuiteAnswered, VerdictRecorded
from tests.unit.ledger.factories import T0, suite_answered
from tests.unit.seater.factory import at, bench, collection, model, retire

MEMBERS = ["a", "b", "c", "d"]


def judged(shape: str, verdicts: list[tuple[str, bool]]) -> Rotation:
    """One panel of `shape`, then one verdict per (alias, useful), each on its own call."""
    rotation = Rotation()
    rotation.apply(PanelSeated(id="seated:p1", panel="p1", collection="core", shape=shape, shape_by="x",
                               seats=[]))
    for i, (alias, useful) in enumerate(verdicts):
        rotation.apply(VerdictRecorded(id=f"v{i}", call=f"p1.member{i}", alias=alias, useful=useful))
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
