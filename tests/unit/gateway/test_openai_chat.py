"""OpenAI chat completions: request → Ask, refusals (X-1, X-3, H-2), the reply JSON (H-G2), chunks (S-5)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from services.gateway.formats import OPENAI_CHAT
from services.gateway.formats.base import Answer
from shared.refusal import Refusal

PNG = "data:image/png;base64," + "A" * 400


def body(**extra: Any) -> dict[str, Any]:
    return {"model": "bench/core", "messages": [{"role": "user", "content": "Why is the sky blue?"}], **extra}


def refused(payload: dict[str, Any]) -> Refusal:
    with pytest.raises(Refusal) as caught:
        OPENAI_CHAT.parse(payload, {})
    return caught.value


def test_plain_request_becomes_an_ask() -> None:
    ask = OPENAI_CHAT.parse(body(), {})
    assert ask.model == "bench/core"
    assert ask.prompt == "Why is the sky blue?"
    assert ask.system == ""
    assert ask.images == 0
    assert ask.stream is False
    assert ask.agentic == ""
    assert ask.reply is None
    assert ask.with_ == []


def test_system_developer_and_several_turns_flatten() -> None:
    ask = OPENAI_CHAT.parse(
        {
            "model": "core",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "developer", "content": [{"type": "text", "text": "Cite sources."}]},
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello"},
                {"role": "user", "content": "Why?"},
            ],
        },
        {},
    )
    assert ask.system == "Be brief.\n\nCite sources."
    assert ask.prompt == "user: Hi\n\nassistant: Hello\n\nuser: Why?"


def test_sampling_options_are_read_past() -> None:
    plain = OPENAI_CHAT.parse(body(), {})
    tuned = OPENAI_CHAT.parse(
        body(
            max_tokens=5,
            max_completion_tokens=5,
            temperature=0.1,
            top_p=0.2,
            stop=["x"],
            stream_options={"include_usage": True},
        ),
        {},
    )
    assert (tuned.messages, tuned.system, tuned.prompt) == (plain.messages, plain.system, plain.prompt)


def test_with_and_bench_reply_are_read() -> None:
    ask = OPENAI_CHAT.parse(
        body(**{"with": ["m-a", "m-b"], "bench": {"reply": "merged"}, "stream": True}), {}
    )
    assert ask.with_ == ["m-a", "m-b"]
    assert ask.reply == "merged"
    assert ask.stream is True


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"model": 5}, '"model" must be a string'),
        ({"with": "m-a"}, '"with" must be a list'),
        ({"with": ["m-a", 3]}, '"with" must be a list'),
        ({"bench": "merged"}, '"bench" must be an object'),
        ({"bench": {"reply": "both"}}, '"bench.reply" must be one of all, merged, route'),
        ({"stream": "yes"}, '"stream" must be true or false'),
        ({"functions": [{"name": "f"}]}, 'send "tools" instead'),
        ({"function_call": "auto"}, 'send "tools" instead'),
        ({"tools": {"type": "function"}}, '"tools" must be a list'),
    ],
)
def test_body_fields_of_the_wrong_kind_are_refused(extra: dict[str, Any], says: str) -> None:
    refusal = refused(body(**extra))
    assert refusal.status == 400
    assert says in refusal.message


@pytest.mark.parametrize(
    ("messages", "says"),
    [
        ("hello", '"messages" must be a list of message objects'),
        (["hello"], '"messages" must be a list of message objects'),
        (None, '"messages" must be a list of message objects'),
        ([], "nothing to ask"),
        ([{"role": "function", "name": "f", "content": "{}"}], 'send "tools" instead'),
        ([{"role": "robot", "content": "x"}], "role must be one of"),
        ([{"role": "user", "content": 5}], "content must be a string or a list"),
        ([{"role": "user", "content": ["text"]}], "content must be a string or a list"),
        (
            [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}],
            '"input_audio" are not',
        ),
    ],
)
def test_messages_that_are_not_chat_messages_are_refused(messages: Any, says: str) -> None:
    refusal = refused(body(messages=messages))
    assert refusal.status == 400
    assert says in refusal.message


@pytest.mark.parametrize("kind", ["image", "input_image"])
def test_image_parts_of_another_api_are_refused(kind: str) -> None:
    part = {"type": kind, "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    refusal = refused(body(messages=[{"role": "user", "content": [part]}]))
    assert refusal.status == 400
    assert "another API's image shape" in refusal.message


@pytest.mark.parametrize(
    ("url", "got"),
    [
        ("file:///etc/passwd", "a file: URL"),
        ("data:text/plain;base64,aGk=", 'a data URL of type "text/plain" (base64 image data is needed)'),
        ("", "no URL"),
        ("ftp://x/y.png", "a ftp: URL"),
        (None, "no URL"),
        ("https://?secret=1", "an http(s) URL without a host"),
        ("just words with a secret", "text that is not a URL"),
    ],
)
def test_bad_image_urls_are_refused_without_repeating_them(url: Any, got: str) -> None:
    """P-6; SEC-7: the refusal says what kind of URL it was, never its data, host or query."""
    part = {"type": "image_url", "image_url": {"url": url}}
    refusal = refused(body(messages=[{"role": "user", "content": [{"type": "text", "text": "see"}, part]}]))
    assert refusal.status == 400
    assert refusal.message == (
        f"an image must be an http(s) URL or a data:image/<type>;base64, URL (got {got})"
    )


@pytest.mark.parametrize("url", ["http://[::1", "https://h:port-9/x.png", "http://x.test:99999999/a.png"])
def test_image_urls_whose_host_or_port_cannot_be_read_are_400_not_500(url: str) -> None:
    """Found by the API contract run (issue 24): the placeholder could not be written for these."""
    part = {"type": "image_url", "image_url": {"url": url}}
    refusal = refused(body(messages=[{"role": "user", "content": [part]}]))
    assert refusal.status == 400 and "host or port cannot be read" in refusal.message
    assert url not in refusal.message


def test_images_are_counted_and_shown_as_placeholders() -> None:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image_url", "image_url": {"url": PNG}},
                {"type": "image_url", "image_url": "https://user:pw@img.example.com/a.png?sig=secret"},
            ],
        }
    ]
    ask = OPENAI_CHAT.parse(body(messages=messages), {})
    assert ask.images == 2
    assert ask.messages == messages  # seats with images get the messages as sent
    assert (
        ask.prompt
        == "What is in these?\n\n[image: data URL, 1 KB]\n\n[image: https://img.example.com/a.png?...]"
    )
    assert "secret" not in ask.prompt and "pw" not in ask.prompt


@pytest.mark.parametrize(
    ("extra", "messages", "agentic"),
    [
        ({"tools": [{"type": "function", "function": {"name": "f"}}]}, None, "tools"),
        (
            {},
            [
                {"role": "user", "content": "x"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                    ],
                },
            ],
            "tool calls",
        ),
        (
            {},
            [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "1", "content": "42"}],
            "tool results",
        ),
    ],
)
def test_agent_turns_are_noted_not_refused_by_the_format(
    extra: dict[str, Any], messages: list[dict[str, Any]] | None, agentic: str
) -> None:
    payload = body(**extra)
    if messages is not None:
        payload["messages"] = messages
    assert agentic in OPENAI_CHAT.parse(payload, {}).agentic


def test_an_empty_tools_list_is_no_tools() -> None:
    assert OPENAI_CHAT.parse(body(tools=[]), {}).agentic == ""


def test_error_body_has_the_openai_shape() -> None:
    assert OPENAI_CHAT.error_body(404, "nope") == {
        "error": {"message": "nope", "type": "bench_gateway", "code": 404}
    }


def test_reply_is_a_chat_completion_with_bench_and_no_usage() -> None:
    ask = OPENAI_CHAT.parse(body(model="bench/core:all"), {})
    reply = OPENAI_CHAT.reply(ask, Answer(collection="bench/core", content="the text", bench={"panel": "p"}))
    out = reply.body
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{24}", out["id"])
    assert out["object"] == "chat.completion"
    assert isinstance(out["created"], int)
    assert out["model"] == "bench/core"  # canonical, never the suffix form
    assert out["choices"] == [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "the text"}}
    ]
    assert out["bench"] == {"panel": "p"}
    assert "usage" not in out
    assert reply.headers == {}


def events(raw: bytes) -> list[Any]:
    """SSE frames → decoded `data:` payloads; comments as ('comment', text)."""
    out: list[Any] = []
    for frame in raw.decode().split("\n\n"):
        if not frame:
            continue
        if frame.startswith(":"):
            out.append(("comment", frame[1:].strip()))
        else:
            assert frame.startswith("data: ")
            data = frame[len("data: ") :]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


def test_stream_chunks_follow_s5() -> None:
    ask = OPENAI_CHAT.parse(body(stream=True), {})
    enc = OPENAI_CHAT.encoder(ask, "bench/core")
    frames = events(
        enc.start() + enc.piece("head") + enc.keepalive() + enc.piece("more") + enc.finish({"x": 1})
    )
    chunks = [f for f in frames if isinstance(f, dict)]
    assert frames[2] == ("comment", "keep-alive")
    assert frames[-1] == "[DONE]"
    assert {c["id"] for c in chunks} == {chunks[0]["id"]}
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{24}", chunks[0]["id"])
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert {c["model"] for c in chunks} == {"bench/core"}
    assert len({c["created"] for c in chunks}) == 1
    assert [c["choices"][0]["delta"] for c in chunks] == [
        {"role": "assistant", "content": ""},
        {"content": "head"},
        {"content": "more"},
        {},
    ]
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None, None, None, "stop"]
    assert chunks[-1]["bench"] == {"x": 1}
    assert all("bench" not in c for c in chunks[:-1])


def test_stream_error_is_an_error_object_then_done() -> None:
    enc = OPENAI_CHAT.encoder(OPENAI_CHAT.parse(body(stream=True), {}), "bench/core")
    assert events(enc.error(503, "no seat")) == [
        {"error": {"message": "no seat", "type": "bench_gateway", "code": 503}},
        "[DONE]",
    ]
