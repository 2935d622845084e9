"""Who sits (SPEC P-2..P-9, C-11, C-12, A-6..A-8, A-17..A-19), planned without any I/O."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from services.seater.planning import VISION_SPECIALIST, Draft, collection_listing, plan_panel
from services.seater.rotation import Rotation
from shared.alerts import paid_key, pending_key
from shared.commands import PlanRefusal, PlanRequest
from shared.config_state import ConfigState
from shared.events import (
    AlertCleared,
    AlertRaised,
    ConnectionsSaved,
    CooldownStarted,
    ModelRegistered,
    PanelSeated,
)
from tests.unit.ledger.factories import suite_answered
from tests.unit.seater.factory import T0, ask, at, bench, collection, model, retire

POOL = [model(f"x{i}") for i in range(1, 7)]  # six explorer candidates of six families


def planned(
    config: ConfigState, request: PlanRequest | None = None, rotation: Rotation | None = None,
    now: datetime = T0,
) -> Draft:
    draft = plan_panel(request or ask(), config, rotation or Rotation(), now)
    assert isinstance(draft, Draft), draft
    return draft


def refused(config: ConfigState, request: PlanRequest | None = None) -> PlanRefusal:
    refusal = plan_panel(request or ask(), config, Rotation(), T0)
    assert isinstance(refusal, PlanRefusal), refusal
    return refusal


def seat(config: ConfigState, rotation: Rotation, now: datetime, panel: str, **fields: Any) -> Draft:
    """What the transport does: plan, then hold the seats for rotation at once."""
    draft = planned(config, ask(**fields), rotation, now)
    rotation.hold(panel, draft.aliases(), now)
    return draft


def explorers(draft: Draft) -> list[str]:
    return [m.alias for m in draft.explorers]


def skips(draft: Draft) -> dict[str, str]:
    return {s.alias: s.why for s in draft.skipped}


# ---------------------------------------------------------------- C-11 / P-3: how many explorers


@pytest.mark.parametrize(("members", "expected"), [(1, 2), (2, 2), (3, 2), (4, 1), (5, 0), (6, 0)])
def test_explorer_count_follows_members(members: int, expected: int) -> None:
    """A-6: with max_calls 5 / max_explorers 2, 3 members seat 2 explorers, 4 seat 1, 5 seat 0."""
    mates = [model(f"m{i}") for i in range(1, members + 1)]
    config = bench(mates + POOL, collection("core", [m.alias for m in mates]))
    draft = planned(config)
    assert len(draft.members) == min(members, 5)
    assert len(draft.explorers) == expected


def test_max_explorers_and_max_calls_are_read_from_settings() -> None:
    mates = [model("m1"), model("m2")]
    config = bench(mates + POOL, collection("core", ["m1", "m2"]), max_calls=3, max_explorers=2)
    assert len(planned(config).explorers) == 1
    config = bench(mates + POOL, collection("core", ["m1", "m2"]), max_explorers=0)
    assert planned(config).explorers == ()


def test_seats_carry_call_ids_labels_and_where_to_call() -> None:
    config = bench([model("m1"), model("m2", endpoint="other"), *POOL], collection("core", ["m1", "m2"]),
                   endpoints={"ep": "chat", "other": "chat"})
    draft = planned(config)
    seats = draft.seats("p20260301-120000-abcd", config)
    assert [(s.call, s.seat, s.alias) for s in seats] == [
        ("p20260301-120000-abcd.member1", "member", "m1"),
        ("p20260301-120000-abcd.member2", "member", "m2"),
        ("p20260301-120000-abcd.explorer", "explorer", "x1"),
        ("p20260301-120000-abcd.explorer2", "explorer 2", "x2"),
    ]
    assert (seats[1].served, seats[1].endpoint, seats[1].connection) == ("org/m2", "other", "other")
    plan = draft.plan("p20260301-120000-abcd", seats, config)
    assert (plan.members, plan.explorers, plan.collection) == (2, 2, "core")
    event = draft.seated("p20260301-120000-abcd", seats, key="team", at=T0, by="seater-1")
    assert event.id == "seated:p20260301-120000-abcd"
    assert (event.key, event.seats, event.shape) == ("team", seats, "general")


# ---------------------------------------------------------------- P-7 / A-7: who may explore


def test_explorers_are_never_a_member_nor_of_a_members_family() -> None:
    """A-7: `org/Llama-3.1:free` and `other/llama_3.1` are one family (C-6)."""
    config = bench(
        [model("m1", served="org/Llama-3.1:free"), model("llama-b", served="other/llama_3.1"), model("x1")],
        collection("core", ["m1"]),
    )
    assert explorers(planned(config)) == ["x1"]


def test_among_equally_stale_explorers_the_lower_suite_recall_sits_first() -> None:
    """P-7's tie-break (T-5): none of x1..x3 ever sat; x1 and x3 have suite scores, x2 none (recall 0)."""
    config = bench([model("m1"), model("x1"), model("x2"), model("x3")], collection("core", ["m1"]))
    rotation = Rotation()
    rotation.apply(suite_answered("x1", "race", found=2, missed=0, n=1), 1)
    rotation.apply(suite_answered("x3", "race", found=1, missed=1, n=2), 2)
    assert explorers(planned(config, rotation=rotation)) == ["x2", "x3"]
    assert explorers(planned(config)) == ["x1", "x2"]  # no scores: registry order


