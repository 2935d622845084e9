"""Configuration rules: endpoints (C-2), models and aliases (C-5), collections (C-10, A-82), gateway settings
(C-11, A-83), retirement (C-14)."""

from __future__ import annotations

from typing import Any

import pytest

from shared.config_rules import base as rules
from shared.config_state import ConfigState
from shared.events import (
    CollectionRemoved,
    CollectionSaved,
    EndpointSaved,
    GatewaySettingsSaved,
    ModelRegistered,
    ModelRetired,
)
from tests.unit.factories import collection, config, endpoint, model


def state() -> ConfigState:
    return config(
        endpoint("fake"),
        endpoint("other", base="https://other.example/v1"),
        model("m-a"),
        model("m-b"),
        model("m-c"),
        model("m-d"),
        model("m-e"),
        model("m-f"),
        model("pic", role="image"),
        model("judge", role="decision"),
        model("gone"),
        ModelRetired(id="cfg:r", alias="gone", why="dead"),
        collection("core", ["m-a", "m-b", "m-c"]),
    )


def errors_of(rule: rules.Rule, st: ConfigState | None = None) -> list[str]:
    with pytest.raises(rules.Invalid) as caught:
        rule(st or state(), "cfg:x")
    return caught.value.errors


# ---------------------------------------------------------------- endpoints


@pytest.mark.parametrize(
    ("base", "kind"),
    [
        ("http://127.0.0.1:11434/v1", "local"),
        ("http://localhost:8080/v1/", "local"),
        ("http://[::1]:8080/v1", "local"),
        ("http://127.0.0.2:8080/v1", "local"),
        ("https://webui.example/api", "hub"),
        ("http://localhost:3000/api", "hub"),
        ("https://api.openai.com/v1", "provider"),
    ],
)
def test_endpoint_kind_is_inferred(base: str, kind: str) -> None:
    event = rules.save_endpoint({"name": "ep", "base": base})(state(), "cfg:1")
    assert isinstance(event, EndpointSaved)
    assert event.kind == kind
    assert not event.base.endswith("/")
    assert (event.id, event.by, event.api) == ("cfg:1", "admin", "chat")


def test_endpoint_fields_are_kept() -> None:
    event = rules.save_endpoint(
        {
            "name": "router",
            "base": "https://r.example/v1",
            "api": "anthropic",
            "kind": "aggregator",
            "headers": {"X-Title": "bench"},
            "default": True,
        }
    )(state(), "c")
    assert isinstance(event, EndpointSaved)
    assert (event.api, event.kind, event.headers, event.default) == (
        "anthropic",
        "aggregator",
        {"X-Title": "bench"},
        True,
    )


def test_an_endpoint_never_takes_a_key() -> None:
    errors = errors_of(
        rules.save_endpoint({"name": "open-router", "base": "https://x/v1", "key": "sk-secret"})
    )
    assert any("BENCHWARMERS_KEY_OPEN_ROUTER" in e for e in errors)
    assert not any("sk-secret" in e for e in errors)


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        ({"name": "X", "base": "https://x/v1"}, "endpoint name"),
        ({"name": "ep", "base": "ftp://x/v1"}, "http(s) URL"),
        ({"name": "ep", "base": ""}, '"base"'),
        ({"name": "ep", "base": "https://u:p@x/v1"}, "user or password"),
        ({"name": "ep", "base": "https://x/v1", "api": "soap"}, '"api"'),
        ({"name": "ep", "base": "https://x/v1", "kind": "cloud"}, '"kind"'),
        ({"name": "ep", "base": "https://x/v1", "headers": {"a": 1}}, '"headers"'),
        (
            {"name": "ep", "base": "https://x/v1", "headers": {"Authorization": "Bearer k"}},
            "would carry a key",
        ),
        ({"name": "ep", "base": "https://x/v1", "default": "yes"}, '"default"'),
        ({"name": "ep", "base": "https://x/v1", "hub": "litellm"}, "unknown field(s): hub"),
    ],
)
def test_bad_endpoints_are_refused(payload: dict[str, Any], says: str) -> None:
    assert any(says in e for e in errors_of(rules.save_endpoint(payload)))


# ---------------------------------------------------------------- models and aliases


def register(st: ConfigState, **payload: Any) -> ModelRegistered:
    event = rules.register_model(payload)(st, "cfg:m")
    assert isinstance(event, ModelRegistered)
    return event


