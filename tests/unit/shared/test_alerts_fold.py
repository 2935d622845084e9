"""C-16 alerts and U-5's allow list in the configuration fold: keyed and refreshed in place, cleared by key,
cleared with the model they name when it retires (C-14), moved with a rename (C-5)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from shared.alerts import kind_of, paid_key, prefix_of, served_of
from shared.config_state import ConfigState
from shared.events import (
    AlertCleared,
    AlertRaised,
    CollectionSaved,
    ConfigEvent,
    ConnectionsSaved,
    EndpointRemoved,
    EndpointSaved,
    ModelRegistered,
    ModelRestored,
    ModelRetired,
    ModelUpdated,
    decode_event,
    encode_event,
)

T0 = datetime(2026, 3, 1, 6, 0, tzinfo=UTC)


def fold(*events: ConfigEvent) -> ConfigState:
    state = ConfigState()
    for seq, event in enumerate(events, 1):
        state.apply(event, seq)
    return state


def raised(key: str, at: datetime = T0, **extra: Any) -> AlertRaised:
    fields: dict[str, Any] = {"kind": kind_of(key), "message": "listed with a price now", "by": "catalog"}
    fields.update(extra)
    return AlertRaised(id=f"cfg:a:{key}:{at.isoformat()}", at=at, key=key, **fields)


def registered(alias: str, served: str, endpoint: str = "fake") -> ModelRegistered:
    return ModelRegistered(id=f"cfg:m:{alias}", alias=alias, served=served, endpoint=endpoint)


BASE = (
    EndpointSaved(id="cfg:ep", name="fake", base="https://api.example.com/v1"),
    registered("fast", "vendor/fast:free"),
    CollectionSaved(id="cfg:c", name="core", members=["fast"]),
)


def test_every_key_shape_names_one_kind_and_its_served_id() -> None:
    assert kind_of("model:paid:vendor/fast:free") == "went paid"
    assert kind_of("model:never-served:x") == kind_of("model:unclassified:x") == "registration"
    assert kind_of("connection:held:groq") == "connection"
    assert kind_of("model:paid:") is None and kind_of("model:cheap:x") is None and kind_of("paid:x") is None
    assert served_of(paid_key("vendor/fast:free")) == "vendor/fast:free"
    assert served_of("connection:held:groq") is None
    assert prefix_of("model:gone:a/b") == "model:gone:"


def test_raising_a_key_again_refreshes_it_and_keeps_when_it_was_first_seen() -> None:
    later = T0 + timedelta(hours=2)
    state = fold(*BASE, raised(paid_key("vendor/fast:free")),
                 raised(paid_key("vendor/fast:free"), later, message="still priced", action="retire it"))
    alert = state.alerts[paid_key("vendor/fast:free")]
    assert (alert.first_seen, alert.last_seen) == (T0, later)
    assert (alert.kind, alert.message, alert.action, alert.by) == ("went paid", "still priced", "retire it",
                                                                   "catalog")
    assert len(state.alerts) == 1


def test_a_cleared_key_is_gone_and_a_new_raise_starts_fresh() -> None:
    key = paid_key("vendor/fast:free")
    later = T0 + timedelta(days=1)
    state = fold(*BASE, raised(key), AlertCleared(id="cfg:clear", key=key), raised(key, later))
    assert state.alerts[key].first_seen == later
    state.apply(AlertCleared(id="cfg:clear2", key=key), 99)
    state.apply(AlertCleared(id="cfg:clear3", key="model:gone:never-raised"), 100)  # harmless
    assert state.alerts == {}


def test_retiring_a_model_clears_its_model_alerts_and_nothing_else() -> None:
    state = fold(
        *BASE,
        registered("other", "vendor/other"),
        raised(paid_key("vendor/fast:free")),
        raised("model:pending:renamed-slug", alias="fast"),
        raised(paid_key("vendor/other")),
        raised("connection:held:fake", aliases=["fast", "other"]),
        ModelRetired(id="cfg:r", alias="fast", why="went paid"),
    )
    assert set(state.alerts) == {paid_key("vendor/other"), "connection:held:fake"}
    state.apply(ModelRestored(id="cfg:back", alias="fast"), 50)
    assert paid_key("vendor/fast:free") not in state.alerts  # a restore does not bring an alert back


def test_a_served_id_another_model_still_serves_keeps_its_alert() -> None:
    state = fold(
        *BASE,
        EndpointSaved(id="cfg:ep2", name="hub", base="https://hub.example.com/v1"),
        registered("fast-hub", "vendor/fast:free", endpoint="hub"),
        raised(paid_key("vendor/fast:free")),
        EndpointRemoved(id="cfg:rm", name="hub", retire_models=True),
    )
    assert paid_key("vendor/fast:free") in state.alerts
    state.apply(ModelRetired(id="cfg:r", alias="fast"), 50)
    assert state.alerts == {}


def test_a_rename_moves_the_alias_in_alerts_and_in_the_allow_list() -> None:
    state = fold(
        *BASE,
        raised(paid_key("vendor/fast:free"), alias="fast", aliases=["fast", "x"]),
        ConnectionsSaved(id="cfg:conn", allow_paid=["fast", "vendor/other", "fast"]),
        ModelUpdated(id="cfg:u", alias="fast", new_alias="quick"),
    )
    alert = state.alerts[paid_key("vendor/fast:free")]
    assert (alert.alias, alert.aliases) == ("quick", ["quick", "x"])
    assert state.allow_paid == ["quick", "vendor/other"]


def test_the_allow_list_is_replaced_by_each_save() -> None:
    state = fold(*BASE, ConnectionsSaved(id="cfg:1", allow_paid=["fast"]), ConnectionsSaved(id="cfg:2"))
    assert state.allow_paid == []


def test_alert_events_round_trip_on_the_config_subject() -> None:
    event = raised(paid_key("vendor/fast:free"), alias="fast")
    assert event.subject() == "bench.ev.config"
    assert decode_event(encode_event(event)) == event
    cleared = AlertCleared(id="cfg:c1", key=event.key, by="admin")
    assert decode_event(encode_event(cleared)) == cleared
    saved = ConnectionsSaved(id="cfg:s1", allow_paid=["fast"])
    assert decode_event(encode_event(saved)) == saved
