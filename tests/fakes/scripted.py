"""A scripted OpenAI-compatible upstream that walks a real agent through one tool loop, as its own process.

    python -m tests.fakes.scripted --port 8999

A conversation whose user asked to "run the shell command `<cmd>`" is answered, on its first turn, with a
streamed call of the shell tool the agent offered (Claude Code's `Bash`, Codex's `exec_command` or
`shell`, opencode's `bash`), its arguments built from that tool's JSON schema; once a `tool` message (the
command's output) is in the conversation, the answer is `FINAL: <output>`. Requests without tools (title
generation and the like) get a short plain answer. Every request is recorded (the last 1 000), including
requests to paths it does not serve (answered 404), so a test can see what reached the upstream. An agent
offering the `benchwarmers` MCP tools gets the MCP script instead (`tests.fakes.scripted_mcp`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.loopback import LoopbackProcess, serve
from tests.fakes.scripted_mcp import mcp_turn

MODEL = "scripted"
PLAIN_ANSWER = "Bench agent check"
FINAL_PREFIX = "FINAL: "
COMMAND_RE = re.compile(r"shell command `([^`]+)`")
SHELL_TOOLS = ("Bash", "bash", "exec_command", "shell_command", "shell")  # preferred names, in order
COMMAND_FIELDS = ("command", "cmd")
LOG_CAP = 1_000


# ---------------------------------------------------------------- the script (pure)


@dataclass(frozen=True)
class Reply:
    """What to answer: text, or one call of `tool` with JSON `arguments`."""

    text: str = ""
    tool: str = ""
    arguments: str = ""


def text_of(content: Any) -> str:
    """A message's text, whether a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def asked_command(messages: list[dict[str, Any]]) -> str | None:
    """The command the user asked for (the last user message naming one)."""
    for msg in reversed(messages):
        if msg.get("role") == "user":
            found = COMMAND_RE.search(text_of(msg.get("content")))
            if found:
                return found.group(1)
    return None


def tool_output(messages: list[dict[str, Any]]) -> str | None:
    """The output of the last tool run in the conversation, if any ran."""
    for msg in reversed(messages):
        if msg.get("role") == "tool":
            return text_of(msg.get("content"))
    return None


