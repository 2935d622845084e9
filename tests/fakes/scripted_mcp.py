"""The scripted upstream's MCP script (pure): walks a real agent through asking a Benchwarmers panel over MCP
and sending a verdict for each seat.

A conversation whose user said "Ask the bench collection `<name>`" and whose agent offers the
`benchwarmers` MCP tools is answered with a call of `ask`; once its result (the seats, with their call ids)
is in the conversation, with one `verdict` call per seat, then a final answer. When the user added
"without judging", the agent answers at once after `ask` and judges only the seats a reminder names (a
Stop hook's reminder arriving as a user message), so a test sees the reminder reach the agent. Claude
Code connects MCP servers while its first turn is already asked: until their tools are offered, the script
calls its `WaitForMcpServers` tool.
"""

from __future__ import annotations

import json
import re
from typing import Any

from shared.transcripts import call_ids

WAIT_TOOL = "WaitForMcpServers"
# Claude Code names a server's tools `mcp__<server>__<tool>`; a plugin's server is `plugin_<plugin>_<server>`.
ASK_TOOL = "mcp__benchwarmers__ask"
VERDICT_TOOL = "mcp__benchwarmers__verdict"
TASK_RE = re.compile(r"Ask the bench collection `([^`]+)`")
FORGETFUL = "without judging"
REMINDER_WORDS = "have no verdict yet"
QUESTION = "Is the sky blue? Answer in one line."
NOTE = "checked by the scripted agent"


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def tool_names(tools: list[dict[str, Any]]) -> set[str]:
    return {str((t.get("function") or {}).get("name")) for t in tools}


def bench_tool(names: set[str] | list[str], tool: str) -> str | None:
    """The agent's name for one of the benchwarmers tools, however its server was registered."""
    return next((n for n in sorted(names) if n.startswith("mcp__") and "benchwarmers" in n
                 and n.endswith(f"__{tool}")), None)


def simplest(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    return {"string": "", "integer": 1, "number": 1, "boolean": False, "array": []}.get(str(kind), {})


def wait_arguments(tools: list[dict[str, Any]]) -> str:
    """Arguments for the wait tool that fit its schema: each required property's simplest value."""
    functions = [t.get("function") or {} for t in tools]
    fn = next((f for f in functions if f.get("name") == WAIT_TOOL), {})
    params = fn.get("parameters") or {}
    props = params.get("properties") or {}
    return json.dumps({name: simplest(props.get(name) or {}) for name in params.get("required") or []})


def calls_made(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Every tool call the agent made so far: (name, arguments)."""
    made = []
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            fn = call.get("function") or {}
            try:
                arguments = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                arguments = {}
            made.append((str(fn.get("name")), arguments if isinstance(arguments, dict) else {}))
    return made


def task_of(messages: list[dict[str, Any]]) -> tuple[str, bool] | None:
    """The collection the user asked about, and whether they said not to judge."""
    for msg in messages:
        if msg.get("role") == "user":
            found = TASK_RE.search(text_of(msg.get("content")))
            if found:
                return found.group(1), FORGETFUL in text_of(msg.get("content"))
    return None


def reminded(messages: list[dict[str, Any]]) -> list[str]:
    """The call ids named by reminders in user messages."""
    texts = [text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    return call_ids("\n".join(t for t in texts if REMINDER_WORDS in t))


def mcp_turn(body: dict[str, Any]) -> dict[str, str] | None:
    """The next step as {"text"} or {"tool", "arguments"}; None when this is not an MCP conversation."""
    messages, tools = body.get("messages") or [], body.get("tools") or []
    task = task_of(messages)
    if task is None:
        return None
    offered = tool_names(tools)
    ask_tool, verdict_tool = bench_tool(offered, "ask"), bench_tool(offered, "verdict")
    if ask_tool is None or verdict_tool is None:
        return {"tool": WAIT_TOOL, "arguments": wait_arguments(tools)} if WAIT_TOOL in offered else None
    collection, forgetful = task
    made = calls_made(messages)
    if not any(name == ask_tool for name, _ in made):
        return {"tool": ask_tool, "arguments": json.dumps({"collection": collection, "prompt": QUESTION})}
    seats = call_ids("\n".join(text_of(m.get("content")) for m in messages if m.get("role") == "tool"))
    judged = {args.get("call") for name, args in made if name == verdict_tool}
    owed = [call for call in (reminded(messages) if forgetful else seats) if call not in judged]
    if owed:
        verdict = {"call": owed[0], "useful": True, "note": NOTE, "real": ["the sky is blue"]}
        return {"tool": verdict_tool, "arguments": json.dumps(verdict)}
    return {"text": f"FINAL: asked {len(seats)} seat(s), judged {len(judged)}"}
