"""Anthropic Messages: request → Ask (H-G5, X-1..X-5), the message (H-G5), the event stream (S-5), H-1."""

from __future__ import annotations

from typing import Any

import pytest

from services.gateway.ask import Ask
from services.gateway.formats.anthropic import Anthropic
from services.gateway.panel.flatten import estimate_text
from shared.refusal import Refusal
from tests.unit.gateway.formats.streams import BENCH, PIECES, answer, sse_events, whole_stream

FMT = Anthropic()
B64 = "iVBORw0KGgoAAAANSUhEUgAA"
PNG_URL = f"data:image/png;base64,{B64}"


def image(media_type: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": B64}}


def parse(messages: list[dict[str, Any]], **body: Any) -> Ask:
    ask = FMT.parse({"model": "bench/core", "max_tokens": 100, "messages": messages, **body}, {})
    return ask


def refused(messages: list[dict[str, Any]], **body: Any) -> Refusal:
    with pytest.raises(Refusal) as caught:
        parse(messages, **body)
    assert caught.value.status == 400
    return caught.value


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def test_system_blocks_and_text_blocks_collapse() -> None:
    ask = parse(
        [user([{"type": "text", "text": "Hi"}, {"type": "text", "text": "there", "cache_control": {}}])],
        system=[{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Cite."}],
    )
    assert ask.messages == [
        {"role": "system", "content": "Be brief.\n\nCite."},
        {"role": "user", "content": "Hi\n\nthere"},
    ]
    assert (ask.system, ask.prompt, ask.agentic) == ("Be brief.\n\nCite.", "Hi\n\nthere", "")


def test_images_become_image_url_parts() -> None:
    ask = parse(
        [
            user(
                [
                    {"type": "text", "text": "Compare"},
                    image(),
                    {"type": "image", "source": {"type": "url", "url": "https://x.io/b.jpg"}},
                ]
            )
        ]
    )
    assert ask.messages == [
        user(
            [
                {"type": "text", "text": "Compare"},
                {"type": "image_url", "image_url": {"url": PNG_URL}},
                {"type": "image_url", "image_url": {"url": "https://x.io/b.jpg"}},
            ]
        )
    ]
    assert ask.images == 2


def test_thinking_blocks_are_skipped_and_sampling_read_past() -> None:
    ask = parse(
        [
            user("Why?"),
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "s"},
                    {"type": "redacted_thinking", "data": "x"},
                    {"type": "text", "text": "Because."},
                ],
            },
            user("Sure?"),
        ],
        temperature=0.2,
        top_p=0.9,
        top_k=5,
        stop_sequences=["X"],
        metadata={"user_id": "u"},
        thinking={"type": "enabled", "budget_tokens": 1024},
        service_tier="auto",
    )
    assert ask.messages[1] == {"role": "assistant", "content": "Because."}
    assert ask.route_fields == {"max_tokens": 100, "temperature": 0.2, "top_p": 0.9, "stop": ["X"]}


def test_tool_use_and_tool_result_translate_to_openai_tool_messages() -> None:
    ask = parse(
        [
            user("What is in a.txt?"),
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "shot", "input": {}},
                ],
            },
            user(
                [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "hello"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "is_error": True,
                        "content": [{"type": "text", "text": "no screen"}, image("image/jpeg")],
                    },
                    {"type": "text", "text": "Go on."},
                ]
            ),
        ]
    )
    assert ask.messages[1] == {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [
            {
                "id": "toolu_1",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
            },
            {"id": "toolu_2", "type": "function", "function": {"name": "shot", "arguments": "{}"}},
        ],
    }
    assert ask.messages[2:] == [
        {"role": "tool", "tool_call_id": "toolu_1", "content": "hello"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "Error: no screen"},
        user(
            [
                {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{B64}"}},
                {"type": "text", "text": "Go on."},
            ]
        ),
    ]
    assert ask.agentic == "tool calls (a tool_use block)"


def test_a_tool_result_alone_is_an_agents_turn() -> None:
    ask = parse([user([{"type": "tool_result", "tool_use_id": "t", "content": "ok"}])])
    assert ask.messages == [{"role": "tool", "tool_call_id": "t", "content": "ok"}]
    assert ask.agentic == "tool results (a tool_result block)"


def test_client_tools_make_an_agents_turn_and_translate_for_route_mode() -> None:
    ask = parse(
        [user("hi")],
        tools=[
            {"name": "read", "description": "Read a file", "input_schema": {"type": "object"}},
            {"type": "custom", "name": "write", "input_schema": {"type": "object"}},
        ],
        tool_choice={"type": "any", "disable_parallel_tool_use": True},
    )
    assert ask.agentic == "tools"
    assert ask.route_fields["tools"][0] == {
        "type": "function",
        "function": {"name": "read", "description": "Read a file", "parameters": {"type": "object"}},
    }
    assert ask.route_fields["tool_choice"] == "required"
    assert ask.route_fields["parallel_tool_calls"] is False
    named = parse([user("hi")], tools=[{"name": "read"}], tool_choice={"type": "tool", "name": "read"})
    assert named.route_fields["tool_choice"] == {"type": "function", "function": {"name": "read"}}


def test_an_empty_tools_list_is_no_tools() -> None:
    assert parse([user("hi")], tools=[]).agentic == ""


@pytest.mark.parametrize("mode", [None, "route", "all"])
def test_server_tools_are_refused_in_every_mode(mode: str | None) -> None:
    extra = {"bench": {"reply": mode}} if mode else {}
    message = refused(
        [user("hi")], tools=[{"type": "web_search_20250305", "name": "web_search"}], **extra
    ).message
    assert "web_search_20250305" in message and "server tool" in message


@pytest.mark.parametrize(
    "kind", ["server_tool_use", "web_search_tool_result", "mcp_tool_use", "mcp_tool_result"]
)
def test_server_tool_blocks_are_refused(kind: str) -> None:
    message = refused([user("hi"), {"role": "assistant", "content": [{"type": kind, "id": "x"}]}]).message
    assert kind in message and "server tool" in message


@pytest.mark.parametrize(
    ("messages", "words"),
    [
        ([{"role": "tool", "content": "x"}], "role"),
        (
            [user([{"type": "document", "source": {"type": "base64", "media_type": "application/pdf"}}])],
            "document",
        ),
        ([user([image("application/pdf")])], "application/pdf"),
        ([user([{"type": "image", "source": {"type": "file", "file_id": "file_1"}}])], "base64 or url"),
        ([user([{"type": "image", "source": {"type": "url", "url": "file:///etc/passwd"}}])], "image"),
        ([user([{"type": "tool_use", "id": "t", "name": "f", "input": {}}])], "assistant messages"),
        ([{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]}], "user messages"),
        (
            [user([{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "document"}]}])],
            "document",
        ),
        ([user(7)], "content"),
        ([], "empty"),
    ],
)
def test_refusals(messages: list[dict[str, Any]], words: str) -> None:
    assert words in refused(messages).message


