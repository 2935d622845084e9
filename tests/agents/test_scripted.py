"""The scripted upstream's script, without I/O: the shell tool each agent offers is found by name or
schema, its arguments fit that schema, the tool's output becomes the final answer, tool-less requests get
plain text."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.scripted import FINAL_PREFIX, PLAIN_ANSWER, plan_reply, stream_chunks

TASK = "Run the shell command `echo bench-1 | tr a-z A-Z` and tell me its output."
COMMAND = "echo bench-1 | tr a-z A-Z"


def tool(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


# The shell tools as the pinned agents declare them (trimmed to the properties that matter).
CLAUDE_BASH = tool("Bash", {"command": {"type": "string"}, "timeout": {"type": "number"},
                            "description": {"type": "string"}}, ["command"])
CODEX_EXEC = tool("exec_command", {"cmd": {"type": "string"}, "yield_time_ms": {"type": "number"},
                                   "sandbox_permissions": {"type": "string",
                                                           "enum": ["use_default", "require_escalated"]}},
                  ["cmd"])
CODEX_SHELL = tool("shell", {"command": {"type": "array", "items": {"type": "string"}},
                             "timeout_ms": {"type": "number"}}, ["command"])
OPENCODE_BASH = tool("bash", {"command": {"type": "string"}, "description": {"type": "string"}},
                     ["command", "description"])
READ = tool("read", {"filePath": {"type": "string"}}, ["filePath"])


def first_turn(tools: list[dict[str, Any]], content: Any = TASK) -> dict[str, Any]:
    return {"model": "m", "tools": tools, "messages": [{"role": "system", "content": "be brief"},
                                                        {"role": "user", "content": content}]}


def test_each_agents_shell_tool_is_called_with_arguments_that_fit_its_schema() -> None:
    cases = [
        (CLAUDE_BASH, {"command": COMMAND}),
        (CODEX_EXEC, {"cmd": COMMAND}),
        (CODEX_SHELL, {"command": ["bash", "-lc", COMMAND]}),
        (OPENCODE_BASH, {"command": COMMAND, "description": f"Run {COMMAND}"}),
    ]
    for shell, arguments in cases:
        reply = plan_reply(first_turn([READ, shell]))
        assert (reply.tool, json.loads(reply.arguments), reply.text) == (
            shell["function"]["name"], arguments, "")


def test_the_command_is_read_from_text_parts_after_other_parts() -> None:
    parts = [{"type": "text", "text": "<system-reminder>use `ls` freely</system-reminder>"},
             {"type": "text", "text": TASK}]
    reply = plan_reply(first_turn([CLAUDE_BASH], parts))
    assert json.loads(reply.arguments) == {"command": COMMAND}


def test_a_tool_result_becomes_the_final_answer() -> None:
    body = first_turn([CODEX_EXEC])
    body["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "exec_command", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "BENCH-1\n"}]},
    ]
    assert plan_reply(body).text == FINAL_PREFIX + "BENCH-1"


def test_requests_without_tools_or_without_a_shell_get_plain_text() -> None:
    assert plan_reply({"messages": [{"role": "user", "content": TASK}]}).text == PLAIN_ANSWER
    assert plan_reply(first_turn([READ])).text == PLAIN_ANSWER
    assert plan_reply(first_turn([CLAUDE_BASH], "hello")).text == PLAIN_ANSWER


def test_a_streamed_tool_call_reassembles_to_the_planned_arguments() -> None:
    body = {**first_turn([OPENCODE_BASH]), "stream": True, "stream_options": {"include_usage": True}}
    reply = plan_reply(body)
    chunks = stream_chunks(body, reply, "call_1")
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert calls[0]["id"] == "call_1" and calls[0]["function"]["name"] == "bash"
    assert "".join(c["function"]["arguments"] for c in calls) == reply.arguments
    assert len(calls) >= 3  # the arguments arrive in several pieces
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls" and "usage" in chunks[-1]


def test_an_asked_probe_call_comes_first_and_its_result_is_not_the_answer() -> None:
    probe = tool("multi_agent_v1__close_agent", {"target": {"type": "string"}}, ["target"])
    task = TASK + ' But first call the tool `multi_agent_v1__close_agent` with `{"target": "bench-probe"}`.'
    body = first_turn([CODEX_EXEC, probe], task)
    first = plan_reply(body)
    assert first.tool == "multi_agent_v1__close_agent"
    assert json.loads(first.arguments) == {"target": "bench-probe"}
    body["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": first.tool, "arguments": first.arguments}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "invalid agent id bench-probe"},
    ]
    second = plan_reply(body)
    assert (second.tool, json.loads(second.arguments)["cmd"]) == ("exec_command", COMMAND)
    body["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "exec_command", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "BENCH-1\n"},
    ]
    assert plan_reply(body).text == FINAL_PREFIX + "BENCH-1"


def test_a_probe_of_a_tool_not_offered_is_skipped() -> None:
    task = TASK + " But first call the tool `nowhere` with `{}`."
    assert plan_reply(first_turn([CODEX_EXEC], task)).tool == "exec_command"
