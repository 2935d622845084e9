"""The gateway's kept route seatings (RM-4): the seater stays the one that decides. Whatever the gateway
answers from its cache is exactly what the seater would decide for that request, whatever the rotation and
the draw; a ranked seating is never kept, and a new configuration is never answered from an older one."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from services.gateway.route_mode.seatings import SeatingCache
from services.seater.rotation import Rotation
from services.seater.route_seating import seat_route
from shared.commands import RouteRequest, RouteSeating, TurnNeeds
from shared.config_state import ConfigState
from shared.events import SeatCompleted
from tests.unit.factories import collection, config, endpoint, model

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
ALIASES = ["a", "b", "c", "d"]
WINDOWS = st.sampled_from([None, 1_000, 8_000, 30_000])
# Sizes on both sides of every window, and the windows themselves.
SIZES = st.sampled_from([0, 999, 1_000, 1_001, 7_999, 8_000, 8_001, 29_999, 30_000, 30_001, 40_000])
TRI = st.sampled_from([None, True, False])


@st.composite
def benches(draw: st.DrawFn) -> ConfigState:
    models = [
        model(alias, tools=draw(TRI), vision=draw(TRI), context_window=draw(WINDOWS),
              role=draw(st.sampled_from(["general", "general", "vision"])),
              ad_hoc=draw(st.sampled_from([False, False, False, True])))
        for alias in ALIASES
    ]
    return config(endpoint("fake"), *models, collection("core", ALIASES))


@st.composite
def requests(draw: st.DrawFn, seq: int) -> RouteRequest:
    previous = draw(st.permutations(ALIASES))[: draw(st.integers(0, 4))]
    needs = TurnNeeds(tools=draw(st.booleans()), images=draw(st.integers(0, 2)),
                      estimate=draw(SIZES))
    current = draw(st.sampled_from(["", *ALIASES, *ALIASES]))
    return RouteRequest(collection="core", needs=needs, current=current, previous=previous, config_seq=seq)


def rotation_with_history() -> Rotation:
    """A rotation with something in it: a seat answered and one that failed on a rate limit."""
    rotation = Rotation()
    for n, (alias, status) in enumerate([("c", "ok"), ("a", "error")]):
        rotation.apply(SeatCompleted(id=f"seat:p.{n}", at=NOW, call=f"p.{n}", panel="p", seat="member",
                                     alias=alias, served=alias, endpoint="fake", connection="fake",
                                     task="t", status=status, seconds=1.0,
                                     error="HTTP 429" if status == "error" else ""), n + 1)
    return rotation


def decide(request: RouteRequest, state: ConfigState, rotation: Rotation, draw: float) -> RouteSeating | None:
    seating = seat_route(request, state, rotation, NOW, lambda: draw)
    return seating if isinstance(seating, RouteSeating) else None


@st.composite
def next_turns(draw: st.DrawFn, first: RouteRequest) -> RouteRequest:
    """The same conversation's next turn: a new size, and now and then tools or images it did not have."""
    needs = TurnNeeds(tools=draw(st.sampled_from([first.needs.tools, first.needs.tools, True, False])),
                      images=draw(st.sampled_from([first.needs.images, first.needs.images, 0, 1, 2])),
                      estimate=draw(SIZES))
    return first.model_copy(update={"needs": needs})


@settings(max_examples=400, deadline=None)
@given(state=benches(), first=requests(seq=7), data=st.data(), draw=st.floats(0, 1))
def test_what_the_cache_answers_is_what_the_seater_would_decide(
    state: ConfigState, first: RouteRequest, data: st.DataObject, draw: float
) -> None:
    cache = SeatingCache()
    decided = decide(first, state, Rotation(), 0.5)
    if decided is not None:
        cache.keep(first, decided)
    turns = data.draw(st.lists(next_turns(first), max_size=8))
    for request in [*turns, *data.draw(st.lists(requests(seq=7), max_size=4))]:
        reused = cache.get(request)
        if reused is not None:
            assert reused == decide(request, state, rotation_with_history(), draw)


def test_a_kept_conversation_is_reused_up_to_its_smallest_window_and_then_asked_again() -> None:
    state = config(endpoint("fake"), model("a", context_window=8_000), model("b", context_window=30_000),
                   model("c"), collection("core", ["a", "b", "c"]))
    turn = RouteRequest(collection="core", needs=TurnNeeds(estimate=100), current="b",
                        previous=["b", "a", "c"], config_seq=3)
    seating = decide(turn, state, Rotation(), 0.5)
    assert seating is not None and seating.reusable and seating.fits_up_to == 8_000
    cache = SeatingCache()
    cache.keep(turn, seating)
    assert cache.get(turn.model_copy(update={"needs": TurnNeeds(estimate=8_000)})) == seating
    assert cache.get(turn.model_copy(update={"needs": TurnNeeds(estimate=8_001)})) is None  # a is too small
    assert cache.get(turn.model_copy(update={"needs": TurnNeeds(tools=True, estimate=100)})) is None
    assert cache.get(turn.model_copy(update={"config_seq": 4})) is None  # a new configuration: asked again
    assert cache.get(turn.model_copy(update={"current": "a"})) is None


def test_a_ranked_seating_and_one_naming_a_too_small_member_are_never_kept() -> None:
    state = config(endpoint("fake"), model("a", context_window=1_000), model("b"),
                   collection("core", ["a", "b"]))
    new = RouteRequest(collection="core", needs=TurnNeeds(estimate=100), config_seq=3)
    ranked = decide(new, state, Rotation(), 0.5)
    assert ranked is not None and not ranked.reusable
    big = RouteRequest(collection="core", needs=TurnNeeds(estimate=5_000), current="b", config_seq=3)
    sized = decide(big, state, Rotation(), 0.5)
    assert sized is not None and sized.order == ["b"] and not sized.reusable  # a's skip names the size
    cache = SeatingCache()
    cache.keep(new, ranked)
    cache.keep(big, sized)
    assert cache.get(new) is None and cache.get(big) is None and not cache.kept


def test_a_gateway_without_a_configuration_view_always_asks() -> None:
    seating = RouteSeating(order=["a"], reusable=True)
    request = RouteRequest(collection="core", current="a", config_seq=0)
    cache = SeatingCache()
    cache.keep(request, seating)
    assert cache.get(request) is None


def test_the_oldest_decision_goes_first_when_the_cache_is_full() -> None:
    cache = SeatingCache(size=2)
    turns = [RouteRequest(collection="core", current=alias, config_seq=1) for alias in ("a", "b", "c")]
    for turn in turns:
        cache.keep(turn, RouteSeating(order=[turn.current], reusable=True))
    assert cache.get(turns[0]) is None and cache.get(turns[2]) is not None
