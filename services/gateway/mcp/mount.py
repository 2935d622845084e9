"""`/mcp` and `/v1/mcp` as the gateway mounts them: the MCP SDK loads on the first MCP request, not at start.

The SDK (with its generated protocol types) costs a gateway about 0.7 s of start and 20 MB of memory that a
gateway nobody asks over MCP never needs. Its session managers' task groups must be entered and left in one
task, so a task started with the gateway's lifespan opens them when the first POST asks and closes them when
the lifespan ends, as they were before. Any method but POST is refused without loading anything (H-G13).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import structlog
from starlette.types import Receive, Scope, Send

from services.gateway.guard import respond

if TYPE_CHECKING:
    from services.gateway.mcp.server import McpEndpoint

log = structlog.get_logger("gateway")
GET_REFUSAL = "MCP here is Streamable HTTP without a session stream: POST one JSON-RPC message per request"


class LazyMcp:
    """The ASGI app behind both paths; `running()` belongs in the app's lifespan."""

    def __init__(self) -> None:
        self.endpoint: McpEndpoint | None = None
        self.problem: BaseException | None = None
        self.wanted = asyncio.Event()
        self.ready = asyncio.Event()
        self.stopping = asyncio.Event()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        keeper = asyncio.create_task(self.keep())
        try:
            yield
        finally:
            self.stopping.set()
            self.wanted.set()
            await keeper

    async def keep(self) -> None:
        """Waits for the first MCP request, then holds the SDK's managers open until the lifespan ends."""
        await self.wanted.wait()
        try:
            if self.stopping.is_set():
                return
            from services.gateway.mcp.server import McpEndpoint  # the SDK: here, on first use

            endpoint = McpEndpoint()
            async with endpoint.running():
                self.endpoint = endpoint
                self.ready.set()
                await self.stopping.wait()
        except Exception as problem:  # each MCP request fails with it rather than waiting forever
            log.exception("mcp_failed")
            self.problem = problem
        finally:
            self.endpoint = None
            self.ready.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await respond(send, 405, {"error": {"message": GET_REFUSAL}}, {"Allow": "POST"})
            return
        self.wanted.set()
        await self.ready.wait()
        if self.endpoint is None:
            raise RuntimeError("the MCP endpoint is not running") from self.problem
        await self.endpoint(scope, receive, send)