def test_system_must_be_text() -> None:
    assert "system" in refused([user("hi")], system=[{"type": "image"}]).message


def test_reply_is_an_anthropic_message() -> None:
    ask = parse([user("Why?")], model="bench/core:merged")
    body = FMT.reply(ask, answer("Because.")).body
    assert body["id"].startswith("msg_")
    assert (body["type"], body["role"], body["model"]) == ("message", "assistant", "bench/core:merged")
    assert body["content"] == [{"type": "text", "text": "Because."}]
    assert (body["stop_reason"], body["stop_sequence"]) == ("end_turn", None)
    assert body["usage"] == {"input_tokens": ask.estimate, "output_tokens": estimate_text("Because.")}
    assert body["bench"] == BENCH


def test_stream_is_one_text_block_with_bench_on_message_delta() -> None:
    ask = parse([user("Why?")], stream=True)
    events = sse_events(whole_stream(FMT, ask, keepalive=True))
    assert all(name == data["type"] for name, data in events)
    names = [name for name, _ in events]
    assert names == [
        "message_start",
        "content_block_start",
        "ping",
        *["content_block_delta"] * len(PIECES),
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[0][1]["message"]
    assert start["content"] == [] and start["usage"] == {"input_tokens": ask.estimate, "output_tokens": 0}
    assert start["model"] == "bench/core" and start["stop_reason"] is None
    assert events[1][1] == {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    deltas = [data for name, data in events if name == "content_block_delta"]
    assert all(d["index"] == 0 and d["delta"]["type"] == "text_delta" for d in deltas)
    assert "".join(d["delta"]["text"] for d in deltas) == "".join(PIECES)
    delta = events[-2][1]
    assert delta["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert delta["usage"] == {"output_tokens": estimate_text("".join(PIECES))}
    assert delta["bench"] == BENCH


def test_stream_error_is_an_error_event() -> None:
    encoder = FMT.encoder(parse([user("Why?")]), "bench/core")
    events = sse_events(encoder.start() + encoder.error(503, "nothing seatable"))
    assert events[-1] == (
        "error",
        {"type": "error", "error": {"type": "overloaded_error", "message": "nothing seatable"}},
    )


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
        (429, "rate_limit_error"),
        (503, "overloaded_error"),
        (500, "api_error"),
        (415, "api_error"),
        (501, "api_error"),
    ],
)
def test_error_body_types_by_status(status: int, kind: str) -> None:
    assert FMT.error_body(status, "why") == {"type": "error", "error": {"type": kind, "message": "why"}}


def test_a_mid_conversation_system_message_is_kept_in_place() -> None:
    """Claude Code sends one as messages[1] (a beta it always enables): it is system text, not a refusal."""
    ask = Anthropic().parse({"model": "bench/core", "max_tokens": 10, "messages": [
        user("first"), {"role": "system", "content": [{"type": "text", "text": "Agent types: …"}]},
        user("second")]}, {})
    assert [m["role"] for m in ask.messages] == ["user", "system", "user"]
    assert ask.messages[1]["content"] == "Agent types: …"
