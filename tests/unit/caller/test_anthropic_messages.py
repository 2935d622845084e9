"""Anthropic Messages (C-3): the request we send and the stream we read, against captured shapes."""

from __future__ import annotations

import json
from typing import Any

from services.caller.anthropic_messages import StreamParser, build_request, parse_plain
from tests.unit.caller.wire_fixtures import CONVERSATION, PNG, TOOLS, seat_call, sse_lines


def feed(lines: list[str]) -> StreamParser:
    parser = StreamParser()
    for line in lines:
        parser.feed_line(line)
    return parser


def test_request_headers_url_and_body() -> None:
    call = seat_call(
        "anthropic",
        messages=CONVERSATION,
        options={
            "max_tokens": 300,
            "temperature": 0.2,
            "stop": "END",
            "seed": 7,
            "tools": TOOLS,
            "tool_choice": "required",
        },
    )
    req = build_request(call, "sk-ant")
    assert req.url == "https://api.example.com/v1/messages"
    assert req.headers == {
        "Content-Type": "application/json",
        "User-Agent": "benchwarmers",
        "X-Title": "bench",
        "anthropic-version": "2023-06-01",
        "x-api-key": "sk-ant",
    }
    body = req.body
    assert (body["model"], body["max_tokens"], body["stream"], body["system"]) == (
        "vendor-model",
        300,
        True,
        "Be brief.",
    )
    assert body["temperature"] == 0.2 and body["stop_sequences"] == ["END"] and "seed" not in body
    assert body["tools"] == [
        {
            "name": "lookup",
            "description": "Look a thing up",
            "input_schema": TOOLS[0]["function"]["parameters"],
        }
    ]
    assert body["tool_choice"] == {"type": "any"}
    user, assistant, results = body["messages"]
    assert user == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in these?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "image", "source": {"type": "url", "url": "https://img.example.com/cat.webp?size=2"}},
        ],
    }
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look it up."},
            {"type": "tool_use", "id": "call_1", "name": "lookup", "input": {"q": "cat"}},
        ],
    }
    # The tool result and the next user turn share one user message (Anthropic alternates roles).
    assert results == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "a cat"},
            {"type": "text", "text": "And so?"},
        ],
    }


def test_defaults_without_key_or_options() -> None:
    req = build_request(seat_call("anthropic", headers={"anthropic-version": "2024-01-01"}), None)
    assert "x-api-key" not in req.headers and req.headers["anthropic-version"] == "2024-01-01"
    assert req.body["max_tokens"] == 4096 and "system" not in req.body and "tools" not in req.body


def test_a_named_tool_choice() -> None:
    options = {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "lookup"}}}
    assert build_request(seat_call("anthropic", options=options), "k").body["tool_choice"] == {
        "type": "tool",
        "name": "lookup",
    }


STREAM: list[dict[str, Any]] = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 25,
                "cache_creation_input_tokens": 2,
                "cache_read_input_tokens": 10,
                "output_tokens": 1,
            },
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Hmm, "}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "cats."}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQB"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "ping"},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "A cat"}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": " sits."}},
    {"type": "content_block_stop", "index": 1},
    {
        "type": "content_block_start",
        "index": 2,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}},
    },
    {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}},
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": '{"q": '},
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": '"cat"}'},
    },
    {"type": "content_block_stop", "index": 2},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 42},
    },
    {"type": "message_stop"},
]


def test_stream_text_thinking_tool_and_usage() -> None:
    parser = feed(sse_lines(*STREAM))
    assert parser.done
    out = parser.finish()
    assert (out.error, out.text, out.reasoning, out.finish) == ("", "A cat sits.", "Hmm, cats.", "tool_calls")
    assert out.model == "claude-sonnet-4-5-20250929"
    assert [(t.id, t.name, json.loads(t.arguments)) for t in out.tool_calls] == [
        ("toolu_1", "lookup", {"q": "cat"})
    ]
    assert out.usage is not None
    assert (out.usage.tokens_in, out.usage.tokens_out, out.usage.cached) == (37, 42, 10)


def test_max_tokens_is_length() -> None:
    events = [
        STREAM[0],
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]
    assert feed(sse_lines(*events)).finish().finish == "length"


def test_error_event_mid_stream() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    out = feed(sse_lines(*STREAM[:9], error)).finish()
    assert out.error.startswith("Error: provider error mid-stream: ") and "overloaded_error" in out.error
    assert out.text == "A cat"


def test_a_stream_cut_before_message_stop() -> None:
    out = feed(sse_lines(*STREAM[:10])).finish()
    assert out.error == "Error: client failed: stream cut before message_stop"


def test_plain_reply_and_error_in_200() -> None:
    plain = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [
            {"type": "thinking", "thinking": "hm"},
            {"type": "text", "text": "Hi"},
            {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"q": 1}},
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    out = parse_plain(json.dumps(plain).encode())
    assert (out.text, out.reasoning, out.finish, out.error) == ("Hi", "hm", "stop", "")
    assert out.tool_calls[0].arguments == '{"q": 1}' and out.usage is not None and out.usage.tokens_out == 4
    failed = parse_plain(b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}')
    assert failed.error.startswith("Error: provider error in a 200 reply: ")
    assert parse_plain(b"<html>").error.startswith("Error: client failed: non-JSON reply")
