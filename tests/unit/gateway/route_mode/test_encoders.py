"""RM-7 byte by byte: each format's route stream parsed back (event order, whole tool calls, usage, bench),
its non-streamed reply, and its error form (A-43, A-47, A-51, A-52, A-53)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.gateway.formats.anthropic import Anthropic, MessageRouteEncoder
from services.gateway.formats.completions import CompletionRouteEncoder, Completions
from services.gateway.formats.gemini import Gemini, GeminiRouteEncoder
from services.gateway.formats.ollama import OllamaChat, OllamaGenerate, OllamaRouteEncoder
from services.gateway.formats.openai_chat import ChatRouteEncoder, OpenAIChat
from services.gateway.formats.responses import ResponseRouteEncoder, Responses
from services.gateway.formats.route_encoder import RouteContext
from services.gateway.route_mode.answer import context_for
from tests.unit.gateway.formats.streams import comments, ndjson, sse_events
from tests.unit.gateway.route_mode.member import (
    CONV,
    CREATED,
    LIST,
    READ,
    UPSTREAM_ID,
    bench_for,
    chunk,
    drive,
    interleaved_calls,
    summarise,
    text_stream,
)

BENCH = bench_for()
TOOL_CHUNKS = interleaved_calls("Let me look.")


def context(fmt: str, **extra: Any) -> RouteContext:
    return RouteContext(
        format=fmt,
        collection="bench/core",
        model=extra.pop("model", "bench/core:route"),
        input_estimate=extra.pop("input_estimate", 99),
        **extra,
    )


def data(events: list[tuple[str | None, Any]]) -> list[Any]:
    return [payload for _, payload in events]


# ---------------------------------------------------------------- OpenAI chat


def test_openai_chat_relays_the_members_chunks_relabelled() -> None:
    raw, _ = drive(ChatRouteEncoder(context("openai_chat")), TOOL_CHUNKS, BENCH, keepalive=True)
    assert comments(raw) == [": keep-alive"]
    events = data(sse_events(raw))
    assert events[-1] == "[DONE]"
    relayed, closing = events[:-2], events[-2]
    *with_choices, usage_only = TOOL_CHUNKS
    assert len(relayed) == len(with_choices)  # no gateway role chunk: the member's own come first
    for sent, got in zip(with_choices, relayed, strict=True):
        assert got == {**sent, "model": "bench/core"}  # everything else, tool-call deltas included, unchanged
    assert closing == {
        "id": UPSTREAM_ID,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": "bench/core",
        "choices": [],
        "usage": usage_only["usage"],
        "bench": BENCH,
    }


def test_openai_chat_usage_inside_a_choice_chunk_is_relayed_and_repeated_at_the_close() -> None:
    chunks = [chunk({"content": "hi"}), chunk({}, "stop", usage={"prompt_tokens": 5, "completion_tokens": 1})]
    raw, _ = drive(ChatRouteEncoder(context("openai_chat")), chunks, BENCH)
    events = data(sse_events(raw))
    assert events[1] == {**chunks[1], "model": "bench/core"}
    assert events[2]["usage"] == {"prompt_tokens": 5, "completion_tokens": 1}
    no_usage, _ = drive(ChatRouteEncoder(context("openai_chat")), [*chunks[:1], chunk({}, "stop")], BENCH)
    assert "usage" not in data(sse_events(no_usage))[-2]


def test_openai_chat_tool_call_deltas_keep_their_bytes() -> None:
    tool_delta = TOOL_CHUNKS[4]
    raw, _ = drive(ChatRouteEncoder(context("openai_chat")), TOOL_CHUNKS, BENCH)
    line = json.dumps(tool_delta["choices"], ensure_ascii=False).encode()
    assert line in raw


def test_openai_chat_sets_what_a_member_left_out() -> None:
    bare = [{"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}]
    raw, _ = drive(ChatRouteEncoder(context("openai_chat")), bare, BENCH)
    first, closing = data(sse_events(raw))[:2]
    assert first["object"] == "chat.completion.chunk" and isinstance(first["created"], int)
    assert closing["created"] == first["created"] and closing["id"].startswith("chatcmpl-")


def test_openai_chat_held_back_reasoning_comes_with_the_first_piece() -> None:
    chunks = text_stream(["Hi"], reasoning=["hmm"])
    raw, _ = drive(ChatRouteEncoder(context("openai_chat")), chunks, BENCH)
    deltas = [e["choices"][0]["delta"] for e in data(sse_events(raw))[:-2] if e["choices"]]
    assert deltas[:3] == [
        {"role": "assistant", "content": ""},
        {"reasoning_content": "hmm"},
        {"content": "Hi"},
    ]


def test_openai_chat_error_and_keepalive() -> None:
    relay = ChatRouteEncoder(context("openai_chat"))
    raw = relay.chunk(chunk({"content": "par"})) + relay.error(502, "m-a failed part way through the turn: x")
    events = data(sse_events(raw))
    assert events[1] == {
        "error": {"message": "m-a failed part way through the turn: x", "type": "bench_gateway", "code": 502}
    }
    assert events[2] == "[DONE]"


def test_openai_chat_reply() -> None:
    relay = ChatRouteEncoder(context("openai_chat"))
    calls_only = relay.reply(summarise(interleaved_calls()), BENCH)
    assert calls_only.headers == {"X-Bench-Conversation": CONV, "X-Bench-Model": "m-a"}
    body = calls_only.body
    assert body["object"] == "chat.completion" and body["model"] == "bench/core" and body["bench"] == BENCH
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    assert choice["message"]["tool_calls"] == [
        {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in (READ, LIST)
    ]
    assert body["usage"] == {
        "prompt_tokens": 321,
        "completion_tokens": 45,
        "total_tokens": 366,
        "completion_tokens_details": {"reasoning_tokens": 7},
    }
    text = relay.body(
        summarise(text_stream(["So", "rted"], finish="length", usage=False, reasoning=["r"])), BENCH
    )
    message = text["choices"][0]["message"]
    assert message == {"role": "assistant", "content": "Sorted", "reasoning_content": "r"}
    assert text["choices"][0]["finish_reason"] == "length"
    assert text["usage"] == {"prompt_tokens": 99, "completion_tokens": 1, "total_tokens": 100}  # estimates
    empty = relay.body(summarise([chunk({}, None)]), BENCH)["choices"][0]
    assert empty["message"]["content"] == "" and empty["finish_reason"] == "stop"


# ---------------------------------------------------------------- Anthropic


def test_anthropic_text_as_it_comes_then_each_call_whole() -> None:
    raw, _ = drive(MessageRouteEncoder(context("anthropic")), TOOL_CHUNKS, BENCH, keepalive=True)
    events = sse_events(raw)
    assert [name for name, _ in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(name == payload["type"] for name, payload in events)
    start = events[0][1]["message"]
    assert start["model"] == "bench/core:route" and start["usage"] == {"input_tokens": 99, "output_tokens": 0}
    assert events[2][1]["content_block"] == {"type": "text", "text": ""}
    assert events[3][1]["delta"] == {"type": "text_delta", "text": "Let me look."}
    for (cid, name, args), at in zip((READ, LIST), (5, 8), strict=True):
        index = events[at][1]["index"]
        assert events[at][1]["content_block"] == {"type": "tool_use", "id": cid, "name": name, "input": {}}
        delta = events[at + 1][1]
        assert delta["index"] == index and delta["delta"]["type"] == "input_json_delta"
        assert json.loads(delta["delta"]["partial_json"]) == json.loads(args)  # one delta, the whole JSON
        assert events[at + 2][1] == {"type": "content_block_stop", "index": index}
    assert [events[5][1]["index"], events[8][1]["index"]] == [1, 2]
    assert events[11][1] == {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"input_tokens": 321, "output_tokens": 45},
        "bench": BENCH,  # the member's own counts
    }


def test_anthropic_calls_only_start_at_block_zero() -> None:
    raw, _ = drive(MessageRouteEncoder(context("anthropic")), interleaved_calls(), BENCH)
    starts = [p for name, p in sse_events(raw) if name == "content_block_start"]
    assert [(s["index"], s["content_block"]["type"]) for s in starts] == [(0, "tool_use"), (1, "tool_use")]


def test_anthropic_a_turn_with_nothing_still_has_a_text_block() -> None:
    raw, _ = drive(MessageRouteEncoder(context("anthropic")), text_stream([], usage=False), BENCH)
    events = sse_events(raw)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[1][1]["content_block"] == {"type": "text", "text": ""}
    assert events[3][1]["delta"]["stop_reason"] == "end_turn"
    assert events[3][1]["usage"] == {"input_tokens": 99, "output_tokens": 0}


def test_anthropic_stop_reasons_error_and_reply() -> None:
    relay = MessageRouteEncoder(context("anthropic"))
    raw, _ = drive(relay, text_stream(["cut"], finish="length"), BENCH)
    assert next(p for n, p in sse_events(raw) if n == "message_delta")["delta"]["stop_reason"] == "max_tokens"
    error = sse_events(MessageRouteEncoder(context("anthropic")).error(429, "no member answered"))
    assert error == [
        ("error", {"type": "error", "error": {"type": "rate_limit_error", "message": "no member answered"}})
    ]
    reply = relay.reply(summarise(TOOL_CHUNKS), BENCH)
    assert reply.headers["X-Bench-Model"] == "m-a"
    body = reply.body
    assert body["type"] == "message" and body["model"] == "bench/core:route" and body["bench"] == BENCH
    assert body["stop_reason"] == "tool_use" and body["usage"] == {"input_tokens": 321, "output_tokens": 45}
    assert body["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": READ[0], "name": READ[1], "input": json.loads(READ[2])},
        {"type": "tool_use", "id": LIST[0], "name": LIST[1], "input": json.loads(LIST[2])},
    ]
    assert relay.body(summarise(text_stream([])), BENCH)["content"] == [{"type": "text", "text": ""}]


# ---------------------------------------------------------------- Responses


def test_responses_events_in_order_with_contiguous_numbers() -> None:
    raw, _ = drive(ResponseRouteEncoder(context("responses")), TOOL_CHUNKS, BENCH, keepalive=True)
    events = sse_events(raw)
    assert comments(raw) == [": keep-alive"]
    assert [p["sequence_number"] for _, p in events] == list(range(len(events)))
    assert all(name == p["type"] for name, p in events)
    assert [name for name, _ in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    added = events[8][1]
    assert (
        added["output_index"] == 1
        and added["item"]["arguments"] == ""
        and added["item"]["status"] == ("in_progress")
    )
    assert added["item"]["call_id"] == READ[0] and added["item"]["name"] == READ[1]
    assert events[9][1]["delta"] == READ[2] and events[9][1]["item_id"] == added["item"]["id"]
    assert events[11][1]["item"] == {**added["item"], "arguments": READ[2], "status": "completed"}
    completed = events[-1][1]["response"]
    assert completed["status"] == "completed" and completed["bench"] == BENCH
    assert [i["type"] for i in completed["output"]] == ["message", "function_call", "function_call"]
    assert completed["output"][0]["content"][0]["text"] == "Let me look."
    assert completed["usage"]["input_tokens"] == 321 and completed["usage"]["output_tokens"] == 45
    assert completed["usage"]["output_tokens_details"] == {"reasoning_tokens": 7}


def test_responses_custom_tool_comes_back_as_custom_tool_call() -> None:
    patch = "*** Begin Patch\n*** End Patch\n"
    call = ("call_patch", "apply_patch", json.dumps({"input": patch}))
    relay = ResponseRouteEncoder(context("responses", custom_tools=frozenset({"apply_patch"})))
    raw, _ = drive(relay, interleaved_calls(calls=[call, READ]), BENCH)
    events = sse_events(raw)
    names = [name for name, _ in events]
    assert names[2:6] == [
        "response.output_item.added",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
        "response.output_item.done",
    ]
    done = events[5][1]["item"]
    assert done["type"] == "custom_tool_call" and done["input"] == patch and done["call_id"] == "call_patch"
    output = events[-1][1]["response"]["output"]
    assert [i["type"] for i in output] == ["custom_tool_call", "function_call"]


def test_responses_nothing_at_all_is_an_empty_message_and_errors_fail_the_response() -> None:
    raw, _ = drive(ResponseRouteEncoder(context("responses")), text_stream([]), BENCH)
    completed = sse_events(raw)[-1][1]["response"]
    assert completed["output"][0]["content"][0]["text"] == ""
    relay = ResponseRouteEncoder(context("responses"))
    failed = sse_events(relay.start() + relay.error(502, "m-a failed part way through the turn: cut"))
    assert [p["sequence_number"] for _, p in failed] == [0, 1, 2, 3]
    assert failed[2][1] == {
        "type": "error",
        "code": "502",
        "message": "m-a failed part way through the turn: cut",
        "param": None,
        "sequence_number": 2,
    }
    assert failed[3][1]["response"]["status"] == "failed"
    assert failed[3][1]["response"]["error"] == {
        "code": "server_error",
        "message": "m-a failed part way through the turn: cut",
    }


def test_responses_reply() -> None:
    body = ResponseRouteEncoder(context("responses")).body(summarise(TOOL_CHUNKS), BENCH)
    assert body["object"] == "response" and body["model"] == "bench/core:route" and body["bench"] == BENCH
    assert [(i["type"], i.get("call_id")) for i in body["output"]] == [
        ("message", None),
        ("function_call", READ[0]),
        ("function_call", LIST[0]),
    ]
    assert body["output"][1]["arguments"] == READ[2]


# ---------------------------------------------------------------- Gemini


@pytest.mark.parametrize("event_stream", [True, False])
def test_gemini_text_then_calls_in_the_last_chunk(event_stream: bool) -> None:
    relay = GeminiRouteEncoder(context("gemini", event_stream=event_stream))
    raw, _ = drive(relay, TOOL_CHUNKS, BENCH, keepalive=True)
    if event_stream:
        assert relay.media_type == "text/event-stream"
        elements = data(sse_events(raw))
    else:
        assert relay.media_type == "application/json" and raw.startswith(b"[") and raw.endswith(b"]")
        assert b",\r\n" in raw
        elements = json.loads(raw)
    assert [e["candidates"][0]["content"]["parts"] for e in elements[:2]] == [
        [{"text": ""}],
        [{"text": "Let me look."}],
    ]
    last = elements[-1]
    assert last["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"id": cid, "name": name, "args": json.loads(args)}}
        for cid, name, args in (READ, LIST)
    ]
    assert last["candidates"][0]["finishReason"] == "STOP"
    assert last["usageMetadata"] == {
        "promptTokenCount": 321,
        "candidatesTokenCount": 45,
        "totalTokenCount": 366,
        "thoughtsTokenCount": 7,
    }
    assert all(e["modelVersion"] == "bench/core:route" for e in elements)
    assert len({e["responseId"] for e in elements}) == 1
    assert "bench" not in json.dumps(elements[-1]["candidates"])


def test_gemini_max_tokens_error_and_reply() -> None:
    raw, _ = drive(GeminiRouteEncoder(context("gemini")), text_stream(["cu", "t"], finish="length"), BENCH)
    last = data(sse_events(raw))[-1]["candidates"][0]
    assert last["finishReason"] == "MAX_TOKENS" and last["content"]["parts"] == [{"text": ""}]
    relay = GeminiRouteEncoder(context("gemini", event_stream=False))
    assert json.loads(relay.start() + relay.error(429, "all rate limited")) == [
        {"error": {"code": 429, "message": "all rate limited", "status": "RESOURCE_EXHAUSTED"}}
    ]
    reply = relay.reply(summarise(TOOL_CHUNKS), BENCH)
    assert reply.headers == {"X-Bench-Conversation": CONV, "X-Bench-Model": "m-a"}
    parts = reply.body["candidates"][0]["content"]["parts"]
    assert parts[0] == {"text": "Let me look."} and [p["functionCall"]["name"] for p in parts[1:]] == [
        READ[1],
        LIST[1],
    ]


# ---------------------------------------------------------------- Ollama and completions


def test_ollama_text_lines_then_one_tool_calls_line_then_done() -> None:
    relay = OllamaRouteEncoder(context("ollama_chat", model="bench/core:route:latest"))
    raw, _ = drive(relay, TOOL_CHUNKS, BENCH, keepalive=True)
    lines = ndjson(raw)
    assert [line["done"] for line in lines] == [False, False, False, True]
    assert lines[1]["message"] == {"role": "assistant", "content": "Let me look."}
    assert lines[2]["message"]["tool_calls"] == [
        {"function": {"name": name, "arguments": json.loads(args)}} for _, name, args in (READ, LIST)
    ]
    done = lines[3]
    assert done["done_reason"] == "stop" and done["bench"] == BENCH
    assert done["prompt_eval_count"] == 321 and done["eval_count"] == 45
    assert all(line["model"] == "bench/core:route:latest" for line in lines)
    assert relay.media_type == "application/x-ndjson"


def test_ollama_length_error_reply_and_generate() -> None:
    raw, _ = drive(OllamaRouteEncoder(context("ollama_chat")), text_stream(["x"], finish="length"), BENCH)
    assert ndjson(raw)[-1]["done_reason"] == "length"
    assert ndjson(OllamaRouteEncoder(context("ollama_chat")).error(502, "broke")) == [{"error": "broke"}]
    body = OllamaRouteEncoder(context("ollama_chat")).body(summarise(TOOL_CHUNKS), BENCH)
    assert body["message"]["content"] == "Let me look." and len(body["message"]["tool_calls"]) == 2
    assert body["done"] is True and body["bench"] == BENCH
    generate = OllamaRouteEncoder(context("ollama_generate"), "response")
    raw, _ = drive(generate, text_stream(["a", "b"]), BENCH)
    assert [line.get("response") for line in ndjson(raw)] == ["a", "b", ""]


def test_completions_route() -> None:
    raw, _ = drive(CompletionRouteEncoder(context("completions")), text_stream(["a", "b"]), BENCH)
    events = data(sse_events(raw))
    assert [e["choices"][0]["text"] for e in events[:-1]] == ["a", "b", ""]
    assert events[-2]["choices"][0]["finish_reason"] == "stop" and events[-2]["bench"] == BENCH
    assert events[-1] == "[DONE]"
    body = CompletionRouteEncoder(context("completions")).body(summarise(text_stream(["ab"])), BENCH)
    assert body["choices"][0]["text"] == "ab" and body["usage"]["prompt_tokens"] == 321


# ---------------------------------------------------------------- picking the encoder


def test_context_and_encoder_for_each_format() -> None:
    tools = [{"type": "function", "function": {"name": "sh"}}]
    body: dict[str, Any] = {
        "model": "bench/core:route",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": tools,
    }
    chat = context_for(OpenAIChat().parse(body, {}), "core")
    plain = context_for(OpenAIChat().parse({**body, "tools": []}, {}), "core")
    assert chat.collection == "bench/core" and chat.model == "bench/core:route"
    assert chat.input_estimate > plain.input_estimate  # tool definitions are counted
    assert isinstance(OpenAIChat().route_encoder(chat), ChatRouteEncoder)
    responses_body = {
        "model": "bench/core:route",
        "input": "hi",
        "tools": [{"type": "custom", "name": "apply_patch"}, {"type": "function", "name": "sh"}],
    }
    responses = context_for(Responses().parse(responses_body, {}), "bench/core")
    assert responses.custom_tools == frozenset({"apply_patch"}) and isinstance(
        Responses().route_encoder(responses), ResponseRouteEncoder
    )
    gemini_body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    gemini = context_for(
        Gemini().parse(gemini_body, {"target": "bench/core:route:streamGenerateContent"}), "core"
    )
    assert not gemini.event_stream and gemini.model == "bench/core:route"
    assert isinstance(Gemini().route_encoder(gemini), GeminiRouteEncoder)
    ollama = context_for(
        OllamaChat().parse({"model": "bench/core:route:latest", "messages": body["messages"]}, {}), "core"
    )
    assert ollama.model == "bench/core:route:latest" and ollama.received_ns > 0
    chat_lines = OllamaChat().route_encoder(ollama)
    assert isinstance(chat_lines, OllamaRouteEncoder) and chat_lines.key == "message"
    anthropic_ask = Anthropic().parse(
        {"model": "bench/core", "max_tokens": 9, "messages": body["messages"]}, {}
    )
    assert isinstance(Anthropic().route_encoder(context_for(anthropic_ask, "core")), MessageRouteEncoder)
    assert isinstance(Completions().route_encoder(context("completions")), CompletionRouteEncoder)
    generate = OllamaGenerate().route_encoder(context("ollama_generate"))
    assert isinstance(generate, OllamaRouteEncoder) and generate.key == "response"
