"""Ollama /api/chat and /api/generate: request → Ask (H-G7, X-1, X-3, X-5), replies with real durations,
NDJSON streams (S-1, S-3, S-5), H-1."""

from __future__ import annotations

import base64
import re
import time
from typing import Any

import pytest

from services.gateway.ask import Ask
from services.gateway.formats.ollama import OllamaChat, OllamaGenerate
from services.gateway.panel.flatten import estimate_text
from shared.refusal import Refusal
from tests.unit.gateway.formats.streams import BENCH, PIECES, answer, ndjson, whole_stream

CHAT, GENERATE = OllamaChat(), OllamaGenerate()
CREATED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


IMAGES = {
    "image/png": b64(b"\x89PNG\r\n\x1a\n" + bytes(8)),
    "image/jpeg": b64(b"\xff\xd8\xff\xe0" + bytes(8)),
    "image/gif": b64(b"GIF89a" + bytes(8)),
    "image/webp": b64(b"RIFF\x10\x00\x00\x00WEBPVP8 "),
    "image/bmp": b64(b"BM" + bytes(12)),
}


def chat(messages: list[dict[str, Any]], **body: Any) -> Ask:
    ask = CHAT.parse({"model": "bench/core", "messages": messages, **body}, {})
    return ask


def refused(fmt: OllamaChat | OllamaGenerate, body: dict[str, Any]) -> Refusal:
    with pytest.raises(Refusal) as caught:
        fmt.parse({"model": "bench/core", **body}, {})
    assert caught.value.status == 400
    return caught.value


def test_latest_is_stripped_and_streaming_is_the_default() -> None:
    ask = CHAT.parse({"model": "bench/core:latest", "messages": [{"role": "user", "content": "Hi"}]}, {})
    assert (ask.model, ask.asked_model, ask.stream) == ("bench/core", "bench/core:latest", True)
    assert chat([{"role": "user", "content": "Hi"}], stream=False).stream is False
    assert chat([{"role": "user", "content": "Hi"}], model="bench/core:merged").model == "bench/core:merged"
    assert (
        "stream" in refused(CHAT, {"messages": [{"role": "user", "content": "Hi"}], "stream": "no"}).message
    )


@pytest.mark.parametrize(("mime", "data"), list(IMAGES.items()))
def test_images_are_sniffed_into_data_urls(mime: str, data: str) -> None:
    ask = chat([{"role": "user", "content": "What is this?", "images": [data]}])
    assert ask.messages == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}},
            ],
        }
    ]
    assert ask.images == 1


def test_unknown_image_bytes_default_to_png() -> None:
    data = b64(b"not an image at all")
    ask = chat([{"role": "user", "content": "", "images": [data]}])
    assert ask.messages[0]["content"] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}
    ]


@pytest.mark.parametrize("images", ["abc", [1], ["data:image/png;base64,AAAA"], ["not base64!"]])
def test_bad_images_are_refused(images: Any) -> None:
    assert (
        "images" in refused(CHAT, {"messages": [{"role": "user", "content": "x", "images": images}]}).message
    )


def test_tool_calls_are_numbered_and_results_matched_by_name() -> None:
    ask = chat(
        [
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "weather", "arguments": {"city": "Paris"}}},
                    {"function": {"name": "time", "arguments": {}}},
                    {"function": {"name": "weather", "arguments": {"city": "Rome"}}},
                ],
            },
            {"role": "tool", "tool_name": "weather", "content": "sunny"},
            {"role": "tool", "tool_name": "weather", "content": "rain"},
            {"role": "tool", "content": "noon"},
        ]
    )
    calls = ask.messages[1]["tool_calls"]
    assert ask.messages[1]["content"] is None
    assert [c["id"] for c in calls] == ["call_0", "call_1", "call_2"]
    assert calls[0]["function"] == {"name": "weather", "arguments": '{"city": "Paris"}'}
    assert ask.messages[2:] == [
        {"role": "tool", "tool_call_id": "call_0", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": "rain"},
        {"role": "tool", "tool_call_id": "call_1", "content": "noon"},
    ]
    assert ask.agentic == "tool calls (a message with tool_calls)"
    assert chat([{"role": "tool", "content": "x"}]).agentic == "tool results (a message with role tool)"


def test_tools_options_and_format() -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    ask = chat(
        [{"role": "user", "content": "Hi"}],
        tools=[tool],
        format="json",
        keep_alive="5m",
        options={"num_predict": 9, "temperature": 0.5, "top_p": 0.8, "stop": ["x"], "num_ctx": 4096},
    )
    assert ask.agentic == "tools"
    assert ask.route_fields == {
        "tools": [tool],
        "max_tokens": 9,
        "temperature": 0.5,
        "top_p": 0.8,
        "stop": ["x"],
        "response_format": {"type": "json_object"},
    }
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    shaped = chat([{"role": "user", "content": "Hi"}], format=schema)
    assert shaped.route_fields["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "response", "schema": schema},
    }
    assert chat([{"role": "user", "content": "Hi"}], tools=[]).agentic == ""


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"messages": [{"role": "function", "content": "x"}]}, "role"),
        (
            {"messages": [{"role": "user", "content": "x", "tool_calls": [{"function": {"name": "f"}}]}]},
            "tool_calls",
        ),
        ({"messages": [{"role": "user", "content": ["x"]}]}, "content"),
        ({"messages": []}, "empty"),
        ({"messages": "hi"}, "messages"),
        ({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "web_search"}]}, "tools"),
        ({"messages": [{"role": "user", "content": "x"}], "tools": {"type": "function"}}, "tools"),
    ],
)
def test_chat_refusals(body: dict[str, Any], words: str) -> None:
    assert words in refused(CHAT, body).message