def test_two_explorers_never_share_a_family() -> None:
    config = bench(
        [model("m1"), model("a1", served="p/qwen3"), model("a2", served="q/Qwen3:free"), model("b1")],
        collection("core", ["m1"]),
    )
    assert explorers(planned(config)) == ["a1", "b1"]


def test_ad_hoc_models_and_models_of_a_gone_endpoint_never_explore() -> None:
    config = bench([model("m1"), model("adhoc", ad_hoc=True), model("lost", endpoint="gone"), model("x1")],
                   collection("core", ["m1"]))
    assert explorers(planned(config)) == ["x1"]


def test_cooling_models_do_not_explore_until_their_rest_ends() -> None:
    config = bench([model("m1"), model("hot"), model("x1")], collection("core", ["m1"]))
    rotation = Rotation()
    rotation.apply(CooldownStarted(id="cool:hot", alias="hot", connection="ep", until=at(60)))
    assert explorers(planned(config, rotation=rotation, now=at(59))) == ["x1"]
    assert explorers(planned(config, rotation=rotation, now=at(60))) == ["hot", "x1"]


def test_a_model_held_by_the_free_tier_guard_does_not_explore_but_sits_when_the_user_chose_it() -> None:
    config = bench([model("m1"), model("paid"), model("x1"), model("x2")], collection("core", ["m1"]))
    assert explorers(planned(config)) == ["paid", "x1"]
    config.apply(AlertRaised(id="cfg:a1", key=paid_key("org/paid"), kind="went paid", message="$", by="t"))
    assert explorers(planned(config)) == ["x1", "x2"]
    assert explorers(planned(config, ask(nominees=("paid",)))) == ["paid", "x1"]  # named with `with`: sits
    for allowed in ("paid", "org/paid"):  # allowed by alias or served id
        config.apply(ConnectionsSaved(id=f"cfg:c:{allowed}", allow_paid=[allowed]))
        assert explorers(planned(config)) == ["paid", "x1"]
    config.apply(ConnectionsSaved(id="cfg:c2", allow_paid=[]))
    config.apply(collection("core", ["paid"], when=at(1)))
    held = planned(config)  # the user chose it: its seat shows the guard's error
    assert [m.alias for m in held.members] == ["paid"]
    config.apply(AlertCleared(id="cfg:a2", key=paid_key("org/paid")))
    config.apply(collection("core", ["m1"], when=at(2)))
    assert explorers(planned(config)) == ["paid", "x1"]