def function_of(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool.get("function")
    return fn if isinstance(fn, dict) else {}


def command_field(schema: dict[str, Any]) -> str | None:
    props = schema.get("properties") or {}
    return next((name for name in COMMAND_FIELDS if name in props), None)


def shell_tool(tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The offered function that runs a shell command: a known name first, else any with a command field."""
    functions = [function_of(t) for t in tools if function_of(t).get("name")]
    by_name = {fn["name"]: fn for fn in functions}
    for name in SHELL_TOOLS:
        if name in by_name and command_field(by_name[name].get("parameters") or {}):
            return by_name[name]
    return next((fn for fn in functions if command_field(fn.get("parameters") or {})), None)


def value_for(name: str, schema: dict[str, Any], command: str) -> Any:
    """A value for one required property: the command where it belongs, else the simplest valid value."""
    kind = schema.get("type")
    if name in COMMAND_FIELDS:
        return ["bash", "-lc", command] if kind == "array" else command
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "string":
        return f"Run {command}" if name == "description" else ""
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    return {}


def shell_arguments(parameters: dict[str, Any], command: str) -> dict[str, Any]:
    """Arguments matching the tool's schema: its command field and every other required property."""
    props: dict[str, Any] = parameters.get("properties") or {}
    field = command_field(parameters)
    wanted = [field] + [n for n in parameters.get("required") or [] if n != field]
    return {name: value_for(name, props.get(name) or {}, command) for name in wanted if name}


def plan_reply(body: dict[str, Any]) -> Reply:
    """The scripted turn: run the asked command with the agent's shell tool, then report its output."""
    messages = body.get("messages") or []
    tools = body.get("tools") or []
    if not tools:
        return Reply(text=PLAIN_ANSWER)
    mcp = mcp_turn(body)
    if mcp is not None:
        return Reply(**mcp)
    output = tool_output(messages)
    if output is not None:
        return Reply(text=FINAL_PREFIX + output.strip())
    command = asked_command(messages)
    tool = shell_tool(tools)
    if command is None or tool is None:
        return Reply(text=PLAIN_ANSWER)
    arguments = shell_arguments(tool.get("parameters") or {}, command)
    return Reply(tool=tool["name"], arguments=json.dumps(arguments))


# ---------------------------------------------------------------- the wire


def usage_for(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    prompt = max(1, len(json.dumps(body.get("messages") or [])) // 4)
    completion = max(1, (len(reply.text) + len(reply.arguments)) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def whole_reply(body: dict[str, Any], reply: Reply, call_id: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    finish = "stop"
    if reply.tool:
        message["tool_calls"] = [{"id": call_id, "type": "function",
                                  "function": {"name": reply.tool, "arguments": reply.arguments}}]
        finish = "tool_calls"
    return {"id": f"chatcmpl-{call_id}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model") or MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage_for(body, reply)}


def stream_chunks(body: dict[str, Any], reply: Reply, call_id: str) -> list[dict[str, Any]]:
    """The reply as chat chunks: the text in pieces, or the tool call with its arguments in three pieces."""
    head = {"id": f"chatcmpl-{call_id}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": body.get("model") or MODEL}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    if reply.tool:
        args, third = reply.arguments, max(1, len(reply.arguments) // 3)
        pieces = [args[:third], args[third: 2 * third], args[2 * third:]]
        chunks.append(chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                             "function": {"name": reply.tool, "arguments": ""}}]}))
        chunks += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces if p]
        chunks.append(chunk({}, "tool_calls"))
    else:
        half = max(1, len(reply.text) // 2)
        chunks += [chunk({"content": p}) for p in (reply.text[:half], reply.text[half:]) if p]
        chunks.append(chunk({}, "stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({**head, "choices": [], "usage": usage_for(body, reply)})
    return chunks


def record(request: web.Request, body: Any) -> None:
    request.app["log"].append({"method": request.method, "path": request.path, "query": request.query_string,
                               "headers": {k.lower(): v for k, v in request.headers.items()},
                               "body": body, "at": time.time()})


async def read_body(request: web.Request) -> Any:
    raw = await request.read()
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode(errors="replace")


async def chat_completions(request: web.Request) -> web.StreamResponse:
    body = await read_body(request)
    record(request, body)
    if not isinstance(body, dict):
        error = {"message": "a JSON object is required", "type": "invalid_request_error"}
        return web.json_response({"error": error}, status=400)
    request.app["calls"] += 1
    call_id = f"call_scripted{request.app['calls']}"
    reply = plan_reply(body)
    if not body.get("stream"):
        return web.json_response(whole_reply(body, reply, call_id))
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await resp.prepare(request)
    for chunk in stream_chunks(body, reply, call_id):
        await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
    await resp.write(b"data: [DONE]\n\n")
    return resp


async def list_models(request: web.Request) -> web.Response:
    record(request, None)
    model = {"id": MODEL, "object": "model", "created": 0, "owned_by": "scripted"}
    return web.json_response({"object": "list", "data": [model]})


async def not_served(request: web.Request) -> web.Response:
    record(request, await read_body(request))
    return web.json_response({"error": {"message": f"{request.method} {request.path} is not served here",
                                        "type": "not_found"}}, status=404)


async def admin_requests(request: web.Request) -> web.Response:
    return web.json_response(list(request.app["log"]))


async def admin_health(request: web.Request) -> web.Response:
    return web.json_response({"ok": True, "pid": os.getpid()})


def build_app() -> web.Application:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app["log"] = deque(maxlen=LOG_CAP)
    app["calls"] = 0
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/_scripted/requests", admin_requests)
    app.router.add_get("/_scripted/health", admin_health)
    app.router.add_route("*", "/{tail:.*}", not_served)
    return app


async def run_server(port: int) -> None:
    await serve(web.AppRunner(build_app(), access_log=None), port)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.scripted",
        description="A scripted OpenAI-compatible upstream for agent tool loops.",
    )
    parser.add_argument("--port", type=int, required=True, help="loopback port to listen on")
    asyncio.run(run_server(parser.parse_args(argv).port))


# ---------------------------------------------------------------- the test-side handle


class ScriptedUpstream(LoopbackProcess):
    """Starts the scripted upstream as a subprocess on a free loopback port; stopped by PID."""

    module = "tests.fakes.scripted"
    health_path = "/_scripted/health"
    title = "scripted upstream"

    def requests(self) -> list[dict[str, Any]]:
        """Every request received, oldest first: {"method", "path", "query", "headers" (lower-cased names),
        "body", "at"}."""
        result: list[dict[str, Any]] = self.get("/_scripted/requests")
        return result


if __name__ == "__main__":
    main()
