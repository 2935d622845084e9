"""Shadow members of a collection (issue 4 item 7): checked like members, kept by a save that does not send
them, and followed through renames, retirements and restores like members are."""

from __future__ import annotations

import pytest

from shared.config_rules import models as model_rules
from shared.config_rules.base import Invalid, Rule, retire_model
from shared.config_rules.collection_merge import save_merged
from shared.config_state import ConfigState
from shared.events import ConfigEvent
from tests.unit.factories import collection, config, endpoint, model


def state() -> ConfigState:
    return config(
        endpoint(), model("a"), model("b"), model("s1"), model("s2"), model("pic", role="image"),
        collection("agents", ["a", "b"], reply="route", shadows=["s1"]),
    )


def apply(s: ConfigState, rule: Rule) -> ConfigEvent:
    event = rule(s, f"cfg:{s.seq + 1}")
    s.apply(event, s.seq + 1)
    return event


def reasons(s: ConfigState, rule: Rule) -> str:
    with pytest.raises(Invalid) as refused:
        rule(s, "cfg:x")
    return " | ".join(refused.value.errors)


def test_shadows_are_saved_deduped_kept_when_not_sent_and_cleared_by_an_empty_list() -> None:
    s = state()
    apply(s, save_merged({"name": "agents", "shadows": ["s2", "s1", "s2"]}))
    assert s.collections["agents"].shadows == ["s2", "s1"]
    apply(s, save_merged({"name": "agents", "description": "for agents", "add": ["s1"]}))
    assert s.collections["agents"].shadows == ["s2", "s1"]
    apply(s, save_merged({"name": "agents", "shadows": []}))
    assert s.collections["agents"].shadows == []
    new = apply(s, save_merged({"name": "fresh", "members": ["a"]}))
    assert new.shadows == []  # type: ignore[attr-defined]


def test_a_shadow_must_be_a_chat_model_on_the_bench_and_every_reason_is_given() -> None:
    s = state()
    apply(s, retire_model({"alias": "s2"}))
    why = reasons(s, save_merged({"name": "agents", "shadows": ["nobody", "pic", "s2"], "tags": ["BAD"]}))
    assert "shadow 'nobody' is not a model on the bench" in why
    assert "shadow 'pic' is a image model, not a chat model" in why
    assert "shadow 's2' is retired from the bench" in why
    assert "tags must be" in why
    assert '"shadows" must be a list of model aliases' in reasons(
        s, save_merged({"name": "agents", "shadows": "s1"})
    )
    assert s.collections["agents"].shadows == ["s1"]


def test_a_shadow_follows_its_model_through_rename_retirement_and_restore() -> None:
    s = state()
    apply(s, model_rules.change_model({"alias": "s1", "new_alias": "s1-new"}))
    assert s.collections["agents"].shadows == ["s1-new"]
    apply(s, retire_model({"alias": "s1-new"}))
    assert s.collections["agents"].shadows == []
    assert s.retired["s1-new"].collections == {"agents": ["shadows"]}
    apply(s, model_rules.restore_model({"alias": "s1-new"}))
    assert s.collections["agents"].shadows == ["s1-new"]


def test_a_shadow_cannot_become_an_image_model() -> None:
    s = state()
    why = reasons(s, model_rules.change_model({"alias": "s1", "new_role": "image"}))
    assert "s1" in why and "agents" in why
