"""RM-8 and RM-9: the route `bench`, its headers (A-56), the turn record (A-57) and one offload per model."""

from __future__ import annotations

import json
from datetime import timedelta

from services.gateway.route_mode.bench import (
    first_answer_offload,
    route_bench,
    route_headers,
    route_turn,
    task_text,
    turn_status,
)
from services.gateway.route_mode.conversation import new_conversation
from services.gateway.route_mode.failover import Failover
from shared.events import Skip
from tests.unit.gateway.route_mode.member import CONV, NOW, interleaved_calls, summarise, text_stream

SECRET_PROMPT = "Here is my whole repository and my password hunter2 " * 10
MESSAGES = [
    {"role": "system", "content": "agent rules"},
    {"role": "user", "content": "  Fix\n the   tests  "},
    {"role": "user", "content": SECRET_PROMPT},
]


def test_the_bench_object() -> None:
    conv = new_conversation(CONV, "k", "core", "local", NOW).after_turn("m-b", ["m-a", "m-b"], NOW)
    turn = Failover("core", ["m-a", "m-b"])
    turn.failed("Error: Error code: 429 - slow down")
    skipped = [Skip(seat="member", alias="m-c", why="ad hoc: never routed")]
    bench = route_bench(conv, "m-b", conv.turns, turn.failed_over, skipped)
    assert bench == {
        "collection": "bench/core",
        "reply": "route",
        "conversation": CONV,
        "call": f"{CONV}.1",
        "alias": "m-b",
        "turn": 1,
        "failed_over": [{"alias": "m-a", "error": "Error: Error code: 429 - slow down"}],
        "skipped": [{"alias": "m-c", "why": "ad hoc: never routed"}],
        "verdict": f'optional, once per conversation: POST /bench/verdict {{"call": "{CONV}.1", '
        '"useful": true|false, "note": "..."}',
    }
    plain = route_bench(conv, "m-b", 1)
    assert "failed_over" not in plain and "skipped" not in plain


def test_headers() -> None:
    assert route_headers(CONV) == {"X-Bench-Conversation": CONV}
    assert route_headers(CONV, "m-a") == {"X-Bench-Conversation": CONV, "X-Bench-Model": "m-a"}


def test_the_task_is_the_first_user_message_collapsed_and_short() -> None:
    assert task_text(MESSAGES) == "Fix the tests"
    assert len(task_text([{"role": "user", "content": "word " * 100}])) == 90


def test_one_record_per_turn_never_the_prompt() -> None:
    before = new_conversation(CONV, "k", "core", "ci-key", NOW)
    after = before.after_turn("m-a", ["m-a", "m-b"], NOW)
    summary = summarise(interleaved_calls())
    record = route_turn(
        after,
        alias="m-a",
        at=NOW,
        task=task_text(MESSAGES),
        status=turn_status(summary, ""),
        seconds=2.345,
        first_token_s=0.81,
        summary=summary,
        tried=["m-b", "m-a"],
    )
    line = record.as_json()
    assert line == {
        "conversation": CONV,
        "call": f"{CONV}.1",
        "at": NOW.isoformat(),
        "model": "bench/core",
        "key": "ci-key",
        "alias": "m-a",
        "turn": 1,
        "task": "Fix the tests",
        "status": "ok",
        "seconds": 2.3,
        "first_token_s": 0.8,
        "tool_calls": 2,
        "finish": "tool_calls",
        "tokens_in": 321,
        "tokens_out": 45,
        "reasoning": 7,
        "tried": ["m-b", "m-a"],
    }
    assert "hunter2" not in json.dumps(line)


def test_a_failed_turn_record() -> None:
    after = new_conversation(CONV, "k", "core", "local", NOW).after_turn("", ["a"], NOW)
    record = route_turn(
        after,
        alias="",
        at=NOW,
        task="t",
        status=turn_status(None, "boom"),
        seconds=1,
        first_token_s=None,
        summary=None,
        tried=["a"],
        error="no member of bench/core answered",
    )
    assert record.as_json() == {
        "conversation": CONV,
        "call": "",
        "at": NOW.isoformat(),
        "model": "bench/core",
        "key": "local",
        "alias": "",
        "turn": 1,
        "task": "t",
        "status": "error",
        "seconds": 1,
        "first_token_s": None,
        "tool_calls": 0,
        "finish": None,
        "error": "no member of bench/core answered",
    }
    assert turn_status(summarise(text_stream([])), "") == "empty"


def test_one_unjudged_offload_per_model_that_answered() -> None:
    conv = new_conversation(CONV, "k", "core", "local", NOW)
    offloads = []
    for turn, alias in enumerate(["m-a", "m-a", "", "m-b", "m-a", "m-b"], 1):
        after = conv.after_turn(alias, ["m-a", "m-b"], NOW + timedelta(minutes=turn))
        offload = first_answer_offload(conv, after, alias, "Fix the tests", "ok", 1.26)
        if offload:
            offloads.append(offload)
        conv = after
    assert [(o.call, o.alias) for o in offloads] == [(f"{CONV}.1", "m-a"), (f"{CONV}.2", "m-b")]
    assert offloads[0].task == "Fix the tests (bench/core:route)"
    assert offloads[0].note == "route conversation; first turn ok in 1.3s"
