"""The admin API's rules and the folds of what they publish (C-5, C-10, C-14, C-17, L-1, O-5, SEC-4)."""

from __future__ import annotations

from typing import Any

import pytest

from services.console.admin.changelog import ChangeLog
from shared.config_rules import endpoints as endpoint_rules
from shared.config_rules import keys as key_rules
from shared.config_rules import limits as limit_rules
from shared.config_rules import models as model_rules
from shared.config_rules.base import Invalid, Rule, register_model
from shared.config_rules.collection_merge import save_merged
from shared.config_rules.keys import key_hash
from shared.config_state import ConfigState
from shared.events import ConfigEvent, GatewaySettingsSaved, LimitsSaved, ModelRetired
from tests.unit.factories import collection, config, endpoint, model


def state() -> ConfigState:
    return config(
        endpoint(),
        endpoint("other", "https://other.example/v1"),
        model("a", max_output=1000),
        model("b"),
        model("c", endpoint="other"),
        collection("pair", ["a", "b"], merger="a"),
        collection("solo", ["c"], description="kept", tags=["t"]),
        LimitsSaved(id="cfg:l", scope="model", name="a", rpm=5),
    )


def apply(s: ConfigState, rule: Rule) -> ConfigEvent:
    event = rule(s, f"cfg:{s.seq + 1}")
    s.apply(event, s.seq + 1)
    return event


def reasons(s: ConfigState, rule: Rule) -> str:
    with pytest.raises(Invalid) as refused:
        rule(s, "cfg:x")
    return " | ".join(refused.value.errors)


def test_a_rename_moves_collections_merger_and_limits_and_retires_the_old_alias() -> None:
    s = state()
    apply(s, model_rules.change_model({"alias": "a", "new_alias": "a2", "new_role": "code"}))
    assert list(s.models) == ["a2", "b", "c"] and s.models["a2"].role == "code"
    assert (s.collections["pair"].members, s.collections["pair"].merger) == (["a2", "b"], "a2")
    assert s.model_limits["a2"].rpm == 5 and "a" not in s.model_limits
    apply(s, model_rules.change_model({"alias": "a2", "new_alias": "a3"}))
    assert s.renamed == {"a": "a3", "a2": "a3"} and s.current_alias("a") == "a3"
    assert "taken" in reasons(s, model_rules.change_model({"alias": "b", "new_alias": "a2"}))
    assert "differs only by case" in reasons(s, model_rules.change_model({"alias": "b", "new_alias": "A3"}))
    assert "never reused" in reasons(s, register_model({"served": "x", "endpoint": "fake", "alias": "a2"}))


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ({"alias": "b"}, "nothing to change"),
        ({"alias": "b", "new_role": "b"}, "must be one of"),
        ({"alias": "b", "new_role": "decision"}, "is fixed"),
        ({"alias": "b", "new_role": "image"}, "cannot be a member"),
        ({"alias": "zz", "new_role": "code"}, "no model with alias"),
        ({"alias": "b", "new_alias": "-bad"}, "alias must be"),
    ],
)
def test_model_changes_refused(body: dict[str, Any], why: str) -> None:
    assert why in reasons(state(), model_rules.change_model(body))


def test_options_stay_within_what_the_model_can_write() -> None:
    s = state()
    apply(s, model_rules.model_options({"alias": "a", "max_tokens": 800}))
    assert s.models["a"].max_tokens == 800
    assert "above it" in reasons(s, model_rules.model_options({"alias": "a", "max_tokens": 1001}))
    assert "whole number" in reasons(s, model_rules.model_options({"alias": "b", "max_tokens": 0}))
    apply(s, model_rules.model_options({"alias": "a", "max_tokens": None}))
    assert s.models["a"].max_tokens is None


def test_restore_returns_the_model_where_there_is_room() -> None:
    s = state()
    s.apply(GatewaySettingsSaved(id="cfg:s", max_calls=2, max_explorers=2), 100)
    s.apply(ModelRetired(id="cfg:r", alias="a", why="gone"), 101)
    assert s.collections["pair"].members == ["b"] and s.collections["pair"].merger == ""
    s.apply(collection("pair", ["b", "c"]), 102)  # full again at max_calls 2
    apply(s, model_rules.restore_model({"alias": "a"}))
    assert "a" in s.models and s.collections["pair"].members == ["b", "c"]
    assert s.collections["pair"].merger == "a"  # the merger chair was free
    assert "not retired" in reasons(s, model_rules.restore_model({"alias": "a"}))


def test_restore_refuses_when_the_endpoint_is_gone_or_the_model_is_back() -> None:
    s = state()
    apply(s, endpoint_rules.remove_endpoint({"name": "other", "with_models": True}))
    assert "c" in s.retired and "other" not in s.endpoints and "solo" in s.collections
    assert "no longer exists" in reasons(s, model_rules.restore_model({"alias": "c"}))
    s.apply(ModelRetired(id="cfg:r2", alias="b"), 200)
    apply(s, register_model({"served": "b", "endpoint": "fake", "alias": "b-again"}))
    assert "registered again" in reasons(s, model_rules.restore_model({"alias": "b"}))


