"""The rotation fold: seat times, rests and verdict counts, rebuilt identically from the events."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.seater.rotation import HALF_LIFE, NEVER, Rotation, Tally
from shared.events import CooldownStarted, EventBase, PanelSeated, SeatCompleted, SeatPlan, VerdictRecorded
from tests.unit.seater.factory import at


def seated(panel: str, when: datetime, *aliases: str, shape: str = "general") -> PanelSeated:
    seats = [
        SeatPlan(call=f"{panel}.member{i}", seat="member", alias=a, served=f"org/{a}", endpoint="ep",
                 connection="ep")
        for i, a in enumerate(aliases, 1)
    ]
    return PanelSeated(id=f"seated:{panel}", at=when, panel=panel, collection="core", shape=shape,
                       shape_by="set on the collection", seats=seats)


def completed(
    call: str, alias: str, when: datetime, purpose: Literal["panel", "merger", "route", "probe"] = "panel"
) -> SeatCompleted:
    return SeatCompleted(id=f"seat:{call}", at=when, call=call, panel=call.rsplit(".", 1)[0], seat="member",
                         alias=alias, served=f"org/{alias}", endpoint="ep", connection="ep",
                         purpose=purpose, status="ok", seconds=1.0)


def verdict(call: str, alias: str, useful: bool, n: int = 0, shape: str = "") -> VerdictRecorded:
    return VerdictRecorded(id=f"verdict:{call}:{n}", call=call, alias=alias, useful=useful, shape=shape)


def fold(events: list[EventBase]) -> Rotation:
    rotation = Rotation()
    for seq, event in enumerate(events, 1):
        rotation.apply(event, seq)
    return rotation


def test_a_panel_seats_every_alias_at_its_time() -> None:
    rotation = fold([seated("p1", at(0), "a", "b"), seated("p2", at(5), "b")])
    assert [rotation.last_seat(a) for a in "abc"] == [at(0), at(5), NEVER]


def test_folding_is_idempotent_and_an_older_panel_never_moves_a_seat_back() -> None:
    events: list[EventBase] = [seated("p2", at(5), "a"), seated("p1", at(0), "a")]
    rotation = fold(events)
    rotation.apply(events[0])  # no sequence: applied again on purpose
    assert rotation.last_seat("a") == at(5)
    again = fold(events)
    again.apply(events[0], 1)  # an old sequence is skipped
    assert again.seq == 2


def test_a_hold_counts_until_its_panel_comes_back_then_the_event_keeps_it() -> None:
    rotation = Rotation()
    rotation.hold("p1", ["a"], at(3))
    assert rotation.last_seat("a") == at(3)
    rotation.apply(seated("p1", at(3), "a"), 1)
    assert rotation.holds == {}
    assert rotation == fold([seated("p1", at(3), "a")])


def test_a_released_hold_leaves_no_trace() -> None:
    rotation = Rotation()
    rotation.hold("p1", ["a"], at(3))
    rotation.release("p1")
    assert rotation.last_seat("a") == NEVER
    assert rotation == Rotation()


def test_merger_and_route_calls_count_as_seats_panel_calls_count_at_the_plan() -> None:
    rotation = fold([
        seated("p1", at(0), "a"),
        completed("p1.member1", "a", at(30)),
        completed("p1.merger", "m", at(40), purpose="merger"),
        completed("r1.1", "r", at(50), purpose="route"),
        completed("x.probe", "q", at(60), purpose="probe"),
    ])
    assert rotation.last_seat("a") == at(0)
    assert [rotation.last_seat(a) for a in "mrq"] == [at(40), at(50), NEVER]


def test_a_rest_lasts_until_its_latest_end() -> None:
    rotation = fold([
        CooldownStarted(id="cool:a:1", alias="a", connection="ep", until=at(100)),
        CooldownStarted(id="cool:a:2", alias="a", connection="ep", until=at(50)),
    ])
    assert rotation.cooling("a", at(99))
    assert not rotation.cooling("a", at(100))
    assert not rotation.cooling("b", at(0))


def test_naive_times_are_read_as_utc() -> None:
    rotation = fold([CooldownStarted(id="c", alias="a", connection="ep", until=at(10).replace(tzinfo=None))])
    assert rotation.cooling("a", at(9))


def test_verdicts_are_counted_per_alias_and_per_panel_shape() -> None:
    rotation = fold([
        seated("p1", at(0), "a", "b", shape="code"),
        seated("p2", at(1), "a", shape="prose"),
        verdict("p1.member1", "a", True, shape="code"),
        verdict("p1.member2", "b", False, shape="code"),
        verdict("p2.member1", "a", False, shape="prose"),
        verdict("r9.1", "a", True),
    ])
    assert rotation.useful("a") == Tally(judged=3, useful=2)
    assert rotation.useful("a", "code") == Tally(judged=1, useful=1)
    assert rotation.useful("a", "prose") == Tally(judged=1, useful=0)
    assert rotation.useful("b", "code").ratio == 0.0
    assert rotation.useful("zz") == Tally()


def test_a_later_verdict_on_a_call_replaces_the_earlier_one() -> None:
    rotation = fold([
        seated("p1", at(0), "a", shape="code"),
        verdict("p1.member1", "a", False, 1, "code"),
        verdict("p1.member1", "a", True, 2, "code"),
    ])
    assert rotation.useful("a") == Tally(judged=1, useful=1)
    assert rotation.useful("a", "code").ratio == 1.0


def test_the_rotation_keeps_nothing_per_panel_once_its_plan_came_back() -> None:
    """A seater runs for months: what it folds per panel must not pile up (issue 16's flat memory)."""
    rotation = Rotation()
    for n in range(500):
        rotation.hold(f"p{n}", ["a", "b"], at(n))
        rotation.apply(seated(f"p{n}", at(n), "a", "b", shape=("code", "prose")[n % 2]))
    sizes = {name: len(v) for name, v in vars(rotation).items() if isinstance(v, dict)}
    assert max(sizes.values()) <= 2, sizes


def test_recent_verdicts_weigh_more_halving_every_half_life_of_verdicts() -> None:
    events: list[EventBase] = [verdict("r1.1", "a", True)]
    events += [verdict(f"r{n}.1", "b", False) for n in range(2, 2 + HALF_LIFE)]
    rotation = fold(events)
    useful, judged = rotation.recently_useful("a")
    assert useful == pytest.approx(0.5) and judged == pytest.approx(0.5)  # one half-life of verdicts later
    assert rotation.recently_useful("b")[0] == 0.0
    faded = sum(0.5 ** (k / HALF_LIFE) for k in range(HALF_LIFE))
    assert rotation.recently_useful("b")[1] == pytest.approx(faded)
    assert rotation.recently_useful("zz") == (0.0, 0.0)
    assert rotation.useful("a") == Tally(judged=1, useful=1)  # the plain tallies never fade


def test_a_changed_verdict_replaces_the_old_one_and_keeps_its_age() -> None:
    events: list[EventBase] = [verdict("r1.1", "a", False, 1)]
    events += [verdict(f"r{n}.1", "b", True) for n in range(2, 2 + HALF_LIFE)]
    events.append(verdict("r1.1", "a", True, 2))  # the user changed their mind about the old answer
    useful, judged = fold(events).recently_useful("a")
    assert judged == pytest.approx(0.5 ** ((HALF_LIFE + 1) / HALF_LIFE))
    assert useful == pytest.approx(judged)


def test_a_shorter_half_life_forgets_faster() -> None:
    quick = Rotation(half_life=10)
    for n in range(20):
        quick.apply(verdict(f"r{n}.1", "a" if n == 0 else "b", True))
    assert quick.recently_useful("a")[1] == pytest.approx(0.5 ** (19 / 10))


@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from("ab"), st.booleans()), max_size=40))
def test_recent_tallies_equal_the_latest_verdicts_weighed_by_their_age(
    verdicts: list[tuple[int, str, bool]]
) -> None:
    """Folded one at a time, superseding included, the faded sums are those of the verdicts that stand,
    each weighed by how many verdicts were folded after the call's first one."""
    rotation = Rotation(half_life=7)
    first: dict[str, int] = {}
    standing: dict[str, tuple[str, bool]] = {}
    for n, (call_no, alias, useful) in enumerate(verdicts, 1):
        call = f"r{call_no}.1"
        rotation.apply(verdict(call, alias, useful, n))
        first.setdefault(call, n)
        standing[call] = (alias, useful)
    for alias in "ab":
        mine = [(c, u) for c, (a, u) in standing.items() if a == alias]
        weights = [(0.5 ** ((len(verdicts) - first[c]) / 7), u) for c, u in mine]
        useful, judged = rotation.recently_useful(alias)
        assert judged == pytest.approx(sum(w for w, _ in weights), abs=1e-9)
        assert useful == pytest.approx(sum(w for w, u in weights if u), abs=1e-9)
