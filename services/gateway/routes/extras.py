"""The formats' routes that are not generations (H-G6, H-G8, H-G9 listings): the body read under the H-2
rules, the model rows the caller may see, and the format's pure answer; refusals in its error shape."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from services.gateway.context import GatewayContext
from services.gateway.deliver import error_response
from services.gateway.formats.base import ExtraRoute, Format, Lookup
from services.gateway.http import GATEWAY_BODY_LIMIT, IMAGE_ADVICE, read_json_body
from services.gateway.keys.admit import visible
from services.gateway.listing import model_rows
from shared.refusal import Refusal


def extra_endpoint(fmt: Format, route: ExtraRoute) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        ctx: GatewayContext = request.app.state.ctx
        try:
            body = {}
            if route.method == "POST":
                body = await read_json_body(request, GATEWAY_BODY_LIMIT, IMAGE_ADVICE)
            rows = visible(model_rows(ctx.config), request)  # SEC-4: a scoped key sees its collections only
            lookup = Lookup(rows, body, request.path_params, ctx.started_at)
            return JSONResponse(route.answer(lookup))
        except Refusal as refusal:
            return error_response(fmt, refusal.status, refusal.message)

    endpoint.__name__ = f"{fmt.name}_{route.method.lower()}_{route.path.strip('/').replace('/', '_')}"
    return endpoint
