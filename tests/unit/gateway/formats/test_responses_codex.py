"""Codex 0.171's real requests (captured/codex_0171.json) round-trip through route mode: the request becomes a
member's chat request with a sound tool list (its `namespace` flattened, its hosted `web_search` left out and
named), the member's calls of namespace members go back as the `function_call` items Codex routes (own `name`
plus `namespace`), and Codex's next turn, carrying those items, reaches the member under the same names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from services.gateway.ask import Ask
from services.gateway.formats.responses import ResponseRouteEncoder, Responses
from services.gateway.formats.route_encoder import DROPPED_TOOLS_HEADER
from services.gateway.route_mode.answer import context_for
from services.gateway.route_mode.upstream_request import upstream_body
from tests.unit.gateway.formats.streams import sse_events
from tests.unit.gateway.route_mode.member import bench_for, drive, interleaved_calls, summarise

CAPTURED = json.loads((Path(__file__).parent / "captured" / "codex_0171.json").read_text())
FMT = Responses()
SPAWN = ("call_spawn2", "multi_agent_v1__spawn_agent", '{"message": "check the tests"}')
EXEC = ("call_exec", "exec_command", '{"cmd": "ls"}')


def request(name: str) -> dict[str, Any]:
    return json.loads(json.dumps(CAPTURED[name]))  # a fresh copy each time


def member_body(ask: Ask) -> dict[str, Any]:
    return upstream_body("org/m-a", ask.messages, ask.route_fields)


def sound(body: dict[str, Any]) -> None:
    """What an OpenAI-compatible member insists on: unique tool names, every call answered right after it."""
    names = [t["function"]["name"] for t in body["tools"]]
    assert len(names) == len(set(names)) and all(t["type"] == "function" for t in body["tools"])
    open_calls: set[str] = set()
    for message in body["messages"]:
        if message["role"] == "tool":
            open_calls.remove(message["tool_call_id"])
        else:
            assert not open_calls, message
        open_calls |= {c["id"] for c in message.get("tool_calls") or []}


def test_the_default_configurations_request_reaches_the_member_with_a_sound_tool_list() -> None:
    ask = FMT.parse(request("multi_agent_v1"), {})
    body = member_body(ask)
    sound(body)
    names = [t["function"]["name"] for t in body["tools"]]
    assert names == ["exec_command", "write_stdin", "request_user_input", "view_image",
                     "multi_agent_v1__close_agent", "multi_agent_v1__resume_agent",
                     "multi_agent_v1__send_input",
                     "multi_agent_v1__spawn_agent", "multi_agent_v1__wait_agent",
                     "get_goal", "create_goal", "update_goal"]
    assert ask.dropped_tools == ("web_search",) and ask.dropped_items == ()
    history = [c["function"]["name"] for m in body["messages"] for c in m.get("tool_calls") or []]
    assert history == ["multi_agent_v1__spawn_agent", "multi_agent_v1__wait_agent"]  # as Codex sent them back
    assert body["tool_choice"] == "auto" and body["parallel_tool_calls"] is True


@pytest.mark.parametrize("stream", [True, False])
def test_member_calls_go_back_as_codex_routes_them_and_come_back_under_the_same_names(stream: bool) -> None:
    ask = FMT.parse(request("multi_agent_v1"), {})
    encoder = ResponseRouteEncoder(context_for(ask, "agents"))
    member = interleaved_calls("On it.", calls=[SPAWN, EXEC])
    if stream:
        raw, _ = drive(encoder, member, bench_for())
        events = sse_events(raw)
        output = events[-1][1]["response"]["output"]
        done = [e for name, e in events if name == "response.function_call_arguments.done"]
        assert [e["name"] for e in done] == ["spawn_agent", "exec_command"]
    else:
        reply = encoder.reply(summarise(member), bench_for())
        output = reply.body["output"]
        assert reply.headers[DROPPED_TOOLS_HEADER] == "web_search"
    calls = [{k: i[k] for k in ("type", "call_id", "name", "namespace", "arguments") if k in i}
             for i in output if i["type"] != "message"]
    assert calls == [
        {"type": "function_call", "call_id": "call_spawn2", "name": "spawn_agent",
         "namespace": "multi_agent_v1", "arguments": SPAWN[2]},
        {"type": "function_call", "call_id": "call_exec", "name": "exec_command", "arguments": EXEC[2]},
    ]
    # Codex's next turn sends the items back (as it did in the capture) with the tools' outputs.
    follow = request("multi_agent_v1")
    follow["input"] += [{**c, "status": "completed"} for c in calls] + [
        {"type": "function_call_output", "call_id": c["call_id"], "output": "ok"} for c in calls]
    body = member_body(FMT.parse(follow, {}))
    sound(body)
    assert [c["function"]["name"] for c in body["messages"][-3]["tool_calls"]] == [SPAWN[1], EXEC[1]]


def test_the_streamed_turn_names_the_dropped_tool_in_its_headers() -> None:
    encoder = ResponseRouteEncoder(context_for(FMT.parse(request("multi_agent_v1"), {}), "agents"))
    assert encoder.headers() == {DROPPED_TOOLS_HEADER: "web_search"}
    plain = ResponseRouteEncoder(context_for(FMT.parse({"model": "bench/a:route", "input": "hi"}, {}), "a"))
    assert plain.headers() == {}


def test_a_sub_agents_task_arrives_as_an_agent_message_the_member_reads() -> None:
    ask = FMT.parse(request("multi_agent_v2_child"), {})
    body = member_body(ask)
    sound(body)
    task = body["messages"][-1]
    assert task["role"] == "user" and task["content"].startswith("[agent message from /root to /root/helper]")
    # The part Codex calls "encrypted" is the text the member itself wrote.
    assert task["content"].endswith("Payload:\n\n\nsay hello")
    assert not any(n.startswith("collaboration__") for n in (t["function"]["name"] for t in body["tools"]))


def test_the_parent_reads_the_sub_agents_answer_and_its_collaboration_calls() -> None:
    ask = FMT.parse(request("multi_agent_v2_parent"), {})
    body = member_body(ask)
    sound(body)
    assert [c["function"]["name"] for m in body["messages"] for c in m.get("tool_calls") or []] == [
        "collaboration__spawn_agent", "collaboration__wait_agent"]
    assert body["messages"][-1]["content"].endswith("SUB-AGENT-RESULT 42")
    assert ask.namespaced_tools["collaboration__followup_task"] == ("collaboration", "followup_task")
