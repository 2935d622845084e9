"""The generation routes of every format: body → Ask → collection and reply mode → the mode's handler.

Reply modes plug in through the context's `modes` (`reply_mode.ReplyMode`); a mode not (yet) there is
refused with 501 naming what does work.
A request the format answers without a panel (Gemini's `:countTokens`) never reaches a mode.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import request_response

from services.gateway.context import GatewayContext
from services.gateway.deliver import error_response
from services.gateway.formats.base import Format
from services.gateway.http import GATEWAY_BODY_LIMIT, IMAGE_ADVICE, read_json_body
from services.gateway.keys.admit import admit
from services.gateway.panel.resolve import refuse_agentic
from shared.access import caller_of
from shared.refusal import Refusal


class PlainRoute(APIRoute):
    """A generation route as `/openapi.json` knows it, served as a plain Starlette route: its endpoint takes
    the request and answers a response, so FastAPI's dependency solving and its two exit stacks a request
    would do nothing for it, and they are on the way to every first byte."""

    def __init__(self, path: str, endpoint: Callable[[Request], Awaitable[Response]], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        self.app = request_response(endpoint)


def generation_endpoint(fmt: Format) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        ctx: GatewayContext = request.app.state.ctx
        # Only `alt` of the query: the query may also carry a key (`?key=`), which no format may see.
        params = {**request.path_params, "alt": request.query_params.get("alt", "")}
        try:
            body = await read_json_body(request, GATEWAY_BODY_LIMIT, IMAGE_ADVICE)
            direct = fmt.direct(body, params)
            if direct is not None:
                return JSONResponse(direct)
            ask = replace(fmt.parse(body, params), caller=caller_of(request).name)
            resolved = await ctx.resolve(ask)
            await admit(request, resolved)  # P-1 (6) key scope → 403, (7) key rpm → 429
            refuse_agentic(ask, resolved)
            mode = ctx.modes.get(resolved.mode)
            if mode is None:
                raise Refusal(
                    501,
                    f"{resolved.mode} replies are not available on this gateway yet; ask for "
                    f"{resolved.canonical}:all for every answer side by side",
                )
        except Refusal as refusal:
            return error_response(fmt, refusal.status, refusal.message)
        return await mode.answer(fmt, ask, resolved)

    endpoint.__name__ = f"generate_{fmt.name}"
    return endpoint
