"""RM-2..RM-4 (A-55), decided by the seater: who may take a route turn, each other member named with why,
503 / 413 / 400 when none may, and the order the turn walks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.seater.planning import NOT_REGISTERED, VISION_SPECIALIST
from services.seater.rotation import Rotation
from services.seater.route_seating import AD_HOC, NO_TOOLS, TOOLS_UNKNOWN, seat_route
from shared.commands import PlanRefusal, RouteRequest, RouteSeating, TurnNeeds
from shared.config_state import ConfigState
from shared.events import ConfigEvent, ModelRetired, SeatCompleted, VerdictRecorded
from tests.unit.factories import collection, config, endpoint, model

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
PLAIN = TurnNeeds(tools=False, images=0, estimate=100)
TOOLS = TurnNeeds(tools=True, images=0, estimate=100)
IMAGES = TurnNeeds(tools=False, images=1, estimate=2_600)
VISION_UNKNOWN = "not known to read images: tick Vision / OCR in its model popup if it does"


def bench(*events: ConfigEvent) -> ConfigState:
    return config(endpoint("fake"), endpoint("claude", api="anthropic"), *events)


def seat(state: ConfigState, needs: TurnNeeds = PLAIN, rotation: Rotation | None = None, draw: float = 0.9,
         **asked: object) -> RouteSeating | PlanRefusal:
    request = RouteRequest.model_validate({"collection": "bench/core", "needs": needs, **asked})
    return seat_route(request, state, rotation or Rotation(), NOW, lambda: draw)


def seated(state: ConfigState, needs: TurnNeeds = PLAIN, **asked: object) -> RouteSeating:
    seating = seat(state, needs, **asked)
    assert isinstance(seating, RouteSeating), seating
    return seating


def refused(state: ConfigState, needs: TurnNeeds = PLAIN) -> PlanRefusal:
    refusal = seat(state, needs)
    assert isinstance(refusal, PlanRefusal), refusal
    return refusal


def whys(seating: RouteSeating) -> dict[str, str]:
    return {s.alias: s.why for s in seating.skipped}


def test_every_exclusion_is_named_with_its_why() -> None:
    saved = collection("core", ["ok", "old", "adhoc", "gone", "native", "toolless", "unknown", "lost"])
    retirement = ModelRetired(id="cfg:r:old", alias="old", why="dead")  # after the collection was saved
    state = bench(
        model("ok", served="org/ok", tools=True, vision=True, context_window=32_000, max_output=4_096,
              max_tokens=900),
        model("old"), model("adhoc", ad_hoc=True, tools=True), model("native", endpoint="claude", tools=True),
        model("toolless", tools=False), model("unknown"), model("lost", endpoint="nowhere", tools=True),
        saved, retirement,
    )
    seating = seated(state, TOOLS)
    assert seating.order == ["ok"]
    assert seating.seat("ok").model_dump() == {
        "alias": "ok", "served": "org/ok", "endpoint": "fake", "connection": "fake", "max_output": 4_096,
        "max_tokens": 900,
    }
    assert whys(seating) == {
        "old": f"retired from the bench on {retirement.at:%Y-%m-%d}; take it out of the collection "
               "(Restore in its model popup brings it back)",
        "adhoc": AD_HOC,
        "gone": NOT_REGISTERED,
        "native": "reached through the anthropic API; route mode passes requests on to chat completions only",
        "toolless": f"{NO_TOOLS} (says registration)",
        "unknown": TOOLS_UNKNOWN,
        "lost": "its endpoint 'nowhere' is not configured",
    }


def test_a_collection_saved_after_a_retirement_no_longer_names_it() -> None:
    state = bench(model("a"), model("old"), collection("core", ["a", "old"]))
    state.apply(ModelRetired(id="cfg:r:old", alias="old"), 10)
    assert "old" in whys(seated(state))
    state.apply(collection("core", ["a"]), 11)  # saved again after the retirement: the user's own list
    assert whys(seated(state)) == {}


def test_without_tools_a_tool_less_member_is_fine_and_members_are_not_capped() -> None:
    aliases = [f"m{i}" for i in range(8)]
    state = bench(*(model(a, tools=False) for a in aliases), collection("core", aliases))
    assert seated(state).order == aliases


def test_images_exclude_the_blind_and_no_images_exclude_vision_specialists() -> None:
    state = bench(
        model("eyes", vision=True), model("blind", vision=False), model("unsure"),
        model("specialist", role="vision", vision=True),
        collection("core", ["eyes", "blind", "unsure", "specialist"]),
    )
    with_images = seated(state, IMAGES)
    assert with_images.order == ["eyes", "specialist"]
    blind = "does not take images (says registration)"
    assert whys(with_images) == {"blind": blind, "unsure": VISION_UNKNOWN}
    assert whys(seated(state)) == {"specialist": VISION_SPECIALIST}


def test_no_collection_is_404_and_no_members_503() -> None:
    state = bench(collection("core", []))
    assert refused(state).status == 503 and "bench/core" in refused(state).message
    missing = seat_route(RouteRequest(collection="nope"), state, Rotation(), NOW, lambda: 0.5)
    assert isinstance(missing, PlanRefusal) and missing.status == 404 and "bench/core" in missing.message


def test_none_eligible_is_400_naming_each() -> None:
    state = bench(model("a", ad_hoc=True), model("b", tools=False), collection("core", ["a", "b"]))
    refusal = refused(state, TOOLS)
    assert (refusal.status, refusal.message) == (
        400,
        f"no member of bench/core can take this request: a ({AD_HOC}); b ({NO_TOOLS} (says registration))")


def test_none_eligible_only_for_size_is_413() -> None:
    state = bench(model("small", vision=True, context_window=8_000),
                  model("smaller", vision=True, context_window=4_000),
                  collection("core", ["small", "smaller"]))
    refusal = refused(state, TurnNeeds(tools=False, images=2, estimate=9_000))
    assert refusal.status == 413
    assert "small (context window 8,000 is under this request (about 9,000 tokens))" in refusal.message
    assert "trim it under 4,000" in refusal.message and "each image counted as 2,500" in refusal.message
    mixed = bench(model("small", context_window=8_000), model("adhoc", ad_hoc=True),
                  collection("core", ["small", "adhoc"]))
    assert refused(mixed, TurnNeeds(estimate=9_000)).status == 400


def test_unknown_windows_never_exclude() -> None:
    assert seated(bench(model("a"), collection("core", ["a"])), TurnNeeds(estimate=10**9)).order == ["a"]


def rotation() -> Rotation:
    r = Rotation()
    r.apply(VerdictRecorded(id="v1", call="r1.1", alias="m-b", useful=True))
    for alias, ago in (("m-a", timedelta(hours=1)), ("m-b", timedelta(minutes=1))):
        r.apply(SeatCompleted(id=f"s-{alias}", call=f"r1.{alias}", panel="r1", seat="route", alias=alias,
                              served=alias, endpoint="fake", connection="fake", purpose="route", status="ok",
                              seconds=1, at=NOW - ago))
    return r


def test_a_new_conversation_is_ranked() -> None:
    state = bench(*(model(a) for a in ("m-a", "m-b", "m-c")), collection("core", ["m-a", "m-b", "m-c"]))
    assert seated(state, rotation=rotation()).order == ["m-b", "m-a", "m-c"]  # useful verdicts first
    # One turn in four the stalest fresh member (m-c: never seated) goes first.
    assert seated(state, rotation=rotation(), draw=0.1).order == ["m-c", "m-b", "m-a"]


def test_a_conversation_keeps_its_model_then_its_order_then_the_rest() -> None:
    state = bench(*(model(a) for a in "abcd"), collection("core", ["d", "c", "b", "a"]))
    assert seated(state, current="b", previous=["a", "b", "c"]).order == ["b", "a", "c", "d"]
    narrowed = bench(*(model(a) for a in "abcd"), model("c", ad_hoc=True),
                     collection("core", ["d", "b", "c"]))
    assert seated(narrowed, current="b", previous=["a", "b", "c"]).order == ["b", "d"]


def test_a_model_that_cannot_take_the_turn_means_ranking_afresh() -> None:
    state = bench(model("a", vision=True), model("b", vision=False), model("c", vision=True),
                  collection("core", ["a", "b", "c"]))
    seating = seated(state, IMAGES, current="b", previous=["b", "a"])  # an image arrived and b cannot see
    assert seating.order[0] != "b" and set(seating.order) == {"a", "c"}


def test_shadow_seats_are_the_registered_shadows_on_a_known_endpoint() -> None:
    state = bench(model("a"), model("s1"), model("s2", endpoint="nowhere"),
                  collection("core", ["a"], shadows=["s1", "s2", "ghost", "s1"]))
    assert [s.alias for s in seated(state).shadows] == ["s1"]
