"""RM-2 (A-55): who may take a route turn, each other member named with why; 503 / 413 / 400 when none."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from services.gateway.ask import Refusal
from services.gateway.panel.flatten import estimate_text
from services.gateway.route_mode.eligibility import (
    AD_HOC,
    NOT_REGISTERED,
    TOOLS_UNKNOWN,
    VISION_SPECIALIST,
    VISION_UNKNOWN,
    Member,
    TurnNeeds,
    eligible_members,
    members_from_config,
    request_estimate,
    turn_needs,
)
from shared.events import ModelRetired
from tests.unit.gateway.factories import collection, config, endpoint, model

PLAIN = TurnNeeds(tools=False, images=0, estimate=100)
TOOLS = TurnNeeds(tools=True, images=0, estimate=100)
IMAGES = TurnNeeds(tools=False, images=1, estimate=2_600)
IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
TOOL_DEF = {"type": "function", "function": {"name": "sh", "parameters": {"type": "object"}}}


def whys(collection_name: str, members: list[Member], needs: TurnNeeds) -> dict[str, str]:
    return {s.alias: s.why for s in eligible_members(collection_name, members, needs).skipped}


def test_every_exclusion_is_named_with_its_why() -> None:
    ok = Member("ok", tools=True, vision=True)
    members = [
        ok,
        Member("old", retired_on=date(2026, 1, 2)),
        Member("adhoc", ad_hoc=True, tools=True),
        Member("gone", registered=False),
        Member("native", api="anthropic", tools=True),
        Member("toolless", tools=False, source="models.dev"),
        Member("unknown", tools=None),
    ]
    result = eligible_members("core", members, TOOLS)
    assert result.aliases == ["ok"]
    assert whys("core", members, TOOLS) == {
        "old": "retired from the bench on 2026-01-02; take it out of the collection (Restore in its model "
        "popup brings it back)",
        "adhoc": AD_HOC,
        "gone": NOT_REGISTERED,
        "native": "reached through the anthropic API; route mode passes requests on to chat completions only",
        "toolless": "does not call tools (says models.dev)",
        "unknown": TOOLS_UNKNOWN,
    }
    assert result.skipped_json()[0] == {"alias": "old", "why": whys("core", members, TOOLS)["old"]}


def test_without_tools_a_tool_less_member_is_fine() -> None:
    assert eligible_members("core", [Member("a", tools=False)], PLAIN).aliases == ["a"]


def test_images_exclude_the_blind_and_no_images_exclude_vision_specialists() -> None:
    members = [
        Member("eyes", vision=True),
        Member("blind", vision=False, source="the catalog"),
        Member("unsure"),
        Member("specialist", role="vision", vision=True),
    ]
    assert eligible_members("core", members, IMAGES).aliases == ["eyes", "specialist"]
    assert whys("core", members, IMAGES) == {
        "blind": "does not take images (says the catalog)",
        "unsure": VISION_UNKNOWN,
    }
    assert whys("core", members, PLAIN) == {"specialist": VISION_SPECIALIST}


def test_members_are_deduped_first_wins_and_not_capped() -> None:
    members = [Member(f"m{i}") for i in range(8)] + [Member("m0", ad_hoc=True)]
    result = eligible_members("core", members, PLAIN)
    assert result.aliases == [f"m{i}" for i in range(8)] and result.skipped == ()
    assert result.member("m3") == Member("m3")


def test_no_members_at_all_is_503() -> None:
    with pytest.raises(Refusal) as caught:
        eligible_members("core", [], PLAIN)
    assert caught.value.status == 503 and "bench/core" in caught.value.message


def test_none_eligible_is_400_naming_each() -> None:
    with pytest.raises(Refusal) as caught:
        eligible_members("bench/core", [Member("a", ad_hoc=True), Member("b", tools=False)], TOOLS)
    assert caught.value.status == 400
    assert caught.value.message == (
        f"no member of bench/core can take this request: a ({AD_HOC}); b (does not call tools (says its "
        "registration))"
    )


def test_none_eligible_only_for_size_is_413() -> None:
    members = [
        Member("small", vision=True, context_window=8_000),
        Member("smaller", vision=True, context_window=4_000),
    ]
    needs = TurnNeeds(tools=False, images=2, estimate=9_000)
    with pytest.raises(Refusal) as caught:
        eligible_members("core", members, needs)
    assert caught.value.status == 413
    message = caught.value.message
    assert "small (context window 8,000 is under this request (about 9,000 tokens))" in message
    assert "trim it under 4,000" in message and "each image counted as 2,500" in message
    mixed = [Member("small", vision=True, context_window=8_000), Member("adhoc", ad_hoc=True)]
    with pytest.raises(Refusal) as caught:
        eligible_members("core", mixed, needs)
    assert caught.value.status == 400


def test_unknown_windows_never_exclude() -> None:
    assert eligible_members("core", [Member("a")], TurnNeeds(False, 0, 10**9)).aliases == ["a"]


def test_the_estimate_counts_tool_calls_tool_definitions_and_images() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "sh", "arguments": '{"cmd": "ls -la"}'}}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "look"}, IMAGE]},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "file.txt"},
    ]
    bare = request_estimate(messages, {})
    assert bare > 2_500
    with_tools = request_estimate(messages, {"tools": [TOOL_DEF]})
    extra = estimate_text(json.dumps([call]) + json.dumps([TOOL_DEF]))
    assert with_tools - bare == extra - estimate_text(json.dumps([call]))
    needs = turn_needs(messages, {"tools": [TOOL_DEF]})
    assert needs == TurnNeeds(tools=True, images=1, estimate=with_tools)


def test_tool_history_without_tool_definitions_still_needs_a_tool_caller() -> None:
    results = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c", "content": "x"}]
    assert turn_needs(results, {}).tools
    assert not turn_needs([{"role": "user", "content": "hi"}], {"tools": []}).tools


def test_members_from_the_configuration_fold() -> None:
    saved = collection("core", ["a", "b", "a", "c", "old", "ghost"])
    retirement = ModelRetired(id="cfg:r:old", alias="old", why="dead")  # after the collection was saved
    state = config(
        endpoint("fake"),
        endpoint("claude", api="anthropic"),
        model("a", served="org/a", tools=True, context_window=32_000, max_output=4_096),
        model("b", endpoint="claude"),
        model("c", ad_hoc=True, role="code", vision=True),
        model("old"),
        saved,
        retirement,
    )
    members = members_from_config("bench/core", state)
    assert [m.alias for m in members] == ["a", "b", "c", "ghost", "old"]
    assert members[0] == Member(
        "a", served="org/a", endpoint="fake", tools=True, context_window=32_000, max_output=4_096
    )
    assert members[1].api == "anthropic"
    assert members[2].ad_hoc and members[2].role == "code" and members[2].vision is True
    assert not members[3].registered
    assert members[4].retired_on == retirement.at.date()
    assert members_from_config("nothing", state) == []
    resaved = config(endpoint("fake"), model("old"), model("a"), collection("core", ["a", "old"]))
    resaved.apply(ModelRetired(id="cfg:r:old", alias="old"))
    resaved.apply(collection("core", ["a"]))  # saved again after the retirement: the user's own list
    assert [m.alias for m in members_from_config("core", resaved)] == ["a"]
