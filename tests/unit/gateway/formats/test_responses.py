"""OpenAI Responses: input items → Ask (H-G4, X-1..X-5), the response object (H-G4), typed events (S-5)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.gateway.ask import Ask
from services.gateway.formats.responses import Responses
from services.gateway.panel.flatten import estimate_text
from shared.refusal import Refusal
from tests.unit.gateway.formats.streams import BENCH, PIECES, answer, comments, sse_events, whole_stream

FMT = Responses()
PNG = "data:image/png;base64," + "iVBORw0KGgo" * 10


def parse(**body: Any) -> Ask:
    ask = FMT.parse({"model": "bench/core", **body}, {})
    return ask


def refused(**body: Any) -> Refusal:
    with pytest.raises(Refusal) as caught:
        FMT.parse({"model": "bench/core", **body}, {})
    assert caught.value.status == 400
    return caught.value


def test_instructions_and_a_string_input() -> None:
    ask = parse(instructions="Be brief.", input="Why is the sky blue?")
    assert ask.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Why is the sky blue?"},
    ]
    assert (ask.system, ask.prompt, ask.agentic) == ("Be brief.", "Why is the sky blue?", "")


def test_message_items_and_their_parts() -> None:
    ask = parse(
        input=[
            {"role": "developer", "content": "Cite sources."},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is this?"},
                    {"type": "input_text", "text": "Be exact."},
                ],
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": "A cat."},
                    {"type": "refusal", "refusal": "No more."},
                ],
            },
            {"type": "reasoning", "summary": []},
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "And this?"},
                    {"type": "input_image", "image_url": PNG, "detail": "low"},
                ],
            },
        ]
    )
    assert ask.messages == [
        {"role": "developer", "content": "Cite sources."},
        {"role": "user", "content": "What is this?\n\nBe exact."},
        {"role": "assistant", "content": "A cat.\n\nNo more."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "And this?"},
                {"type": "image_url", "image_url": {"url": PNG, "detail": "low"}},
            ],
        },
    ]
    assert ask.images == 1 and ask.system == "Cite sources."


def test_function_and_custom_tool_calls_become_tool_calls_and_tool_messages() -> None:
    ask = parse(
        input=[
            {"role": "user", "content": "List the files."},
            {"type": "function_call", "call_id": "call_a", "name": "ls", "arguments": '{"dir": "."}'},
            {"type": "custom_tool_call", "call_id": "call_b", "name": "patch", "input": "*** Begin Patch"},
            {"type": "function_call_output", "call_id": "call_a", "output": "a.py"},
            {
                "type": "custom_tool_call_output",
                "call_id": "call_b",
                "output": [{"type": "input_text", "text": "done"}, {"type": "input_image", "image_url": PNG}],
            },
        ]
    )
    assert ask.messages[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "ls", "arguments": '{"dir": "."}'}},
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "patch", "arguments": json.dumps({"input": "*** Begin Patch"})},
            },
        ],
    }
    assert ask.messages[2:] == [
        {"role": "tool", "tool_call_id": "call_a", "content": "a.py"},
        {"role": "tool", "tool_call_id": "call_b", "content": "done"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": PNG}}]},
    ]
    assert ask.agentic == "tool calls (a function_call item)"


def test_an_output_alone_is_an_agents_turn() -> None:
    ask = parse(input=[{"type": "function_call_output", "call_id": "c", "output": "ok"}])
    assert ask.agentic == "tool results (a function_call_output item)"


def test_tools_make_an_agents_turn_and_translate_for_route_mode() -> None:
    ask = parse(
        input="hi",
        tool_choice={"type": "function", "name": "ls"},
        parallel_tool_calls=False,
        tools=[
            {
                "type": "function",
                "name": "ls",
                "description": "list",
                "parameters": {"type": "object"},
                "strict": True,
            },
            {
                "type": "custom",
                "name": "patch",
                "description": "apply a patch",
                "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"},
            },
        ],
    )
    assert ask.agentic == "tools"
    tools = ask.route_fields["tools"]
    assert tools[0] == {
        "type": "function",
        "function": {"name": "ls", "description": "list", "parameters": {"type": "object"}, "strict": True},
    }
    custom = tools[1]["function"]
    assert custom["parameters"]["required"] == ["input"]
    assert "apply a patch" in custom["description"] and "start: /.+/" in custom["description"]
    assert ask.route_fields["tool_choice"] == {"type": "function", "function": {"name": "ls"}}
    assert ask.route_fields["parallel_tool_calls"] is False


def test_an_empty_tools_list_is_no_tools() -> None:
    assert parse(input="hi", tools=[]).agentic == ""


def test_sampling_and_text_format_are_read_past_and_kept_for_route_mode() -> None:
    plain = parse(input="hi")
    tuned = parse(
        input="hi",
        max_output_tokens=50,
        temperature=0.1,
        top_p=0.5,
        store=True,
        tool_choice="auto",
        text={"format": {"type": "json_schema", "name": "r", "schema": {"type": "object"}}},
    )
    assert tuned.messages == plain.messages
    assert tuned.route_fields == {
        "max_tokens": 50,
        "temperature": 0.1,
        "top_p": 0.5,
        "tool_choice": "auto",
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "r", "schema": {"type": "object"}},
        },
    }


@pytest.mark.parametrize("key", ["previous_response_id", "conversation"])
def test_stored_state_is_refused(key: str) -> None:
    assert key in refused(input="hi", **{key: "resp_123"}).message


@pytest.mark.parametrize(
    ("tool", "named"),
    [
        ({"type": "web_search"}, "web_search"),
        ({"type": "local_shell"}, "local_shell"),
        ({"type": "file_search", "vector_store_ids": []}, "file_search"),
    ],
)
def test_hosted_tools_are_left_out_named_and_still_make_an_agents_turn(
    tool: dict[str, Any], named: str
) -> None:
    ask = parse(input="hi", tools=[tool, {"type": "function", "name": "ls"}], bench={"reply": "route"})
    assert [t["function"]["name"] for t in ask.route_fields["tools"]] == ["ls"]
    assert ask.dropped_tools == (named,) and ask.agentic == "tools"  # a panel still refuses them


def test_items_of_hosted_tools_are_left_out_and_named() -> None:
    ask = parse(input=[
        {"role": "user", "content": "What is new in Python?"},
        {"type": "web_search_call", "id": "ws_1", "action": {"type": "search", "query": "py"}},
        {"role": "assistant", "content": [{"type": "output_text", "text": "3.14 is out."}]},
        {"type": "image_generation_call", "id": "ig_1", "result": "iVBORw0KGgo"},
        {"type": "web_search_call", "id": "ws_2", "action": {"type": "search", "query": "py 3.15"}},
    ])
    assert ask.messages == [{"role": "user", "content": "What is new in Python?"},
                            {"role": "assistant", "content": "3.14 is out."}]
    assert ask.dropped_items == ("web_search_call", "image_generation_call")
    # A panel refuses them, naming route mode.
    assert ask.agentic == "hosted tool items (a web_search_call item)"


def test_a_call_made_in_a_namespace_reaches_the_member_under_its_flattened_name() -> None:
    ask = parse(input=[
        {"role": "user", "content": "Delegate it."},
        {"type": "function_call", "call_id": "c1", "name": "spawn_agent", "namespace": "multi_agent_v1",
         "arguments": '{"message": "go"}'},
        {"type": "function_call_output", "call_id": "c1", "output": '{"agent_id": "a1"}'},
        {"type": "custom_tool_call", "call_id": "c2", "name": "js", "namespace": "mcp__node_repl__",
         "input": "1+1"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "2"},
    ])
    calls = [m["tool_calls"] for m in ask.messages if m.get("tool_calls")]
    assert [c["function"]["name"] for turn in calls for c in turn] == [
        "multi_agent_v1__spawn_agent", "mcp__node_repl__js"]


def test_an_agent_message_is_a_user_message_naming_who_wrote_to_whom() -> None:
    ask = parse(input=[
        {"type": "agent_message", "id": "amsg_1", "author": "/root", "recipient": "/root/helper", "content": [
            {"type": "input_text", "text": "Message Type: NEW_TASK\nPayload:\n"},
            {"type": "encrypted_content", "encrypted_content": "say hello"},
        ]},
        {"type": "agent_message", "content": [{"type": "input_text", "text": "done"}]},
    ])
    assert ask.messages == [
        {"role": "user", "content": "[agent message from /root to /root/helper]\n\nMessage Type: NEW_TASK\n"
                                    "Payload:\n\n\nsay hello"},
        {"role": "user", "content": "[agent message from another agent]\n\ndone"},
    ]
    assert ask.agentic == ""


@pytest.mark.parametrize(
    ("item", "words"),
    [
        ({"type": "item_reference", "id": "msg_1"}, "item_reference"),
        ({"type": "compaction_summary", "encrypted_content": "x"}, "compaction_summary"),
        ({"type": "agent_message", "content": [{"type": "input_audio"}]}, "input_audio"),
        ({"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}, "input_file"),
        ({"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}, "input_audio"),
        ({"role": "user", "content": [{"type": "input_image", "file_id": "file-1"}]}, "file_id"),
        ({"role": "user", "content": [{"type": "input_image", "image_url": "file:///x.png"}]}, "image"),
        ({"role": "tool", "content": "x"}, "role"),
        ({"role": "user", "content": [{"type": "input_text"}]}, '"text" string'),
        ({"type": "function_call", "name": "f"}, "call_id"),
    ],
)
def test_unsupported_items_and_parts_are_refused(item: dict[str, Any], words: str) -> None:
    assert words in refused(input=[item]).message


@pytest.mark.parametrize("value", [None, 3, {"role": "user"}, [], ["hi"]])
def test_input_must_be_a_string_or_a_list_of_items(value: Any) -> None:
    assert "input" in refused(input=value).message


def test_reply_is_a_full_response_object() -> None:
    ask = parse(model="bench/core:merged", input="Why?")
    body = FMT.reply(ask, answer("Because.")).body
    assert body["id"].startswith("resp_") and body["object"] == "response"
    assert body["model"] == "bench/core:merged" and body["status"] == "completed"
    assert (body["error"], body["incomplete_details"], body["previous_response_id"]) == (None, None, None)
    assert (body["parallel_tool_calls"], body["store"], body["tool_choice"], body["tools"]) == (
        False,
        False,
        "none",
        [],
    )
    assert body["text"] == {"format": {"type": "text"}} and body["truncation"] == "disabled"
    [item] = body["output"]
    assert item["type"] == "message" and item["id"].startswith("msg_")
    assert (item["status"], item["role"]) == ("completed", "assistant")
    assert item["content"] == [{"type": "output_text", "text": "Because.", "annotations": []}]
    out = estimate_text("Because.")
    assert body["usage"] == {
        "input_tokens": ask.estimate,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": ask.estimate + out,
    }
    assert body["bench"] == BENCH


def test_stream_events_are_numbered_and_end_with_the_completed_response() -> None:
    raw = whole_stream(FMT, parse(input="Why?", stream=True), keepalive=True)
    events = sse_events(raw)
    assert comments(raw) == [": keep-alive"]
    assert all(name == data["type"] for name, data in events)
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    kinds = [name for name, _ in events]
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * len(PIECES),
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    data = [d for _, d in events]
    assert data[0]["response"]["status"] == "in_progress" and data[2]["item"]["status"] == "in_progress"
    item_id = data[2]["item"]["id"]
    deltas = [d for d in data if d["type"] == "response.output_text.delta"]
    assert all(
        (d["item_id"], d["output_index"], d["content_index"], d["logprobs"]) == (item_id, 0, 0, [])
        for d in deltas
    )
    text = "".join(d["delta"] for d in deltas)
    assert text == "".join(PIECES) == data[-4]["text"]
    completed = data[-1]["response"]
    assert completed["status"] == "completed" and completed["bench"] == BENCH
    assert completed["id"] == data[0]["response"]["id"]
    assert completed["output"][0]["content"][0]["text"] == text
    assert completed["usage"]["output_tokens"] == estimate_text(text)


@pytest.mark.parametrize(
    ("status", "code"), [(500, "server_error"), (503, "server_error"), (400, "invalid_request")]
)
def test_stream_error_is_an_error_event_then_response_failed(status: int, code: str) -> None:
    encoder = FMT.encoder(parse(input="Why?"), "bench/core")
    events = sse_events(encoder.start() + encoder.piece("Bench heading\n") + encoder.error(status, "boom"))
    numbers = [d["sequence_number"] for _, d in events]
    assert numbers == list(range(len(events)))
    (name, error), (last, failed) = events[-2:]
    assert name == "error" and error == {
        "type": "error",
        "code": str(status),
        "message": "boom",
        "param": None,
        "sequence_number": numbers[-2],
    }
    assert last == "response.failed"
    assert failed["response"]["status"] == "failed"
    assert failed["response"]["error"] == {"code": code, "message": "boom"}


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (404, "invalid_request_error"),
        (413, "invalid_request_error"),
        (500, "server_error"),
        (503, "server_error"),
    ],
)
def test_error_body(status: int, kind: str) -> None:
    assert FMT.error_body(status, "why") == {
        "error": {"message": "why", "type": kind, "param": None, "code": str(status)}
    }


def test_an_agent_message_between_a_call_and_its_output_waits_for_the_output() -> None:
    ask = parse(input=[
        {"role": "user", "content": "Wait for the helper."},
        {"type": "function_call", "call_id": "c1", "name": "wait_agent", "namespace": "collaboration",
         "arguments": "{}"},
        {"type": "agent_message", "author": "/root/helper", "recipient": "/root",
         "content": [{"type": "input_text", "text": "done"}]},
        {"type": "function_call_output", "call_id": "c1", "output": "Wait completed."},
    ])
    assert [m["role"] for m in ask.messages] == ["user", "assistant", "tool", "user"]
    assert ask.messages[-1]["content"] == "[agent message from /root/helper to /root]\n\ndone"


def test_an_item_type_that_is_not_a_string_is_a_400() -> None:
    """Found by the API contract run: an object as an input item's type crashed the hosted-items lookup."""
    with pytest.raises(Refusal) as caught:
        FMT.parse({"model": "bench/example", "input": [{"type": {}, "call_id": "0", "output": ""}]}, {})
    assert caught.value.status == 400 and 'input[0]: "type" must be a string' in caught.value.message