def test_generate_prompt_system_and_images() -> None:
    ask = GENERATE.parse(
        {
            "model": "bench/core:latest",
            "prompt": "Describe",
            "system": "Be brief.",
            "images": [IMAGES["image/jpeg"]],
            "stream": False,
            "raw": False,
        },
        {},
    )
    assert ask.messages == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Describe"},
                {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{IMAGES['image/jpeg']}"}},
            ],
        },
    ]
    assert (ask.model, ask.stream, ask.agentic) == ("bench/core", False, "")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"prompt": "Hi", "context": [1, 2, 3]}, "/api/chat"),
        ({}, "prompt"),
        ({"prompt": ""}, "empty"),
        ({"prompt": "Hi", "system": 3}, "system"),
    ],
)
def test_generate_refusals(body: dict[str, Any], words: str) -> None:
    assert words in refused(GENERATE, body).message


def test_chat_reply_carries_real_durations_counts_and_bench() -> None:
    before = time.monotonic_ns()
    ask = chat([{"role": "user", "content": "Why?"}], model="bench/core:latest", stream=False)
    body = CHAT.reply(ask, answer("Because.")).body
    elapsed = time.monotonic_ns() - before
    assert body["model"] == "bench/core:latest"
    assert CREATED.match(body["created_at"])
    assert body["message"] == {"role": "assistant", "content": "Because."}
    assert (body["done"], body["done_reason"], body["load_duration"], body["prompt_eval_duration"]) == (
        True,
        "stop",
        0,
        0,
    )
    assert 0 < body["total_duration"] <= elapsed and 0 < body["eval_duration"] <= elapsed
    assert (body["prompt_eval_count"], body["eval_count"]) == (ask.estimate, estimate_text("Because."))
    assert body["bench"] == BENCH


def test_generate_reply_answers_in_response() -> None:
    ask = GENERATE.parse({"model": "bench/core", "prompt": "Why?"}, {})
    body = GENERATE.reply(ask, answer("Because.")).body
    assert body["response"] == "Because." and "message" not in body and body["done"] is True


@pytest.mark.parametrize(("fmt", "key"), [(CHAT, "message"), (GENERATE, "response")])
def test_stream_is_ndjson_lines_then_a_done_line_with_bench(
    fmt: OllamaChat | OllamaGenerate, key: str
) -> None:
    body = {"messages": [{"role": "user", "content": "Why?"}]} if key == "message" else {"prompt": "Why?"}
    ask = fmt.parse({"model": "bench/core:latest", **body}, {})
    assert fmt.encoder(ask, "bench/core").media_type == "application/x-ndjson"
    lines = ndjson(whole_stream(fmt, ask, keepalive=True))
    assert all(line["model"] == "bench/core:latest" and CREATED.match(line["created_at"]) for line in lines)
    texts = [line[key]["content"] if key == "message" else line[key] for line in lines]
    assert texts[0] == "" and lines[0]["done"] is False  # the keep-alive
    assert "".join(texts) == "".join(PIECES)
    assert all(line["done"] is False and "bench" not in line for line in lines[:-1])
    last = lines[-1]
    assert texts[-1] == "" and last["done"] is True and last["done_reason"] == "stop"
    assert last["total_duration"] > 0 and last["eval_duration"] > 0
    assert (last["prompt_eval_count"], last["eval_count"]) == (ask.estimate, estimate_text("".join(PIECES)))
    assert last["bench"] == BENCH


def test_stream_error_is_an_error_line() -> None:
    encoder = CHAT.encoder(chat([{"role": "user", "content": "Why?"}]), "bench/core")
    lines = ndjson(encoder.start() + encoder.piece("Bench\n") + encoder.error(500, "the panel failed"))
    assert lines[-1] == {"error": "the panel failed"}


def test_error_body_and_routes() -> None:
    assert CHAT.error_body(404, "model not found") == {"error": "model not found"}
    assert (CHAT.routes, GENERATE.routes) == (("/api/chat",), ("/api/generate",))
