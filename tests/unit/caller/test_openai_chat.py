"""Request building (U-2) and reply parsing (U-3) for OpenAI-compatible chat completions."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from services.caller.openai_chat import (
    StreamParser,
    build_request,
    parse_plain,
    parse_stream,
    refuses_streaming,
    without_stream_extras,
)
from services.caller.wire import bad_base, http_error_text
from shared.commands import SeatCall


def seat_call(**over: Any) -> SeatCall:
    fields: dict[str, Any] = {
        "call": "p20261202-120000-abcd.member1",
        "panel": "p20261202-120000-abcd",
        "seat": "member",
        "alias": "a",
        "served": "vendor/model-a",
        "endpoint": "groq",
        "base": "https://api.example.com/v1/",
        "connection": "groq",
        "messages": [{"role": "user", "content": "hi"}],
        "deadline": 2e9,
    }
    fields.update(over)
    return SeatCall.model_validate(fields)


def sse(*chunks: Any) -> bytes:
    lines = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks]
    return "".join(lines).encode()


def delta(**d: Any) -> dict[str, Any]:
    return {"model": "vendor/model-a", "choices": [{"index": 0, "delta": d, "finish_reason": None}]}


def finish(reason: str = "stop") -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


USAGE = {
    "choices": [],
    "usage": {
        "prompt_tokens": 12,
        "completion_tokens": 5,
        "completion_tokens_details": {"reasoning_tokens": 2},
        "prompt_tokens_details": {"cached_tokens": 8},
    },
}


# ---------------------------------------------------------------- request


def test_request_streams_with_usage_and_sends_headers_and_key() -> None:
    call = seat_call(
        headers={"HTTP-Referer": "https://bench"}, options={"max_tokens": 100, "temperature": 0.2}
    )
    req = build_request(call, "sk-secret")
    assert req.url == "https://api.example.com/v1/chat/completions"
    assert req.headers == {
        "Content-Type": "application/json",
        "User-Agent": "benchwarmers",
        "HTTP-Referer": "https://bench",
        "Authorization": "Bearer sk-secret",
    }
    assert req.body == {
        "model": "vendor/model-a",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 100,
        "temperature": 0.2,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_options_cannot_override_model_messages_or_streaming() -> None:
    req = build_request(seat_call(options={"model": "x", "stream": False, "messages": []}), None)
    assert req.body["model"] == "vendor/model-a" and req.body["stream"] is True and req.body["messages"]
    assert "Authorization" not in req.headers


def test_messages_keep_their_own_fields_and_nothing_more() -> None:
    msgs = [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ]
    assert build_request(seat_call(messages=msgs), None).body["messages"] == msgs


def test_stream_fallback_drops_stream_options_then_streaming() -> None:
    req = build_request(seat_call(), None)
    first = without_stream_extras(req)
    assert first is not None and "stream_options" not in first.body and first.body["stream"] is True
    second = without_stream_extras(first)
    assert second is not None and second.body["stream"] is False
    assert without_stream_extras(second) is None


def test_refuses_streaming_only_for_400_or_422_naming_stream() -> None:
    assert refuses_streaming(400, "stream_options is not supported")
    assert refuses_streaming(422, "Unknown field: Stream")
    assert not refuses_streaming(400, "bad messages")
    assert not refuses_streaming(500, "stream failed")


def test_bad_base() -> None:
    assert bad_base("https://api.example.com/v1") is None
    assert bad_base("ftp://api.example.com") is not None
    assert bad_base("not a url") is not None


def test_http_error_text() -> None:
    assert (
        http_error_text(429, ' {"error": "slow"}\n', "2")
        == 'Error: Error code: 429 - {"error": "slow"} Retry-After: 2'
    )
    assert http_error_text(500, "boom", None) == "Error: Error code: 500 - boom"


# ---------------------------------------------------------------- streamed replies


def test_stream_text_usage_and_model() -> None:
    out = parse_stream(
        sse(
            delta(role="assistant", content=""),
            delta(content="Hel"),
            delta(content="lo"),
            finish(),
            USAGE,
            "[DONE]",
        )
    )
    assert (out.error, out.text, out.finish, out.model) == ("", "Hello", "stop", "vendor/model-a")
    assert out.usage is not None
    assert (out.usage.tokens_in, out.usage.tokens_out, out.usage.reasoning, out.usage.cached) == (12, 5, 2, 8)


def test_reasoning_is_kept_apart_under_either_name() -> None:
    out = parse_stream(
        sse(
            delta(reasoning_content="think "),
            delta(reasoning="more"),
            delta(content="answer"),
            finish(),
            "[DONE]",
        )
    )
    assert (out.reasoning, out.text, out.error) == ("think more", "answer", "")


def test_tool_call_deltas_are_assembled_per_index() -> None:
    out = parse_stream(
        sse(
            delta(
                tool_calls=[
                    {"index": 0, "id": "c0", "type": "function", "function": {"name": "f", "arguments": ""}}
                ]
            ),
            delta(tool_calls=[{"index": 1, "id": "c1", "function": {"name": "g", "arguments": "{}"}}]),
            delta(tool_calls=[{"index": 0, "function": {"arguments": '{"a": '}}]),
            delta(tool_calls=[{"index": 0, "function": {"arguments": "1}"}}]),
            finish("tool_calls"),
            "[DONE]",
        )
    )
    assert out.error == "" and out.finish == "tool_calls"
    assert [(t.id, t.name, t.arguments) for t in out.tool_calls] == [
        ("c0", "f", '{"a": 1}'),
        ("c1", "g", "{}"),
    ]


def test_error_chunk_mid_stream_is_an_error() -> None:
    out = parse_stream(sse(delta(content="half"), {"error": {"message": "model crashed"}}))
    assert out.error.startswith("Error: provider error mid-stream:") and "model crashed" in out.error
    assert out.text == "half"


def test_finish_reason_error_is_an_error() -> None:
    out = parse_stream(sse(delta(content="x"), finish("error"), "[DONE]"))
    assert out.error.startswith("Error: provider error mid-stream")


def test_stream_cut_before_finish_or_done_is_an_error() -> None:
    out = parse_stream(sse(delta(content="half an ans")))
    assert out.error == "Error: client failed: stream cut before [DONE]"


def test_finish_without_done_is_accepted() -> None:
    out = parse_stream(sse(delta(content="whole"), finish()))
    assert (out.error, out.text) == ("", "whole")


def test_done_without_any_choice_is_no_choices() -> None:
    assert parse_stream(sse("[DONE]")).error == "Error: client failed: no choices"


def test_non_json_data_line_is_an_error() -> None:
    assert parse_stream(b"data: {oops\n\n").error.startswith("Error: client failed: non-JSON in stream")


def test_comments_events_and_blank_lines_are_ignored() -> None:
    raw = b": OPENROUTER PROCESSING\n\nevent: message\n" + sse(delta(content="ok"), finish(), "[DONE]")
    assert parse_stream(raw).text == "ok"


def test_data_without_space_and_crlf_lines() -> None:
    raw = (
        b'data:{"choices":[{"index":0,"delta":{"content":"a"}}]}\r\n\r\n'
        b'data:{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\r\n\r\ndata:[DONE]\r\n\r\n'
    )
    out = parse_stream(raw)
    assert (out.text, out.error) == ("a", "")


def test_lines_after_done_are_ignored() -> None:
    parser = StreamParser()
    for line in ["data: " + json.dumps(delta(content="a")), "data: [DONE]", "data: {not json"]:
        parser.feed_line(line)
    assert parser.finish().error == ""


@given(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=30))
def test_any_split_of_the_answer_reassembles(pieces: list[str]) -> None:
    out = parse_stream(sse(*[delta(content=p) for p in pieces], finish(), "[DONE]"))
    assert out.text == "".join(pieces)


# ---------------------------------------------------------------- plain JSON replies


def plain(message: dict[str, Any], finish_reason: str = "stop", **extra: Any) -> bytes:
    return json.dumps(
        {"model": "m", "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}], **extra}
    ).encode()


def test_plain_reply_with_usage_and_reasoning() -> None:
    out = parse_plain(
        plain(
            {"role": "assistant", "content": "hi", "reasoning_content": "hmm"},
            usage={"prompt_tokens": 3, "completion_tokens": 1},
        )
    )
    assert (out.text, out.reasoning, out.finish, out.error) == ("hi", "hmm", "stop", "")
    assert out.usage is not None and (out.usage.tokens_in, out.usage.tokens_out) == (3, 1)


def test_plain_reply_content_parts_and_tool_calls() -> None:
    out = parse_plain(
        plain(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            },
            "tool_calls",
        )
    )
    assert out.text == "ab" and [(t.id, t.name, t.arguments) for t in out.tool_calls] == [("c", "f", "{}")]
    assert out.usage is None


def test_a_200_with_an_error_object_is_an_error() -> None:
    out = parse_plain(b'{"error": {"message": "upstream failed", "code": 502}}')
    assert out.error.startswith("Error: provider error in a 200 reply:") and "upstream failed" in out.error


def test_plain_reply_without_choices_or_json() -> None:
    assert parse_plain(b'{"choices": []}').error == "Error: client failed: no choices"
    assert parse_plain(b"<html>gateway</html>").error.startswith(
        "Error: client failed: non-JSON reply: <html>"
    )
    assert parse_plain(b"[1]").error.startswith("Error: client failed: non-JSON reply")