def test_default_alias_is_the_last_segment_with_colons_as_dashes() -> None:
    event = register(state(), served="poolside/laguna-s-2.1:free", endpoint="fake")
    assert event.alias == "laguna-s-2.1-free"
    assert (event.role, event.ad_hoc, event.vision, event.tools) == ("general", False, None, None)


def test_default_alias_taken_by_another_model_gets_the_endpoint() -> None:
    st = state()
    assert register(st, served="vendor/m-a", endpoint="other").alias == "m-a-other"
    # retired aliases count as taken too
    assert register(st, served="elsewhere/gone", endpoint="other").alias == "gone-other"


def test_re_registering_the_same_model_updates_it() -> None:
    event = register(state(), served="m-a", endpoint="fake", context_window=32000, vision=True)
    assert (event.alias, event.context_window, event.vision) == ("m-a", 32000, True)


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        ({"served": "m-z", "endpoint": "fake", "alias": "gone"}, "retired model"),
        ({"served": "m-z", "endpoint": "fake", "alias": "M-A"}, "differs only by case"),
        ({"served": "m-z", "endpoint": "fake", "alias": "GONE"}, "differs only by case"),
        ({"served": "m-z", "endpoint": "fake", "alias": "m-b"}, "already names m-b on fake"),
        ({"served": "m-a", "endpoint": "fake", "alias": "another"}, "already on the bench as 'm-a'"),
        ({"served": "m-z", "endpoint": "fake", "alias": "-bad"}, "alias must be"),
        ({"served": "m-z", "endpoint": "nowhere"}, "endpoint 'nowhere' is not configured"),
        ({"served": "", "endpoint": "fake"}, '"served"'),
        ({"served": "m-z", "endpoint": "fake", "role": "wizard"}, '"role"'),
        ({"served": "m-z", "endpoint": "fake", "context_window": 0}, '"context_window"'),
        ({"served": "m-z", "endpoint": "fake", "max_output": True}, '"max_output"'),
        ({"served": "m-z", "endpoint": "fake", "vision": "yes"}, '"vision"'),
    ],
)
def test_bad_registrations_are_refused(payload: dict[str, Any], says: str) -> None:
    assert any(says in e for e in errors_of(rules.register_model(payload))), errors_of(
        rules.register_model(payload)
    )


def test_retiring_needs_a_model_on_the_bench() -> None:
    event = rules.retire_model({"alias": "m-a", "reason": "too slow"})(state(), "cfg:r")
    assert isinstance(event, ModelRetired) and (event.alias, event.why) == ("m-a", "too slow")
    assert any("already retired" in e for e in errors_of(rules.retire_model({"alias": "gone"})))
    assert any("no model" in e for e in errors_of(rules.retire_model({"alias": "nope"})))


# ---------------------------------------------------------------- collections


def save(payload: dict[str, Any], st: ConfigState | None = None) -> CollectionSaved:
    event = rules.save_collection(payload)(st or state(), "cfg:c")
    assert isinstance(event, CollectionSaved)
    return event


def test_a_collection_is_saved_with_members_deduped_and_the_prefix_dropped() -> None:
    event = save(
        {
            "name": "bench/review",
            "members": ["m-a", "m-b", "m-a"],
            "description": "code review",
            "tags": ["code", "code", "fast"],
            "shape": "review",
            "reply": "merged",
            "merger": "m-c",
        }
    )
    assert (event.name, event.members, event.tags) == ("review", ["m-a", "m-b"], ["code", "fast"])
    assert (event.shape, event.reply, event.merger, event.description) == (
        "review",
        "merged",
        "m-c",
        "code review",
    )


