"""Gemini's native API (C-3): the request we send and the SSE chunks we read, against captured shapes."""

from __future__ import annotations

import json
from typing import Any

from services.caller.gemini_native import StreamParser, build_request, parse_plain
from tests.unit.caller.wire_fixtures import CONVERSATION, PNG, TOOLS, seat_call, sse_lines


def feed(*chunks: dict[str, Any]) -> StreamParser:
    parser = StreamParser()
    for line in sse_lines(*chunks, named=False):
        parser.feed_line(line)
    return parser


def test_request_url_headers_and_body() -> None:
    call = seat_call(
        "gemini",
        served="models/gemini-2.5-flash",
        base="https://generativelanguage.googleapis.com/v1beta",
        messages=CONVERSATION,
        options={
            "max_tokens": 256,
            "temperature": 0.3,
            "top_p": 0.9,
            "stop": ["END"],
            "tools": TOOLS,
            "tool_choice": "auto",
            "logprobs": True,
        },
    )
    req = build_request(call, "AIza-key")
    assert req.url == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
        ":streamGenerateContent?alt=sse"
    )
    assert req.headers["x-goog-api-key"] == "AIza-key" and "Authorization" not in req.headers
    body = req.body
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["generationConfig"] == {
        "temperature": 0.3,
        "topP": 0.9,
        "maxOutputTokens": 256,
        "stopSequences": ["END"],
    }
    [tools] = body["tools"]
    assert tools["functionDeclarations"][0]["parameters"] == {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
    }  # additionalProperties gone
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    user, model, results = body["contents"]
    assert user == {
        "role": "user",
        "parts": [
            {"text": "What is in these?"},
            {"inlineData": {"mimeType": "image/png", "data": PNG}},
            {"fileData": {"mimeType": "image/webp", "fileUri": "https://img.example.com/cat.webp?size=2"}},
        ],
    }
    assert model == {
        "role": "model",
        "parts": [{"text": "Let me look it up."}, {"functionCall": {"name": "lookup", "args": {"q": "cat"}}}],
    }
    assert results == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "lookup", "response": {"content": "a cat"}}},
            {"text": "And so?"},
        ],
    }


def test_no_key_no_header_and_a_forced_tool() -> None:
    options = {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "lookup"}}}
    req = build_request(seat_call("gemini", options=options), None)
    assert "x-goog-api-key" not in req.headers and "generationConfig" not in req.body
    assert req.body["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["lookup"]}
    }


def chunk(parts: list[dict[str, Any]], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, object] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "r1", **extra}


USAGE = {
    "promptTokenCount": 11,
    "candidatesTokenCount": 7,
    "totalTokenCount": 30,
    "thoughtsTokenCount": 12,
    "cachedContentTokenCount": 4,
}


def test_stream_thoughts_text_and_usage() -> None:
    parser = feed(
        chunk([{"text": "Considering.", "thought": True}], usageMetadata={"promptTokenCount": 11}),
        chunk([{"text": "A cat "}]),
        chunk([{"text": "sits."}], "STOP", usageMetadata=USAGE),
    )
    assert not parser.done  # Gemini has no end marker: the stream is read to its end
    out = parser.finish()
    assert (out.error, out.text, out.reasoning, out.finish, out.model) == (
        "",
        "A cat sits.",
        "Considering.",
        "stop",
        "gemini-2.5-flash",
    )
    assert out.usage is not None
    assert (out.usage.tokens_in, out.usage.tokens_out, out.usage.reasoning, out.usage.cached) == (
        11,
        19,
        12,
        4,
    )


def test_function_call_and_max_tokens() -> None:
    out = feed(chunk([{"functionCall": {"name": "lookup", "args": {"q": "cat"}}}], "STOP")).finish()
    assert out.finish == "tool_calls" and [(t.name, t.arguments) for t in out.tool_calls] == [
        ("lookup", '{"q": "cat"}')
    ]
    assert feed(chunk([{"text": ""}], "MAX_TOKENS")).finish().finish == "length"


def test_blocked_prompt_and_safety_finish_are_errors() -> None:
    blocked = feed({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 3}})
    assert (
        blocked.finish().error.startswith("Error: provider error mid-stream: ")
        and "SAFETY" in blocked.outcome.error
    )
    unsafe = feed(chunk([{"text": "Once"}]), chunk([], "PROHIBITED_CONTENT")).finish()
    assert "PROHIBITED_CONTENT" in unsafe.error and unsafe.finish == "error"


def test_error_object_mid_stream_and_a_cut() -> None:
    error = {"error": {"code": 500, "message": "An internal error has occurred.", "status": "INTERNAL"}}
    out = feed(chunk([{"text": "A c"}]), error).finish()
    assert out.error.startswith("Error: provider error mid-stream: ") and "INTERNAL" in out.error
    assert feed(chunk([{"text": "A c"}])).finish().error == (
        "Error: client failed: stream cut before a finishReason"
    )


def test_plain_json_array_and_error_in_200() -> None:
    raw = json.dumps([chunk([{"text": "Hi"}]), chunk([{"text": "!"}], "STOP", usageMetadata=USAGE)]).encode()
    out = parse_plain(raw)
    assert (out.text, out.error, out.finish) == ("Hi!", "", "stop")
    failed = parse_plain(b'{"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}')
    assert failed.error.startswith("Error: provider error in a 200 reply: ")
