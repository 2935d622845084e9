"""The configuration fold's dispatch: one handler per configuration event type, anything else only moves the
folded sequence on, and a sequence already folded is not folded again."""

from __future__ import annotations

from copy import deepcopy
from datetime import UTC, datetime, timedelta
from typing import Literal

from shared.config_state import APPLY, ConfigState
from shared.events import (
    CollectionRemoved,
    CollectionSaved,
    ConfigEvent,
    ConfigEvents,
    CooldownStarted,
    EndpointSaved,
    GatewayKeyCreated,
    GatewayKeyRevoked,
    ModelLearned,
    ModelRegistered,
    ModelUpdated,
)

T0 = datetime(2026, 3, 1, 6, 0, tzinfo=UTC)


class NewSetting(ConfigEvent):
    """A configuration event type added later, before it has a handler."""

    type: Literal["new_setting"] = "new_setting"


def folded() -> ConfigState:
    state = ConfigState()
    state.apply(EndpointSaved(id="cfg:ep", name="fake", base="https://api.example.com/v1"), 1)
    state.apply(CollectionSaved(id="cfg:c", name="core", members=[]), 2)
    return state


def test_every_configuration_event_type_has_its_handler() -> None:
    assert set(APPLY) == set(ConfigEvents)


def test_an_event_without_a_handler_changes_nothing_but_the_sequence() -> None:
    state = folded()
    before = deepcopy(state)
    state.apply(CooldownStarted(id="cd", alias="a", connection="fake", until=T0 + timedelta(minutes=1)), 3)
    state.apply(NewSetting(id="n"), 4)
    assert state.seq == 4
    state.seq = before.seq
    assert state == before


def test_a_sequence_already_folded_is_skipped() -> None:
    state = folded()
    state.apply(CollectionRemoved(id="cfg:c2", name="core"), 2)
    assert list(state.collections) == ["core"] and state.seq == 2
    state.apply(CollectionRemoved(id="cfg:c2", name="core"), 3)
    assert state.collections == {} and state.seq == 3


def test_a_key_created_again_replaces_the_old_hash_and_a_revoked_key_opens_nothing() -> None:
    state = ConfigState()
    state.apply(GatewayKeyCreated(id="k1", name="ci", hash="a" * 64, hint="bw_a"))
    state.apply(GatewayKeyCreated(id="k2", name="ci", hash="b" * 64, hint="bw_b"))
    assert state.key_hashes == {"b" * 64: "ci"} and state.gateway_keys["ci"].id == "k2"
    state.apply(GatewayKeyRevoked(id="k3", name="ci"))
    assert state.key_hashes == {} and state.gateway_keys == {}


def test_a_learned_tool_caller_is_known_to_call_tools_and_keeps_it_through_a_rename() -> None:
    state = ConfigState()
    state.apply(EndpointSaved(id="cfg:e", name="e", base="http://127.0.0.1:1/v1"))
    state.apply(ModelRegistered(id="cfg:m", alias="m", served="v/m", endpoint="e"))
    state.apply(ModelLearned(id="cfg:l1", alias="m", reasoning=True, source="probe 2026-01-04"))
    assert state.models["m"].tools is None and state.learned["m"] == {"reasoning"}
    state.apply(ModelLearned(id="cfg:l2", alias="m", tools=True, source="probe 2026-01-04"))
    state.apply(ModelUpdated(id="cfg:r", alias="m", new_alias="m2"))
    assert state.models["m2"].tools is True and state.learned == {"m2": {"reasoning", "tools"}}
    state.apply(ModelLearned(id="cfg:l3", alias="gone", tools=True))  # no such model: nothing
    assert "gone" not in state.learned
