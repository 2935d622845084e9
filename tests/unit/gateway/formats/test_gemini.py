"""Gemini generateContent: path and body → Ask (H-G9, X-1..X-5), the reply and its X-Bench headers, SSE and
JSON-array streams (S-1, S-3, S-5), H-1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.gateway.ask import Ask
from services.gateway.formats.gemini import Gemini, target
from services.gateway.panel.flatten import estimate_text
from shared.refusal import Refusal
from tests.unit.gateway.formats.streams import BENCH, PANEL, PIECES, answer, sse_events, whole_stream

FMT = Gemini()
GENERATE = {"target": "bench/core:generateContent"}
B64 = "iVBORw0KGgoAAAANSUhEUgAA"


def parse(contents: Any, params: dict[str, str] = GENERATE, **body: Any) -> Ask:
    ask = FMT.parse({"contents": contents, **body}, params)
    return ask


def refused(contents: Any, status: int = 400, params: dict[str, str] = GENERATE, **body: Any) -> Refusal:
    with pytest.raises(Refusal) as caught:
        FMT.parse({"contents": contents, **body}, params)
    assert caught.value.status == status
    return caught.value


def text(role: str, *texts: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": t} for t in texts]}


@pytest.mark.parametrize(
    ("path", "model", "method"),
    [
        ("bench/core:generateContent", "bench/core", "generateContent"),
        ("bench%2Fcore:streamGenerateContent", "bench/core", "streamGenerateContent"),
        ("bench%2Fcore%3Amerged%3AgenerateContent", "bench/core:merged", "generateContent"),
        ("bench/c:route:generateContent", "bench/c:route", "generateContent"),
        ("bench/core:countTokens", "bench/core", "countTokens"),
    ],
)
def test_the_last_colon_separates_the_method(path: str, model: str, method: str) -> None:
    assert target({"target": path}) == (model, method)


@pytest.mark.parametrize("path", ["bench/core:embedContent", "bench/core", "bench/core:", ":generateContent"])
def test_other_methods_are_not_found(path: str) -> None:
    message = refused([text("user", "Hi")], 404, {"target": path}).message
    assert "generateContent" in message and "streamGenerateContent" in message


def test_count_tokens_is_not_a_generation() -> None:
    refused([text("user", "Hi")], 404, {"target": "bench/core:countTokens"})


def test_method_decides_streaming_and_alt_decides_the_stream_form() -> None:
    plain = parse([text("user", "Hi")])
    assert (plain.model, plain.asked_model, plain.stream) == ("bench/core", "bench/core", False)
    streamed = parse([text("user", "Hi")], {"target": "bench/core:streamGenerateContent", "alt": "sse"})
    assert (streamed.stream, streamed.event_stream) == (True, True)
    array = parse([text("user", "Hi")], {"target": "bench/core:streamGenerateContent"})
    assert (array.stream, array.event_stream) == (True, False)


def test_contents_roles_and_system_instruction_in_both_spellings() -> None:
    ask = parse(
        [text("user", "Hi", "there"), text("model", "Hello"), {"parts": [{"text": "Why?"}]}],
        systemInstruction={"parts": [{"text": "Be brief."}, {"text": "Cite."}]},
    )
    assert ask.messages == [
        {"role": "system", "content": "Be brief.\n\nCite."},
        {"role": "user", "content": "Hi\n\nthere"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Why?"},
    ]
    single = parse(text("user", "Hi"), system_instruction="Be brief.")
    assert single.messages == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]


def test_thought_parts_are_skipped() -> None:
    ask = parse(
        [
            text("user", "Hi"),
            {
                "role": "model",
                "parts": [
                    {"text": "thinking…", "thought": True},
                    {"thoughtSignature": "c2ln"},
                    {"thought_signature": "c2ln", "thought": True},
                    {"text": "Hello", "thoughtSignature": "c2ln"},
                ],
            },
        ]
    )
    assert ask.messages[1] == {"role": "assistant", "content": "Hello"}


def test_inline_data_and_http_file_data_become_image_url_parts() -> None:
    ask = parse(
        [
            {
                "role": "user",
                "parts": [
                    {"text": "Compare"},
                    {"inlineData": {"mimeType": "image/png", "data": B64}},
                    {"inline_data": {"mime_type": "image/jpeg", "data": "ab-_"}},
                    {"fileData": {"mimeType": "image/png", "fileUri": "https://x.io/a.png"}},
                    {"file_data": {"file_uri": "http://x.io/b"}},
                ],
            }
        ]
    )
    assert ask.messages == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Compare"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,ab+/"}},
                {"type": "image_url", "image_url": {"url": "https://x.io/a.png"}},
                {"type": "image_url", "image_url": {"url": "http://x.io/b"}},
            ],
        }
    ]
    assert ask.images == 4


def test_function_calls_and_responses_translate_with_numbered_ids() -> None:
    ask = parse(
        [
            text("user", "Weather?"),
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "weather", "args": {"city": "Paris"}}},
                    {"function_call": {"name": "weather", "args": {"city": "Rome"}}},
                ],
            },
            {
                "role": "function",
                "parts": [
                    {"functionResponse": {"name": "weather", "response": {"t": 21}}},
                    {"function_response": {"name": "weather", "response": {"t": 25}}},
                ],
            },
        ]
    )
    calls = ask.messages[1]["tool_calls"]
    assert ask.messages[1]["content"] is None
    assert [(c["id"], c["function"]["arguments"]) for c in calls] == [
        ("call_0", '{"city": "Paris"}'),
        ("call_1", '{"city": "Rome"}'),
    ]
    assert ask.messages[2:] == [
        {"role": "tool", "tool_call_id": "call_0", "content": '{"t": 21}'},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"t": 25}'},
    ]
    assert ask.agentic == "tool calls (a functionCall part)"
    results = parse(
        [{"role": "user", "parts": [{"functionResponse": {"name": "f", "id": "abc", "response": {}}}]}]
    )
    assert results.messages == [{"role": "tool", "tool_call_id": "abc", "content": "{}"}]
    assert results.agentic == "tool results (a functionResponse part)"


def test_function_declarations_make_an_agents_turn_and_translate_for_route_mode() -> None:
    ask = parse(
        [text("user", "Hi")],
        tools=[
            {
                "functionDeclarations": [
                    {
                        "name": "weather",
                        "description": "Weather now",
                        "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}},
                    },
                    {"name": "time", "parametersJsonSchema": {"type": "object", "properties": {}}},
                ]
            }
        ],
        toolConfig={"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["time"]}},
        generationConfig={
            "maxOutputTokens": 10,
            "temperature": 0.3,
            "topP": 0.9,
            "stopSequences": ["x"],
            "responseMimeType": "application/json",
        },
    )
    assert ask.agentic == "tools"
    assert ask.route_fields == {
        "max_tokens": 10,
        "temperature": 0.3,
        "top_p": 0.9,
        "stop": ["x"],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "description": "Weather now",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            },
            {
                "type": "function",
                "function": {"name": "time", "parameters": {"type": "object", "properties": {}}},
            },
        ],
        "tool_choice": {"type": "function", "function": {"name": "time"}},
        "response_format": {"type": "json_object"},
    }


def test_snake_case_config_and_json_schema_output() -> None:
    ask = parse(
        [text("user", "Hi")],
        tool_config={"function_calling_config": {"mode": "NONE"}},
        generation_config={
            "max_output_tokens": 5,
            "response_mime_type": "application/json",
            "response_schema": {"type": "OBJECT"},
        },
    )
    assert ask.route_fields == {
        "max_tokens": 5,
        "tool_choice": "none",
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "response", "schema": {"type": "object"}},
        },
    }


@pytest.mark.parametrize("tools", [[], [{"functionDeclarations": []}]])
def test_no_declarations_is_no_tools(tools: list[Any]) -> None:
    assert parse([text("user", "Hi")], tools=tools).agentic == ""


@pytest.mark.parametrize(
    "tool",
    [
        {"googleSearch": {}},
        {"google_search": {}},
        {"codeExecution": {}},
        {"urlContext": {}},
        {"functionDeclarations": [], "googleSearch": {}},
    ],
)
def test_google_hosted_tools_are_refused_in_every_mode(tool: dict[str, Any]) -> None:
    params = {"target": "bench/core:route:generateContent"}
    assert "only Google can run" in refused([text("user", "Hi")], params=params, tools=[tool]).message


@pytest.mark.parametrize(
    ("contents", "words"),
    [
        ([text("system", "x")], "role"),
        (
            [{"role": "user", "parts": [{"fileData": {"mimeType": "image/png", "fileUri": "files/abc"}}]}],
            "Files API",
        ),
        ([{"role": "user", "parts": [{"fileData": {"fileUri": "gs://bucket/a.png"}}]}], "http(s)"),
        (
            [
                {
                    "role": "user",
                    "parts": [{"fileData": {"mimeType": "application/pdf", "fileUri": "https://x/a"}}],
                }
            ],
            "pdf",
        ),
        (
            [{"role": "user", "parts": [{"inlineData": {"mimeType": "audio/wav", "data": "AAAA"}}]}],
            "audio/wav",
        ),
        ([{"role": "user", "parts": [{"functionCall": {"name": "f"}}]}], "model turns"),
        (
            [{"role": "model", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}],
            "user or function",
        ),
        ([{"role": "model", "parts": [{"executableCode": {"code": "print(1)"}}]}], "code execution"),
        ([{"role": "user", "parts": [{"codeExecutionResult": {"output": "1"}}]}], "code execution"),
        ([{"role": "user", "parts": [{"video": "x"}]}], "unknown part"),
        ([{"role": "user", "parts": [{"text": 3}]}], "text"),
        ([{"role": "user", "parts": "Hi"}], "parts"),
        ([], "empty"),
        ("Hi", "contents"),
    ],
)
def test_refusals(contents: Any, words: str) -> None:
    assert words in refused(contents).message


def test_reply_has_no_bench_and_names_the_panel_in_headers() -> None:
    ask = parse([text("user", "Why?")], {"target": "bench%2Fcore%3Amerged:generateContent"})
    merged = {**BENCH, "merger": {"call": f"{PANEL}.merger", "alias": "m3", "status": "ok"}}
    reply = FMT.reply(ask, answer("Because.", merged))
    assert set(reply.body) == {"candidates", "modelVersion", "responseId", "usageMetadata"}
    assert PANEL not in json.dumps(reply.body)
    assert reply.body["candidates"] == [
        {"content": {"role": "model", "parts": [{"text": "Because."}]}, "index": 0, "finishReason": "STOP"}
    ]
    assert reply.body["modelVersion"] == "bench/core:merged" and reply.body["responseId"]
    out = estimate_text("Because.")
    assert reply.body["usageMetadata"] == {
        "promptTokenCount": ask.estimate,
        "candidatesTokenCount": out,
        "totalTokenCount": ask.estimate + out,
    }
    assert reply.headers["X-Bench-Panel"] == PANEL
    assert json.loads(reply.headers["X-Bench-Seats"]) == [
        {"call": f"{PANEL}.member1", "seat": "member", "alias": "m1", "status": "ok"},
        {"call": f"{PANEL}.explorer", "seat": "explorer", "alias": "m9", "status": "error"},
        {"call": f"{PANEL}.merger", "seat": "merger", "alias": "m3", "status": "ok"},
    ]
    reply.headers["X-Bench-Seats"].encode("latin-1")  # a header value must be encodable


def check_chunks(chunks: list[dict[str, Any]], ask: Ask) -> None:
    assert all(
        c["modelVersion"] == "bench/core" and c["responseId"] == chunks[0]["responseId"] for c in chunks
    )
    texts = [c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks]
    assert texts[0] == ""  # the keep-alive
    assert "".join(texts) == "".join(PIECES)
    assert all("finishReason" not in c["candidates"][0] and "usageMetadata" not in c for c in chunks[:-1])
    last = chunks[-1]
    assert texts[-1] == "" and last["candidates"][0]["finishReason"] == "STOP"
    out = estimate_text("".join(PIECES))
    assert last["usageMetadata"] == {
        "promptTokenCount": ask.estimate,
        "candidatesTokenCount": out,
        "totalTokenCount": ask.estimate + out,
    }


def test_sse_stream_with_alt_sse() -> None:
    ask = parse([text("user", "Why?")], {"target": "bench/core:streamGenerateContent", "alt": "sse"})
    assert FMT.encoder(ask, "bench/core").media_type == "text/event-stream"
    raw = whole_stream(FMT, ask, keepalive=True)
    assert b"bench" not in raw.replace(b"bench/core", b"")
    events = sse_events(raw)
    assert all(name is None for name, _ in events)
    check_chunks([data for _, data in events], ask)


def test_json_array_stream_without_alt() -> None:
    ask = parse([text("user", "Why?")], {"target": "bench/core:streamGenerateContent"})
    assert FMT.encoder(ask, "bench/core").media_type == "application/json"
    raw = whole_stream(FMT, ask, keepalive=True)
    assert raw.startswith(b"[{") and raw.endswith(b"}]")
    assert raw.count(b",\r\n{") == len(PIECES) + 1
    assert b"bench" not in raw.replace(b"bench/core", b"")
    check_chunks(json.loads(raw), ask)


def test_stream_errors_are_the_last_element() -> None:
    sse_ask = parse([text("user", "Why?")], {"target": "bench/core:streamGenerateContent", "alt": "sse"})
    encoder = FMT.encoder(sse_ask, "bench/core")
    events = sse_events(encoder.start() + encoder.piece("Bench\n") + encoder.error(500, "the panel failed"))
    assert events[-1] == (None, {"error": {"code": 500, "message": "the panel failed", "status": "INTERNAL"}})
    array_ask = parse([text("user", "Why?")], {"target": "bench/core:streamGenerateContent"})
    encoder = FMT.encoder(array_ask, "bench/core")
    elements = json.loads(encoder.start() + encoder.piece("Bench\n") + encoder.error(503, "nothing seatable"))
    assert elements[-1] == {"error": {"code": 503, "message": "nothing seatable", "status": "UNAVAILABLE"}}
    encoder = FMT.encoder(array_ask, "bench/core")
    assert json.loads(encoder.start() + encoder.error(500, "x")) == [
        {"error": {"code": 500, "message": "x", "status": "INTERNAL"}}
    ]


@pytest.mark.parametrize(
    ("status", "name"),
    [
        (400, "INVALID_ARGUMENT"),
        (413, "INVALID_ARGUMENT"),
        (415, "INVALID_ARGUMENT"),
        (401, "UNAUTHENTICATED"),
        (403, "PERMISSION_DENIED"),
        (404, "NOT_FOUND"),
        (429, "RESOURCE_EXHAUSTED"),
        (503, "UNAVAILABLE"),
        (500, "INTERNAL"),
        (501, "INTERNAL"),
    ],
)
def test_error_body_statuses(status: int, name: str) -> None:
    assert FMT.error_body(status, "why") == {"error": {"code": status, "message": "why", "status": name}}


@pytest.mark.parametrize("role", [{}, [], 0, False, "assistant"])
def test_a_role_that_is_no_gemini_role_is_refused_and_none_is_the_users(role: Any) -> None:
    """Issue 24: `{}` or `0` was read as no role (the user's); only a missing or empty role is."""
    refusal = refused([{"role": role, "parts": [{"text": "hi"}]}])
    assert "role must be user, model or function" in refusal.message
    for none in (None, ""):
        ask = parse([{"role": none, "parts": [{"text": "hi"}]}])
        assert ask.messages[-1]["role"] == "user"
