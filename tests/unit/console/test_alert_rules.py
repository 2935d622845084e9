"""Alerts raised and cleared on the admin API (C-16), the allow list (U-5), and what the change log says of
them (C-17): every bad input refused with its reason, nothing else."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from services.console.admin import more_views
from services.console.admin.changelog import ChangeLog
from shared.config_rules.alerts import clear_alert, raise_alert, save_allow_paid
from shared.config_rules.base import Invalid, Rule
from shared.config_state import ConfigState
from shared.events import AlertCleared, AlertRaised, ConnectionsSaved
from tests.unit.factories import config, endpoint, model


def state() -> ConfigState:
    return config(endpoint("fake"), model("fast", served="vendor/fast:free"), model("slow"))


def errors_of(rule: Rule, st: ConfigState | None = None) -> str:
    with pytest.raises(Invalid) as caught:
        rule(st or state(), "cfg:x")
    return " | ".join(caught.value.errors)


def paid(**over: Any) -> dict[str, Any]:
    return {"key": "model:paid:vendor/fast:free", "message": "listed with a price now", **over}


def test_a_went_paid_alert_takes_its_kind_from_its_key() -> None:
    action = "retire it or re-point it at a free slug"
    event = raise_alert(paid(alias="fast", action=action))(state(), "cfg:1")
    assert isinstance(event, AlertRaised)
    assert (event.key, event.kind, event.alias, event.action) == (
        "model:paid:vendor/fast:free", "went paid", "fast", action)
    same = raise_alert(paid(kind="went paid", aliases=["fast", "slow", "fast"]))(state(), "cfg:2")
    assert isinstance(same, AlertRaised) and same.aliases == ["fast", "slow"]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (paid(kind="expensive"), "unknown kind 'expensive'"),
        (paid(kind="retiring"), "is a 'went paid' key, not 'retiring'"),
        (paid(key="paid:vendor/fast"), "is not an alert key"),
        (paid(key="model:paid:"), "is not an alert key"),
        (paid(key="model:cheap:x"), "is not an alert key"),
        (paid(key="connection:x"), "is not an alert key"),
        (paid(key="model:paid:a b"), "without spaces"),
        (paid(key=7), "must be an alert key"),
        (paid(message=""), '"message" must be one line'),
        (paid(message="x" * 301), '"message" must be one line'),
        (paid(message="two\nlines"), '"message" must be one line'),
        (paid(action=3), '"action" must be one line'),
        (paid(alias="nobody"), "no model with alias 'nobody'"),
        (paid(aliases="fast"), '"aliases" must be a list'),
        (paid(aliases=["fast", "ghost"]), "no model with alias 'ghost'"),
        (paid(colour="red"), "unknown field(s): colour"),
    ],
)
def test_a_bad_alert_is_refused_with_its_reason(body: dict[str, Any], reason: str) -> None:
    assert reason in errors_of(raise_alert(body))


def test_every_reason_is_given_at_once() -> None:
    why = errors_of(raise_alert({"key": "nope", "kind": "weird", "message": ""}))
    assert "is not an alert key" in why and "unknown kind" in why and '"message"' in why


def test_clearing_needs_a_well_formed_key_that_is_up() -> None:
    up = config(endpoint("fake"), AlertRaised(id="cfg:a", key="connection:held:fake", kind="connection",
                                               message="held"))
    event = clear_alert("connection:held:fake")(up, "cfg:c")
    assert isinstance(event, AlertCleared) and event.key == "connection:held:fake"
    assert "is not an alert key" in errors_of(clear_alert("whatever"), up)
    with pytest.raises(Invalid) as caught:
        clear_alert("model:paid:vendor/fast:free")(up, "cfg:c")
    assert caught.value.status == 404 and "no alert is up" in str(caught.value)


def test_the_allow_list_is_a_list_of_names_kept_once_each() -> None:
    event = save_allow_paid({"allow_paid": ["fast", "vendor/other:free", "fast"]})(state(), "cfg:p")
    assert isinstance(event, ConnectionsSaved) and event.allow_paid == ["fast", "vendor/other:free"]
    cleared = save_allow_paid({"allow_paid": []})(state(), "cfg:p")
    assert isinstance(cleared, ConnectionsSaved) and cleared.allow_paid == []
    for bad in ("fast", ["a b"], [""], [3], ["x"] * 201, None):
        assert '"allow_paid" must be a list' in errors_of(save_allow_paid({"allow_paid": bad}))
    assert "unknown field(s): paid" in errors_of(save_allow_paid({"allow_paid": [], "paid": True}))


def test_the_view_lists_the_most_recently_seen_first() -> None:
    st, earlier = state(), datetime(2026, 3, 1, tzinfo=UTC)
    st.apply(raise_alert(paid())(st, "cfg:1"), 10)
    st.apply(raise_alert({"key": "connection:held:fake", "message": "held"})(st, "cfg:2"), 11)
    st.apply(raise_alert(paid())(st, "cfg:3").model_copy(update={"at": earlier}), 12)
    keys = [row["key"] for row in more_views.alerts(st)]
    assert keys == ["connection:held:fake", "model:paid:vendor/fast:free"]
    assert set(more_views.alerts(st)[0]) == {"key", "kind", "message", "action", "first_seen", "last_seen",
                                             "by", "alias", "aliases"}


def test_the_change_log_tells_raises_clears_and_the_allow_list() -> None:
    log = ChangeLog()
    key = "model:paid:vendor/fast:free"
    for seq, event in enumerate([
        AlertRaised(id="cfg:1", key=key, kind="went paid", message="priced", by="admin"),
        AlertRaised(id="cfg:2", key=key, kind="went paid", message="still priced", by="admin"),
        AlertCleared(id="cfg:3", key=key, by="admin"),
        ConnectionsSaved(id="cfg:4", allow_paid=["fast"], by="admin"),
        ConnectionsSaved(id="cfg:5", allow_paid=["fast"], by="admin"),
    ], 1):
        log.apply(event, seq)
    assert [(c["kind"], c["name"], c["field"], c["old"], c["new"]) for c in log.newest(10)][::-1] == [
        ("alert", key, "went paid", None, "priced"),
        ("alert", key, "went paid", "priced", "still priced"),
        ("alert", key, "cleared", "still priced", None),
        ("connections", "allow_paid", "allow_paid", [], ["fast"]),
    ]