def test_a7_a_model_on_a_retiring_alert_does_not_explore_until_the_alert_is_cleared() -> None:
    config = bench([model("m1"), model("dying"), model("x1"), model("x2")], collection("core", ["m1"]))
    assert explorers(planned(config)) == ["dying", "x1"]
    config.apply(AlertRaised(id="cfg:r1", key=pending_key("org/dying"), kind="retiring", by="prober",
                             message="dying retires in 2 days unless it answers", alias="dying"))
    assert explorers(planned(config)) == ["x1", "x2"]
    config.apply(AlertCleared(id="cfg:r2", key=pending_key("org/dying")))
    assert explorers(planned(config)) == ["dying", "x1"]


def test_explorers_must_be_admitted_by_the_shape() -> None:
    config = bench(
        [model("m1"), model("coder", role="code"), model("tiny", role="light"), model("eyes", role="vision"),
         model("painter", role="image"), model("x1")],
        collection("core", ["m1"], shape="code"),
    )
    assert explorers(planned(config)) == ["coder", "x1"]
    config.apply(collection("core", ["m1"], shape="quick"))
    assert explorers(planned(config)) == ["tiny", "x1"]
    config.apply(collection("core", ["m1"], shape="prose"))
    assert explorers(planned(config)) == ["x1"]


def test_explorers_too_small_for_the_request_are_not_picked() -> None:
    config = bench([model("m1"), model("small", context_window=8000), model("unknown"), model("big",
                   context_window=200_000)], collection("core", ["m1"]))
    assert explorers(planned(config, ask(estimate=9000))) == ["unknown", "big"]
    assert explorers(planned(config, ask(estimate=8000))) == ["small", "unknown"]


def test_unfilled_explorer_seats_stay_empty() -> None:
    config = bench([model("m1"), model("x1")], collection("core", ["m1"]))
    draft = planned(config)
    assert explorers(draft) == ["x1"]
    assert [s.call.rsplit(".", 1)[1] for s in draft.seats("p", config)] == ["member1", "explorer"]


# ---------------------------------------------------------------- P-7 / A-8: staleness


def test_never_seated_models_explore_first_then_the_oldest_seat() -> None:
    """A-8: exact times, not whole days: a seat a second older loses to none, and beats a newer one."""
    config = bench([model("m1"), model("x1"), model("x2"), model("x3")], collection("core", ["m1"]))
    rotation = Rotation()
    rotation.hold("old", ["x1"], at(0))
    rotation.hold("new", ["x2"], at(1))
    assert explorers(planned(config, rotation=rotation, now=at(2))) == ["x3", "x1"]


def test_ties_keep_registry_order() -> None:
    config = bench([model("m1"), model("x3"), model("x1"), model("x2")], collection("core", ["m1"]))
    assert explorers(planned(config)) == ["x3", "x1"]


def test_consecutive_panels_rotate_within_the_same_second() -> None:
    """A plan counts the moment it is made: three panels a few microseconds apart share no explorer."""
    config = bench([model("m1"), *POOL], collection("core", ["m1"]))
    rotation = Rotation()
    seen = []
    for i in range(3):
        draft = seat(config, rotation, T0 + timedelta(microseconds=i), f"p{i}")
        seen.append(explorers(draft))
    assert seen == [["x1", "x2"], ["x3", "x4"], ["x5", "x6"]]
    # The fourth goes back to the stalest, in the order they sat.
    assert explorers(seat(config, rotation, T0 + timedelta(microseconds=3), "p3")) == ["x1", "x2"]


def test_a_member_seat_counts_for_rotation_too() -> None:
    """A model seated as a member in another collection's panel is fresher than one never seated."""
    config = bench([model("m1"), model("x1"), model("x2"), model("x3"), model("x4")],
                   collection("core", ["m1"]), collection("other", ["x1", "x2"]), max_explorers=0)
    rotation = Rotation()
    assert explorers(seat(config, rotation, at(0), "p0", collection="other")) == []
    config.max_explorers = 2
    assert explorers(planned(config, rotation=rotation, now=at(1))) == ["x3", "x4"]