def test_endpoint_removal_and_default() -> None:
    s = state()
    assert "with_models" in reasons(s, endpoint_rules.remove_endpoint({"name": "other"}))
    assert "default endpoint" in reasons(
        s, endpoint_rules.remove_endpoint({"name": "fake", "with_models": True})
    )
    apply(s, endpoint_rules.make_default({"name": "other"}))
    assert s.default_endpoint() == "other" and not s.endpoints["fake"].default
    base = {"name": "other", "base": "https://moved.example/v1"}
    assert "cannot change" in reasons(s, endpoint_rules.save_checked(base))
    kept = endpoint_rules.save_checked({"name": "other", "base": "https://other.example/v1/"})(s, "cfg:y")
    assert kept.api == "chat"  # type: ignore[attr-defined]


def test_a_saved_endpoint_keeps_its_base_even_without_models() -> None:
    """Its key goes only to its saved base, so its list at a new one would be refused by the callers."""
    s = config(endpoint("idle", "https://idle.example/v1"))
    why = reasons(s, endpoint_rules.save_checked({"name": "idle", "base": "https://moved.example/v1"}))
    assert "base cannot change" in why and "remove it and add it again" in why
    apply(s, endpoint_rules.remove_endpoint({"name": "idle"}))
    moved = apply(s, endpoint_rules.save_checked({"name": "idle", "base": "https://moved.example/v1"}))
    assert moved.base == "https://moved.example/v1"  # type: ignore[attr-defined]


def test_a_collection_save_merges_over_the_saved_one() -> None:
    s = state()
    saved = apply(s, save_merged({"name": "bench/solo", "add": ["a"], "reply": "merged"}))
    assert s.collections["solo"].members == ["c", "a"]
    assert (s.collections["solo"].description, s.collections["solo"].tags) == ("kept", ["t"])
    assert saved.reply == "merged"  # type: ignore[attr-defined]
    apply(s, save_merged({"name": "solo", "remove": ["c"]}))
    assert s.collections["solo"].members == ["a"]
    assert "not members of solo: zz" in reasons(s, save_merged({"name": "solo", "remove": ["zz"]}))
    assert "at least one member" in reasons(s, save_merged({"name": "new-one"}))


def test_keys_are_kept_as_hashes_and_revoked_everywhere_at_once() -> None:
    s = state()
    created = apply(
        s,
        key_rules.create_key({"name": "app", "collections": ["bench/pair", "solo"], "rpm": 3}, "bwk_secret"),
    )
    assert "bwk_secret" not in created.model_dump_json()
    assert s.key_hashes[key_hash("bwk_secret")] == "app" and s.gateway_keys["app"].collections == [
        "pair",
        "solo",
    ]
    assert "exists" in reasons(s, key_rules.create_key({"name": "app"}, "bwk_2"))
    assert "not 'local'" in reasons(s, key_rules.create_key({"name": "local"}, "bwk_3"))
    assert "no collection named nope" in reasons(
        s, key_rules.create_key({"name": "x2", "collections": ["nope"]}, "bwk_4")
    )
    assert "rpm" in reasons(s, key_rules.create_key({"name": "x3", "rpm": 10_001}, "bwk_5"))
    apply(s, key_rules.revoke_key({"name": "app"}))
    assert s.gateway_keys == {} and s.key_hashes == {}


def test_limits_name_a_connection_a_chat_model_uses() -> None:
    s = state()
    apply(s, limit_rules.connection_limits({"connection": "other", "limits": {"rpm": 3, "rpmo": 100}}))
    assert s.connection_limits["other"].rpmo == 100
    assert "not a connection" in reasons(s, limit_rules.connection_limits({"connection": "x", "limits": {}}))
    assert "not rpmo" in reasons(s, limit_rules.model_limits({"alias": "a", "limits": {"rpmo": 1}}))


def test_the_change_log_lists_field_changes_with_who_and_never_a_hash() -> None:
    log = ChangeLog()
    s = ConfigState()
    events = [endpoint(), model("a"), collection("pair", ["a"])]
    for seq, event in enumerate(events, 1):
        log.apply(event, seq)
        s.apply(event, seq)
    for seq, rule in enumerate(
        (
            save_merged({"name": "pair", "description": "new words"}),
            model_rules.change_model({"alias": "a", "new_alias": "a2"}),
            key_rules.create_key({"name": "app"}, "bwk_secret"),
        ),
        4,
    ):
        event = rule(s, f"cfg:{seq}").model_copy(update={"by": "ui"})
        log.apply(event, seq)
        s.apply(event, seq)
    rows = [(c["by"], c["kind"], c["name"], c["field"], c["old"], c["new"]) for c in log.newest(10)]
    assert rows[:3] == [
        ("ui", "gateway key", "app", "created", None, {"collections": None, "rpm": None}),
        ("ui", "model", "a", "alias", "a", "a2"),
        ("ui", "collection", "pair", "description", "", "new words"),
    ]
    assert key_hash("bwk_secret") not in str(log.newest(10))
