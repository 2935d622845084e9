"""The scripted upstream's MCP script without I/O: wait for the MCP tools, ask, one verdict per seat (or only
per reminded seat when told not to judge), then a final answer."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.scripted_mcp import ASK_TOOL, VERDICT_TOOL, WAIT_TOOL, mcp_turn

ONE, TWO = "p20260101-120000-ab12.member1", "p20260101-120000-ab12.explorer"
TASK = "Ask the bench collection `agents` whether the sky is blue."


def tool(name: str, required: list[str] | None = None) -> dict[str, Any]:
    props = {n: {"type": "string"} for n in required or []}
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": props, "required": required or []}}}


MCP_TOOLS = [tool("Bash", ["command"]), tool(ASK_TOOL), tool(VERDICT_TOOL)]


def called(name: str, arguments: dict[str, Any], result: str) -> list[dict[str, Any]]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return [{"role": "assistant", "content": None,
             "tool_calls": [{"id": "c", "type": "function", "function": function}]},
            {"role": "tool", "tool_call_id": "c", "content": result}]


def turn(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> dict[str, str] | None:
    return mcp_turn({"messages": messages, "tools": MCP_TOOLS if tools is None else tools})


def test_other_conversations_are_not_this_scripts() -> None:
    assert turn([{"role": "user", "content": "Run the shell command `ls`"}]) is None
    assert turn([{"role": "user", "content": TASK}], [tool("Bash", ["command"])]) is None


def test_it_waits_for_the_mcp_tools_then_asks() -> None:
    waiting = turn([{"role": "user", "content": TASK}], [tool(WAIT_TOOL, ["reason"])])
    assert waiting == {"tool": WAIT_TOOL, "arguments": json.dumps({"reason": ""})}
    asked = turn([{"role": "user", "content": TASK}])
    assert asked is not None and asked["tool"] == ASK_TOOL
    assert json.loads(asked["arguments"])["collection"] == "agents"


def test_one_verdict_per_seat_then_the_end() -> None:
    history = [{"role": "user", "content": TASK}, *called(ASK_TOOL, {}, f"Seats: {ONE} {TWO}")]
    first = turn(history)
    assert first is not None and json.loads(first["arguments"])["call"] == ONE
    history += called(VERDICT_TOOL, {"call": ONE, "useful": True}, "Recorded")
    second = turn(history)
    assert second is not None and json.loads(second["arguments"])["call"] == TWO
    history += called(VERDICT_TOOL, {"call": TWO, "useful": True}, "Recorded")
    assert turn(history) == {"text": "FINAL: asked 2 seat(s), judged 2"}


def test_a_plugins_tool_names_are_found_too() -> None:
    server = "mcp__plugin_benchwarmers_benchwarmers"
    ask, verdict = f"{server}__ask", f"{server}__verdict"
    asked = turn([{"role": "user", "content": TASK}], [tool(ask), tool(verdict)])
    assert asked is not None and asked["tool"] == ask
    history = [{"role": "user", "content": TASK}, *called(ask, {}, f"Seats: {ONE}")]
    judged = turn(history, [tool(ask), tool(verdict)])
    assert judged is not None and judged["tool"] == verdict


def test_told_not_to_judge_it_judges_only_what_a_reminder_names() -> None:
    history = [{"role": "user", "content": TASK + " Answer without judging."},
               *called(ASK_TOOL, {}, f"Seats: {ONE} {TWO}")]
    assert turn(history) == {"text": "FINAL: asked 2 seat(s), judged 0"}
    reminder = f"Stop hook: Benchwarmers: 1 seat(s) have no verdict yet: {TWO}."
    history.append({"role": "user", "content": reminder})
    reminded = turn(history)
    assert reminded is not None and json.loads(reminded["arguments"])["call"] == TWO