def test_restarted_state_picks_what_the_live_state_would() -> None:
    """The live seater holds its plans; a restarted one folds the `PanelSeated` events: same next pick."""
    config = bench([model("m1"), model("x1"), model("x2"), model("x3")], collection("core", ["m1"]))
    live = Rotation()
    events = []
    for i in range(4):
        now = T0 + timedelta(milliseconds=i)
        draft = seat(config, live, now, f"p{i}")
        events.append(draft.seated(f"p{i}", draft.seats(f"p{i}", config), "local", now, "seater-1"))
    replayed = Rotation()
    for seq, event in enumerate(events, 1):
        replayed.apply(PanelSeated.model_validate_json(event.model_dump_json()), seq)
    following = T0 + timedelta(seconds=1)
    assert explorers(planned(config, rotation=replayed, now=following)) == explorers(
        planned(config, rotation=live, now=following)
    )
    # And the live state, once its own events come back, is exactly the replayed one.
    for seq, event in enumerate(events, 1):
        live.apply(event, seq)
    assert live == replayed


# ---------------------------------------------------------------- P-8: `with`


def test_a_nominee_takes_the_first_explorer_chair() -> None:
    config = bench([model("m1"), *POOL], collection("core", ["m1"]))
    draft = planned(config, ask(nominees=("x4",)))
    assert explorers(draft) == ["x4", "x1"]
    assert draft.seats("p", config)[1].call == "p.explorer"


def test_a_nominee_sits_even_when_ad_hoc_too_small_or_of_another_role() -> None:
    config = bench([model("m1"), model("adhoc", ad_hoc=True), model("small", context_window=10),
                    model("eyes", role="vision"), *POOL], collection("core", ["m1", "m2"], shape="code"),
                   max_calls=3)
    draft = planned(config, ask(estimate=5000, nominees=("adhoc", "small")))
    assert explorers(draft) == ["adhoc", "small"]
    # A vision specialist named in `with` sits on a text request.
    assert explorers(planned(config, ask(nominees=("eyes",)))) == ["eyes", "small"]


def test_nominees_beyond_the_explorer_seats_or_already_members_are_ignored() -> None:
    config = bench([model("m1"), model("m2"), model("m3"), model("m4"), *POOL],
                   collection("core", ["m1", "m2", "m3", "m4"]))
    draft = planned(config, ask(nominees=("m2", "x3", "x3", "x5")))
    assert explorers(draft) == ["x3"]
    assert draft.skipped == ()
    five = [f"m{i}" for i in range(1, 6)]
    full = bench([model(a) for a in five] + POOL, collection("core", five))
    assert explorers(planned(full, ask(nominees=("x3",)))) == []


def test_an_unregistered_nominee_leaves_its_chair_to_staleness() -> None:
    config = bench([model("m1"), *POOL], collection("core", ["m1"]))
    assert explorers(planned(config, ask(nominees=("nobody", "x5")))) == ["x5", "x1"]


def test_a_retired_nominee_is_skipped_with_seat_with() -> None:
    config = bench([model("m1"), model("old"), *POOL], collection("core", ["m1"]))
    config.apply(retire("old", at(3600)))
    draft = planned(config, ask(nominees=("old",)))
    assert explorers(draft) == ["x1", "x2"]
    assert [(s.seat, s.alias) for s in draft.skipped] == [("with", "old")]
    assert draft.skipped[0].why.startswith("retired from the bench on 2026-03-01")


def test_nominees_exclude_their_family_from_staleness_picks() -> None:
    config = bench([model("m1"), model("a1", served="p/qwen3"), model("a2", served="q/qwen3"), model("b1")],
                   collection("core", ["m1"]))
    assert explorers(planned(config, ask(nominees=("a2",)))) == ["a2", "b1"]


