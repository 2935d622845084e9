"""Route mode's relay chunks: a chat member's chunks pass untouched; the other kinds' streams, translated to
OpenAI chunks, mean what the kind's own parser reads in them (text, reasoning, every tool call whole, the
finish reason and the usage)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.caller import anthropic_messages, gemini_native, openai_chat, openai_responses
from services.caller.outcome import CallOutcome, ToolCall, Usage
from services.caller.route_chunks import Chunk, chunks_of_outcome, translator_for
from tests.unit.caller.wire_fixtures import sse_lines


def translated(api: str, lines: list[str]) -> list[Chunk]:
    translator = translator_for(api)
    return [chunk for line in lines for chunk in translator.feed_line(line)]


def as_chat(chunks: list[Chunk]) -> CallOutcome:
    """The chunks read back as an OpenAI chat stream by the caller's own chat parser."""
    parser = openai_chat.StreamParser()
    for chunk in chunks:
        parser.feed_line(f"data: {json.dumps(chunk)}")
    parser.feed_line("data: [DONE]")
    return parser.finish()


def meaning(outcome: CallOutcome) -> tuple[Any, ...]:
    calls = [(c.id, c.name, json.loads(c.arguments)) for c in outcome.tool_calls]
    return outcome.error, outcome.text, outcome.reasoning, calls, outcome.finish, outcome.usage


def test_chat_chunks_pass_untouched_and_errors_are_left_to_the_parser() -> None:
    first = {"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "function": {
        "arguments": '{"a"'}}]}}], "x_vendor": 1}
    lines = [": comment", f"data: {json.dumps(first)}", "", 'data: {"error": {"message": "boom"}}',
             "data: [DONE]"]
    assert translated("chat", lines) == [first]


def json_delta(index: int, piece: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": piece}}


def call_item(item_id: str, call_id: str, name: str, arguments: str = "") -> dict[str, Any]:
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name, "arguments": arguments}


ANTHROPIC = sse_lines(
    {"type": "message_start", "message": {"model": "claude-x", "usage": {
        "input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Hmm."}},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Two calls."}},
    {"type": "content_block_start", "index": 2, "content_block": {
        "type": "tool_use", "id": "toolu_a", "name": "read", "input": {}}},
    json_delta(2, '{"p":'),
    json_delta(2, " 1}"),
    {"type": "content_block_start", "index": 3, "content_block": {
        "type": "tool_use", "id": "toolu_b", "name": "list", "input": {}}},
    json_delta(3, "{}"),
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}},
    {"type": "message_stop"},
)

RESPONSES = sse_lines(
    {"type": "response.created", "response": {"model": "gpt-x", "status": "in_progress"}},
    {"type": "response.reasoning_summary_text.delta", "delta": "Think."},
    {"type": "response.output_text.delta", "delta": "Calls:"},
    {"type": "response.output_item.added", "item": call_item("fc_1", "call_a", "read")},
    {"type": "response.output_item.added", "item": call_item("fc_2", "call_b", "list")},
    {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": '{"p": '},
    {"type": "response.function_call_arguments.delta", "item_id": "fc_2", "delta": '{"d": "x"}'},
    {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "1}"},
    {"type": "response.output_item.done", "item": call_item("fc_1", "call_a", "read", '{"p": 1}')},
    {"type": "response.completed", "response": {"model": "gpt-x", "status": "completed", "usage": {
        "input_tokens": 20, "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 3}}}},
)

GEMINI = sse_lines(
    {"candidates": [{"content": {"role": "model", "parts": [{"text": "Plan.", "thought": True}]}}],
     "modelVersion": "gemini-x"},
    {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Calls:"}, {"functionCall": {"name": "read", "args": {"p": 1}}},
        {"functionCall": {"name": "list", "args": {}}}]}, "finishReason": "STOP"}],
     "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 5, "thoughtsTokenCount": 2}},
    named=False,
)


@pytest.mark.parametrize(("api", "lines", "parser"), [
    ("anthropic", ANTHROPIC, anthropic_messages.StreamParser),
    ("responses", RESPONSES, openai_responses.StreamParser),
    ("gemini", GEMINI, gemini_native.StreamParser),
])
def test_a_translated_stream_means_what_the_native_one_does(api: str, lines: list[str], parser: Any) -> None:
    native = parser()
    for line in lines:
        native.feed_line(line)
    expected = native.finish()
    got = as_chat(translated(api, lines))
    if api == "gemini":  # Gemini sends no ids: each call is numbered in the order it came
        expected.tool_calls = [ToolCall(id=f"call_{n}", name=c.name, arguments=c.arguments)
                               for n, c in enumerate(expected.tool_calls)]
    assert meaning(got) == meaning(expected)
    assert len(got.tool_calls) == 2 and got.text and got.reasoning


def test_a_translated_stream_has_one_id_and_opens_each_call_with_its_name() -> None:
    chunks = translated("responses", RESPONSES)
    assert len({c["id"] for c in chunks}) == 1
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    opened = [call for d in deltas for call in d.get("tool_calls") or [] if "id" in call]
    assert [(d["index"], d["id"], d["function"]["name"]) for d in opened] == [
        (0, "call_a", "read"), (1, "call_b", "list")]


def test_a_whole_reply_becomes_the_chunks_of_its_stream() -> None:
    call = ToolCall(id="c1", name="read", arguments="{}")
    outcome = CallOutcome(text="Hi", reasoning="r", tool_calls=[call], usage=Usage(3, 4, 1, 0),
                          finish="tool_calls", model="m")
    back = as_chat(chunks_of_outcome(outcome))
    assert meaning(back) == meaning(outcome)
