"""C-15/CAT-1 (A-97): a model's facts from their layers: the catalog, its registration, what was learned or
probed, and the user's overrides, each fact with its source; folded the way every service folds them."""

from __future__ import annotations

from datetime import UTC, datetime

from services.seater.rotation import Rotation
from services.seater.route_seating import seat_route
from shared.commands import RouteRequest, RouteSeating, TurnNeeds
from shared.config_state import ConfigState
from shared.events import CatalogApplied, ModelFactsSet, ModelLearned
from shared.model_facts import Cost, FactLayers, ModelFacts, stamped
from tests.unit.factories import collection, config, endpoint, model

AT = datetime(2026, 12, 3, 6, 0, tzinfo=UTC)
FEED = stamped({"context_window": 128_000, "vision": False, "tools": True, "max_output": 8_192,
                "cost": Cost(input=0.15, output=0.6), "knowledge_cutoff": "2024-10"}, "models.dev")


def catalog(alias: str, facts: ModelFacts = FEED) -> CatalogApplied:
    return CatalogApplied(id=f"cfg:cat:{alias}", at=AT, refreshed=AT, models={alias: facts})


def user(alias: str, clear: tuple[str, ...] = (), **values: object) -> ModelFactsSet:
    return ModelFactsSet.model_validate({"id": f"cfg:set:{alias}:{sorted(values)}:{clear}", "alias": alias,
                                         "facts": values, "clear": list(clear)})


def test_a97_a_user_override_of_window_or_vision_wins_over_feeds_and_learned_values() -> None:
    state = config(endpoint("fake"), model("m"), catalog("m"))
    state.learn_window("m", 32_000, AT)
    state.apply(user("m", context_window=200_000, vision=True))
    facts = state.facts_of("m")
    assert facts is not None
    assert (facts.context_window, facts.vision) == (200_000, True)
    assert facts.sources["context_window"] == facts.sources["vision"] == "you"
    assert facts.sources["tools"] == "models.dev" and facts.cost == Cost(input=0.15, output=0.6)
    seated = state.models["m"]
    assert (seated.context_window, seated.vision) == (200_000, True)  # what the seater reads


def test_a97_a_learned_window_only_ever_lowers_the_catalogs() -> None:
    state = config(endpoint("fake"), model("m"), catalog("m"))
    state.learn_window("m", 400_000, AT)  # larger than the catalog's: ignored
    assert state.models["m"].context_window == 128_000
    state.learn_window("m", 64_000, AT)
    facts = state.facts_of("m")
    assert facts is not None and facts.context_window == 64_000
    assert facts.sources["context_window"] == "learned 2026-12-03"
    state.learn_window("m", 100_000, AT)  # looser than learned before: kept out
    assert state.models["m"].context_window == 64_000
    state.apply(catalog("m", stamped({"context_window": 32_000}, "openrouter")))  # the catalog lowered it
    assert state.models["m"].context_window == 32_000


def test_clearing_an_override_lets_the_layers_below_show_through() -> None:
    state = config(endpoint("fake"), model("m", tools=False), catalog("m"))
    facts = state.facts_of("m")
    assert facts is not None and facts.tools is False and facts.sources["tools"] == "registration"
    state.apply(user("m", tools=True))
    assert state.models["m"].tools is True
    state.apply(user("m", clear=("tools",)))
    assert state.models["m"].tools is False  # the registration again
    state.apply(user("m", max_output=1_000))
    state.apply(user("m", vision=True))  # a later set keeps the earlier override
    assert (state.models["m"].max_output, state.models["m"].vision) == (1_000, True)


def test_what_a_probe_saw_is_yes_unless_the_user_said_otherwise() -> None:
    state = config(endpoint("fake"), model("m"))
    state.apply(ModelLearned(id="cfg:l", alias="m", tools=True, source="probe 2026-12-01"))
    facts = state.facts_of("m")
    assert facts is not None and facts.tools is True and facts.sources["tools"] == "probe 2026-12-01"
    state.apply(user("m", tools=False))
    assert state.models["m"].tools is False


def test_facts_follow_a_rename_and_survive_retirement() -> None:
    from shared.events import ModelRestored, ModelRetired, ModelUpdated

    state = config(endpoint("fake"), model("m"), catalog("m"), user("m", vision=True))
    state.apply(ModelUpdated(id="cfg:rn", alias="m", new_alias="n"))
    assert state.facts_of("n") is not None and state.models["n"].vision is True
    state.apply(ModelRetired(id="cfg:rt", alias="n"))
    state.apply(ModelRestored(id="cfg:rs", alias="n"))
    assert state.models["n"].vision is True and state.models["n"].context_window == 128_000


def test_facts_given_at_registration_are_the_catalog_layer_until_a_refresh() -> None:
    state = config(endpoint("fake"), model("m", facts=FEED))
    facts = state.facts_of("m")
    assert facts is not None and facts.sources["tools"] == "models.dev"
    state.apply(catalog("m", stamped({"tools": False}, "openrouter")))
    assert state.models["m"].tools is False and state.models["m"].context_window is None


def test_a_model_whose_catalog_says_tools_takes_route_turns_with_tools_without_a_flag() -> None:
    state: ConfigState = config(endpoint("fake"), model("plain"), model("listed"),
                                collection("core", ["plain", "listed"], reply="route"), catalog("listed"))
    request = RouteRequest.model_validate({"collection": "bench/core",
                                           "needs": TurnNeeds(tools=True, images=0, estimate=100)})
    seating = seat_route(request, state, Rotation(), AT, lambda: 0.9)
    assert isinstance(seating, RouteSeating)
    assert seating.order == ["listed"]
    assert [s.alias for s in seating.skipped] == ["plain"]


def test_layers_effective_is_pure_and_names_every_source() -> None:
    layers = FactLayers(catalog=FEED, registration=stamped({"max_output": 4_000}, "registration"))
    facts = layers.effective()
    assert set(facts.sources) == set(facts.known())
    assert facts.sources["max_output"] == "registration"