# ---------------------------------------------------------------- P-2 / A-19: retired, unregistered members


def test_a_retired_member_is_skipped_before_the_cap_so_the_next_member_sits() -> None:
    """A-19: retiring `m1` (which takes it out of the collection in the fold) still names it as skipped."""
    mates = [model(f"m{i}") for i in range(1, 5)]
    config = bench(mates + POOL, collection("core", ["m1", "m2", "m3", "m4"]), max_calls=3)
    assert [m.alias for m in planned(config).members] == ["m1", "m2", "m3"]
    config.apply(retire("m1", at(86400)))
    draft = planned(config)
    assert [m.alias for m in draft.members] == ["m2", "m3", "m4"]
    assert draft.skipped[0].seat == "member"
    assert skips(draft)["m1"] == (
        "retired from the bench on 2026-03-02; take it out of the collection "
        "(Restore in its model popup brings it back)"
    )


def test_a_collection_saved_after_the_retirement_no_longer_names_it() -> None:
    config = bench([model("m1"), model("m2"), *POOL], collection("core", ["m1", "m2"]))
    config.apply(retire("m1", at(10)))
    config.apply(collection("core", ["m2"], when=at(20)))
    assert planned(config).skipped == ()


def test_a_retired_alias_still_listed_is_skipped_and_not_counted() -> None:
    config = bench([model("m1"), model("m2"), *POOL], collection("core", ["m1"]), max_calls=2)
    config.apply(retire("m1", at(10)))
    config.apply(collection("core", ["m1", "m2", "m2"], when=at(20)))  # written past the validation
    draft = planned(config)
    assert [m.alias for m in draft.members] == ["m2"]
    assert "retired from the bench on 2026-03-01" in skips(draft)["m1"]
    assert len(draft.explorers) == 1


def test_an_unregistered_member_is_skipped_before_the_cap() -> None:
    mates = [model(f"m{i}") for i in range(1, 4)]
    config = bench(mates + POOL, collection("core", ["ghost", "m1", "m2", "m3"]), max_calls=3)
    draft = planned(config)
    assert [m.alias for m in draft.members] == ["m1", "m2", "m3"]
    assert skips(draft) == {"ghost": "not registered on the bench; take it out of the collection"}
    assert draft.explorers == ()


def test_members_are_deduped_first_wins() -> None:
    config = bench([model("m1"), model("m2"), *POOL], collection("core", ["m2", "m1", "m2"]))
    assert [m.alias for m in planned(config).members] == ["m2", "m1"]


def test_a_retired_merger_is_named_only_in_merged_mode() -> None:
    config = bench([model("m1"), model("boss"), *POOL], collection("core", ["m1"], merger="boss"))
    config.apply(retire("boss", at(10)))
    assert planned(config).skipped == ()
    draft = planned(config, ask(reply="merged"))
    assert [(s.seat, s.alias) for s in draft.skipped] == [("merger", "boss")]
    assert draft.skipped[0].why == "retired from the bench on 2026-03-01; the merger is chosen by verdicts"


def test_a_merged_plan_lists_its_merger_candidates_with_where_to_call_them() -> None:
    config = bench([model("m1", context_window=32_000), model("m2", endpoint="other"), *POOL],
                   collection("core", ["m1", "m2"]), endpoints={"ep": "chat", "other": "chat"})
    assert planned(config).mergers == ()
    draft = planned(config, ask(reply="merged"))
    assert [m.alias for m in draft.mergers] == ["m1", "m2"]
    plan = draft.plan("p20260301-120000-abcd", draft.seats("p20260301-120000-abcd", config), config)
    assert [tuple(c.model_dump().values()) for c in plan.mergers] == [
        ("m1", "org/m1", "ep", "ep", 32_000),
        ("m2", "org/m2", "other", "other", None),
    ]


# ---------------------------------------------------------------- P-5 / A-13, A-14: the size check


