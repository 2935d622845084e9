"""RM-4: the conversation key (A-48, A-49), the record as stored, the order a turn walks, call ids."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from services.gateway.route_mode.conversation import (
    IDLE_TTL_S,
    Conversation,
    conversation_key,
    live,
    new_conversation,
)
from tests.unit.gateway.route_mode.member import CONV, NOW

SYSTEM = {"role": "system", "content": "You are a coding agent."}
FIRST = {"role": "user", "content": "Fix the failing test."}
TURN_1: list[dict[str, Any]] = [SYSTEM, FIRST]
TURN_2: list[dict[str, Any]] = [
    SYSTEM,
    FIRST,
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "sh", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "1 failed"},
    {"role": "user", "content": "go on"},
]


def test_the_key_is_24_hex_and_stays_across_turns() -> None:
    key = conversation_key("bench/core", "local", TURN_1)
    assert len(key) == 24 and int(key, 16) >= 0
    assert conversation_key("core", "local", TURN_2) == key  # same system + first user message
    assert conversation_key("bench/core", "", TURN_1) == key  # no key name is `local`


@pytest.mark.parametrize(
    "change",
    [
        {"first": "Fix the other test."},  # another first user message
        {"system": "You are a title writer."},  # a side request with its own system prompt
        {"collection": "bench/fast"},
        {"caller": "ci-key"},
        {"developer": "Be terse."},  # developer text is system text
    ],
)
def test_anything_in_the_key_changing_makes_another_conversation(change: dict[str, str]) -> None:
    base = conversation_key("bench/core", "local", TURN_1)
    messages = [
        {"role": "system", "content": change.get("system", SYSTEM["content"])},
        {"role": "user", "content": change.get("first", FIRST["content"])},
    ]
    if "developer" in change:
        messages.insert(1, {"role": "developer", "content": change["developer"]})
    other = conversation_key(change.get("collection", "bench/core"), change.get("caller", "local"), messages)
    assert other != base


def test_the_format_is_not_part_of_the_key() -> None:
    parts_form: list[dict[str, Any]] = [
        SYSTEM,
        {"role": "user", "content": [{"type": "text", "text": FIRST["content"]}]},
    ]
    assert conversation_key("bench/core", "local", parts_form) == conversation_key(
        "bench/core", "local", TURN_1
    )


def test_the_record_round_trips_as_json_bytes() -> None:
    conv = new_conversation(CONV, "a" * 24, "core", "ci", NOW).after_turn("m-b", ["m-a", "m-b"], NOW)
    data = conv.to_json()
    assert isinstance(data, bytes)
    assert Conversation.from_json(data) == conv
    assert conv.collection == "bench/core" and conv.model == "m-b" and conv.turns == 1


def test_a_bad_conversation_id_is_refused() -> None:
    with pytest.raises(ValidationError):
        new_conversation("p20260102-030405-ab12", "k", "core", "local", NOW)


def test_turns_and_call_ids_follow_who_answered() -> None:
    conv = new_conversation(CONV, "k", "core", "local", NOW)
    assert conv.next_turn == 1 and conv.call_for("m-a") == f"{CONV}.1"
    conv = conv.after_turn("m-a", ["m-a", "m-b"], NOW)
    conv = conv.after_turn("m-a", ["m-a", "m-b"], NOW)
    assert (conv.turns, conv.answered, conv.call_for("m-a")) == (2, ["m-a"], f"{CONV}.1")
    conv = conv.after_turn("m-b", ["m-a", "m-b"], NOW)  # m-a failed over to m-b
    assert conv.model == "m-b" and conv.call_for("m-b") == f"{CONV}.2" and conv.offload_number("m-a") == 1
    failed = conv.after_turn("", ["m-b", "m-a"], NOW)  # every member failed: the model stays
    assert failed.model == "m-b" and failed.turns == 4 and failed.answered == ["m-a", "m-b"]


def test_an_idle_conversation_lapses() -> None:
    conv = new_conversation(CONV, "k", "core", "local", NOW)
    assert live(conv, NOW + timedelta(seconds=IDLE_TTL_S)) is conv
    assert live(conv, NOW + timedelta(seconds=IDLE_TTL_S + 1)) is None
    assert live(None, NOW) is None
