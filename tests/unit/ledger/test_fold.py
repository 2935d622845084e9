"""Event → row mapping: every event type, and a batch's own de-duplication (first seat wins, panels merge,
the latest quota record wins)."""

from __future__ import annotations

import json
from typing import Literal

from services.ledger.fold import EventRow, PanelRow, SeatRow, fold_batch
from shared.events import (
    ConfigEvent,
    EventBase,
    GatewayKeyCreated,
    GatewayKeyRevoked,
    GatewaySettingsSaved,
    ModelRetired,
    ModelUpdated,
)
from tests.unit.ledger.factories import (
    T0,
    answered,
    completed,
    cooldown,
    endpoint,
    limits_saved,
    recorded,
    seated,
)

P = "p20261202-093000-abcd"


def test_seat_completed_becomes_one_typed_seat_row() -> None:
    event = completed(f"{P}.member1", alias="a", status="error", error="HTTP 500", seconds=2.5)
    rows = fold_batch([(7, event)])
    assert list(rows.seats.values()) == [SeatRow(
        call=f"{P}.member1", seq=7, event=f"seat:{P}.member1", at=T0, panel=P, seat="member", alias="a",
        served="a-served", endpoint="local", connection="local", collection="core",
        task="find the race in refresh() (bench/core, code)", purpose="panel", status="error", seconds=2.5,
        first_token_s=None,
        answer="", error="HTTP 500", failure="other", http_status=500, attempts=1, tokens_in=12,
        tokens_out=34, reasoning=5, cached=2, estimated=False, caller="caller-1", served_by="a-served",
        swap=False, paced="sent", waited_s=0.0,
    )]
    assert rows.events == [EventRow(7, f"seat:{P}.member1", "seat_completed", T0, "caller")]


def test_first_completion_of_a_call_wins_within_a_batch() -> None:
    first = completed(f"{P}.member1", answer="first", event_id="seat:x:1")
    second = completed(f"{P}.member1", answer="second", event_id="seat:x:2")
    rows = fold_batch([(1, first), (2, second)])
    assert [r.answer for r in rows.seats.values()] == ["first"]
    assert [e.seq for e in rows.events] == [1, 2]  # both messages were folded, once each


def test_panel_rows_merge_the_plan_and_the_answer_whatever_the_order() -> None:
    plan, answer = seated(P), answered(P, [f"{P}.member1", f"{P}.member2"])
    in_order = fold_batch([(1, plan), (2, answer)]).panels[P]
    reversed_ = fold_batch([(1, answer), (2, plan)]).panels[P]
    assert in_order == reversed_
    assert in_order.at == T0 and in_order.answered_at == answer.at
    # The plan's lists as JSON text: DuckDB casts them to STRUCTs when the batch is merged.
    assert [s["alias"] for s in json.loads(in_order.seats or "[]")] == ["a", "b"]
    assert json.loads(in_order.skipped or "[]") == [{"seat": "explorer", "alias": "z", "why": "resting"}]
    assert (in_order.reply, in_order.system) == ("all", "be brief")
    assert in_order.prompt == "find the race in refresh()"
    assert in_order.calls == [f"{P}.member1", f"{P}.member2"]


def test_a_panel_field_keeps_its_first_known_value() -> None:
    seated_only = fold_batch([(1, seated(P))]).panels[P]
    assert seated_only.answered_at is None and seated_only.prompt is None
    later = seated_only._replace(collection="other", prompt="late")
    merged = seated_only.merged(later)
    assert merged.collection == "core" and merged.prompt == "late"
    assert isinstance(merged, PanelRow)


def test_verdicts_are_kept_per_event_id() -> None:
    v1 = recorded(f"{P}.member1", "a", True, "checked", n=0)
    v2 = recorded(f"{P}.member1", "a", False, "wrong after all", n=5)
    rows = fold_batch([(3, v1), (4, v1), (5, v2)])
    assert [(v.seq, v.useful, v.note) for v in rows.verdicts.values()] == [
        (3, True, "checked"), (5, False, "wrong after all")]
    assert rows.verdicts[v1.id].real_claims == ["the race"]
    assert rows.verdicts[v2.id].false_claims == ["sql injection"]


