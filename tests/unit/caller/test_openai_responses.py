"""OpenAI Responses (C-3): the request we send (streamed, `store: false`) and its typed events."""

from __future__ import annotations

import json
from typing import Any

from services.caller.openai_responses import StreamParser, build_request, parse_plain
from tests.unit.caller.wire_fixtures import CONVERSATION, PNG, TOOLS, seat_call, sse_lines


def feed(*events: dict[str, Any]) -> StreamParser:
    parser = StreamParser()
    for line in sse_lines(*events):
        parser.feed_line(line)
    return parser


def test_request_url_headers_and_body() -> None:
    call = seat_call(
        "responses",
        messages=CONVERSATION,
        options={
            "max_completion_tokens": 500,
            "reasoning_effort": "low",
            "temperature": 1,
            "tools": TOOLS,
            "tool_choice": "auto",
            "stream_options": {"include_usage": True},
        },
    )
    req = build_request(call, "sk-resp")
    assert req.url == "https://api.example.com/v1/responses"
    assert req.headers["Authorization"] == "Bearer sk-resp" and req.headers["X-Title"] == "bench"
    body = req.body
    assert (body["stream"], body["store"], body["instructions"], body["max_output_tokens"]) == (
        True,
        False,
        "Be brief.",
        500,
    )
    assert (
        body["reasoning"] == {"effort": "low"} and body["temperature"] == 1 and "stream_options" not in body
    )
    assert body["tools"] == [
        {
            "type": "function",
            "name": "lookup",
            "description": "Look a thing up",
            "parameters": TOOLS[0]["function"]["parameters"],
        }
    ]
    assert body["tool_choice"] == "auto"
    assert body["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is in these?"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
                {"type": "input_image", "image_url": "https://img.example.com/cat.webp?size=2"},
            ],
        },
        {"role": "assistant", "content": [{"type": "output_text", "text": "Let me look it up."}]},
        {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": '{"q": "cat"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "a cat"},
        {"role": "user", "content": [{"type": "input_text", "text": "And so?"}]},
    ]


def response(status: str, **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "status": status, "model": "gpt-5-2025-08-07", **extra}


USAGE = {
    "input_tokens": 20,
    "input_tokens_details": {"cached_tokens": 8},
    "output_tokens": 30,
    "output_tokens_details": {"reasoning_tokens": 12},
    "total_tokens": 50,
}
TEXT = [
    {"type": "response.created", "sequence_number": 0, "response": response("in_progress")},
    {
        "type": "response.output_item.added",
        "sequence_number": 1,
        "output_index": 0,
        "item": {"id": "rs_1", "type": "reasoning", "summary": []},
    },
    {
        "type": "response.reasoning_summary_text.delta",
        "sequence_number": 2,
        "item_id": "rs_1",
        "delta": "Weighing.",
    },
    {
        "type": "response.output_item.added",
        "sequence_number": 3,
        "output_index": 1,
        "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
    },
    {"type": "response.output_text.delta", "sequence_number": 4, "item_id": "msg_1", "delta": "A cat"},
    {"type": "response.output_text.delta", "sequence_number": 5, "item_id": "msg_1", "delta": " sits."},
]
TOOL = [
    {
        "type": "response.output_item.added",
        "sequence_number": 6,
        "output_index": 2,
        "item": {
            "id": "fc_1",
            "type": "function_call",
            "call_id": "call_9",
            "name": "lookup",
            "arguments": "",
        },
    },
    {
        "type": "response.function_call_arguments.delta",
        "sequence_number": 7,
        "item_id": "fc_1",
        "delta": '{"q":',
    },
    {
        "type": "response.function_call_arguments.delta",
        "sequence_number": 8,
        "item_id": "fc_1",
        "delta": '"cat"}',
    },
]


def test_stream_reasoning_text_tool_and_usage() -> None:
    done = {
        "type": "response.completed",
        "sequence_number": 9,
        "response": response("completed", usage=USAGE),
    }
    parser = feed(*TEXT, *TOOL, done)
    assert parser.done
    out = parser.finish()
    assert (out.error, out.text, out.reasoning, out.finish, out.model) == (
        "",
        "A cat sits.",
        "Weighing.",
        "tool_calls",
        "gpt-5-2025-08-07",
    )
    assert [(t.id, t.name, t.arguments) for t in out.tool_calls] == [("call_9", "lookup", '{"q":"cat"}')]
    assert out.usage is not None
    assert (out.usage.tokens_in, out.usage.tokens_out, out.usage.reasoning, out.usage.cached) == (
        20,
        30,
        12,
        8,
    )


def test_incomplete_for_max_output_tokens_is_length() -> None:
    ending = {
        "type": "response.incomplete",
        "response": response("incomplete", incomplete_details={"reason": "max_output_tokens"}, usage=USAGE),
    }
    assert feed(*TEXT, ending).finish().finish == "length"


def test_failed_response_and_error_event_are_errors() -> None:
    failed = {
        "type": "response.failed",
        "response": response("failed", error={"code": "server_error", "message": "The model failed"}),
    }
    out = feed(*TEXT[:1], failed).finish()
    assert out.error.startswith("Error: provider error mid-stream: ") and "server_error" in out.error
    error = {
        "type": "error",
        "sequence_number": 6,
        "code": "rate_limit_exceeded",
        "message": "slow down",
        "param": None,
    }
    out = feed(*TEXT, error).finish()
    assert "rate_limit_exceeded" in out.error and out.text == "A cat sits."


def test_a_stream_cut_before_completion() -> None:
    assert feed(*TEXT).finish().error == "Error: client failed: stream cut before response.completed"


def test_plain_response_object() -> None:
    plain = response(
        "completed",
        usage=USAGE,
        output=[
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Weighing."}]},
            {"type": "message", "id": "m1", "content": [{"type": "output_text", "text": "Hi"}]},
            {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "lookup", "arguments": "{}"},
        ],
    )
    out = parse_plain(json.dumps(plain).encode())
    assert (out.text, out.reasoning, out.finish, out.error) == ("Hi", "Weighing.", "tool_calls", "")
    assert parse_plain(b'{"error": {"message": "bad"}}').error.startswith(
        "Error: provider error in a 200 reply"
    )