def test_members_too_small_are_refused_with_413_smallest_first() -> None:
    config = bench([model("m1", context_window=16_000), model("m2", context_window=4_000), model("m3"),
                    model("m4", context_window=900_000), *POOL], collection("core", ["m1", "m2", "m3", "m4"]))
    refusal = refused(config, ask(estimate=20_000))
    assert refusal.status == 413
    assert refusal.message.startswith(
        "the request is about 20,000 tokens, more than the context window of m2 (4,000 tokens), "
        "m1 (16,000 tokens). Trim it under 4,000 tokens"
    )
    assert "m3" not in refusal.message and "m4" not in refusal.message  # unknown and big windows never refuse
    assert "`together.context_window` (GET /v1/models)" in refusal.message
    assert "each image" not in refusal.message


def test_the_size_check_counts_images_and_skips_members_that_do_not_sit() -> None:
    config = bench([model("m1", context_window=3_000, vision=True), model("blind", context_window=10),
                    model("eye", role="vision", context_window=10, vision=True)],
                   collection("core", ["m1", "blind", "eye"]))
    text = refused(config, ask(estimate=2_000))  # `eye` stands down on a text request; `blind` sits
    assert "of blind (10 tokens). Trim it under 10 tokens" in text.message and "eye" not in text.message
    refusal = refused(config, ask(estimate=5_000, has_images=True))
    assert refusal.status == 413
    assert "(each image counted as 2,500)" in refusal.message
    assert "eye (10 tokens), m1 (3,000 tokens)" in refusal.message and "blind" not in refusal.message


def test_a_window_equal_to_the_estimate_fits() -> None:
    config = bench([model("m1", context_window=8_000)], collection("core", ["m1"]))
    assert planned(config, ask(estimate=8_000)).members[0].alias == "m1"


# ---------------------------------------------------------------- P-2 / P-6 / A-18: images


def test_a_vision_specialist_member_sits_only_with_images() -> None:
    """A-18; and the freed seat is not refilled by an extra explorer (P-3)."""
    config = bench([model("m1", vision=True), model("m2", vision=True), model("m3", vision=True),
                    model("eye", role="vision", vision=True), *POOL],
                   collection("core", ["m1", "m2", "m3", "eye"]))
    text = planned(config)
    assert [m.alias for m in text.members] == ["m1", "m2", "m3"]
    assert skips(text) == {"eye": VISION_SPECIALIST}
    assert len(text.explorers) == 1
    image = planned(config, ask(has_images=True))
    assert [m.alias for m in image.members] == ["m1", "m2", "m3", "eye"]


def test_with_images_members_that_cannot_see_are_skipped_with_why() -> None:
    config = bench(
        [model("sees", vision=True), model("unsure"), model("blind", vision=False),
         model("plan", vision=True, endpoint="chatgpt")],
        collection("core", ["sees", "unsure", "blind", "plan"]),
        endpoints={"ep": "chat", "chatgpt": "responses"},
    )
    draft = planned(config, ask(has_images=True))
    assert [m.alias for m in draft.members] == ["sees"]
    why = skips(draft)
    assert "Vision / OCR" in why["unsure"]
    assert why["blind"] == "does not take images (says registration)"
    assert "responses" in why["plan"]


def test_with_images_explorers_are_drawn_from_models_that_see() -> None:
    config = bench([model("m1", vision=True), model("x1"), model("x2", vision=False),
                    model("x3", vision=True), model("eye", role="vision", vision=True)],
                   collection("core", ["m1"]))
    draft = planned(config, ask(has_images=True))
    assert (draft.shape, draft.shape_by) == ("vision", "the request carries images")
    assert explorers(draft) == ["x3", "eye"]


def test_a_blind_nominee_is_skipped_with_images_and_its_chair_refilled() -> None:
    config = bench([model("m1", vision=True), model("x1"), model("x3", vision=True)],
                   collection("core", ["m1"]))
    draft = planned(config, ask(has_images=True, nominees=("x1",)))
    assert explorers(draft) == ["x3"]
    assert [(s.seat, s.alias) for s in draft.skipped] == [("with", "x1")]


