"""`GET /v1/models` rows (H-G1, A-25) and the `/bench/*` request checks (H-G10..H-G12, A-11, A-12)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from services.gateway.listing import model_rows
from shared.alerts import pending_key
from shared.commands import Price
from shared.events import AlertRaised, GatewaySettingsSaved, ModelLearned
from shared.ledger_api import (
    export_request,
    iso_time,
    pending_request,
    record_request,
    report_request,
    verdict_request,
)
from shared.refusal import Refusal
from tests.unit.factories import collection, config, endpoint, model


def test_each_collection_three_times_own_mode_first() -> None:
    st = config(
        endpoint("fake"),
        endpoint("other"),
        model("a", context_window=32000, vision=True, tools=True),
        model("b", endpoint="other", context_window=8000, vision=True),
        model("c"),
        collection("core", ["a", "b"], description="everyday", tags=["general"], merger="c"),
        collection("agents", ["a", "c"], reply="route"),
    )
    rows = model_rows(st)
    assert [r["id"] for r in rows] == [
        "bench/agents",
        "bench/agents:all",
        "bench/agents:merged",
        "bench/core",
        "bench/core:merged",
        "bench/core:route",
    ]
    assert [r["reply"] for r in rows] == ["route", "all", "merged", "all", "merged", "route"]
    core = rows[3]
    assert core["object"] == "model" and core["owned_by"] == "benchwarmers"
    assert (core["description"], core["tags"], core["members"], core["merger"]) == (
        "everyday",
        ["general"],
        ["a", "b"],
        "c",
    )
    assert core["explorers"] == 2
    assert core["together"] == {
        "context_window": 8000,
        "context_unknown": [],
        "capabilities": ["vision"],
        "connections": ["fake", "other"],
        "limits": {},
    }
    agents = rows[0]["together"]
    assert (agents["context_window"], agents["context_unknown"], agents["capabilities"]) == (32000, ["c"], [])


@pytest.mark.parametrize(("members", "explorers"), [(1, 2), (2, 2), (3, 2), (4, 1), (5, 0)])
def test_explorers_follow_c11_on_the_raw_member_count(members: int, explorers: int) -> None:
    names = [f"m{i}" for i in range(members)]
    st = config(endpoint(), *(model(n) for n in names), collection("c1", names))
    assert {r["explorers"] for r in model_rows(st)} == {explorers}


def test_explorers_follow_the_settings() -> None:
    st = config(
        endpoint(),
        model("a"),
        collection("c1", ["a"]),
        GatewaySettingsSaved(id="cfg:s", max_calls=2, max_explorers=2),
    )
    assert model_rows(st)[0]["explorers"] == 1


def verdict_refusal(body: dict[str, Any]) -> Refusal:
    with pytest.raises(Refusal) as caught:
        verdict_request(body)
    return caught.value


def test_verdicts_are_checked_before_the_ledger_sees_them() -> None:
    asked = verdict_request(
        {"call": "p.member1", "useful": False, "note": "wrong", "real": ["x"], "false": ["y"]}
    )
    assert (asked.call, asked.useful, asked.note, asked.real, asked.false_claims) == (
        "p.member1",
        False,
        "wrong",
        ["x"],
        ["y"],
    )
    assert json.loads(asked.model_dump_json(by_alias=True))["false"] == ["y"]
    for useful in ("yes", 1, None):
        refusal = verdict_refusal({"call": "p.member1", "useful": useful})
        assert (refusal.status, refusal.message) == (400, '"useful" must be true or false')
    assert verdict_refusal({"useful": True}).status == 400
    for field in ("real", "false"):
        refusal = verdict_refusal({"call": "p.member1", "useful": True, field: "a claim"})
        assert refusal.status == 400 and f'"{field}" must be a list of strings' in refusal.message
        assert verdict_refusal({"call": "p.member1", "useful": True, field: [1]}).status == 400


def test_pending_needs_a_list_of_strings() -> None:
    assert pending_request({"calls": ["a", "b"]}).calls == ["a", "b"]
    for calls in ("a", [1], None):
        with pytest.raises(Refusal) as caught:
            pending_request({"calls": calls})
        assert caught.value.status == 400


def test_record_needs_a_collection() -> None:
    asked = record_request({"collection": "bench/core", "task": "slab"})
    assert (asked.collection, asked.task) == ("bench/core", "slab")
    with pytest.raises(Refusal) as caught:
        record_request({})
    assert caught.value.status == 400 and "collection=bench/<name>" in caught.value.message


def test_a_collection_lists_its_retiring_members_and_learned_capabilities_count() -> None:
    st = config(endpoint("fake"), model("a", tools=True), model("b"), collection("core", ["a", "b"]))
    assert model_rows(st)[0]["retiring"] == [] and model_rows(st)[0]["together"]["capabilities"] == []
    st.apply(AlertRaised(id="cfg:p", key=pending_key(st.models["b"].served), kind="retiring", by="prober",
                         message="b retires in 2 days unless it answers", alias="b"))
    st.apply(ModelLearned(id="cfg:l", alias="b", tools=True, reasoning=True, source="probe 2026-01-04"))
    st.apply(ModelLearned(id="cfg:l2", alias="a", reasoning=True, source="probe 2026-01-04"))
    row = model_rows(st)[0]
    assert row["retiring"] == ["b"]
    assert row["together"]["capabilities"] == ["tools", "reasoning"]


def test_usage_since_is_an_iso_time_or_refused() -> None:
    """Issue 24: what `/openapi.json` says (`date-time`) is what the route takes; Unix seconds are refused."""
    assert iso_time(None) is None
    assert iso_time("2026-01-31t12:00:00z") == iso_time("2026-01-31T12:00:00+00:00")
    for bad in ("0.5", "1700000000", "yesterday-ish", ""):
        with pytest.raises(Refusal) as caught:
            iso_time(bad)
        assert caught.value.status == 400 and '"since"' in caught.value.message


def test_report_period_defaults_to_thirty_days_and_prices_are_parsed() -> None:
    now = datetime(2026, 12, 3, 12, tzinfo=UTC)
    req = report_request(None, None, ["openai/gpt-4o:2.5:10"], now)
    assert (req.since, req.until) == (now - timedelta(days=30), now)
    assert req.prices["openai/gpt-4o"] == Price(input=2.5, output=10)
    assert report_request("2026-11-01", None, [], now).since == datetime(2026, 11, 1, tzinfo=UTC)
    assert report_request(None, "0001-01-02T00:00:00Z", [], now).since.year == 1  # no overflow
    for since, until, prices, word in (
        ("2026-12-02", "2026-12-01", [], '"until" must come after'), ("x", None, [], '"since"'),
        (None, "soon", [], '"until"'), (None, None, ["a:1"], '"price"'), (None, None, ["a:x:1"], '"price"'),
        (None, None, ["a:-1:1"], '"price"'),
    ):
        with pytest.raises(Refusal) as caught:
            report_request(since, until, prices, now)
        assert caught.value.status == 400 and word in caught.value.message


def test_export_marks_and_day_are_checked() -> None:
    req = export_request("2026-12-01", ["seats:12", "panels:3", "seats:15"])
    assert req.since == date(2026, 12, 1) and req.after == {"seats": 15, "panels": 3}
    for since, after in (("yesterday", []), (None, ["seats"]), (None, ["seats:-1"]), (None, [":4"])):
        with pytest.raises(Refusal) as caught:
            export_request(since, after)
        assert caught.value.status == 400
