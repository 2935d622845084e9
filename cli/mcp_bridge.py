"""`bench mcp`: the MCP server on stdio (MCP-1 a), a thin client of a running gateway.

It answers `initialize`, `ping` and `tools/list` itself (the contract is `shared.mcp_tools`), and forwards
each `tools/call` to the gateway's Streamable HTTP endpoint (`<BENCHWARMERS_URL>/mcp`, the gateway key as
Bearer) with the official SDK's client, relaying the gateway's progress notifications as they come. Calls run
concurrently, so a ping is answered while a panel runs. `pending_verdicts` reads the transcript here, on the
agent's machine, and sends the gateway only the call ids. Nothing but protocol messages goes to stdout.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
import mcp_types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from shared.mcp_tools import INSTRUCTIONS, SERVER_NAME, SERVER_TITLE, TOOL_NAMES, TOOLS
from shared.transcripts import transcript_calls
from shared.version import package_version

CONNECT_S = 30.0
SHOWN_CHARS = 300


@dataclass
class Refusal:
    """The gateway's last HTTP refusal (the guard's 401, 403, 429…), which the SDK reports only as an error
    code: its status and its own words."""

    status: int = 0
    message: str = ""

    async def hear(self, response: httpx2.Response) -> None:
        if response.status_code >= 400:
            await response.aread()
            self.status, self.message = response.status_code, refusal_words(response.content)


def refusal_words(raw: bytes) -> str:
    """The message of an error body in any of the gateway's shapes, else its first characters."""
    text = raw.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        return text[:SHOWN_CHARS]
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return str(message)[:SHOWN_CHARS] if message else text[:SHOWN_CHARS]


@dataclass(frozen=True)
class Gateway:
    url: str  # the root, without /v1
    key: str | None
    timeout_s: float = 900.0

    @asynccontextmanager
    async def session(self, refusal: Refusal) -> AsyncIterator[ClientSession]:
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        timeout = httpx2.Timeout(CONNECT_S, read=self.timeout_s)
        hooks = {"response": [refusal.hear]}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=timeout, event_hooks=hooks) as http,
            streamable_http_client(f"{self.url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write, read_timeout_seconds=self.timeout_s) as session,
        ):
            await session.initialize()
            yield session


def text_result(text: str, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


def local_pending(args: Mapping[str, Any]) -> dict[str, Any] | None:
    """`pending_verdicts` with the transcript read here: the gateway gets the call ids, never a path. None
    when there is nothing to ask (no transcript, or no call id in it)."""
    if "calls" in args:
        return dict(args)
    calls = transcript_calls(str(args.get("transcript") or ""))
    if not calls:
        return None
    return {"session": args.get("session"), "active": args.get("active"), "calls": calls}


def innermost(exc: BaseException) -> BaseException:
    """The first real failure inside the SDK's task-group wrappings."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def unreachable(url: str, exc: BaseException) -> str:
    """Why the gateway could not be asked, in words an agent can act on (never the key)."""
    why = f"{type(exc).__name__}: {str(exc)[:SHOWN_CHARS]}"
    return (f"Benchwarmers: no gateway answered at {url}/mcp ({why}). Is it running (`bench up`), and are "
            "BENCHWARMERS_URL and BENCHWARMERS_KEY right?")


async def forward(gateway: Gateway, name: str, args: Mapping[str, Any],
                  progress: ProgressFnT | None = None) -> types.CallToolResult:
    """One tool call on the gateway. A refusal of the HTTP request (MCP-2's words) or a gateway that cannot
    be reached is an `isError` result; the gateway's protocol errors pass through as they are."""
    if name == "pending_verdicts":
        asked = local_pending(args)
        if asked is None:
            return text_result("")
        args = asked
    refusal = Refusal()
    try:
        async with gateway.session(refusal) as session:
            return await session.call_tool(name, dict(args), progress_callback=progress)
    except Exception as exc:
        failure = innermost(exc)
        if refusal.status:
            said = f"Benchwarmers refused POST /mcp ({refusal.status}): {refusal.message}"
            return text_result(said, is_error=True)
        if isinstance(failure, MCPError):
            raise failure from None
        return text_result(unreachable(gateway.url, failure), is_error=True)


def stdio_server_for(gateway: Gateway) -> Server[Any]:
    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in TOOLS])

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
                        ) -> types.CallToolResult:
        if params.name not in TOOL_NAMES:
            known = ", ".join(TOOL_NAMES)
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; the tools are {known}")

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(progress, total, message)

        return await forward(gateway, params.name, params.arguments or {}, progress)

    return Server(SERVER_NAME, version=package_version(), title=SERVER_TITLE, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(gateway: Gateway) -> None:
    server = stdio_server_for(gateway)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
