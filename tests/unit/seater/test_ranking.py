"""Merger candidates (P-15) and route ranking (RM-3) from verdicts, rests and seat times."""

from __future__ import annotations

from collections.abc import Callable

from services.seater.ranking import merger_candidates, route_order
from services.seater.rotation import Rotation
from shared.events import CooldownStarted, PanelSeated, VerdictRecorded
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
