"""`pending_verdicts`' rules without I/O (MCP-3, A-77): when the hook gets nothing, which ids are asked
about, the reminder's key and the hook output."""

from __future__ import annotations

import json

import pytest

from services.gateway.mcp.reminders import (
    MAX_CALLS,
    PendingArgs,
    is_active,
    pending_args,
    reminder_key,
    reminder_output,
    session_token,
)

CALL = "p20260101-120000-ab12.member1"


@pytest.mark.parametrize("value", [True, "true", "TRUE", " true "])
def test_an_active_hook_gets_nothing(value: object) -> None:
    assert is_active(value)
    assert pending_args({"session": "s", "transcript": "/t.jsonl", "active": value}) is None


@pytest.mark.parametrize("value", [False, "false", None, "", 1])
def test_anything_else_is_not_active(value: object) -> None:
    assert not is_active(value)


@pytest.mark.parametrize("args", [{}, {"transcript": "/t.jsonl"}, {"session": " ", "transcript": "/t.jsonl"},
                                  {"session": "s"}, {"session": "s", "transcript": 5}])
def test_missing_arguments_get_nothing(args: dict[str, object]) -> None:
    assert pending_args(args) is None


def test_a_transcript_or_call_ids_are_what_is_asked_about() -> None:
    assert pending_args({"session": "s", "transcript": "/t.jsonl"}) == PendingArgs("s", "/t.jsonl", None)
    given = pending_args({"session": "s", "calls": [CALL, "not an id", 7, CALL, "p1.member1"]})
    assert given == PendingArgs("s", "", [CALL])
    many = [f"p20260101-120000-ab12.member{i}" for i in range(MAX_CALLS + 10)]
    capped = pending_args({"session": "s", "calls": many})
    assert capped is not None and capped.calls == many[-MAX_CALLS:]


def test_the_memory_key_hides_the_session_and_is_kv_safe() -> None:
    key = reminder_key("session with spaces/and:stuff", CALL)
    assert key == f"{session_token('session with spaces/and:stuff')}.{CALL}"
    assert "session" not in key and all(c.isalnum() or c in "-." for c in key)
    assert reminder_key("a", CALL) != reminder_key("b", CALL)


def test_the_hook_output_names_each_owed_seat_or_is_empty() -> None:
    assert reminder_output([]) == ""
    output = json.loads(reminder_output([CALL, "p20260101-120000-ab12.explorer"]))["hookSpecificOutput"]
    assert output["hookEventName"] == "Stop"
    assert output["additionalContext"].startswith("Benchwarmers: 2 seat(s)")
    assert CALL in output["additionalContext"] and "verdict" in output["additionalContext"]