def test_config_changes_name_their_subject_and_never_hold_a_credential() -> None:
    retired = ModelRetired(id="cfg:2", at=T0, by="admin", alias="a", why="dead")
    settings = GatewaySettingsSaved(id="cfg:3", at=T0, by="admin", max_calls=4)
    rows = fold_batch([(1, endpoint()), (2, retired), (3, settings)])
    changes = list(rows.config_changes.values())
    assert [(c.type, c.name) for c in changes] == [
        ("endpoint_saved", "local"), ("model_retired", "a"), ("gateway_settings_saved", "gateway"),
    ]
    saved = json.loads(changes[0].change)
    assert saved["headers"] == {"X-Title": "bench", "Authorization": "[redacted]"}
    assert "sk-nope" not in changes[0].change
    assert json.loads(changes[2].change) == {"max_calls": 4, "max_explorers": 2}


def test_a_gateway_keys_hash_never_reaches_the_change_log() -> None:
    created = GatewayKeyCreated(id="cfg:k", at=T0, by="admin", name="ci", hash="ab" * 32, hint="bw-…9f3c")
    renamed = ModelUpdated(id="cfg:m", at=T0, by="admin", alias="a", new_alias="a2")
    rows = fold_batch([(1, created), (2, GatewayKeyRevoked(id="cfg:r", at=T0, name="ci")), (3, renamed)])
    changes = list(rows.config_changes.values())
    assert [(c.type, c.name) for c in changes] == [
        ("gateway_key_created", "ci"), ("gateway_key_revoked", "ci"), ("model_updated", "a")]
    saved = json.loads(changes[0].change)
    assert saved["hash"] == "[redacted]" and saved["hint"] == "bw-…9f3c"
    assert "ab" * 32 not in changes[0].change


def test_limits_saved_names_its_connection_or_model() -> None:
    rows = fold_batch([(1, limits_saved("connection", "groq", rpm=30, rpmo=1000)),
                       (2, limits_saved("model", "a", rpd=100))])
    changes = list(rows.config_changes.values())
    assert [(c.type, c.name) for c in changes] == [("limits_saved", "groq"), ("limits_saved", "a")]
    assert json.loads(changes[0].change) == {"scope": "connection", "name": "groq", "rpm": 30, "rpd": None,
                                             "tpm": None, "tpd": None, "rpmo": 1000}


def test_cooldowns_are_rows() -> None:
    row = next(iter(fold_batch([(9, cooldown("a"))]).cooldowns.values()))
    assert (row.seq, row.alias, row.connection, row.why) == (9, "a", "local", "429")
    assert row.until > row.at



class Unheard(EventBase):
    """An event type the ledger has no handler for."""

    def subject(self) -> str:
        return "bench.ev.test.unheard"


class NewSetting(ConfigEvent):
    """A configuration event type added later, without a handler of its own."""

    type: Literal["new_setting"] = "new_setting"
    name: str


def test_an_event_without_a_handler_is_only_an_applied_event() -> None:
    rows = fold_batch([(1, Unheard(id="u1", at=T0)), (2, cooldown("a"))])
    assert [(e.seq, e.type) for e in rows.events] == [(1, "Unheard"), (2, "cooldown_started")]
    assert len(rows.cooldowns) == 1
    assert not (rows.seats or rows.panels or rows.calls_used or rows.config_changes or rows.alerts)


def test_a_configuration_event_without_its_own_handler_is_a_configuration_change() -> None:
    rows = fold_batch([(3, NewSetting(id="n1", at=T0, name="x"))])
    assert [(c.type, c.name, c.change) for c in rows.config_changes.values()] == [
        ("new_setting", "x", '{"name":"x"}')]