# ---------------------------------------------------------------- P-4: shape


def test_shape_and_why() -> None:
    pool = [model("m1", vision=True), *POOL]
    assert (planned(bench(pool, collection("core", ["m1"]))).shape_by) == "no decision model onboarded"
    draft = planned(bench(pool, collection("core", ["m1"], shape="code")))
    assert (draft.shape, draft.shape_by) == ("code", "set on the collection")
    draft = planned(bench(pool, collection("core", ["m1"], shape="code")), ask(has_images=True))
    assert (draft.shape, draft.shape_by) == ("code", "set on the collection")
    draft = planned(bench(pool, collection("core", ["m1"], shape="prose"), max_explorers=0))
    assert (draft.shape, draft.shape_by) == ("prose", "no explorer seats to fill")
    draft = planned(bench(pool, collection("core", ["m1"]), max_explorers=0))
    assert (draft.shape, draft.shape_by) == ("general", "no explorer seats to fill")
    draft = planned(bench(pool, collection("core", ["m1"]), max_explorers=0), ask(has_images=True))
    assert (draft.shape, draft.shape_by) == ("vision", "the request carries images")


@pytest.mark.parametrize("shape", ["image", "poetry"])
def test_a_collection_with_a_shape_it_may_not_have_is_refused(shape: str) -> None:
    refusal = refused(bench([model("m1")], collection("core", ["m1"], shape=shape)))
    assert refusal.status == 400
    assert f"'{shape}'" in refusal.message


# ---------------------------------------------------------------- refusals


def test_an_unknown_collection_is_refused_with_the_list_of_collections() -> None:
    config = bench([model("m1")], collection("zeta", ["m1"], description="last"),
                   collection("alpha", ["m1"], description="first", tags=["code", "fast"]))
    refusal = refused(config, ask("bench/nope"))
    assert refusal.status == 404
    assert refusal.message == (
        "no collection named 'bench/nope'. Your collections:\n"
        "- bench/alpha: first [code, fast]\n- bench/zeta: last"
    )
    assert "make one" in collection_listing(bench([]))


def test_the_bench_prefix_is_accepted() -> None:
    config = bench([model("m1")], collection("core", ["m1"]))
    assert planned(config, ask("bench/core")).collection == "core"


def test_no_member_and_no_explorer_is_a_503_naming_every_skip() -> None:
    """P-9."""
    config = bench([model("eye", role="vision", vision=True), model("lonely", ad_hoc=True)],
                   collection("core", ["eye", "ghost"]))
    refusal = refused(config)
    assert refusal.status == 503
    assert refusal.message.startswith("collection 'core' has no members and no explorer could be seated: ")
    assert "ghost (not registered on the bench" in refusal.message
    assert f"eye ({VISION_SPECIALIST})" in refusal.message


def test_no_seat_for_images_is_a_400() -> None:
    config = bench([model("m1"), model("x1", vision=False)], collection("core", ["m1"]))
    refusal = refused(config, ask(has_images=True))
    assert refusal.status == 400
    assert "m1 (not known to read images" in refusal.message
    assert "vision" in refusal.message


def test_members_alone_are_enough() -> None:
    config = bench([model("m1")], collection("core", ["m1"]))
    draft = planned(config)
    assert ([m.alias for m in draft.members], draft.explorers) == (["m1"], ())


def test_registry_order_survives_re_registration() -> None:
    """Re-registering an alias keeps its place (dict order), so ties resolve the same after any replay."""
    config = bench([model("m1"), model("x1"), model("x2")], collection("core", ["m1"]))
    config.apply(ModelRegistered(id="cfg:again", alias="x1", served="org/x1", endpoint="ep",
                                 context_window=9))
    assert explorers(planned(config)) == ["x1", "x2"]