def test_collection_defaults() -> None:
    event = save({"name": "solo", "members": ["m-a"]})
    assert (event.shape, event.reply, event.merger, event.description, event.tags) == ("", "all", "", "", [])


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        ({"name": "x1", "members": []}, "at least one member"),
        ({"name": "x1", "members": "m-a"}, '"members" must be a list'),
        ({"name": "x1", "members": ["m-a", "m-b", "m-c", "m-d", "m-e", "m-f"]}, "more than max_calls (5)"),
        ({"name": "x1", "members": ["m-a", "nope"]}, "'nope' is not a model on the bench"),
        ({"name": "x1", "members": ["gone"]}, "'gone' is retired"),
        ({"name": "x1", "members": ["pic"]}, "image model, not a chat model"),
        ({"name": "x1", "members": ["judge"]}, "decision model, not a chat model"),
        ({"name": "Bad Name", "members": ["m-a"]}, "collection name"),
        ({"name": "x", "members": ["m-a"]}, "collection name"),
        ({"name": "x1", "members": ["m-a"], "tags": [f"t{i}" for i in range(9)]}, "at most 8 tags"),
        ({"name": "x1", "members": ["m-a"], "tags": ["Not-OK"]}, "'Not-OK'"),
        ({"name": "x1", "members": ["m-a"], "tags": ["a" * 25]}, "tags must be"),
        ({"name": "x1", "members": ["m-a"], "description": "d" * 301}, "at most 300"),
        ({"name": "x1", "members": ["m-a"], "reply": "both"}, '"reply"'),
        ({"name": "x1", "members": ["m-a"], "merger": "nope"}, "merger 'nope'"),
        ({"name": "x1", "members": ["m-a"], "merger": "gone"}, "merger 'gone' is retired"),
        ({"name": "x1", "members": ["m-a"], "shape": "image"}, 'shape "image"'),
        ({"name": "x1", "members": ["m-a"], "shape": "poetry"}, '"shape"'),
    ],
)
def test_bad_collections_are_refused_with_the_reason(payload: dict[str, Any], says: str) -> None:
    errors = errors_of(rules.save_collection(payload))
    assert any(says in e for e in errors), errors


def test_every_reason_is_listed_at_once() -> None:
    errors = errors_of(
        rules.save_collection(
            {
                "name": "B",
                "members": [],
                "tags": ["X"] * 9,
                "reply": "both",
                "description": "d" * 301,
                "merger": "nope",
            }
        )
    )
    assert len(errors) == 6


def test_removing_a_collection_needs_one() -> None:
    event = rules.remove_collection({"name": "bench/core"})(state(), "cfg:c")
    assert isinstance(event, CollectionRemoved) and event.name == "core"
    assert errors_of(rules.remove_collection({"name": "nope"})) == ["no collection named 'nope'"]


# ---------------------------------------------------------------- gateway settings


def test_settings_are_saved() -> None:
    event = rules.save_settings({"max_calls": 7, "max_explorers": 0})(state(), "cfg:s")
    assert isinstance(event, GatewaySettingsSaved) and (event.max_calls, event.max_explorers) == (7, 0)
    partial = rules.save_settings({"max_explorers": 1})(state(), "cfg:s")
    assert isinstance(partial, GatewaySettingsSaved) and (partial.max_calls, partial.max_explorers) == (5, 1)


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        ({"max_calls": 0}, '"max_calls" must be a whole number from 1 to 10'),
        ({"max_calls": 11}, '"max_calls" must be a whole number from 1 to 10'),
        ({"max_calls": True}, '"max_calls"'),
        ({"max_calls": 2.5}, '"max_calls"'),
        ({"max_explorers": 3}, '"max_explorers" must be a whole number from 0 to 2'),
        ({"max_explorers": -1}, '"max_explorers"'),
        ({"max_calls": 2}, "below the member count of: core (3)"),
    ],
)
def test_bad_settings_are_refused(payload: dict[str, Any], says: str) -> None:
    errors = errors_of(rules.save_settings(payload))
    assert any(says in e for e in errors), errors


# ---------------------------------------------------------------- what a refusal's status says (issue 24)


def invalid(rule: rules.Rule) -> rules.Invalid:
    with pytest.raises(rules.Invalid) as caught:
        rule(state(), "cfg:x")
    return caught.value


def test_a_write_naming_only_what_does_not_exist_is_404_and_any_other_reason_makes_it_400() -> None:
    assert invalid(rules.remove_collection({"name": "nope"})).status == 404
    assert invalid(rules.retire_model({"alias": "ghost"})).status == 404
    assert invalid(rules.save_collection({"name": "x", "members": ["m-a"]})).status == 400
    assert rules.Invalid([rules.Missing("no such thing"), "and a bad field"]).status == 400
    assert rules.Invalid([]).status == 400


def test_a_write_the_state_does_not_allow_now_is_409() -> None:
    assert invalid(rules.retire_model({"alias": "gone"})).status == 409
    assert rules.Invalid([rules.Conflict("taken"), rules.Missing("no such")]).status == 409
    assert rules.Invalid([rules.Conflict("taken"), "bad shape"]).status == 400
