"""Folding a member's stream: text, held-back reasoning, tool calls assembled from interleaved deltas (A-52),
the first piece (RM-6), empty replies and mid-stream errors."""

from __future__ import annotations

import json

from services.gateway.route_mode.assemble import MemberStream, ToolCall, TurnAssembly, Usage
from tests.unit.gateway.route_mode.member import (
    LIST,
    READ,
    USAGE,
    call_args,
    call_start,
    chunk,
    interleaved_calls,
    summarise,
    text_stream,
    usage_chunk,
)


def test_text_finish_and_usage_are_folded() -> None:
    summary = summarise(text_stream(["Hel", "lo", "!"]))
    assert summary.text == "Hello!"
    assert summary.finish_reason == "stop"
    assert summary.usage == Usage(tokens_in=321, tokens_out=45, reasoning=7)
    assert summary.tool_calls == () and not summary.empty and not summary.cut


def test_interleaved_parallel_deltas_become_separate_whole_calls() -> None:
    summary = summarise(interleaved_calls())
    assert summary.tool_calls == (ToolCall(*READ), ToolCall(*LIST))
    assert summary.finish_reason == "tool_calls"
    assert json.loads(summary.tool_calls[0].arguments) == {"path": "src/main.py", "lines": [1, 40]}


def test_calls_are_ordered_by_index_not_arrival() -> None:
    chunks = [
        chunk({"tool_calls": [call_start(1, "b", "second")]}),
        chunk({"tool_calls": [call_start(0, "a", "first")]}),
        chunk({"tool_calls": [call_args(1, "{}")]}),
        chunk({"tool_calls": [call_args(0, '{"x": 1}')]}),
        chunk({}, "tool_calls"),
    ]
    assert [(c.id, c.name, c.arguments) for c in summarise(chunks).tool_calls] == [
        ("a", "first", '{"x": 1}'),
        ("b", "second", "{}"),
    ]


def test_calls_without_an_index_start_on_a_new_id_and_continue_otherwise() -> None:
    chunks = [
        chunk({"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": '{"q"'}}]}),
        chunk({"tool_calls": [{"function": {"arguments": ": 1}"}}]}),
        chunk({"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": "{}"}}]}),
        chunk({}, "tool_calls"),
    ]
    assert [(c.id, c.name, c.arguments) for c in summarise(chunks).tool_calls] == [
        ("a", "f", '{"q": 1}'),
        ("b", "g", "{}"),
    ]


def test_a_call_without_an_id_gets_one_that_stays() -> None:
    assembly = TurnAssembly()
    assembly.add(chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{}"}}]}))
    first = assembly.summary().tool_calls[0].id
    assert first.startswith("call_") and len(first) > len("call_")
    assert assembly.summary().tool_calls[0].id == first


def test_arguments_that_are_not_an_object_are_wrapped() -> None:
    assert ToolCall("i", "n", '{"a": 1}').arguments_object() == {"a": 1}
    assert ToolCall("i", "n", "").arguments_object() == {}
    assert ToolCall("i", "n", "[1, 2]").arguments_object() == {"arguments": [1, 2]}
    assert ToolCall("i", "n", "not json").arguments_object() == {"arguments": "not json"}
    assert ToolCall("i", "n", '{"a": 1}').arguments_json() == '{"a": 1}'
    assert json.loads(ToolCall("i", "n", "7").arguments_json()) == {"arguments": 7}


def test_reasoning_is_not_a_first_piece_and_is_held_back_with_what_came_before() -> None:
    stream = MemberStream()
    held = [
        chunk({"role": "assistant", "content": ""}),
        chunk({"reasoning_content": "thinking…"}),
        chunk({"reasoning": "more"}),
    ]
    for raw in held:
        assert stream.feed(raw) == []
    assert stream.assembly.anything and not stream.assembly.first_piece and not stream.live
    first = chunk({"content": "Answer"})
    assert stream.feed(first) == [*held, first]
    assert stream.live
    later = chunk({"content": "!"})
    assert stream.feed(later) == [later]
    assert stream.summary().reasoning == "thinking…more"


def test_a_tool_call_is_a_first_piece() -> None:
    stream = MemberStream()
    stream.feed(chunk({"role": "assistant", "content": None}))
    passed = stream.feed(chunk({"tool_calls": [call_start(0, "c", "f")]}))
    assert len(passed) == 2 and stream.live


def test_an_empty_reply_even_after_reasoning_is_empty() -> None:
    stream = MemberStream()
    raws = text_stream([], reasoning=["let me think"])
    for raw in raws:
        assert stream.feed(raw) == []
    summary = stream.summary()
    assert summary.empty and summary.reasoning == "let me think"
    assert stream.release() == raws  # the last member's empty reply is its answer: what it sent goes on
    assert stream.release() == []


def test_mid_stream_errors_stop_the_fold_and_are_never_passed_on() -> None:
    stream = MemberStream()
    assert stream.feed(chunk({"content": "Hi"}))
    assert stream.feed({"error": {"message": "upstream overloaded", "code": 503}}) == []
    assert stream.error == "upstream overloaded (code 503)"
    assert stream.feed(chunk({"content": " more"})) == []
    assert stream.summary().text == "Hi"
    finish_error = MemberStream()
    finish_error.feed(chunk({"content": "x"}, "error"))
    assert "finish_reason error" in finish_error.error


def test_length_stop_and_usage_edge_cases() -> None:
    summary = summarise([chunk({"content": "cut"}, "length"), usage_chunk({"prompt_tokens": 3})])
    assert summary.cut and summary.usage == Usage(tokens_in=3, tokens_out=0)
    assert summarise(text_stream(["x"], usage=False)).usage is None
    assert Usage.from_openai(USAGE).reasoning == 7


def test_content_as_a_list_of_parts_is_text() -> None:
    summary = summarise([chunk({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})])
    assert summary.text == "ab"


def test_output_estimate_counts_text_and_arguments() -> None:
    summary = summarise(interleaved_calls("Let me look."))
    assert summary.output_estimate() > 0
    assert summarise(text_stream([])).output_estimate() == 0
