"""MCP over Streamable HTTP at `/mcp` and `/v1/mcp` (MCP-1, MCP-2, H-G13), on the official SDK's low-level
server. The guard has already run (Host, Origin, JSON body, gateway key), so a tool runs as the caller.

Stateless: every POST is served on its own, so any gateway replica can take any request and nothing about
an MCP session lives in one process. A `tools/call` whose client accepts `text/event-stream` is answered as
SSE, which carries the progress notifications (MCP-4); other clients get plain JSON. Other methods →
405 (`mount.py`, which loads this module on the first POST).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from services.gateway.mcp import tools
from services.gateway.mcp.results import Outcome
from shared.mcp_tools import INSTRUCTIONS, SERVER_NAME, SERVER_TITLE, TOOL_NAMES, TOOLS
from shared.version import package_version


def tool_list() -> list[types.Tool]:
    return [types.Tool.model_validate(tool) for tool in TOOLS]


def result_of(outcome: Outcome) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text) for text in outcome.texts],
                                is_error=outcome.is_error)


async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                     ) -> types.ListToolsResult:
    return types.ListToolsResult(tools=tool_list())


async def call_tool(ctx: ServerRequestContext[Any, Request], params: types.CallToolRequestParams
                    ) -> types.CallToolResult:
    if params.name not in TOOL_NAMES:
        known = ", ".join(TOOL_NAMES)
        raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; the tools are {known}")
    assert ctx.request is not None, "a Streamable HTTP message carries its request"

    async def progress(done: float, total: float | None, message: str) -> None:
        await ctx.session.report_progress(done, total, message)

    outcome = await tools.call(ctx.request, params.name, params.arguments or {}, progress)
    return result_of(outcome)


def mcp_server() -> Server[Any]:
    return Server(SERVER_NAME, version=package_version(), title=SERVER_TITLE, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


class McpEndpoint:
    """What answers a POST to either path (`mount.py` refuses the rest): two stateless SDK managers over one
    server, SSE and plain JSON."""

    def __init__(self) -> None:
        server = mcp_server()
        self.streaming = StreamableHTTPSessionManager(server, stateless=True)
        self.plain = StreamableHTTPSessionManager(server, stateless=True, json_response=True)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.streaming.run(), self.plain.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        accept = b", ".join(value for key, value in scope["headers"] if key == b"accept")
        manager = self.streaming if b"text/event-stream" in accept else self.plain
        await manager.handle_request(scope, receive, send)
